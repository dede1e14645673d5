package io.kvtier.bench.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A synthetic multi-turn chat workload: a few shared system prompts, many conversations that grow turn
 * by turn, interleaved the way a serving engine sees them. Each request's prompt is its system prompt
 * plus the whole conversation so far plus the new user message, so consecutive turns share a growing
 * prefix and every conversation shares its system prompt with others.
 *
 * <p>Deterministic for a seed. Thread-safe: clients call {@link #next} concurrently, and a conversation
 * is never handed to two clients at once, since a turn follows the previous reply.
 */
public final class ChatWorkload
{
    /**
     * Shape of the workload.
     *
     * @param seed              makes the workload reproducible
     * @param conversations     conversations in all
     * @param active            conversations in progress at once (more means longer gaps between turns)
     * @param systemPrompts     distinct system prompts shared by the conversations
     * @param systemTokensMin   shortest system prompt
     * @param systemTokensMax   longest system prompt
     * @param turnsMin          fewest turns of a conversation
     * @param turnsMax          most turns
     * @param userTokensMin     shortest user message
     * @param userTokensMax     longest user message
     * @param replyTokensMin    shortest reply
     * @param replyTokensMax    longest reply
     */
    public record Shape(long seed, int conversations, int active, int systemPrompts, int systemTokensMin, int systemTokensMax,
                        int turnsMin, int turnsMax, int userTokensMin, int userTokensMax, int replyTokensMin, int replyTokensMax)
    {
        /** @return the shape {@code kvtier demo} uses, scaled by the number of conversations */
        public static Shape demo(final long seed, final int conversations)
        {
            return new Shape(seed, conversations, Math.max(4, conversations / 6), 6, 300, 1500, 3, 8, 20, 200, 40, 300);
        }

        /**
         * Exact, not an average: each conversation's turns are drawn from its own stream of the seed, apart from the
         * draws that depend on which client asks when, so the warm-up's share and its limit are shares of the very
         * requests the run will make (a limit past the run's end would leave no steady state).
         *
         * @return the requests this shape makes
         */
        public long expectedRequests()
        {
            long requests = 0;
            for (int c = 0; c < conversations; c++)
            {
                requests += turns(c);
            }
            return requests;
        }

        /**
         * @param conversation which conversation, from 0
         * @return its turns, from {@link #turnsMin} to {@link #turnsMax}
         */
        public int turns(final int conversation)
        {
            // Mixed unlike the token streams (seed * 31 + stream), so the two families of streams stay apart.
            final SplittableRandom turnRandom = new SplittableRandom((seed ^ 0x7475726E73L) * 0x9E3779B97F4A7C15L + conversation);
            return turnsMin + turnRandom.nextInt(turnsMax - turnsMin + 1);
        }
    }

    /** One request: a conversation's prompt at one turn. */
    public static final class Request
    {
        int[] tokens = new int[4096];
        int length;
        int conversation;
        int turn;

        /** @return the prompt's token ids; valid up to {@link #length()} */
        public int[] tokens()
        {
            return tokens;
        }

        /** @return tokens in the prompt */
        public int length()
        {
            return length;
        }

        /** @return which conversation */
        public int conversation()
        {
            return conversation;
        }

        /** @return which turn of it, from 0 */
        public int turn()
        {
            return turn;
        }
    }

    private static final int VOCABULARY = 128_000;

    private final Shape shape;
    private final SplittableRandom random;
    private final int[][] systemPrompt;
    private final List<Conversation> active = new ArrayList<>();
    private int started;
    private long issued;

    private static final class Conversation
    {
        final int id;
        final int system;
        final int turns;
        int turn;
        boolean busy;
        final List<int[]> history = new ArrayList<>();

        Conversation(final int id, final int system, final int turns)
        {
            this.id = id;
            this.system = system;
            this.turns = turns;
        }
    }

    /**
     * @param shape the workload's shape
     */
    public ChatWorkload(final Shape shape)
    {
        this.shape = shape;
        this.random = new SplittableRandom(shape.seed());
        this.systemPrompt = new int[shape.systemPrompts()][];
        for (int s = 0; s < systemPrompt.length; s++)
        {
            systemPrompt[s] = tokens(1_000_000L + s, between(shape.systemTokensMin(), shape.systemTokensMax()));
        }
    }

    private int between(final int min, final int max)
    {
        return min + random.nextInt(max - min + 1);
    }

    private int[] tokens(final long stream, final int count)
    {
        final SplittableRandom tokenRandom = new SplittableRandom(shape.seed() * 31 + stream);
        final int[] tokens = new int[count];
        for (int i = 0; i < count; i++)
        {
            tokens[i] = tokenRandom.nextInt(VOCABULARY);
        }
        return tokens;
    }

    /** @return the workload's shape */
    public Shape shape()
    {
        return shape;
    }

    /**
     * Fills {@code out} with the next request, choosing among the conversations in progress.
     *
     * @param out the request to fill
     * @return false when every conversation has finished, or all that remain are busy with another client
     */
    public synchronized boolean next(final Request out)
    {
        while (active.size() < shape.active() && started < shape.conversations())
        {
            final int id = started++;
            active.add(new Conversation(id, random.nextInt(systemPrompt.length), shape.turns(id)));
        }
        if (active.isEmpty())
        {
            return false;
        }
        Conversation chosen = null;
        for (int tries = 0; tries < 4 * active.size() && chosen == null; tries++)
        {
            final Conversation candidate = active.get(random.nextInt(active.size()));
            if (!candidate.busy)
            {
                chosen = candidate;
            }
        }
        if (chosen == null)
        {
            for (final Conversation candidate : active)
            {
                if (!candidate.busy)
                {
                    chosen = candidate;
                    break;
                }
            }
        }
        if (chosen == null)
        {
            return false;
        }
        final int[] user = tokens(((long)chosen.id << 20) | (chosen.turn << 1), between(shape.userTokensMin(), shape.userTokensMax()));
        chosen.history.add(user);
        int length = systemPrompt[chosen.system].length;
        for (final int[] part : chosen.history)
        {
            length += part.length;
        }
        if (out.tokens.length < length)
        {
            out.tokens = new int[Integer.highestOneBit(length) << 1];
        }
        System.arraycopy(systemPrompt[chosen.system], 0, out.tokens, 0, systemPrompt[chosen.system].length);
        int at = systemPrompt[chosen.system].length;
        for (final int[] part : chosen.history)
        {
            System.arraycopy(part, 0, out.tokens, at, part.length);
            at += part.length;
        }
        out.length = length;
        out.conversation = chosen.id;
        out.turn = chosen.turn;
        chosen.busy = true;
        issued++;
        return true;
    }

    /**
     * Marks a request answered: its reply joins the conversation, which may then take its next turn.
     *
     * @param request a request from {@link #next}
     */
    public synchronized void answered(final Request request)
    {
        for (int i = 0; i < active.size(); i++)
        {
            final Conversation conversation = active.get(i);
            if (conversation.id == request.conversation)
            {
                conversation.history.add(tokens(((long)conversation.id << 20) | (conversation.turn << 1) | 1,
                    between(shape.replyTokensMin(), shape.replyTokensMax())));
                conversation.turn++;
                conversation.busy = false;
                if (conversation.turn >= conversation.turns)
                {
                    active.remove(i);
                }
                return;
            }
        }
    }

    /** @return requests handed out so far */
    public synchronized long issued()
    {
        return issued;
    }

    /** @return whether every conversation has finished */
    public synchronized boolean finished()
    {
        return active.isEmpty() && started >= shape.conversations();
    }
}

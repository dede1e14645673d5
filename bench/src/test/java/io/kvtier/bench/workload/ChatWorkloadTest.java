package io.kvtier.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo's warm-up ends at shares of {@link ChatWorkload.Shape#expectedRequests()}: a count above what the run
 * makes put the warm-up's limit past the run's end, and a demo of 12 conversations then reported no steady state.
 */
class ChatWorkloadTest
{
    /**
     * Drives a workload to its end with {@code clients} requests in flight at most, answering them in a random order,
     * the way client threads that finish at different times do.
     */
    private static long drive(final ChatWorkload workload, final int clients, final long orderSeed)
    {
        final SplittableRandom order = new SplittableRandom(orderSeed);
        final List<ChatWorkload.Request> inFlight = new ArrayList<>();
        long requests = 0;
        while (!workload.finished())
        {
            while (inFlight.size() < clients)
            {
                final ChatWorkload.Request request = new ChatWorkload.Request();
                if (!workload.next(request))
                {
                    break;
                }
                inFlight.add(request);
                requests++;
            }
            assertThat(inFlight).as("a workload that is not finished has a request to hand out or one to answer").isNotEmpty();
            workload.answered(inFlight.remove(order.nextInt(inFlight.size())));
        }
        return requests;
    }

    @Test
    void shouldMakeExactlyItsExpectedRequestsWhateverTheOrderItsRequestsAreAnsweredIn()
    {
        for (long seed = 1; seed <= 40; seed++)
        {
            for (final int conversations : new int[] {1, 5, 12, 24, 100})
            {
                final ChatWorkload.Shape shape = ChatWorkload.Shape.demo(seed, conversations);
                final long expected = shape.expectedRequests();
                for (final int clients : new int[] {1, 2, 7})
                {
                    assertThat(drive(new ChatWorkload(shape), clients, seed * 1_000 + clients))
                        .as("seed %d, %d conversations, %d clients", seed, conversations, clients).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void shouldDrawEachConversationsTurnsWithinTheShapesRangeAndReachBothEnds()
    {
        final ChatWorkload.Shape shape = ChatWorkload.Shape.demo(3, 2_000);
        final int[] seen = new int[shape.turnsMax() + 1];
        for (int c = 0; c < shape.conversations(); c++)
        {
            final int turns = shape.turns(c);
            assertThat(turns).as("conversation %d", c).isBetween(shape.turnsMin(), shape.turnsMax());
            seen[turns]++;
        }
        for (int turns = shape.turnsMin(); turns <= shape.turnsMax(); turns++)
        {
            assertThat(seen[turns]).as("conversations of %d turns among 2,000", turns).isGreaterThan(200);
        }
        assertThat(ChatWorkload.Shape.demo(4, 2_000).expectedRequests()).as("another seed, other draws").isNotEqualTo(shape.expectedRequests());
    }
}

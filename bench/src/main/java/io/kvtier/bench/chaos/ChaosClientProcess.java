package io.kvtier.bench.chaos;

import io.kvtier.bench.workload.PagePattern;
import io.kvtier.client.ClientOptions;
import io.kvtier.client.KvtierClient;
import io.kvtier.client.KvtierException;
import io.kvtier.client.LookupResult;
import io.kvtier.client.Namespace;
import io.kvtier.client.PageKeyChain;
import io.kvtier.client.PinnedPages;
import io.kvtier.client.ReservedPages;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * One honest client of a chaos campaign, a process of its own attached over IPC with the Java client: it
 * replays requests with shared prefixes drawn from its seed, checks every page it pins against the bytes
 * derived from its key, writes and commits what is missing, and now and then asks the engine to finish
 * its backups (FLUSH), drops its pages from the pool (EVICT) and asks where each is (LOOKUP): the keys
 * the engine then answers are in L3 and not in the pool it appends to its acknowledgement file, the pages the campaign later
 * requires to be readable.
 *
 * <p>Stdout, one line each: {@code READY}; after every request {@code T verified wrong committed acked
 * requests refused} (totals of this process); {@code W <key>} for each wrong page; {@code PAUSED <point>}.
 * Stdin commands: {@code PAUSE pins} (stop next while holding pins), {@code PAUSE write} (stop next while
 * holding reservations, pages half written), {@code GO} (go on), {@code POISON} (after a pause: write a
 * poison pattern into the reserved pages and try to commit them). The process exits 3 when the engine
 * drops it or goes away; the campaign starts another.
 */
public final class ChaosClientProcess
{
    /** Pages of the longest request: a prefix of up to 16 and a conversation of up to 16. */
    static final int MAX_KEYS = 64;
    /** Tokens per page. */
    static final int PAGE_TOKENS = 16;
    /** A poison word a late writer leaves: no key's pattern is expected to contain it throughout a page. */
    static final long POISON = 0xDEADBEEFDEADBEEFL;

    private final KvtierClient client;
    private final Namespace namespace;
    private final SplittableRandom random;
    private final PrintStream out;
    private final FileChannel acks;
    private final boolean wrongWriter;
    private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    private final PageKeyChain keys = new PageKeyChain(MAX_KEYS);
    private final int[] tokens = new int[MAX_KEYS * PAGE_TOKENS];
    private final int[] turns = new int[16];
    private final int pageSize;
    private volatile String pauseAt = "";
    private long verified;
    private long wrong;
    private long committed;
    private long acked;
    private long requests;
    private long refused;

    /** A client on an attached connection; {@link #main} makes it. */
    private ChaosClientProcess(final KvtierClient client, final Namespace namespace, final long seed, final PrintStream out,
        final FileChannel acks, final boolean wrongWriter)
    {
        this.client = client;
        this.namespace = namespace;
        this.random = new SplittableRandom(seed);
        this.out = out;
        this.acks = acks;
        this.wrongWriter = wrongWriter;
        this.pageSize = client.pageSize();
    }

    /**
     * @param args socket path, seed, acknowledgement file, namespace model id, and {@code wrong-writer} to
     *             commit wrong bytes on purpose (a broken writer, for the test that proves the check can fail)
     * @throws IOException if the acknowledgement file cannot be written
     */
    public static void main(final String[] args) throws IOException
    {
        final PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        final Namespace namespace = new Namespace(args[3], "chaos-page16", 0, "");
        final KvtierClient client;
        try
        {
            client = KvtierClient.connect(Path.of(args[0]), ClientOptions.of(MAX_KEYS, namespace));
        }
        catch (final IOException | RuntimeException ex)
        {
            System.err.println("chaos client: cannot attach: " + ex);
            System.exit(3);
            return;
        }
        try (FileChannel acks = FileChannel.open(Path.of(args[2]), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.APPEND))
        {
            final ChaosClientProcess process = new ChaosClientProcess(client, namespace, Long.parseLong(args[1]), out, acks,
                args.length > 4 && "wrong-writer".equals(args[4]));
            process.readCommands();
            out.println("READY");
            while (true)
            {
                process.serveOne();
            }
        }
        catch (final KvtierException ex)
        {
            System.err.println("chaos client: the engine dropped this client: " + ex.getMessage());
            System.exit(3);
        }
    }

    /** Reads the campaign's commands on a thread of their own; the end of stdin ends the process. */
    private void readCommands()
    {
        final Thread reader = new Thread(() ->
        {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)))
            {
                for (String line = in.readLine(); line != null; line = in.readLine())
                {
                    if (line.startsWith("PAUSE "))
                    {
                        pauseAt = line.substring(6);
                    }
                    else
                    {
                        commands.add(line);
                    }
                }
            }
            catch (final IOException ex)
            {
                // The campaign is gone: so is the point of this client.
            }
            System.exit(0);
        }, "chaos-client-stdin");
        reader.setDaemon(true);
        reader.start();
    }

    /** @return the campaign's next command once this client stopped at the given point, else null */
    private String pause(final String point)
    {
        if (!point.equals(pauseAt))
        {
            return null;
        }
        pauseAt = "";
        out.println("PAUSED " + point);
        try
        {
            return commands.take();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "GO";
        }
    }

    /** @return the token count of the next request, whose tokens are now in {@link #tokens} */
    private int nextRequest()
    {
        // A prefix shared by many requests of every client (a system prompt), then one conversation's
        // turns so far: the conversation grows by a page each time it is drawn, and starts over at 16. All
        // clients draw from the same 8 prefixes and 16 conversations, so that they share pages, and the keys
        // stay within about 2,000 pages (40 MiB in L3), which the campaign's L3 holds without evicting.
        final int group = random.nextInt(8);
        final int prefixPages = 4 + group;
        final int conversation = random.nextInt(turns.length);
        turns[conversation] = turns[conversation] % 16 + 1;
        int at = 0;
        for (int i = 0; i < prefixPages * PAGE_TOKENS; i++)
        {
            tokens[at++] = group * 1_000_003 + i;
        }
        for (int i = 0; i < turns[conversation] * PAGE_TOKENS; i++)
        {
            tokens[at++] = 50_000_000 + conversation * 100_003 + i;
        }
        return at;
    }

    /** Serves one request: pins and checks the cached prefix, writes and commits the rest, and every fourth time acknowledges what is in L3. */
    private void serveOne() throws IOException
    {
        final int tokenCount = nextRequest();
        keys.compute(namespace, tokens, tokenCount, PAGE_TOKENS, false);
        final int n = keys.size();
        final int cached;
        try (PinnedPages pinned = client.acquire(keys))
        {
            cached = pinned.count();
            for (int i = 0; i < cached; i++)
            {
                if (pinned.payloadLength(i) == pageSize && PagePattern.matches(pinned.page(i), keys.high(i), keys.low(i), pageSize))
                {
                    verified++;
                }
                else
                {
                    wrong++;
                    out.println("W " + keys.hex(i));
                }
            }
            final String command = pause("pins");
            if (command != null && !"GO".equals(command))
            {
                throw new IllegalStateException("unexpected command while holding pins: " + command);
            }
        }
        if (cached < n)
        {
            try (ReservedPages fresh = client.reserve(keys, cached, n - cached))
            {
                int mine = 0;
                for (int i = 0; i < fresh.size(); i++)
                {
                    if (fresh.isReserved(i))
                    {
                        // The wrong writer fills a page with the next key's bytes: sealed and committed, the
                        // engine has no way to tell, and only a reader's check can.
                        final int key = wrongWriter && cached + i + 1 < n ? cached + i + 1 : cached + i;
                        PagePattern.fill(fresh.page(i), keys.high(key), keys.low(key), pageSize);
                        mine++;
                    }
                }
                final String command = pause("write");
                if ("POISON".equals(command))
                {
                    poisonAndCommit(fresh);
                    return;
                }
                if (mine > 0)
                {
                    try
                    {
                        committed += fresh.commit(pageSize);
                    }
                    catch (final KvtierException ex)
                    {
                        refused++;
                        if (isDropped(ex))
                        {
                            throw ex;
                        }
                    }
                }
            }
        }
        requests++;
        if (requests % 4 == 0)
        {
            acknowledge(n);
        }
        out.println("T " + verified + " " + wrong + " " + committed + " " + acked + " " + requests + " " + refused);
    }

    /** @return whether the error means the engine dropped this client (rather than refusing one request) */
    private static boolean isDropped(final KvtierException ex)
    {
        return switch (ex.errorCode())
        {
            case INVALID, SLOT_HELD, SLOT_RANGE, NAMESPACE_DENIED, UNKNOWN_TYPE, MALFORMED -> false;
            default -> true;
        };
    }

    /**
     * The late writer: woken after its lease ran out, it writes poison into the pages it had reserved and
     * tries to commit them. The engine must refuse the commit (the client was dropped), and the pages, in
     * quarantine, are never served: any reader seeing poison counts a wrong page.
     */
    private void poisonAndCommit(final ReservedPages fresh)
    {
        for (int i = 0; i < fresh.size(); i++)
        {
            if (fresh.isReserved(i))
            {
                final MemorySegment page = fresh.page(i);
                for (long at = 0; at < pageSize; at += 8)
                {
                    page.set(ValueLayout.JAVA_LONG_UNALIGNED, at, POISON);
                }
            }
        }
        int landed;
        try
        {
            landed = fresh.commit(pageSize);
        }
        catch (final KvtierException ex)
        {
            landed = 0;
        }
        out.println("LATE " + landed);
        System.exit(landed == 0 ? 3 : 4);
    }

    /**
     * Flushes the backups, evicts the request's pages and appends the keys the engine then holds in L3 (and
     * not in the pool) to the acknowledgement file.
     */
    private void acknowledge(final int n) throws IOException
    {
        client.flush();
        client.evict(0, keys, 0, n);
        // One key at a time: a LOOKUP's L3 Pages counts the prefix past the pool's run, pool pages after the
        // first L3 one included, so only a lookup of the key alone says the engine holds it in L3 and not in
        // the pool (where a backup may still be failing). A key still in the pool is not acknowledged.
        final StringBuilder lines = new StringBuilder(n * 50);
        int inL3 = 0;
        for (int i = 0; i < n; i++)
        {
            final LookupResult where = client.lookup(0, keys, i, 1);
            if (where.poolPages() == 0 && where.l3Pages() == 1)
            {
                // "<epoch ms> <key hex>": when it was acknowledged, to set beside the engine's log.
                lines.append(System.currentTimeMillis()).append(' ').append(keys.hex(i)).append('\n');
                inL3++;
            }
        }
        final ByteBuffer record = ByteBuffer.wrap(lines.toString().getBytes(StandardCharsets.US_ASCII));
        while (record.hasRemaining())
        {
            acks.write(record);
        }
        acked += inL3;
    }
}

package io.kvtier.tier.faults;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.operations.TierReport;
import io.kvtier.spi.PageKey;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real engine whose one L3 tier, {@code f}, is a {@code faults} tier wrapping {@code posix} in a
 * directory of the test's, with its fault log and control file beside it; and pages whose bytes derive
 * from their keys, written whole so that every byte of a page is covered by its CRC.
 */
final class FaultsEngine
{
    static final String TIER = "f";
    static final int PAGE_SIZE = 4096;
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final Pattern LINE = Pattern.compile(
        "\\{\"t_ms\":(\\d+),\"kind\":\"([a-z-]+)\",\"key\":\"([0-9a-f]{32})\",\"op\":\"(read|write|exists|remove)\"}");

    /** One line of the fault log. */
    record Fault(long timeMillis, String kind, PageKey key, String op)
    {
    }

    private FaultsEngine()
    {
    }

    /** Settings of a small engine with the faults tier over posix in {@code dir}, its log and control file there too. */
    static Map<String, String> settings(final Path dir, final String faults, final int pages)
    {
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, "/dev/shm/kvtier-faults-test-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(PAGE_SIZE));
        settings.put(EngineConfig.POOL_SIZE, String.valueOf((long)PAGE_SIZE * pages));
        settings.put(EngineConfig.PIPELINE_TICK, "1ms");
        settings.put(EngineConfig.POLICY_PREFETCH, "off");
        // Long enough that no read times out on a loaded machine; the tests of stalls and blocked calls shorten it.
        settings.put(EngineConfig.L3_IO_TIMEOUT, "10s");
        settings.put(tier("type"), "faults");
        settings.put(tier("wrap"), "posix");
        settings.put(tier("wrap.dir"), dir.resolve("posix").toString());
        settings.put(tier("wrap.fanout-levels"), "0");
        settings.put(tier("seed"), "20");
        settings.put(tier("faults"), faults);
        settings.put(tier("fault-log"), log(dir).toString());
        settings.put(tier("fault-control"), control(dir).toString());
        return settings;
    }

    /** The l3.io-timeout of the tests that wait for one: what a stalled read or a blocked call outlives. */
    static final String SHORT_IO_TIMEOUT = "200ms";

    static String tier(final String key)
    {
        return "tier." + TIER + "." + key;
    }

    static Path log(final Path dir)
    {
        return dir.resolve("faults.jsonl");
    }

    static Path control(final Path dir)
    {
        return dir.resolve("faults.ctl");
    }

    static Engine start(final Map<String, String> settings) throws IOException
    {
        return Engine.start(EngineConfig.from(settings));
    }

    /** @return the engine's faults tier */
    static FaultsTier faultsTier(final Engine engine)
    {
        return (FaultsTier)engine.tiers().get(0).tier();
    }

    /** Writes the control file and waits until the tier runs at the rates it sets. */
    static void control(final Engine engine, final Path dir, final String text) throws IOException
    {
        final FaultsTier tier = faultsTier(engine);
        final Path file = control(dir);
        final Path temp = dir.resolve("faults.ctl.tmp");
        Files.writeString(temp, text, StandardCharsets.UTF_8);
        Files.move(temp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        final String expected = tier.expectedRates(text).toString();
        awaitTrue(() -> tier.rates().toString().equals(expected), "the tier reads " + file + " and runs at " + expected);
    }

    /** @return the fault log's lines, each checked against the format */
    static List<Fault> faults(final Path dir) throws IOException
    {
        final List<Fault> faults = new ArrayList<>();
        if (!Files.exists(log(dir)))
        {
            return faults;
        }
        for (final String line : Files.readAllLines(log(dir), StandardCharsets.US_ASCII))
        {
            final Matcher matcher = LINE.matcher(line);
            if (!matcher.matches())
            {
                throw new AssertionError("fault log line not in the agreed format: " + line);
            }
            faults.add(new Fault(Long.parseLong(matcher.group(1)), matcher.group(2), PageKey.fromHex(matcher.group(3)), matcher.group(4)));
        }
        return faults;
    }

    /** @return the faults tier's counters, as the admin API reports them */
    static TierReport report(final Engine engine)
    {
        return engine.operations().tiers().get(0);
    }

    static long tierErrors(final Engine engine)
    {
        return report(engine).counters().get("errors");
    }

    /** Fills the session's chain with keys {@code (salt, 0..n-1)}. */
    static void keys(final Session session, final long salt, final int n)
    {
        final PageKeyChain keys = session.keys();
        keys.clear();
        for (int i = 0; i < n; i++)
        {
            keys.add(salt, i * 0x9E3779B97F4A7C15L + 1);
        }
    }

    static PageKey key(final Session session, final int index)
    {
        return new PageKey(session.keys().high(index), session.keys().low(index));
    }

    static byte expected(final long high, final long low, final int offset)
    {
        long x = high * 31 + low + offset * 0x9E3779B97F4A7C15L;
        x ^= x >>> 29;
        return (byte)x;
    }

    /** Reserves, fills whole and commits keys [from, from + count); returns pages committed. */
    static int write(final Session session, final int from, final int count)
    {
        session.reserve(from, count);
        for (int i = from; i < from + count; i++)
        {
            if (session.status(i) == PageEntryStatus.RESERVED)
            {
                final long high = session.keys().high(i);
                final long low = session.keys().low(i);
                final MemorySegment page = session.page(i);
                for (int b = 0; b < PAGE_SIZE; b++)
                {
                    page.set(ValueLayout.JAVA_BYTE, b, expected(high, low, b));
                }
                session.payloadLength(i, PAGE_SIZE);
            }
        }
        return session.commit(from, count);
    }

    /** @return whether a pinned page holds exactly its key's bytes */
    static boolean intact(final Session session, final int index)
    {
        final long high = session.keys().high(index);
        final long low = session.keys().low(index);
        if (session.payloadLength(index) != PAGE_SIZE)
        {
            return false;
        }
        final MemorySegment page = session.page(index);
        for (int b = 0; b < PAGE_SIZE; b++)
        {
            if (page.get(ValueLayout.JAVA_BYTE, b) != expected(high, low, b))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Acquires keys [0, n), checks every page served against its key's bytes, and releases them.
     *
     * @return the pages served, each one checked
     */
    static int acquireChecked(final Session session, final int n)
    {
        final int served = session.acquire(0, n);
        int checked = 0;
        for (int i = 0; i < n; i++)
        {
            if (PageEntryStatus.isPinned(session.status(i)))
            {
                if (!intact(session, i))
                {
                    throw new AssertionError("WRONG BYTES served for key " + key(session, i) + " (index " + i + ")");
                }
                checked++;
            }
        }
        session.release();
        if (checked != served)
        {
            throw new AssertionError("acquire answered " + served + " pages but " + checked + " were pinned");
        }
        return served;
    }

    /** Writes and backs up keys [0, n) of chain {@code salt}, then evicts them: they are in L3 only. */
    static void inL3Only(final Session session, final long salt, final int n)
    {
        keys(session, salt, n);
        if (write(session, 0, n) != n)
        {
            throw new AssertionError("not every page committed");
        }
        if (session.flush() != 0)
        {
            throw new AssertionError("backups still running after flush");
        }
        if (session.evict(0, n) != n)
        {
            throw new AssertionError("not every page evicted");
        }
    }

    /** Waits, without a timing assertion, until a condition holds; fails after a generous bound naming what never happened. */
    static void awaitTrue(final BooleanSupplier condition, final String what)
    {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("gave up after 30 s waiting for: " + what);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }
}

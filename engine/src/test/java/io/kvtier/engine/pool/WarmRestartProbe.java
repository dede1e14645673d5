package io.kvtier.engine.pool;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;

/**
 * Run in a second JVM by {@link PoolWarmRestartTest}, as an engine that dies without any cleanup, as a
 * crashed or SIGKILLed engine would.
 *
 * <ul>
 *   <li>{@code commit POOL PAGE_SIZE POOL_SIZE PAGES HALF_WRITTEN}: commits keys {@code (1, 0)} to
 *       {@code (1, PAGES - 1)}, each page's bytes derived from its key ({@link #fill}), then reserves keys
 *       {@code (2, 0)} to {@code (2, HALF_WRITTEN - 1)}, writes them with bytes derived from another key and
 *       seals them without committing (a writer the crash caught between its seal and its commit), prints
 *       {@code ready} and halts;</li>
 *   <li>{@code adopt POOL PAGE_SIZE POOL_SIZE AT}: starts an engine on a dead engine's pool, which adopts it,
 *       prints {@code adopting N} once it has adopted at least {@code AT} pages and then lives on until it is
 *       killed (or for a minute).</li>
 * </ul>
 */
public final class WarmRestartProbe
{
    private WarmRestartProbe()
    {
    }

    /**
     * @param high a key's high half
     * @param low  its low half
     * @param pageSize the page size
     * @return the payload length the probe gives the key's page: a multiple of 8 from 8 to the page size
     */
    static int length(final long high, final long low, final long pageSize)
    {
        return 8 * (1 + (int)Long.remainderUnsigned(mix(high, low, 7), pageSize / 8));
    }

    /**
     * @param high a key's high half
     * @param low  its low half
     * @param i    a word of the page
     * @return the word's value in the key's page
     */
    static long word(final long high, final long low, final int i)
    {
        return mix(high, low, i + 11L);
    }

    private static long mix(final long high, final long low, final long i)
    {
        long x = high * 0x9E3779B97F4A7C15L ^ low * 0xC2B2AE3D27D4EB4FL ^ i * 0x165667B19E3779F9L;
        x ^= x >>> 31;
        x *= 0xBF58476D1CE4E5B9L;
        return x ^ (x >>> 29);
    }

    /** Writes the bytes derived from {@code (high, low)} into a payload; returns their length. */
    static int fill(final MemorySegment payload, final long high, final long low, final long pageSize)
    {
        final int length = length(high, low, pageSize);
        for (int i = 0; i < length / 8; i++)
        {
            payload.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, word(high, low, i));
        }
        return length;
    }

    /**
     * @return null when the payload holds exactly the bytes derived from the key, else what differs
     */
    static String check(final MemorySegment payload, final int length, final long high, final long low, final long pageSize)
    {
        if (length != length(high, low, pageSize))
        {
            return "key (" + high + ", " + low + ") has length " + length + ", not " + length(high, low, pageSize);
        }
        for (int i = 0; i < length / 8; i++)
        {
            if (payload.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i) != word(high, low, i))
            {
                return "key (" + high + ", " + low + ") differs at byte " + 8L * i;
            }
        }
        return null;
    }

    static Map<String, String> settings(final String pool, final String pageSize, final String poolSize)
    {
        final Map<String, String> settings = new HashMap<>();
        settings.put(EngineConfig.POOL_PATH, pool);
        settings.put(EngineConfig.POOL_PAGE_SIZE, pageSize);
        settings.put(EngineConfig.POOL_SIZE, poolSize);
        settings.put(EngineConfig.POOL_EVICT_HIGH, "0.99");
        settings.put(EngineConfig.POOL_EVICT_LOW, "0.98");
        return settings;
    }

    public static void main(final String[] args) throws Exception
    {
        final Engine engine = Engine.start(EngineConfig.from(settings(args[1], args[2], args[3])));
        final long pageSize = engine.pool().pageSize();
        if (args[0].equals("commit"))
        {
            final int pages = Integer.parseInt(args[4]);
            final int halfWritten = Integer.parseInt(args[5]);
            try (Session session = engine.openSession())
            {
                for (int from = 0; from < pages; from += 1024)
                {
                    final int count = Math.min(1024, pages - from);
                    session.keys().clear();
                    for (int k = 0; k < count; k++)
                    {
                        session.keys().add(1, from + k);
                    }
                    if (session.reserve(0, count) != count)
                    {
                        throw new IllegalStateException("reserved fewer than " + count + " pages");
                    }
                    for (int k = 0; k < count; k++)
                    {
                        session.payloadLength(k, fill(session.page(k), 1, from + k, pageSize));
                    }
                    session.commit(0, count);
                }
                session.keys().clear();
                for (int k = 0; k < halfWritten; k++)
                {
                    session.keys().add(2, k);
                }
                session.reserve(0, halfWritten);
                for (int k = 0; k < halfWritten; k++)
                {
                    // Sealed for key (2, k) but holding another key's bytes, and never committed.
                    final int length = fill(session.page(k), 3, k, pageSize);
                    engine.pool().frames().seal(session.pageId(k), 2, k, length);
                }
                System.out.println("ready " + ProcessHandle.current().pid());
                System.out.flush();
                Runtime.getRuntime().halt(9);
            }
        }
        final long at = Long.parseLong(args[4]);
        final long deadline = System.nanoTime() + 60_000_000_000L;
        boolean told = false;
        while (System.nanoTime() < deadline)
        {
            final long adopted = engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED);
            if (!told && adopted >= at)
            {
                System.out.println("adopting " + adopted);
                System.out.flush();
                told = true;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000);
        }
        Runtime.getRuntime().halt(1);
    }
}

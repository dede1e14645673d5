package io.kvtier.engine;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Starts small engines for tests and fills and checks pages whose bytes derive from their keys.
 */
final class EngineFixture
{
    static final int PAGE_SIZE = 4096;
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private EngineFixture()
    {
    }

    /** Settings for a small pool in /dev/shm, with a scripted tier named after the test when {@code tier} is set. */
    static Map<String, String> settings(final String tier, final int pages)
    {
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put(EngineConfig.POOL_PATH, "/dev/shm/kvtier-test-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet());
        settings.put(EngineConfig.POOL_PAGE_SIZE, String.valueOf(PAGE_SIZE));
        settings.put(EngineConfig.POOL_SIZE, String.valueOf((long)PAGE_SIZE * pages));
        settings.put(EngineConfig.PIPELINE_TICK, "1ms");
        if (tier != null)
        {
            settings.put("tier." + tier + ".type", "scripted");
        }
        return settings;
    }

    static Engine start(final Map<String, String> settings) throws IOException
    {
        return Engine.start(EngineConfig.from(settings));
    }

    /** Starts an engine whose leases and timeouts follow {@code clock} alone. */
    static Engine start(final Map<String, String> settings, final EngineClock clock) throws IOException
    {
        return Engine.start(EngineConfig.from(settings), clock);
    }

    /** Runs a request that blocks until a timeout, on a thread of its own. */
    static <T> java.util.concurrent.CompletableFuture<T> async(final java.util.concurrent.Callable<T> request)
    {
        final java.util.concurrent.CompletableFuture<T> result = new java.util.concurrent.CompletableFuture<>();
        Thread.ofPlatform().daemon(true).start(() ->
        {
            try
            {
                result.complete(request.call());
            }
            catch (final Exception | AssertionError ex)
            {
                result.completeExceptionally(ex);
            }
        });
        return result;
    }

    static Path poolPath(final Map<String, String> settings)
    {
        return Path.of(settings.get(EngineConfig.POOL_PATH));
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

    /** @return key {@code index} of the session's chain as a {@link io.kvtier.spi.PageKey}, as tiers see it */
    static io.kvtier.spi.PageKey pageKey(final Session session, final int index)
    {
        return new io.kvtier.spi.PageKey(session.keys().high(index), session.keys().low(index));
    }

    static byte expectedByte(final long keyHigh, final long keyLow, final int offset)
    {
        long x = keyHigh * 31 + keyLow + offset * 0x9E3779B97F4A7C15L;
        x ^= x >>> 29;
        return (byte)x;
    }

    static int lengthFor(final long keyLow)
    {
        return 1 + (int)Long.remainderUnsigned(keyLow, PAGE_SIZE);
    }

    /** Writes the pattern of the key into a reserved page and sets its length. */
    static void fill(final Session session, final int index)
    {
        final long high = session.keys().high(index);
        final long low = session.keys().low(index);
        final MemorySegment page = session.page(index);
        final int length = lengthFor(low);
        for (int i = 0; i < length; i++)
        {
            page.set(ValueLayout.JAVA_BYTE, i, expectedByte(high, low, i));
        }
        session.payloadLength(index, length);
    }

    /** @return whether a pinned page holds exactly the pattern of its key */
    static boolean intact(final Session session, final int index)
    {
        final long high = session.keys().high(index);
        final long low = session.keys().low(index);
        final MemorySegment page = session.page(index);
        final int length = lengthFor(low);
        if (session.payloadLength(index) != length)
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            if (page.get(ValueLayout.JAVA_BYTE, i) != expectedByte(high, low, i))
            {
                return false;
            }
        }
        return true;
    }

    /** Reserves, fills and commits keys [from, from + count); returns pages committed. */
    static int write(final Session session, final int from, final int count)
    {
        session.reserve(from, count);
        for (int i = from; i < from + count; i++)
        {
            if (session.status(i) == PageEntryStatus.RESERVED)
            {
                fill(session, i);
            }
        }
        return session.commit(from, count);
    }

    /** Waits, without a timing assertion, until a condition holds; fails after a generous deadline. */
    static void awaitTrue(final java.util.function.BooleanSupplier condition, final String what)
    {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("gave up waiting for: " + what);
            }
            Thread.onSpinWait();
            java.util.concurrent.locks.LockSupport.parkNanos(200_000);
        }
    }
}

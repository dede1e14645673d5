package io.kvtier.engine.core;

import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.ClientSlotReaper;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

import java.util.function.LongSupplier;

/**
 * What other processes read to know the engine and its clients are alive: the pool's heartbeat, and
 * the client slots of processes that pin pages directly, whose pins it takes back when they die or
 * fall silent. Runs on real time, every 100 ms, whatever the engine clock says: other processes read
 * the heartbeat by the wall clock.
 */
final class PoolLiveness implements TimedPart
{
    private static final long PERIOD_NS = 100_000_000L;

    private final PagePool pool;
    private final PageIndex index;
    private final EngineCounters counters;
    private final ClientSlotReaper reaper;
    private final long[] reclaims = new long[2];
    private final LongSupplier realNanos;
    private final LongSupplier wallMillis;
    private long lastBeatNanos;
    private Runnable spaceFreed;

    PoolLiveness(final PagePool pool, final PageIndex index, final EngineCounters counters, final long clientTimeoutMillis)
    {
        this(pool, index, counters, clientTimeoutMillis, System::nanoTime, System::currentTimeMillis);
    }

    /**
     * With the real time it runs on given, so that a test can move it.
     *
     * @param realNanos  monotonic real time, for the period ({@link System#nanoTime()} in production)
     * @param wallMillis wall-clock time, for the heartbeat and client slots ({@link System#currentTimeMillis()})
     */
    PoolLiveness(final PagePool pool, final PageIndex index, final EngineCounters counters, final long clientTimeoutMillis,
                 final LongSupplier realNanos, final LongSupplier wallMillis)
    {
        this.pool = pool;
        this.index = index;
        this.counters = counters;
        this.reaper = new ClientSlotReaper(pool, clientTimeoutMillis);
        this.realNanos = realNanos;
        this.wallMillis = wallMillis;
        this.lastBeatNanos = realNanos.getAsLong();
    }

    void connect(final Runnable onSpaceFreed)
    {
        this.spaceFreed = onSpaceFreed;
    }

    @Override
    public void onTime(final long nowNanos)
    {
        final long realNow = realNanos.getAsLong();
        if (realNow - lastBeatNanos < PERIOD_NS)
        {
            return;
        }
        lastBeatNanos = realNow;
        final long nowMillis = wallMillis.getAsLong();
        pool.header().heartbeatRelease(nowMillis);
        reclaims[0] = 0;
        reclaims[1] = 0;
        reaper.reap(nowMillis, reclaims);
        counters.set(EngineCounter.CLIENTS_ATTACHED, reaper.active());
        if (reclaims[0] > 0)
        {
            counters.add(EngineCounter.CLIENTS_RECLAIMED, reclaims[0]);
            counters.add(EngineCounter.CLIENT_PINS_RECLAIMED, reclaims[1]);
            spaceFreed.run();
        }
        counters.set(EngineCounter.INDEX_FORGOTTEN, index.forgotten());
    }
}

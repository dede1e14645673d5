package io.kvtier.engine.core;

import io.kvtier.engine.index.PageIndex;
import io.kvtier.client.pool.ClientSlotDescriptor;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PinTableDescriptor;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pool's heartbeat and the reaping of silent direct clients, on a real time the test moves (the
 * part runs on real time, not the engine clock, because other processes read what it writes).
 */
class PoolLivenessTest
{
    private static final long TIMEOUT_MS = 3_000;
    private static final long PERIOD_NS = Duration.ofMillis(100).toNanos();
    private static final long START_MS = 42_000;
    private static final int PID = (int)ProcessHandle.current().pid();

    @TempDir
    Path dir;

    private PagePool pool;
    private EngineCounters counters;
    private PoolLiveness liveness;
    private long realNanos = 7_000_000_000L;
    private long wallMillis = START_MS;
    private int spaceFreed;

    @BeforeEach
    void create() throws IOException
    {
        pool = PagePool.create(dir.resolve("pool"), 4096, 4, 32, 2, Duration.ofMillis(TIMEOUT_MS));
        counters = new EngineCounters(pool.counters());
        liveness = new PoolLiveness(pool, new PageIndex(pool.index(), pool.pageCount()), counters, TIMEOUT_MS, () -> realNanos, () -> wallMillis);
        liveness.connect(() -> spaceFreed++);
    }

    @AfterEach
    void close()
    {
        pool.close();
    }

    /** Moves real time by {@code millis} and calls the part, with an engine clock that says nothing of it. */
    private void tick(final long millis)
    {
        realNanos += Duration.ofMillis(millis).toNanos();
        wallMillis += millis;
        liveness.onTime(-1);
    }

    /** A direct client in a slot, as PoolClient claims one but without its lock byte: its liveness is its heartbeat. */
    private long claim(final int slot)
    {
        final long word = ClientSlotDescriptor.word(ClientSlotDescriptor.ACTIVE, 1, PID);
        assertThat(pool.clientSlots().compareAndSetSlotWord(slot, pool.clientSlots().slotWordVolatile(slot), word)).isTrue();
        pool.clientSlots().heartbeatRelease(slot, wallMillis);
        return word;
    }

    private void pin(final int page, final int slot, final int count)
    {
        assertThat(pool.pinTable().compareAndSetEntry(page, slot, 0, PinTableDescriptor.entry(1, count))).isTrue();
    }

    @Test
    void shouldBeatEveryPeriodOfRealTimeWhateverTheEngineClockSays()
    {
        final long created = pool.header().heartbeatAcquire();
        realNanos += PERIOD_NS - 1;
        wallMillis = START_MS;
        liveness.onTime(Long.MAX_VALUE);
        assertThat(pool.header().heartbeatAcquire()).as("within the first period").isEqualTo(created);

        realNanos += 1;
        liveness.onTime(Long.MIN_VALUE);
        assertThat(pool.header().heartbeatAcquire()).isEqualTo(START_MS);

        wallMillis = START_MS + 50;
        realNanos += PERIOD_NS / 2;
        liveness.onTime(0);
        assertThat(pool.header().heartbeatAcquire()).isEqualTo(START_MS);
        realNanos += PERIOD_NS / 2;
        liveness.onTime(0);
        assertThat(pool.header().heartbeatAcquire()).isEqualTo(START_MS + 50);
    }

    @Test
    void shouldTakeBackThePinsOfAClientSilentPastItsTimeoutAndKeepALiveOnesPins()
    {
        claim(0);
        claim(1);
        pin(1, 0, 2);
        pin(2, 0, 1);
        pin(2, 1, 1);

        tick(100);
        assertThat(counters.getOpaque(EngineCounter.CLIENTS_ATTACHED)).isEqualTo(2);

        // Slot 1 keeps beating; slot 0 says nothing for exactly its timeout, then for a millisecond more.
        for (long silent = 100; silent < TIMEOUT_MS; silent += 100)
        {
            pool.clientSlots().heartbeatRelease(1, wallMillis);
            tick(100);
        }
        pool.clientSlots().heartbeatRelease(1, wallMillis);
        tick(100);
        assertThat(counters.getOpaque(EngineCounter.CLIENTS_RECLAIMED)).as("silent exactly its timeout").isZero();
        assertThat(spaceFreed).isZero();

        pool.clientSlots().heartbeatRelease(1, wallMillis);
        realNanos += PERIOD_NS;
        wallMillis += 1;
        liveness.onTime(0);

        assertThat(counters.getOpaque(EngineCounter.CLIENTS_RECLAIMED)).isEqualTo(1);
        assertThat(counters.getOpaque(EngineCounter.CLIENT_PINS_RECLAIMED)).isEqualTo(3);
        assertThat(counters.getOpaque(EngineCounter.CLIENTS_ATTACHED)).isEqualTo(1);
        assertThat(spaceFreed).as("pages may be evictable now: waiters are told").isEqualTo(1);
        assertThat(ClientSlotDescriptor.state(pool.clientSlots().slotWordVolatile(0))).isEqualTo(ClientSlotDescriptor.FREE);
        assertThat(PinTableDescriptor.count(pool.pinTable().entryVolatile(1, 0))).isZero();
        assertThat(PinTableDescriptor.count(pool.pinTable().entryVolatile(2, 0))).isZero();
        assertThat(PinTableDescriptor.count(pool.pinTable().entryVolatile(2, 1))).as("the live client's pin").isEqualTo(1);
        assertThat(ClientSlotDescriptor.state(pool.clientSlots().slotWordVolatile(1))).isEqualTo(ClientSlotDescriptor.ACTIVE);
    }
}

package io.kvtier.engine.pool;

import io.kvtier.client.pool.PoolClient;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Processes that pin pool pages directly: their pins have an owner and end with it. */
class PoolClientTest
{
    private static final int PAGE_SIZE = 64 << 10;

    private static Map<String, String> settings(final Path pool, final String sessionTimeout)
    {
        final Map<String, String> settings = new HashMap<>();
        settings.put(EngineConfig.POOL_PATH, pool.toString());
        settings.put(EngineConfig.POOL_SIZE, "1MiB");
        settings.put(EngineConfig.POOL_PAGE_SIZE, "64KiB");
        settings.put(EngineConfig.LEASE_SESSION_TIMEOUT, sessionTimeout);
        settings.put(EngineConfig.LEASE_RESERVATION_TIMEOUT, "100ms");
        settings.put(EngineConfig.PIPELINE_TICK, "1ms");
        return settings;
    }

    private static Path poolPath()
    {
        return Path.of("/dev/shm/kvtier-client-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    }

    private static void commit(final Session session, final int index, final byte fill)
    {
        session.reserve(index, 1);
        assertThat(session.status(index)).isEqualTo(PageEntryStatus.RESERVED);
        session.page(index).asSlice(0, 1000).fill(fill);
        session.payloadLength(index, 1000);
        assertThat(session.commit(index, 1)).isEqualTo(1);
    }

    private static void await(final BooleanSupplier condition, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean())
        {
            assertThat(System.nanoTime()).as("waiting for " + what).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void shouldReclaimThePinsOfAClientKilledWithSigkill(@TempDir final Path dir) throws Exception
    {
        final Path poolPath = poolPath();
        try (Engine engine = Engine.start(EngineConfig.from(settings(poolPath, "60s")));
             Session session = engine.openSession())
        {
            session.keys().add(0x77L, 0x88L);
            commit(session, 0, (byte)1);
            final String pinned = ChildJvm.run(dir.resolve("pin.txt"), PoolProbe.class, "pin-and-die", poolPath.toString(), "77", "88");
            assertThat(pinned).contains("pinned");
            // The dead client's lock byte is free, so its slot and pin are reclaimed long before the timeout.
            await(() -> engine.snapshot().get(EngineCounter.CLIENTS_RECLAIMED) == 1, "the dead client's slot is reclaimed");
            assertThat(engine.snapshot().get(EngineCounter.CLIENT_PINS_RECLAIMED)).isEqualTo(1);
            assertThat(session.evict(0, 1)).as("the page the dead client pinned can be evicted").isEqualTo(1);
        }
    }

    @Test
    void shouldKeepAPageALiveClientPinnedAndEvictItOnceUnpinned() throws Exception
    {
        final Path poolPath = poolPath();
        try (Engine engine = Engine.start(EngineConfig.from(settings(poolPath, "60s")));
             Session session = engine.openSession();
             PoolClient client = PoolClient.attach(poolPath))
        {
            session.keys().add(1, 2);
            commit(session, 0, (byte)7);
            final long pin = client.pinKey(1, 2);
            assertThat(pin).isNotEqualTo(PoolClient.NO_PIN);
            assertThat(client.payloadLength(pin)).isEqualTo(1000);
            assertThat(client.payload(pin).get(ValueLayout.JAVA_BYTE, 999)).isEqualTo((byte)7);
            assertThat(session.evict(0, 1)).as("pinned by a client").isZero();
            assertThat(client.isValid(pin)).isTrue();
            client.unpin(pin);
            assertThat(session.evict(0, 1)).isEqualTo(1);
            assertThat(client.isValid(pin)).as("the page was evicted").isFalse();
            assertThat(client.pinKey(1, 2)).as("nothing to pin once evicted").isEqualTo(PoolClient.NO_PIN);
            assertThat(client.pinKey(3, 4)).as("a key the pool never had").isEqualTo(PoolClient.NO_PIN);
        }
    }

    @Test
    void shouldGiveBackEveryPinWhenTheClientCloses() throws Exception
    {
        final Path poolPath = poolPath();
        try (Engine engine = Engine.start(EngineConfig.from(settings(poolPath, "60s")));
             Session session = engine.openSession())
        {
            session.keys().add(1, 2).add(1, 3);
            commit(session, 0, (byte)1);
            commit(session, 1, (byte)2);
            try (PoolClient client = PoolClient.attach(poolPath))
            {
                assertThat(client.pinKey(1, 2)).isNotEqualTo(PoolClient.NO_PIN);
                assertThat(client.pinKey(1, 2)).isNotEqualTo(PoolClient.NO_PIN);
                assertThat(client.pinKey(1, 3)).isNotEqualTo(PoolClient.NO_PIN);
                await(() -> engine.snapshot().get(EngineCounter.CLIENTS_ATTACHED) == 1, "the engine sees the client");
                assertThat(session.evict(0, 2)).isZero();
            }
            assertThat(session.evict(0, 2)).isEqualTo(2);
            assertThat(engine.snapshot().get(EngineCounter.CLIENTS_RECLAIMED)).as("a client that left by itself is not reclaimed").isZero();
        }
    }

    @Test
    void shouldRefuseAClientWhenEverySlotIsTaken() throws Exception
    {
        final Path poolPath = poolPath();
        final Map<String, String> settings = settings(poolPath, "60s");
        settings.put(EngineConfig.POOL_CLIENT_SLOTS, "1");
        try (Engine engine = Engine.start(EngineConfig.from(settings));
             PoolClient first = PoolClient.attach(poolPath))
        {
            assertThatThrownBy(() -> PoolClient.attach(poolPath)).isInstanceOf(IllegalStateException.class).hasMessageContaining("pool.client-slots");
            assertThat(first.slot()).isZero();
        }
    }

    @Test
    void shouldTakeBackTheSlotOfAClientThatStoppedHeartbeating(@TempDir final Path dir) throws Exception
    {
        final Path poolPath = poolPath();
        try (Engine engine = Engine.start(EngineConfig.from(settings(poolPath, "500ms")));
             Session session = engine.openSession())
        {
            session.keys().add(5, 6);
            commit(session, 0, (byte)3);
            final Path out = dir.resolve("stalled.txt");
            final Process child = ChildJvm.start(out, PoolProbe.class, "pin-and-wait", poolPath.toString(), "5", "6");
            try
            {
                await(() ->
                {
                    session.keepAlive();
                    return read(out).contains("pinned");
                }, "the child pins");
                // A stopped process keeps its lock byte but sends no heartbeat: its lease runs out.
                signal(child.pid(), "STOP");
                await(() ->
                {
                    session.keepAlive();
                    return engine.snapshot().get(EngineCounter.CLIENTS_RECLAIMED) == 1;
                }, "the silent client's slot is reclaimed");
                assertThat(session.evict(0, 1)).isEqualTo(1);
                signal(child.pid(), "CONT");
                try (OutputStream in = child.getOutputStream())
                {
                    in.write("go\n".getBytes(StandardCharsets.US_ASCII));
                }
                assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertThat(read(out)).contains("current=false valid=false").contains("lost: client slot");
            }
            finally
            {
                child.destroyForcibly();
            }
        }
    }

    @Test
    void shouldNeverHandOutWrongBytesWhileTheEngineEvictsAndReusesPages() throws Exception
    {
        final Path poolPath = poolPath();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong verified = new AtomicLong();
        final AtomicLong wrong = new AtomicLong();
        try (Engine engine = Engine.start(EngineConfig.from(settings(poolPath, "60s")));
             Session writer = engine.openSession();
             PoolClient client = PoolClient.attach(poolPath))
        {
            // 16 pages, 64 keys: the writer keeps evicting and reusing the pages the reader pins.
            final Thread reader = Thread.ofPlatform().start(() ->
            {
                int key = 0;
                while (!stop.get())
                {
                    key = (key + 1) & 63;
                    final long pin = client.pinKey(9, key);
                    if (pin == PoolClient.NO_PIN)
                    {
                        continue;
                    }
                    // A pin is trusted as it would be in production: no validation after reading. Reading
                    // twice, with a pause, gives a reuse of the page the time to show.
                    final MemorySegment payload = client.payload(pin);
                    final byte first = payload.get(ValueLayout.JAVA_BYTE, 0);
                    Thread.onSpinWait();
                    final byte last = payload.get(ValueLayout.JAVA_BYTE, 999);
                    final int length = client.payloadLength(pin);
                    final boolean valid = client.isValid(pin);
                    if (first == (byte)key && last == (byte)key && length == 1000 && valid)
                    {
                        verified.incrementAndGet();
                    }
                    else
                    {
                        if (wrong.incrementAndGet() < 5)
                        {
                            System.err.println("WRONG key=" + key + " first=" + first + " last=" + last + " length=" + length + " valid=" + valid
                                + " word=" + Long.toHexString(client.pool().metadata().stateWordAcquire(PoolClient.page(pin))) + " handle=" + Long.toHexString(pin));
                        }
                    }
                    client.unpin(pin);
                }
            });
            for (int key = 0; key < 64; key++)
            {
                writer.keys().add(9, key);
            }
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            int rounds = 0;
            while (System.nanoTime() < deadline || verified.get() < 100)
            {
                for (int key = 0; key < 64; key++)
                {
                    writer.reserve(key, 1);
                    if (writer.status(key) == PageEntryStatus.RESERVED)
                    {
                        writer.page(key).asSlice(0, 1000).fill((byte)key);
                        writer.payloadLength(key, 1000);
                        writer.commit(key, 1);
                    }
                }
                writer.evict(0, 64);
                rounds++;
                assertThat(rounds).as("rounds before the reader verified 100 pages").isLessThan(1_000_000);
            }
            stop.set(true);
            reader.join();
            assertThat(wrong.get()).isZero();
            assertThat(verified.get()).isGreaterThanOrEqualTo(100);
        }
    }

    @Test
    void shouldNeverHandOutWrongBytesToAnotherProcessWhileTheEngineEvictsAndReuses(@TempDir final Path dir) throws Exception
    {
        final Path poolPath = poolPath();
        try (Engine engine = Engine.start(EngineConfig.from(settings(poolPath, "60s")));
             Session writer = engine.openSession())
        {
            for (int key = 0; key < 64; key++)
            {
                writer.keys().add(9, key);
            }
            final Path out = dir.resolve("pin-loop.txt");
            final Process reader = ChildJvm.start(out, PoolProbe.class, "pin-loop", poolPath.toString(), "2000");
            try
            {
                int rounds = 0;
                while (reader.isAlive())
                {
                    for (int key = 0; key < 64; key++)
                    {
                        writer.reserve(key, 1);
                        if (writer.status(key) == PageEntryStatus.RESERVED)
                        {
                            writer.page(key).asSlice(0, 1000).fill((byte)key);
                            writer.payloadLength(key, 1000);
                            writer.commit(key, 1);
                        }
                    }
                    writer.evict(0, 64);
                    rounds++;
                    assertThat(rounds).as("rounds while the other process reads; its output: %s", read(out)).isLessThan(1_000_000);
                }
                final String result = read(out);
                assertThat(result).as("the other process's report").contains("verified=2000 wrong=0");
                assertThat(engine.snapshot().get(EngineCounter.PAGES_EVICTED)).as("evictions raced its pins").isGreaterThan(100);
            }
            finally
            {
                reader.destroyForcibly();
            }
        }
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.exists(file) ? Files.readString(file) : "";
        }
        catch (final java.io.IOException ex)
        {
            return "";
        }
    }

    private static void signal(final long pid, final String signal) throws Exception
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
        assertThat(kill.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }
}

package io.kvtier.engine.ipc;

import io.kvtier.client.IpcConnection;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.kvtier.engine.ipc.IpcTestSupport.Answer;
import static io.kvtier.engine.ipc.IpcTestSupport.await;
import static io.kvtier.engine.ipc.IpcTestSupport.call;
import static io.kvtier.engine.ipc.IpcTestSupport.keys;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client in another JVM is killed with SIGKILL while it holds pins and is writing reserved pages:
 * the engine notices at once (its socket closes), drops its pins, sends its reservations through
 * quarantine so that none of them ever becomes visible, and another connected client goes on as if
 * nothing happened. Three times over, against the same engine; the second time the child holds what one
 * LOOKUP_AND_LOCK (protocol 1.3) pinned and reserved.
 */
class IpcCrossProcessTest
{
    private static final int PINS = 3;
    private static final int RESERVES = 4;
    private static final long WAIT_MILLIS = 60_000;

    @TempDir
    Path directory;

    @Test
    void aClientKilledMidWriteGivesBackItsPinsAndNoneOfItsReservedPagesBecomesVisible() throws Exception
    {
        final Map<String, String> settings = IpcTestSupport.settings(directory, 128);
        try (Engine engine = IpcTestSupport.start(settings);
             IpcConnection survivor = IpcConnection.connect(IpcTestSupport.socket(engine), 64))
        {
            for (int round = 0; round < 3; round++)
            {
                final long pinBase = 0x10_000L * (round + 1);
                final long reserveBase = pinBase + 0x1000;

                // The survivor publishes the pages the child will pin, and holds a pin on them itself.
                final Answer reserved = call(survivor, MessageType.RESERVE, 0, keys(pinBase, PINS), keys(pinBase, PINS));
                final int[] lengths = new int[PINS];
                for (int i = 0; i < PINS; i++)
                {
                    IpcTestSupport.fill(survivor.page(reserved.pageIds()[i]), pinBase + i, pinBase + i, IpcTestSupport.PAGE_SIZE);
                    lengths[i] = IpcTestSupport.PAGE_SIZE;
                }
                assertThat(await(survivor, survivor.sendCommit(0, PINS, lengths)).resultCount()).isEqualTo(PINS);
                final Answer held = call(survivor, MessageType.ACQUIRE, 0, keys(pinBase, PINS), keys(pinBase, PINS));
                assertThat(held.resultCount()).isEqualTo(PINS);
                final int[] pinnedPages = held.pageIds();

                final long quarantinedBefore = engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED);
                final Path out = directory.resolve("child-" + round + ".out");
                final Process child = startChild(out, IpcTestSupport.socket(engine), pinBase, reserveBase, round == 1);
                try
                {
                    waitFor(() -> output(out).startsWith("READY") || output(out).startsWith("FAILED") || !child.isAlive(), "the child to be READY: " + out);
                    assertThat(output(out)).startsWith("READY");
                    for (final int page : pinnedPages)
                    {
                        assertThat(pins(engine, page)).as("the survivor's pin and the child's").isEqualTo(2);
                    }
                    assertThat(engine.ipc().orElseThrow().clientCount()).isEqualTo(2);
                }
                finally
                {
                    child.destroyForcibly();
                    assertThat(child.waitFor(WAIT_MILLIS, TimeUnit.MILLISECONDS)).isTrue();
                }

                waitFor(() -> engine.ipc().orElseThrow().clientCount() == 1, "the engine to drop the killed client");
                for (final int page : pinnedPages)
                {
                    waitFor(() -> pins(engine, page) == 1, "the child's pin on page " + page + " to go");
                }
                assertThat(engine.counters().getOpaque(EngineCounter.RESERVATIONS_EXPIRED) - quarantinedBefore)
                    .as("every reservation of the killed client went through quarantine, none was freed as if aborted").isEqualTo(RESERVES);
                assertThat(Files.list(directory).filter(p -> p.getFileName().toString().startsWith("pool.client-")).count())
                    .as("no ring file: both clients' rings were passed as descriptors, with no name").isZero();

                // None of the child's reservations is visible: neither found nor acquired nor reservable as EXISTS.
                final long[] reservedKeys = keys(reserveBase, RESERVES);
                final Answer lookup = call(survivor, MessageType.LOOKUP, 8, reservedKeys, reservedKeys);
                assertThat(lookup.status()).isEqualTo(ErrorCode.OK.code());
                assertThat(lookup.poolPages()).isZero();
                final Answer acquire = call(survivor, MessageType.ACQUIRE, 8, reservedKeys, reservedKeys);
                assertThat(acquire.resultCount()).isZero();

                // The survivor is unaffected: its pins and bytes stand, and once it lets go the pages are evictable.
                for (int i = 0; i < PINS; i++)
                {
                    assertThat(IpcTestSupport.holds(survivor.page(pinnedPages[i]), pinBase + i, pinBase + i, IpcTestSupport.PAGE_SIZE)).isTrue();
                }
                assertThat(await(survivor, survivor.send(MessageType.RELEASE, 0, PINS, 0)).resultCount()).isEqualTo(PINS);
                for (final int page : pinnedPages)
                {
                    assertThat(pins(engine, page)).isZero();
                }
                final Answer evicted = call(survivor, MessageType.EVICT, 0, keys(pinBase, PINS), keys(pinBase, PINS));
                assertThat(evicted.resultCount()).as("unpinned, hence evictable").isEqualTo(PINS);
                assertThat(call(survivor, MessageType.LOOKUP, 0, keys(pinBase, PINS), keys(pinBase, PINS)).poolPages()).isZero();
            }
            final Answer still = call(survivor, MessageType.RESERVE, 20, keys(0x99_000, 1), keys(0x99_000, 1));
            assertThat(still.pageStatuses()).containsExactly(PageEntryStatus.RESERVED);
        }
    }

    private static int pins(final Engine engine, final int page)
    {
        return PageStateWord.pins(engine.pool().metadata().stateWordAcquire(page));
    }

    private static Process startChild(final Path out, final Path socket, final long pinBase, final long reserveBase, final boolean lock)
        throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(IpcCrashingClient.class.getName());
        command.add(socket.toString());
        command.add(Long.toString(pinBase));
        command.add(Integer.toString(PINS));
        command.add(Long.toString(reserveBase));
        command.add(Integer.toString(RESERVES));
        if (lock)
        {
            command.add("lock");
        }
        // Never inheritIO: the child's output would corrupt surefire's channel to this JVM.
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    }

    private static String output(final Path out)
    {
        try
        {
            return Files.readString(out).strip();
        }
        catch (final java.io.IOException ex)
        {
            return "";
        }
    }

    /** Waits for an outcome, with a generous bound that only a broken engine reaches. */
    private static void waitFor(final BooleanSupplier outcome, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (!outcome.getAsBoolean())
        {
            if (System.nanoTime() - deadline > 0)
            {
                throw new AssertionError("gave up waiting for " + what);
            }
            Thread.sleep(5);
        }
    }
}

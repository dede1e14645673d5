package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.bench.tier.MooncakeMasterProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A page the store hands back with one byte flipped, which the Mooncake tier cannot see (the byte count
 * is right): the engine's own frame check must catch it, serve none of its bytes, count it and forget
 * it, while the pages before it load byte-exact. Two engines on one master as in
 * {@link MooncakeTwoEnginesTest}; the flip is the project's Mooncake test double's CORRUPT fault, so this
 * runs against the double only.
 */
class MooncakeCorruptPageTest
{
    private static final int CHAIN = 8;
    private static final int OP_GET = 2;
    private static final int CORRUPT = 4;

    @TempDir
    Path directory;

    @Test
    void anEngineServesNoByteOfAPageTheStoreCorruptedAndLoadsThePagesBeforeIt() throws Throwable
    {
        final Path home = MooncakeHome.require();
        assumeTrue(MooncakeHome.real().isEmpty(), "needs the project's Mooncake test double (its CORRUPT fault); "
            + MooncakeMasterProcess.HOME_ENV_NAME + " names a real install: unset it to run this test");
        final String library = MooncakeMasterProcess.library(home).toString();
        final long seed = ThreadLocalRandom.current().nextLong();
        try (MooncakeMasterProcess master = MooncakeMasterProcess.start(home, Duration.ofSeconds(10), directory.resolve("mooncake_master.log")))
        {
            final Path nodeADir = Files.createDirectories(directory.resolve("node-a"));
            final Process nodeA = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), MooncakeEngineNode.class.getName(),
                nodeADir.toString(), master.address(), library, Long.toString(seed), Integer.toString(CHAIN)))
                .redirectError(directory.resolve("node-a.err").toFile())
                .start();
            try
            {
                final BufferedReader out = new BufferedReader(new InputStreamReader(nodeA.getInputStream(), StandardCharsets.UTF_8));
                final String ready = out.readLine();
                assertThat(ready).as("node A's report (stderr in %s)", directory.resolve("node-a.err")).isNotNull().contains("backups_completed=" + CHAIN);

                final Path nodeBDir = Files.createDirectories(directory.resolve("node-b"));
                try (Engine nodeB = Engine.start(EngineConfig.from(MooncakeEngineNode.settings(nodeBDir, master.address(), library, "64MiB")));
                     Session session = nodeB.openSession())
                {
                    MooncakeEngineNode.chain(session, seed, CHAIN);
                    assertThat(session.lookup(0, CHAIN)).as("prefix found by probing the store").isEqualTo(CHAIN);
                    inject(library, OP_GET, CORRUPT, 0, 1);
                    final int loaded = session.acquire(0, CHAIN);

                    assertThat(nodeB.counters().getOpaque(EngineCounter.L3_CORRUPT)).as("pages the frame check refused").isEqualTo(1);
                    assertThat(loaded).as("pages acquired: the run before the corrupted one").isLessThan(CHAIN);
                    assertThat(session.status(loaded)).as("the corrupted page").isEqualTo(PageEntryStatus.MISS);
                    for (int i = 0; i < loaded; i++)
                    {
                        assertThat(session.status(i)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
                        final MemorySegment page = session.page(i);
                        for (int offset = 0; offset < MooncakeEngineNode.length(i); offset++)
                        {
                            if (page.get(ValueLayout.JAVA_BYTE, offset) != MooncakeEngineNode.at(seed, i, offset))
                            {
                                throw new AssertionError("page " + i + " differs at byte " + offset);
                            }
                        }
                    }
                    session.release();
                }
            }
            finally
            {
                nodeA.getOutputStream().close();
                if (!nodeA.waitFor(30, TimeUnit.SECONDS))
                {
                    nodeA.destroyForcibly();
                }
            }
        }
    }

    /** Arms a fault of the double (plugins/mooncake/fake/include/mooncake_fake.h) in the library this JVM's tier loads. */
    private static void inject(final String library, final int op, final int kind, final long skip, final long count) throws Throwable
    {
        final MethodHandle inject = NativeAccess.downcall(NativeAccess.library(library), "mooncake_fake_inject", FunctionDescriptor.of(
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
        assertThat((int)inject.invokeExact(op, kind, skip, count, 0L)).as("mooncake_fake_inject").isZero();
    }
}

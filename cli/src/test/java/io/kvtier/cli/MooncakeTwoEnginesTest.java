package io.kvtier.cli;

import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.bench.tier.MooncakeMasterProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two kvtier engines as two nodes: separate processes, separate pools, each with its own Mooncake
 * client and segment, on one master. Node A ({@link MooncakeEngineNode}) writes a chain of pages and
 * backs it up; node B, this JVM, has never seen the keys: a lookup finds the chain by probing the
 * store, an acquire loads every page from node A's segment over TCP, and each byte is the one node A
 * wrote. This is how kvtier shares prefixes across a cluster through a store it does not write.
 */
class MooncakeTwoEnginesTest
{
    private static final int CHAIN = 32;

    @TempDir
    Path directory;

    @Test
    void anEngineFindsAndLoadsByteExactAChainAnotherEngineBackedUp() throws Exception
    {
        final Path home = MooncakeHome.require();
        final String library = MooncakeMasterProcess.library(home).toString();
        final long seed = ThreadLocalRandom.current().nextLong();
        try (MooncakeMasterProcess master = MooncakeMasterProcess.start(home, Duration.ofSeconds(10), directory.resolve("mooncake_master.log")))
        {
            final Path nodeADir = java.nio.file.Files.createDirectories(directory.resolve("node-a"));
            final Process nodeA = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), MooncakeEngineNode.class.getName(),
                nodeADir.toString(), master.address(), library, Long.toString(seed), Integer.toString(CHAIN)))
                .redirectError(directory.resolve("node-a.err").toFile())
                .start();
            try
            {
                final BufferedReader out = new BufferedReader(new InputStreamReader(nodeA.getInputStream(), StandardCharsets.UTF_8));
                final String ready = out.readLine();
                assertThat(ready).as("node A's report (stderr in %s)", directory.resolve("node-a.err")).isNotNull().startsWith("READY");
                assertThat(ready).as("node A backed its chain up").contains("backups_completed=" + CHAIN).contains("backups_lost=0");

                final Path nodeBDir = java.nio.file.Files.createDirectories(directory.resolve("node-b"));
                try (Engine nodeB = Engine.start(EngineConfig.from(MooncakeEngineNode.settings(nodeBDir, master.address(), library, "64MiB")));
                     Session session = nodeB.openSession())
                {
                    MooncakeEngineNode.chain(session, seed, CHAIN);
                    assertThat(session.lookup(0, CHAIN)).as("prefix found by probing the store").isEqualTo(CHAIN);
                    assertThat(session.l2Pages()).as("none of it in node B's pool").isZero();
                    assertThat(session.l3Pages()).isEqualTo(CHAIN);
                    assertThat(session.acquire(0, CHAIN)).isEqualTo(CHAIN);
                    assertThat(session.acquiredFromL3()).isEqualTo(CHAIN);
                    for (int i = 0; i < CHAIN; i++)
                    {
                        assertThat(session.status(i)).isEqualTo(PageEntryStatus.PINNED_FROM_L3);
                        assertThat(session.payloadLength(i)).as("page %d's length", i).isEqualTo(MooncakeEngineNode.length(i));
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
                    assertThat(nodeB.counters().getOpaque(EngineCounter.L3_CORRUPT)).isZero();
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
}

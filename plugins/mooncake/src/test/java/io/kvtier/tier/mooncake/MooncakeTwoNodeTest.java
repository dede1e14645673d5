package io.kvtier.tier.mooncake;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierStatus;
import io.kvtier.tck.ContractTierContext;
import io.kvtier.tck.PageArena;
import io.kvtier.tck.PageBytes;
import io.kvtier.tck.RecordingTierBatch;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two nodes on one master, as two processes: only then do bytes cross the transfer engine's TCP
 * path (within one process Mooncake copies with memcpy). Node A, a separate JVM
 * ({@link MooncakeNode}), contributes the only segment and backs up a chain of pages. Node B, this
 * JVM, contributes no memory ({@code global-segment-size = 0}): it finds how much of the chain is
 * stored by probing, as the engine does on a prefix lookup, and loads those pages, byte for byte,
 * from A's segment.
 */
class MooncakeTwoNodeTest
{
    private static final long OBJECT_SIZE = 256 * 1024 + 4096;
    private static final int CHAIN = 24;
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Test
    void shouldFindAndLoadAChainBackedUpByAnotherProcess() throws Exception
    {
        MooncakeTestSupport.assumeStoreAvailable();
        final Path logs = MooncakeTestSupport.logDir("two-node");
        try (MooncakeMaster master = MooncakeTestSupport.startMaster(logs))
        {
            final long seed = ThreadLocalRandom.current().nextLong();
            final Process nodeA = startNodeA(master, seed, logs.resolve("node-a.log"));
            try
            {
                final String ready = awaitReady(nodeA, logs.resolve("node-a.log"));
                assertThat(ready).as("node A's first line").startsWith("READY ");

                final StorageTier nodeB = new MooncakeTierProvider(Map.of()).create(new TierConfig("node-b", MooncakeTestSupport.config(master, "0")),
                    new ContractTierContext("node-b", OBJECT_SIZE));
                try (PageArena arena = new PageArena(PageArena.bytesFor(CHAIN + 4, OBJECT_SIZE)))
                {
                    // Probe past the end of the chain: the stored prefix is the run of OKs from the start.
                    final List<PageKey> probe = new ArrayList<>(MooncakeNode.chain(seed, CHAIN));
                    probe.add(new PageKey(seed, ~seed));
                    probe.add(new PageKey(~seed, seed));
                    final RecordingTierBatch exists = RecordingTierBatch.ofKeys("probe the chain", probe);
                    nodeB.exists(exists);
                    exists.awaitCompletion(DEADLINE);
                    int prefix = 0;
                    while (prefix < probe.size() && exists.status(prefix) == TierStatus.OK)
                    {
                        prefix++;
                    }
                    assertThat(prefix).as("pages of the chain node B finds by probing (statuses %s)", exists.statuses()).isEqualTo(CHAIN);
                    assertThat(exists.statuses().subList(CHAIN, probe.size())).containsOnly(TierStatus.NOT_FOUND);

                    final RecordingTierBatch load = new RecordingTierBatch("load the chain", probe.subList(0, prefix), arena.slices(prefix, OBJECT_SIZE));
                    nodeB.read(load);
                    load.awaitCompletion(DEADLINE);
                    assertThat(load.statuses()).as("statuses of the load").containsOnly(TierStatus.OK);
                    for (int i = 0; i < prefix; i++)
                    {
                        PageBytes.assertContent(load.slice(i), MooncakeNode.contentSeed(seed, i), "page " + i + " of the chain, loaded by node B");
                    }
                    arena.assertGuardsIntact();
                }
                finally
                {
                    nodeB.close();
                }
            }
            finally
            {
                nodeA.getOutputStream().close();
                if (!nodeA.waitFor(20, TimeUnit.SECONDS))
                {
                    nodeA.destroyForcibly();
                }
            }
        }
    }

    private static Process startNodeA(final MooncakeMaster master, final long seed, final Path log) throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final ProcessBuilder builder = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
            "-cp", System.getProperty("java.class.path"), MooncakeNode.class.getName(),
            master.address(), MooncakeTestSupport.library().toString(), Integer.toString(CHAIN), Long.toString(seed), Long.toString(OBJECT_SIZE));
        builder.redirectError(log.toFile());
        return builder.start();
    }

    private static String awaitReady(final Process node, final Path log) throws Exception
    {
        final BufferedReader out = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
        final String line = out.readLine();
        assertThat(line).as("node A exited before it was ready; see %s", log).isNotNull();
        return line;
    }
}

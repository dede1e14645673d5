package io.kvtier.engine.pool;

import io.kvtier.engine.Engine;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.config.EngineSettings;
import io.kvtier.nativeaccess.libc.MemoryPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code pool.numa}: the setting's grammar, the refusal of nodes the host does not have, and, on this host's
 * nodes, the pool's mapping placed as asked, as the kernel reports it in {@code /proc/self/numa_maps}. A host of
 * one node (this project's machines) shows that the policy is set and followed, not that placement across nodes
 * pays: nothing here has a second node.
 */
class NumaPlacementTest
{
    private static final Path NUMA_MAPS = Path.of("/proc/self/numa_maps");

    @Test
    void shouldParseEachPolicyAndNodeListAsTheKernelWritesThem()
    {
        assertThat(NumaPlacement.parse("off")).isEqualTo(NumaPlacement.OFF);
        assertThat(NumaPlacement.parse("off").placed()).isFalse();
        final NumaPlacement bind = NumaPlacement.parse(" Bind:0-2,5 ");
        assertThat(bind.mode()).isEqualTo(MemoryPolicy.MPOL_BIND);
        assertThat(bind.nodes()).isEqualTo(bits(0, 1, 2, 5));
        assertThat(NumaPlacement.list(bind.nodes())).isEqualTo("0-2,5");
        assertThat(NumaPlacement.parse("preferred:3").mode()).isEqualTo(MemoryPolicy.MPOL_PREFERRED);
        assertThat(NumaPlacement.parse("interleave:0,1").nodes()).isEqualTo(bits(0, 1));
    }

    @Test
    void shouldRefuseWhatIsNotAPlacementNamingThePart()
    {
        assertThatThrownBy(() -> NumaPlacement.parse("0")).hasMessageContaining("\"0\" is not off, bind:NODES");
        assertThatThrownBy(() -> NumaPlacement.parse("spread:0")).hasMessageContaining("\"spread\" is not a policy");
        assertThatThrownBy(() -> NumaPlacement.parse("bind:")).hasMessageContaining("names no node");
        assertThatThrownBy(() -> NumaPlacement.parse("bind:1,x")).hasMessageContaining("\"x\" is not a node number from 0 to 1023");
        assertThatThrownBy(() -> NumaPlacement.parse("bind:3-1")).hasMessageContaining("the range 3-1 runs backwards");
        assertThatThrownBy(() -> NumaPlacement.parse("bind:5000")).hasMessageContaining("\"5000\" is not a node number");
        assertThatThrownBy(() -> NumaPlacement.parse("preferred:0,1")).hasMessageContaining("preferred takes one node, not 2");
    }

    @Test
    void shouldNameTheNodesThatAreNotOnlineAndTheHostsOwn(@TempDir final Path dir) throws Exception
    {
        final Path online = Files.writeString(dir.resolve("online"), "0-1,3\n");
        assertThat(NumaPlacement.parse("bind:2,4").unavailableOn(online)).hasValue("nodes 2,4 are not online; this host's nodes are 0-1,3");
        assertThat(NumaPlacement.parse("preferred:7").unavailableOn(online)).hasValue("node 7 is not online; this host's nodes are 0-1,3");
        assertThat(NumaPlacement.parse("off").unavailableOn(dir.resolve("missing"))).isEmpty();
        assertThat(NumaPlacement.parse("bind:0").unavailableOn(dir.resolve("missing")).orElseThrow())
            .contains("lists no NUMA nodes", "missing", "set pool.numa = off");
    }

    @Test
    void shouldRefuseToStartAnEngineOnANodeThisHostLacksNamingTheSetting()
    {
        assumeTrue(Files.isReadable(NumaPlacement.ONLINE_NODES), "skipped: this kernel lists no NUMA nodes (" + NumaPlacement.ONLINE_NODES + ")");
        final Map<String, String> settings = Map.of(EngineConfig.POOL_PATH, "/dev/shm/kvtier-numa-" + ProcessHandle.current().pid() + "-refused",
            EngineConfig.POOL_SIZE, "4MiB", EngineConfig.POOL_PAGE_SIZE, "16KiB", EngineSettings.POOL_NUMA.key(), "bind:1023");
        assertThatThrownBy(() -> Engine.start(EngineConfig.from(settings)))
            .isInstanceOfSatisfying(ConfigException.class, ex -> assertThat(ex.getMessage()).contains("pool.numa = bind:1023: node 1023 is not online",
                "this host's nodes are"));
        assertThatThrownBy(() -> EngineConfig.from(Map.of(EngineSettings.POOL_NUMA.key(), "bind:zero")))
            .hasMessageContaining("pool.numa").hasMessageContaining("bind:NODES");
    }

    @Test
    void shouldPlaceThePoolsMappingAndItsPagesAsAsked(@TempDir final Path dir) throws Exception
    {
        assumeTrue(MemoryPolicy.instance().isPresent(), "skipped: the NUMA calls need native access and a known architecture");
        assumeTrue(Files.isReadable(NumaPlacement.ONLINE_NODES), "skipped: this kernel lists no NUMA nodes (" + NumaPlacement.ONLINE_NODES + ")");
        assumeTrue(Files.isReadable(NUMA_MAPS), "skipped: no " + NUMA_MAPS + " to read the placement back from");
        final int node = NumaPlacement.nodeList(Files.readString(NumaPlacement.ONLINE_NODES).strip(), "online").nextSetBit(0);
        for (final String[] asked : new String[][] {{"bind:" + node, "bind:" + node}, {"preferred:" + node, "prefer:" + node},
            {"interleave:" + node, "interleave:" + node}})
        {
            final Path path = Path.of("/dev/shm/kvtier-numa-" + ProcessHandle.current().pid() + "-" + asked[0].replace(':', '-'));
            // 16 MiB of pages, 4 MiB allocated first and the rest by the growth thread in 2 MiB chunks.
            try (PagePool pool = PagePool.create(path, 16384, 1024, 4096, 2, Duration.ofSeconds(30), false, 4L << 20, 2L << 20,
                NumaPlacement.parse(asked[0])))
            {
                final long deadline = System.nanoTime() + 60_000_000_000L;
                while (pool.growing() && System.nanoTime() < deadline)
                {
                    Thread.sleep(10);
                }
                assertThat(pool.growing()).as("the growth ended within a minute").isFalse();
                assertThat(pool.allocatedPagesAcquire()).isEqualTo(1024);
                // Touch a byte of every page, first share and grown chunks alike, so that numa_maps counts them.
                for (int p = 0; p < 1024; p++)
                {
                    pool.frames().data().set(ValueLayout.JAVA_BYTE, p * pool.frameLength(), (byte)1);
                }
                final String line = mapsLine(path);
                assertThat(line).as("numa_maps of the pool, %s", asked[0]).contains(" " + asked[1] + " ");
                final long onNode = pagesOn(line, node);
                assertThat(onNode).as("pages on node %d in: %s", node, line).isGreaterThanOrEqualTo(1024);
            }
            finally
            {
                Files.deleteIfExists(path);
            }
        }
    }

    @Test
    void shouldLeaveAnUnplacedPoolToTheKernelsDefault() throws Exception
    {
        assumeTrue(Files.isReadable(NUMA_MAPS), "skipped: no " + NUMA_MAPS + " to read the placement back from");
        final Path path = Path.of("/dev/shm/kvtier-numa-" + ProcessHandle.current().pid() + "-off");
        try (PagePool pool = PagePool.create(path, 16384, 64, 4096, 2, Duration.ofSeconds(30), false, Long.MAX_VALUE, 2L << 20, NumaPlacement.OFF))
        {
            assertThat(mapsLine(path)).contains(" default ");
        }
        finally
        {
            Files.deleteIfExists(path);
        }
    }

    private static String mapsLine(final Path pool) throws Exception
    {
        return Files.readAllLines(NUMA_MAPS).stream().filter(l -> l.contains("file=" + pool)).findFirst()
            .orElseThrow(() -> new AssertionError("no line for " + pool + " in " + NUMA_MAPS));
    }

    private static long pagesOn(final String line, final int node)
    {
        for (final String field : line.split(" "))
        {
            if (field.startsWith("N" + node + "="))
            {
                return Long.parseLong(field.substring(field.indexOf('=') + 1));
            }
        }
        return 0;
    }

    private static BitSet bits(final int... nodes)
    {
        final BitSet set = new BitSet();
        for (final int n : nodes)
        {
            set.set(n);
        }
        return set;
    }
}

package io.kvtier.engine.pool;

import io.kvtier.client.pool.MappedPool;
import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.client.pool.PoolClient;
import io.kvtier.collections.KeyTable;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.config.EngineConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Who may own a pool file, what happens to one left behind, and what is never overwritten. */
class PoolFileLifecycleTest
{
    private static Path shmPath(final String what)
    {
        return Path.of("/dev/shm/kvtier-" + what + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    }

    private static Map<String, String> settings(final Path pool)
    {
        return Map.of(EngineConfig.POOL_PATH, pool.toString(), EngineConfig.POOL_SIZE, "1MiB", EngineConfig.POOL_PAGE_SIZE, "64KiB");
    }

    @Test
    void shouldKeepALiveEnginesPoolWhenAnotherChannelOnItIsClosed(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("live");
        try (Engine engine = Engine.start(EngineConfig.from(settings(pool))))
        {
            // Both close a second descriptor of the pool file in the engine's process: a POSIX record
            // lock (Java's FileLock) would be dropped by either.
            assertThatThrownBy(() -> Engine.start(EngineConfig.from(settings(pool)))).isInstanceOf(PoolOwnedException.class);
            MappedPool.attach(pool).close();

            final String other = ChildJvm.run(dir.resolve("start.txt"), PoolProbe.class, "start", pool.toString());
            assertThat(other).contains("refused PoolOwnedException").contains("pid " + ProcessHandle.current().pid() + ",");
            assertThat(engine.pool().header().creatorPidPlain()).isEqualTo(ProcessHandle.current().pid());
        }
    }

    @Test
    void shouldRefuseAPoolWhoseHeartbeatIsFreshEvenWithoutItsLock() throws Exception
    {
        final Path pool = shmPath("fresh");
        final Path copy = shmPath("fresh-copy");
        try (Engine engine = Engine.start(EngineConfig.from(settings(pool))))
        {
            // A copy carries the live engine's PID and heartbeat but no lock.
            Files.copy(pool, copy, StandardCopyOption.REPLACE_EXISTING);
            assertThatThrownBy(() -> Engine.start(EngineConfig.from(settings(copy))))
                .isInstanceOf(PoolOwnedException.class)
                .hasMessageContaining("heartbeat");
        }
        finally
        {
            Files.deleteIfExists(copy);
        }
    }

    @Test
    void shouldLeaveOldMappingsOfADeadEnginesPoolIntactWhenTakingItOver(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("takeover");
        final String crashed = ChildJvm.run(dir.resolve("crash.txt"), PoolCrashProbe.class, pool.toString());
        assertThat(crashed).contains("ready");
        try (PoolClient client = PoolClient.attach(pool))
        {
            final MappedPool old = client.pool();
            final long oldEpoch = old.header().epochPlain();
            final int slot = old.index().find(7, 7);
            assertThat(slot).isNotEqualTo(KeyTable.NONE);
            final int page = old.index().value(slot);
            assertThat(old.metadata().payloadLengthPlain(page)).isEqualTo(10);
            assertThat(client.isCurrent()).isTrue();

            final Map<String, String> cold = new java.util.HashMap<>(settings(pool));
            cold.put(EngineConfig.POOL_WARM_RESTART, "false");
            try (Engine engine = Engine.start(EngineConfig.from(cold)))
            {
                // A client still mapping the old pool keeps reading what it mapped, never zeroes of a new pool,
                // and learns from the old header that it must reattach.
                assertThat(old.metadata().keyHighPlain(page)).isEqualTo(7);
                assertThat(old.metadata().keyLowPlain(page)).isEqualTo(7);
                assertThat(old.metadata().payloadLengthPlain(page)).isEqualTo(10);
                assertThat(old.index().find(7, 7)).isEqualTo(slot);
                assertThat(client.isCurrent()).isFalse();
                assertThat(old.header().poolStateAcquire()).isEqualTo(PagePoolDescriptor.STATE_SUPERSEDED);
                assertThat(client.mapsFileAt(pool)).isFalse();
                assertThat(engine.pool().header().epochPlain()).isEqualTo(oldEpoch + 1);
                assertThat(engine.pool().header().creatorPidPlain()).isEqualTo(ProcessHandle.current().pid());
                try (PoolClient fresh = PoolClient.attach(pool))
                {
                    assertThat(fresh.isCurrent()).isTrue();
                    assertThat(fresh.pinKey(7, 7)).as("the new pool starts empty without a warm restart").isEqualTo(PoolClient.NO_PIN);
                }
            }
        }
    }

    /**
     * docs/RELIABILITY.md's promise that shared-memory files have their modes: the pool is 0600, the engine's alone, when it
     * is made new and when it replaces a dead engine's pool whose mode someone opened to everyone.
     */
    @Test
    void shouldMakeThePoolFileTheEnginesAloneWhetherNewOrTakenOverFromADeadEngine(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("mode");
        try (Engine engine = Engine.start(EngineConfig.from(settings(pool))))
        {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pool))).as("a new pool").isEqualTo("rw-------");
        }
        final String crashed = ChildJvm.run(dir.resolve("crash.txt"), PoolCrashProbe.class, pool.toString());
        assertThat(crashed).contains("ready");
        Files.setPosixFilePermissions(pool, PosixFilePermissions.fromString("rw-rw-rw-"));
        try (Engine engine = Engine.start(EngineConfig.from(settings(pool))))
        {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pool))).as("a dead engine's pool of mode 0666, taken over")
                .isEqualTo("rw-------");
        }
    }

    @Test
    void shouldRefuseAnExistingFileThatIsNotAPoolAndLeaveItAlone() throws Exception
    {
        final Path file = shmPath("not-a-pool");
        Files.writeString(file, "precious data, not a pool");
        try
        {
            assertThatThrownBy(() -> Engine.start(EngineConfig.from(settings(file))))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("pool.path")
                .hasMessageContaining("not a kvtier pool")
                .satisfies(ex -> assertThat(((ConfigException)ex).key()).isEqualTo(EngineConfig.POOL_PATH));
            assertThat(Files.readString(file, StandardCharsets.UTF_8)).isEqualTo("precious data, not a pool");
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldRefuseADirectoryAsThePoolPath(@TempDir final Path dir) throws Exception
    {
        Files.writeString(dir.resolve("inside.txt"), "x");
        assertThatThrownBy(() -> Engine.start(EngineConfig.from(settings(dir))))
            .isInstanceOf(ConfigException.class)
            .hasMessageContaining("pool.path")
            .hasMessageContaining("directory")
            .satisfies(ex -> assertThat(((ConfigException)ex).key()).isEqualTo(EngineConfig.POOL_PATH));
        assertThat(dir.resolve("inside.txt")).exists();
    }

    @Test
    void shouldRefuseToStartWhenTheFilesystemCannotHoldThePool() throws Exception
    {
        final Path pool = shmPath("too-big");
        final long free = Files.getFileStore(pool.getParent()).getUsableSpace();
        assertThatThrownBy(() -> PoolFile.prepare(pool, free + (1L << 30)))
            .isInstanceOf(PoolPathException.class)
            .hasMessageContaining("pool.path")
            .hasMessageContaining("free");
        assertThat(pool).doesNotExist();
        try (var siblings = Files.list(pool.getParent()))
        {
            assertThat(siblings.filter(p -> p.getFileName().toString().startsWith(pool.getFileName().toString()))).as("no half-built file left").isEmpty();
        }
    }

    @Test
    void shouldAllocateEveryBlockOfThePoolFileAtStart() throws Exception
    {
        final Path pool = shmPath("allocated");
        try (Engine engine = Engine.start(EngineConfig.from(settings(pool))))
        {
            final Process stat = new ProcessBuilder("stat", "-c", "%b %B %s", pool.toString()).redirectErrorStream(true).start();
            final String[] fields = new String(stat.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip().split(" ");
            assertThat(stat.waitFor()).isZero();
            final long allocated = Long.parseLong(fields[0]) * Long.parseLong(fields[1]);
            assertThat(allocated).as("bytes allocated to a pool file of %s bytes", fields[2]).isGreaterThanOrEqualTo(Long.parseLong(fields[2]));
        }
    }

    @Test
    void shouldRunWithoutNativeAccessFallingBackAndSayingWhy(@TempDir final Path dir) throws Exception
    {
        final Path pool = shmPath("no-native");
        final String output = ChildJvm.run(dir.resolve("no-native.txt"), false, PoolProbe.class, "start", pool.toString());
        assertThat(output).contains("started pid=").contains("committed=1 acquired=1 byte=5");
        assertThat(output).as("the fallbacks are logged with the flag that avoids them")
            .contains("LibC unavailable").contains("--enable-native-access=ALL-UNNAMED").contains("per-process FileLock");
        assertThat(pool).as("removed at shutdown").doesNotExist();
    }
}

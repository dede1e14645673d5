package io.kvtier.cli;

import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.pool.Counters;
import io.kvtier.client.pool.CountersDescriptor;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class StatCommandTest
{
    @Test
    void shouldPrintALiveEnginesCountersFromItsPoolFile() throws Exception
    {
        final String pool = "/dev/shm/kvtier-stat-test-" + ProcessHandle.current().pid();
        try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool, "pool.size", "1MiB", "pool.page-size", "64KiB")));
             Session session = engine.openSession())
        {
            session.keys().add(1, 2);
            session.reserve(0, 1);
            session.payloadLength(0, 5);
            session.commit(0, 1);
            final CliFixture.Result result = CliFixture.run("stat", "--pool", pool, "--json");
            assertThat(result.exitCode()).as(result.err()).isEqualTo(ExitCode.OK);
            assertThat(result.out()).contains("\"engine_alive\":true").contains("\"pages_committed\":1").contains("\"pages\":16")
                .contains("\"engine_pid\":" + ProcessHandle.current().pid());
        }
    }

    @Test
    void shouldSayAnEngineWithAStuckOrDeadThreadIsUnhealthyAndFailItsCheck(@org.junit.jupiter.api.io.TempDir final java.nio.file.Path directory)
        throws Exception
    {
        final String pool = directory.resolve("pool").toString();
        try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool, "pool.size", "1MiB", "pool.page-size", "64KiB",
            "ipc.enabled", "true", "ipc.socket-path", directory.resolve("s").toString()))))
        {
            final Counters counters = new Counters(engine.pool().counters());
            final long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (counters.recordStateAcquire(CountersDescriptor.FIRST_THREAD_ID + 1) != CountersDescriptor.RECORD_ALLOCATED
                && System.nanoTime() - deadline < 0)
            {
                Thread.sleep(10);
            }
            final CliFixture.Result healthy = CliFixture.run("stat", "--pool", pool, "--check");
            assertThat(healthy.exitCode()).as(healthy.out() + healthy.err()).isEqualTo(ExitCode.OK);
            assertThat(healthy.out()).contains("health: ok").contains("thread_kvtier_ipc_seal").contains("thread_kvtier_device");

            // What the engine's watch writes when the sealer hangs in one request, and when the device thread is gone.
            counters.valueOpaque(CountersDescriptor.FIRST_THREAD_ID, 1);
            counters.valueOpaque(CountersDescriptor.FIRST_THREAD_ID + 1, 2);
            final CliFixture.Result sick = CliFixture.run("stat", "--pool", pool, "--check");
            assertThat(sick.exitCode()).isEqualTo(ExitCode.FAILURE);
            assertThat(sick.out()).contains("health: UNHEALTHY").contains("thread kvtier_ipc_seal is stuck").contains("thread kvtier_device is dead");
            final CliFixture.Result json = CliFixture.run("stat", "--pool", pool, "--json");
            assertThat(json.exitCode()).as("without --check, stat reports and succeeds").isEqualTo(ExitCode.OK);
            assertThat(json.out()).contains("\"healthy\":false").contains("kvtier_device is dead");
        }
    }

    @Test
    void shouldListWhateverCountersThePoolNamesNotTheEnginesOwnList() throws Exception
    {
        final String pool = "/dev/shm/kvtier-stat-names-" + ProcessHandle.current().pid();
        try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool, "pool.size", "1MiB", "pool.page-size", "64KiB"))))
        {
            // A counter no build of the engine knows, named only in the shared region: stat must list it.
            final Counters counters = new Counters(engine.pool().counters());
            counters.allocate(CountersDescriptor.MAX_COUNTERS - 1, CountersDescriptor.TYPE_GAUGE, "plugin_queue_depth", "Jobs a plugin holds.");
            counters.valueOpaque(CountersDescriptor.MAX_COUNTERS - 1, 42);

            final CliFixture.Result text = CliFixture.run("stat", "--pool", pool, "--describe");
            assertThat(text.exitCode()).as(text.err()).isEqualTo(ExitCode.OK);
            assertThat(text.out()).containsPattern("plugin_queue_depth +42 +gauge +Jobs a plugin holds\\.")
                .containsPattern("pages_in_use +0 +gauge +Pages currently in use \\(not free\\)\\.")
                .containsPattern("pages_committed +0 +counter +Pages committed\\.");

            final CliFixture.Result json = CliFixture.run("stat", "--pool", pool, "--json", "--describe");
            assertThat(json.exitCode()).as(json.err()).isEqualTo(ExitCode.OK);
            assertThat(json.out()).contains("\"plugin_queue_depth\":42")
                .contains("\"plugin_queue_depth\":{\"type\":\"gauge\",\"description\":\"Jobs a plugin holds.\"}");
        }
    }

    @Test
    void shouldSayHowEachTierRunsAsItDescribesItself(@org.junit.jupiter.api.io.TempDir final java.nio.file.Path dir) throws Exception
    {
        final String pool = "/dev/shm/kvtier-stat-tiers-" + ProcessHandle.current().pid();
        try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool, "pool.size", "1MiB", "pool.page-size", "64KiB",
            "tier.disk.type", "posix", "tier.disk.dir", dir.toString(), "tier.disk.io", "libc"))))
        {
            final CliFixture.Result text = CliFixture.run("stat", "--pool", pool);
            assertThat(text.exitCode()).as(text.err()).isEqualTo(ExitCode.OK);
            assertThat(text.out()).containsPattern("tier_disk +posix: io=libc, direct-io off, layout=slab, dir=" + java.util.regex.Pattern.quote(dir.toString()))
                .doesNotContainPattern("(?m)^tier_disk +0");

            final CliFixture.Result json = CliFixture.run("stat", "--pool", pool, "--json");
            assertThat(json.exitCode()).as(json.err()).isEqualTo(ExitCode.OK);
            assertThat(json.out()).contains("\"info\":{\"tier_disk\":\"posix: io=libc, direct-io off, layout=slab, dir=")
                .doesNotContain("\"tier_disk\":0")
                .contains("\"tier_states\":{\"tier_disk\":\"in-service\"}");
        }
    }

    @Test
    void shouldSayWhichTiersAreOutOfService(@org.junit.jupiter.api.io.TempDir final java.nio.file.Path dir) throws Exception
    {
        final String pool = "/dev/shm/kvtier-stat-states-" + ProcessHandle.current().pid();
        try (Engine engine = Engine.start(EngineConfig.from(Map.of("pool.path", pool, "pool.size", "1MiB", "pool.page-size", "64KiB",
            "tier.disk.type", "posix", "tier.disk.dir", dir.resolve("a").toString(), "tier.disk.io", "libc",
            "tier.far.type", "posix", "tier.far.dir", dir.resolve("b").toString(), "tier.far.io", "libc"))))
        {
            // What the engine records when it takes a tier out of service: the state, as the tier record's value.
            final Counters counters = new Counters(engine.pool().counters());
            final int far = engine.tiers().stream().filter(tier -> tier.name().equals("far")).findFirst().orElseThrow().index();
            counters.valueOpaque(CountersDescriptor.FIRST_TIER_INFO_ID + far, CountersDescriptor.TIER_STUCK);

            final CliFixture.Result text = CliFixture.run("stat", "--pool", pool);
            assertThat(text.exitCode()).as(text.err()).isEqualTo(ExitCode.OK);
            assertThat(text.out()).containsPattern("tier_far +\\[stuck\\] posix: ").containsPattern("tier_disk +posix: ");

            final CliFixture.Result json = CliFixture.run("stat", "--pool", pool, "--json");
            assertThat(json.out()).contains("\"tier_states\":{").contains("\"tier_disk\":\"in-service\"").contains("\"tier_far\":\"stuck\"");
        }
    }

    @Test
    void shouldSayWhenThereIsNoPool()
    {
        final CliFixture.Result result = CliFixture.run("stat", "--pool", "/dev/shm/kvtier-no-such-pool");
        assertThat(result.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(result.err()).contains("no pool at /dev/shm/kvtier-no-such-pool");
    }
}

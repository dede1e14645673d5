package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class DemoCommandTest
{
    private static Map<String, Double> topLevelNumbers(final String json) throws IOException
    {
        final Map<String, Double> numbers = new HashMap<>();
        try (JsonParser parser = new JsonFactory().createParser(json))
        {
            assertThat(parser.nextToken()).isEqualTo(JsonToken.START_OBJECT);
            while (parser.nextToken() == JsonToken.FIELD_NAME)
            {
                final String name = parser.currentName();
                final JsonToken value = parser.nextToken();
                if (value.isNumeric())
                {
                    numbers.put(name, parser.getDoubleValue());
                }
                else
                {
                    parser.skipChildren();
                }
            }
        }
        return numbers;
    }

    @Test
    void shouldServeHitsFromBothTiersAndReadBackOnlyCorrectBytes() throws Exception
    {
        // A pool much smaller than the workload, so pages are evicted and come back from L3. Backups run
        // behind the clients: 40 conversations took 0.25 s in a warm JVM once the engine thread became an
        // agent, before the tier had answered its first 128 backups, so every evicted page left without an
        // L3 copy. 160 conversations run long enough for backups to land and be read back.
        final java.util.Set<String> warmupDirsBefore = warmupDirectories();
        final CliFixture.Result result = CliFixture.run("demo", "--json", "--progress", "never", "--conversations", "160",
            "--pool-size", "4MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, Double> summary = topLevelNumbers(result.out());
        assertThat(summary.get("pages_corrupt")).isZero();
        assertThat(summary.get("pages_verified")).isPositive();
        assertThat(summary.get("pages_read")).isEqualTo(summary.get("pages_verified"));
        assertThat(summary.get("hit_rate_l2")).isPositive();
        assertThat(summary.get("hit_rate_l3")).as("the L3 hit rate of this summary:\n%s\nstderr:\n%s", result.out(), result.err()).isPositive();
        assertThat(summary.get("pages_hit_l2") + summary.get("pages_hit_l3")).isEqualTo(summary.get("pages_read"));
        assertThat(summary.get("requests")).isPositive();
        assertThat(result.out()).contains("\"latency_us\"").contains("\"p99\"").contains("\"l3_corrupt\":0");
        assertThat(result.out()).as("time per client step").contains("\"client_time_ms\":{\"keys\":").contains("\"client_time_share\":{\"keys\":")
            .contains("\"lookup\":").contains("\"acquire\":").contains("\"reserve\":").contains("\"commit\":").contains("\"total\":");
        final java.util.regex.Matcher migrated = java.util.regex.Pattern.compile("\"pages_migrated\":(\\d+)").matcher(result.out());
        assertThat(migrated.find()).as("pages_migrated in %s", result.out()).isTrue();
        assertThat(Long.parseLong(migrated.group(1))).as("pages the migration moved from l3 to cold").isPositive();
        assertThat(result.out()).as("two L3 tiers, each with its hits, objects and bytes written")
            .containsPattern("\"l3_tiers\":\\[\\{\"name\":\"l3\",\"type\":\"posix\",\"hits\":\\d+,\"objects\":\\d+,\"bytes_written\":[1-9]\\d*\\},"
                + "\\{\"name\":\"cold\",\"type\":\"posix\",\"hits\":\\d+,\"objects\":[1-9]\\d*,\"bytes_written\":[1-9]\\d*\\}\\]");
        final long requests = Math.round(summary.get("requests"));
        assertThat(result.out()).as("the engine's own time: each request took one LOOKUP_AND_LOCK and one COMMIT_AND_RELEASE, and the L3 tiers read and wrote")
            .containsPattern("\"engine_time_us\":\\{\"requests\":\\{[^]]*\"lookup_and_lock\":\\{\"count\":" + requests + ",\"mean\":[0-9.]+\\},"
                + "\"commit_and_release\":\\{\"count\":" + requests + ",\"mean\":[0-9.]+\\}\\},"
                + "\"tier_reads\":\\{\"l3\":\\{\"count\":[1-9]\\d*,\"mean\":[0-9.]+\\}.*\\},\"tier_writes\":\\{\"l3\":\\{\"count\":[1-9]\\d*,");
        assertThat(result.out()).as("in process, the three legs of both round trips of every request")
            .containsPattern("\"round_trip_legs_us\":\\{\"round_trips\":" + 2 * requests + ",\"to_engine\":[0-9.]+,\"in_engine\":[0-9.]+,\"back\":[0-9.]+\\}");
        assertThat(result.out()).as("the CPU of a request, whole run: the clients', the engine side's and its parts', the JIT's, the baseline clients'")
            .containsPattern("\"cpu_us_per_request\":\\{\"clients\":[1-9][0-9.]*,\"engine_side\":[1-9][0-9.]*,\"engine_thread\":[1-9][0-9.]*,"
                + "\"tier_call_threads\":[0-9.]+,\"other_kvtier_threads\":[0-9.]+,\"kernel_io_uring_workers\":[0-9.]+,\"jit_compilers\":[0-9.]+,"
                + "\"gc_and_vm\":[0-9.]+,\"other\":[0-9.]+,\"baseline_clients\":[1-9][0-9.]*\\},\"cpu_engine_side_vs_clients\":[0-9.]+");
        assertThat(result.out()).as("an untimed pass on an engine of its own compiled the engine's code first")
            .containsPattern("\"jvm_warmup\":\\{\"rounds\":[1-3],\"requests\":[1-9]\\d*,\"elapsed_s\":[0-9.]+,\"jit_compile_ms\":-?\\d+,\"jit_settle_s\":-?[0-9.]+\\}");
        try (var left = java.nio.file.Files.list(DemoCommand.defaultPoolDirectory()))
        {
            assertThat(left.map(path -> path.getFileName().toString()).filter(name -> name.startsWith("kvtier-demo-" + ProcessHandle.current().pid())))
                .as("the pool files of the pass and of the measured engine, both removed").isEmpty();
        }
        final java.util.Set<String> warmupDirsAfter = warmupDirectories();
        warmupDirsAfter.removeAll(warmupDirsBefore);
        assertThat(warmupDirsAfter).as("the pass's temporary L3 directories, removed (others' left from before do not count)").isEmpty();
        assertThat(result.out()).as("the demo runs the engine's default eviction policy and says so")
            .contains("\"eviction_policy\":\"" + io.kvtier.engine.eviction.EvictionPolicies.DEFAULT + "\"");
    }

    /** @return the names of the JVM warm-up's temporary L3 directories in the temporary directory now */
    static java.util.Set<String> warmupDirectories() throws IOException
    {
        try (var listed = java.nio.file.Files.list(java.nio.file.Path.of(System.getProperty("java.io.tmpdir"))))
        {
            return listed.map(path -> path.getFileName().toString()).filter(name -> name.startsWith("kvtier-demo-warmup-"))
                .collect(java.util.stream.Collectors.toCollection(java.util.HashSet::new));
        }
    }

    @Test
    void shouldCompareItsSteadyStateWithTheNoEngineBaselineOfTheSameRun() throws Exception
    {
        final CliFixture.Result result = CliFixture.run("demo", "--json", "--progress", "never", "--conversations", "24", "--pool-size", "2MiB",
            "--page-size", "8KiB", "--warmup", "0.2");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        final Map<String, Double> summary = topLevelNumbers(result.out());
        assertThat(summary.get("throughput_vs_baseline")).as("in %s", result.out()).isPositive();
        assertThat(summary.get("cleanup_s")).isNotNull();
        assertThat(result.out()).as("the warm-up and the steady state apart, the baseline's too")
            .containsPattern("\"warmup\":\\{\"requests\":[1-9]\\d*,\"pages_read\":\\d+,\"pages_written\":\\d+,\"elapsed_s\":")
            .containsPattern("\"steady_state\":\\{\"requests\":[1-9]\\d*,")
            .containsPattern("\"baseline\":\\{\"what\":\"[^\"]+\",\"clients\":2,\"frames\":\\d+,\"pages_not_cached\":0,"
                + "\"throughput_page_mb_per_s\":[0-9.]+,\"warmup\":\\{\"requests\":[1-9]\\d*,")
            .containsPattern("\"passes_mb_per_s\":\\[[0-9.]+,[0-9.]+,[0-9.]+\\]\\},\"throughput_vs_baseline\":");

        final CliFixture.Result text = CliFixture.run("demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB");
        assertThat(text.exitCode()).as("stderr: %s", text.err()).isEqualTo(ExitCode.OK);
        assertThat(text.out()).contains("MB/s of page data in the steady state (").contains("\nwarm-up ")
            .containsPattern("\nbaseline +[0-9,.]+ MB/s of page data with no engine in the steady state \\(the same workload's page work on 2 threads")
            .containsPattern("; the median of 3 passes: [0-9,]+, [0-9,]+, [0-9,]+ MB/s\\)\n")
            .containsPattern("\nvs baseline +\\d\\.\\d{3} of the no-engine baseline's page throughput")
            .containsPattern("\nclean-up +\\d+\\.\\d\\d s after the clock stopped");
    }

    @Test
    void shouldSkipTheBaselineWhenToldAndSaySo()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--json", "--no-baseline", "--no-jvm-warmup", "--progress", "never", "--conversations", "12",
            "--pool-size", "2MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("\"jvm_warmup\":{\"skipped\":\"not asked for (--no-jvm-warmup)\"}");
        assertThat(result.out()).contains("\"baseline\":{\"error\":\"not run (--no-baseline)\"},\"throughput_vs_baseline\":null");
    }

    @Test
    void shouldRefuseAWarmupOutsideItsRangeNamingTheValue()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--warmup", "1.5");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--warmup 1.5 is not a share from 0 to 0.9 of the expected requests");
    }

    @Test
    void shouldPrintAReadableSummary()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("pages verified").contains("hit in L3").contains("every page read back matched")
            .contains("client time").contains("lookup").contains("commit");
        assertThat(result.out()).containsPattern("\nround trips +mean of [0-9,]+: [0-9,]+ us from the client's publish to the engine taking it, [0-9,]+ us in the engine, [0-9,]+ us from its answer");
        assertThat(result.out()).containsPattern("\njvm warm-up +[0-9,]+ requests of other seeds \\([1-3] rounds?\\) on an engine of its own \\(pool and L3 removed after\\), [0-9.]+ s");
        assertThat(result.out()).containsPattern("\ncpu per request +whole run: clients [0-9,]+ us \\(the baseline's [0-9,]+ us\\), engine side [0-9,]+ us"
            + " \\(engine thread [0-9,]+, tier calls [0-9,]+, other kvtier threads [0-9,]+, kernel io_uring workers [0-9,]+\\), JIT [0-9,]+ us\n");
        assertThat(result.out()).containsPattern("\nengine time +taken to answered, mean \\(whole run\\): .*lookup_and_lock [0-9,]+ x [0-9,]+ us, commit_and_release [0-9,]+ x [0-9,]+ us(; L3 batches, submitted to done: .*)?\n");
        assertThat(result.out()).as("the banner names the tier, its type and its describe() line")
            .containsPattern("kvtier demo: pool \\d+ pages of 8KiB in \\S+, L3 tier l3 \\(posix: io=\\S+.*, dir=\\S+kvtier-demo-l3-\\d+\\), L3 tier cold"
                + " \\(posix: io=\\S+.*, dir=\\S+kvtier-demo-cold-\\d+\\), write policy ")
            .containsPattern("\nL3 tier l3 \\(posix\\): \\d+ objects, ").containsPattern("\nL3 tier cold \\(posix\\): \\d+ objects, ")
            .contains("pages migrated between L3 tiers: ");
    }

    @Test
    void shouldRunTheDemoOnATierFromAPluginJarGivingItNoneOfThePosixSettings(@TempDir final Path scratch) throws IOException
    {
        final Path plugins = scratch.resolve("plugins");
        ThirdPartyPlugin.memoryTier(plugins.resolve("memory-tier").resolve("kvtier-memory-tier-1.0.0.jar"), scratch);
        final List<String> run = List.of("demo", "--json", "--progress", "never", "--conversations", "40", "--pool-size", "4MiB", "--page-size", "8KiB",
            "--set", "plugins.dir=" + plugins);

        // The way it was reported: the type as a setting, to which the demo used to add the POSIX tier's settings.
        final CliFixture.Result bySetting = CliFixture.run(concat(run, "--set", "tier.l3.type=memory", "--set", "tier.l3.capacity=64MiB"));
        assertThat(bySetting.exitCode()).as("stderr: %s", bySetting.err()).isEqualTo(ExitCode.OK);
        assertThat(bySetting.out()).contains("\"type\":\"memory\"");

        // Or by --l3, with no setting at all.
        final CliFixture.Result byOption = CliFixture.run(concat(run, "--l3", "memory"));
        assertThat(byOption.exitCode()).as("stderr: %s", byOption.err()).isEqualTo(ExitCode.OK);
        final Map<String, Double> summary = topLevelNumbers(byOption.out());
        assertThat(summary.get("pages_corrupt")).isZero();
        assertThat(summary.get("hit_rate_l3")).as("pages came back from the plugin's tier").isPositive();
        assertThat(byOption.out()).contains("\"l3\":{\"l3\":{\"type\":\"memory\",\"description\":\"memory: objects on the Java heap\",\"objects\":");
    }

    @Test
    void shouldTakeThePluginAndItsTierFromAConfigFileAndNameTheTierInTheSummary(@TempDir final Path scratch) throws IOException
    {
        final Path plugins = scratch.resolve("plugins");
        ThirdPartyPlugin.memoryTier(plugins.resolve("memory-tier.jar"), scratch);
        final Path config = Files.writeString(scratch.resolve("kvtier.conf"), "plugins.dir = " + plugins + "\ntier.l3.type = memory\ntier.l3.capacity = 64MiB\n");
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB",
            "--config", config.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains(", L3 tier l3 (memory: objects on the Java heap), write policy ").contains("\nL3 tier l3 (memory): ")
            .doesNotContain("POSIX").contains("every page read back matched");
    }

    @Test
    void shouldNameAnUnknownL3TypeAndTheTypesThereAre()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--l3", "acme-dir");
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("invalid tier.l3.type = \"acme-dir\": no tier plugin of that type on the class path")
            .containsPattern("available types: \\[.*mooncake, posix\\]");
    }

    @Test
    void shouldRefuseAnL3TypeGivenTwiceDifferently()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--l3", "mooncake", "--set", "tier.l3.type=posix");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--l3 mooncake and tier.l3.type = posix name different tier types");
    }

    private static String[] concat(final List<String> first, final String... more)
    {
        return java.util.stream.Stream.concat(first.stream(), java.util.Arrays.stream(more)).toArray(String[]::new);
    }

    @Test
    void shouldRejectABadEngineSettingWithTheConfigExitCode()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--set", "policy.write=sometimes");
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("policy.write").contains("sometimes");
    }
}

package io.kvtier.cli;

import io.kvtier.bench.tier.MooncakeMasterProcess;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code kvtier demo --l3 mooncake} against a master on loopback that the test starts and names with
 * {@code --mooncake-master}: pages evicted from the small pool come back from the Mooncake Store,
 * byte-exact. The store is the install {@code KVTIER_MOONCAKE_HOME} names, else the project's test
 * double ({@link MooncakeHome}); skips, saying what is missing, when neither can run. Without
 * {@code --mooncake-master} the demo starts a master from a real install only, and says so.
 */
class DemoMooncakeCommandTest
{
    @TempDir
    Path logs;

    @Test
    void shouldServeL3HitsFromAMooncakeStore() throws Exception
    {
        final Path home = MooncakeHome.require();
        try (MooncakeMasterProcess master = MooncakeMasterProcess.start(home, Duration.ofSeconds(10), logs.resolve("mooncake_master.log")))
        {
            final CliFixture.Result result = CliFixture.run("demo", "--json", "--progress", "never", "--conversations", "40",
                "--pool-size", "4MiB", "--page-size", "8KiB", "--l3", "mooncake", "--mooncake-master", master.address(),
                "--set", "tier.l3.lib=" + MooncakeMasterProcess.library(home),
                "--set", "tier.l3.global-segment-size=128MiB");
            assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
            assertThat(result.out()).contains("\"pages_corrupt\":0").contains("\"l3_corrupt\":0").contains("\"type\":\"mooncake\"")
                .contains("\"master\":\"" + master.address() + "\"");
            assertThat(result.out()).as("L3 hits").doesNotContain("\"pages_hit_l3\":0,");
        }
    }

    @Test
    void shouldExitUnavailableNamingWhatToSetWhenNoMooncakeInstallIsNamed()
    {
        // The demo starts its own master only from a real install: the project's test double is for tests, never a demo's store.
        org.junit.jupiter.api.Assumptions.assumeTrue(MooncakeHome.real().isEmpty(),
            "KVTIER_MOONCAKE_HOME names an install here, so the demo would start a master from it");
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--conversations", "4", "--l3", "mooncake");
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.UNAVAILABLE);
        assertThat(result.err()).contains(MooncakeMasterProcess.HOME_ENV_NAME).contains("bin/mooncake_master").contains("lib/libmooncake_store.so")
            .contains("--mooncake-master");
    }

    @Test
    void shouldRefuseMooncakeMasterWithoutTheMooncakeTier()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--mooncake-master", "127.0.0.1:1");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--mooncake-master needs --l3 mooncake");
    }
}

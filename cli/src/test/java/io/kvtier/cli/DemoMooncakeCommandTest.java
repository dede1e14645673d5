package io.kvtier.cli;

import io.kvtier.tier.mooncake.MooncakeLibrary;
import io.kvtier.tier.mooncake.MooncakeMaster;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code kvtier demo --l3 mooncake} against a real master on loopback: pages evicted from the small
 * pool come back from the Mooncake Store, byte-exact. Skips, saying what is missing, without a
 * Mooncake install ({@code KVTIER_MOONCAKE_HOME}, else the build machines' vendored one) or its
 * runtime packages (plugins/mooncake/scripts/install-runtime.sh).
 */
class DemoMooncakeCommandTest
{
    @TempDir
    Path logs;

    @Test
    void shouldServeL3HitsFromAMooncakeStore() throws Exception
    {
        final Path home = MooncakeHome.require();
        try (MooncakeMaster master = MooncakeMaster.start(home, Duration.ofSeconds(10), logs.resolve("mooncake_master.log")))
        {
            final CliFixture.Result result = CliFixture.run("demo", "--json", "--progress", "never", "--conversations", "40",
                "--pool-size", "4MiB", "--page-size", "8KiB", "--l3", "mooncake", "--mooncake-master", master.address(),
                "--set", "tier.l3.lib=" + home.resolve("lib").resolve(MooncakeLibrary.LIBRARY_FILE),
                "--set", "tier.l3.global-segment-size=128MiB");
            assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
            assertThat(result.out()).contains("\"pages_corrupt\":0").contains("\"l3_corrupt\":0").contains("\"type\":\"mooncake\"")
                .contains("\"master\":\"" + master.address() + "\"");
            assertThat(result.out()).as("L3 hits").doesNotContain("\"pages_hit_l3\":0,");
        }
    }

    @Test
    void shouldRefuseMooncakeMasterWithoutTheMooncakeTier()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--mooncake-master", "127.0.0.1:1");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--mooncake-master needs --l3 mooncake");
    }
}

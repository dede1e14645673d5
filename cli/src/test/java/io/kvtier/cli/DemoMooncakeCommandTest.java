package io.kvtier.cli;

import io.kvtier.tier.mooncake.MooncakeLibrary;
import io.kvtier.tier.mooncake.MooncakeMaster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
        final Path home = mooncakeHome();
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

    static Path mooncakeHome() throws IOException, InterruptedException
    {
        final String env = System.getenv(MooncakeLibrary.HOME_ENV_NAME);
        Optional<Path> home = env != null && !env.isBlank() ? Optional.of(Path.of(env)) : Optional.empty();
        if (home.isEmpty())
        {
            Path dir = Path.of("").toAbsolutePath();
            while (dir != null && !Files.isRegularFile(dir.resolve("mvnw")))
            {
                dir = dir.getParent();
            }
            if (dir != null && dir.getParent() != null)
            {
                home = Optional.of(dir.getParent().resolve("shared/vendor/mooncake/install"));
            }
        }
        assumeTrue(home.isPresent() && Files.isRegularFile(home.get().resolve(MooncakeMaster.BINARY)),
            "no Mooncake install: set " + MooncakeLibrary.HOME_ENV_NAME + " to one holding bin/mooncake_master and lib/libmooncake_store.so");
        final Path library = home.get().resolve("lib").resolve(MooncakeLibrary.LIBRARY_FILE);
        final Process ldd = new ProcessBuilder("ldd", library.toString()).redirectErrorStream(true).start();
        final String output;
        try (InputStream in = ldd.getInputStream())
        {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        ldd.waitFor();
        assumeTrue(!output.contains("not found"), "Mooncake's runtime packages are missing (ldd " + library + "): run plugins/mooncake/scripts/install-runtime.sh as root");
        return home.get();
    }
}

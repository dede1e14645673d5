package io.kvtier.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class MainTest
{
    @Test
    void shouldListCommandsAndExitCodesInHelp()
    {
        final CliFixture.Result result = CliFixture.run("--help");
        assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("demo").contains("serve").contains("bench").contains("Exit codes:").contains("130");
    }

    @Test
    void shouldListTheExitCodesOnceInEveryCommandsHelp()
    {
        for (final String[] help : new String[][] {{"--help"}, {"demo", "--help"}, {"serve", "--help"}, {"stat", "--help"},
            {"bench", "--help"}, {"bench", "replay", "--help"}})
        {
            final CliFixture.Result result = CliFixture.run(help);
            assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
            assertThat(result.out()).as(String.join(" ", help))
                .containsOnlyOnce("Exit codes:").containsOnlyOnce("invalid configuration").contains("130")
                .doesNotContain(ExitCode.HELP);
        }
        assertThat(CliFixture.run("serve", "--help").out()).as("the rest of a footer stays")
            .contains("Without --config the embedded defaults apply");
    }

    @Test
    void shouldPrintTheVersion()
    {
        final CliFixture.Result result = CliFixture.run("--version");
        assertThat(result.exitCode()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains("kvtier").contains("Java " + Runtime.version().feature());
    }

    @Test
    void shouldExitWithUsageOnAnUnknownOption()
    {
        final CliFixture.Result result = CliFixture.run("demo", "--no-such-option");
        assertThat(result.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(result.err()).contains("--no-such-option").contains("kvtier demo --help");
    }

    @Test
    void shouldRejectABadSettingWithTheConfigExitCode(@TempDir final Path dir) throws Exception
    {
        final Path config = dir.resolve("bad.conf");
        Files.write(config, List.of("pool.size = 12XB"));
        final CliFixture.Result result = CliFixture.run("serve", "--config", config.toString());
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("pool.size").contains("12XB").contains(config.toString());
    }

    @Test
    void shouldRejectAnUnknownSettingFromTheCommandLine()
    {
        final CliFixture.Result result = CliFixture.run("serve", "--set", "pool.colour=blue");
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("unknown setting pool.colour");
    }

    @Test
    void shouldRefuseToServeAPoolOwnedByALiveEngine() throws Exception
    {
        final String pool = "/dev/shm/kvtier-cli-owned-" + ProcessHandle.current().pid();
        final var settings = java.util.Map.of("pool.path", pool, "pool.size", "1MiB", "pool.page-size", "64KiB");
        try (var engine = io.kvtier.engine.Engine.start(io.kvtier.engine.config.EngineConfig.from(settings)))
        {
            final CliFixture.Result result = CliFixture.run("serve", "--set", "pool.path=" + pool, "--set", "pool.size=1MiB", "--set", "pool.page-size=64KiB");
            assertThat(result.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
            assertThat(result.err()).contains("owned by a live engine").contains("pid " + ProcessHandle.current().pid());
        }
    }
}

package io.kvtier.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the commands that start an engine print and exit with when what they were given cannot start
 * one: a tier plugin that misbehaves at start, a config file that is not text. Each is the operator's
 * to fix, so each is exit code 3 and one line on stderr, never a stack trace.
 */
class StartFailuresTest
{
    @TempDir
    Path scratch;

    @Test
    void shouldExitWithThreeAndOneLineNamingThePluginWhoseCreateReturnsNull() throws IOException
    {
        final Path jar = ThirdPartyPlugin.misbehaving("hollow", "if (true) return null;", "", scratch.resolve("plugins").resolve("hollow.jar"), scratch);
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--l3", "hollow", "--set", "plugins.dir=" + jar.getParent());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).isEqualTo("kvtier: configuration rejected: tier l3 (type hollow, from plugin jar " + jar + ") failed to start:"
            + " its provider com.example.misbehaving.hollow.Provider returned null from create(), which must return a ready tier or throw a"
            + " TierConfigException naming the setting at fault" + System.lineSeparator());
    }

    @Test
    void shouldExitWithThreeAndOneLineNamingThePluginWhoseCreateThrowsAnError() throws IOException
    {
        final Path jar = ThirdPartyPlugin.misbehaving("strict", "if (true) throw new AssertionError(\"expected a mount\");", "",
            scratch.resolve("plugins").resolve("strict.jar"), scratch);
        final Path config = Files.writeString(scratch.resolve("kvtier.conf"), String.join("\n",
            "pool.path = " + scratch.resolve("pool"), "pool.size = 4MiB", "plugins.dir = " + jar.getParent(), "tier.cold.type = strict", ""));
        final CliFixture.Result result = CliFixture.run("serve", "--config", config.toString());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).startsWith("kvtier: configuration rejected: tier cold (type strict, from plugin jar " + jar + ") failed to start:"
            + " create() threw java.lang.AssertionError: expected a mount (at com.example.misbehaving.strict.Provider.create(Provider.java:")
            .hasLineCount(1).doesNotContain("\tat ");
        assertThat(scratch.resolve("pool")).as("the pool file, removed").doesNotExist();
    }

    @Test
    void shouldReportATierWhoseUsageThrowsInTheDemoSummaryNotAsAStackTrace() throws IOException
    {
        final Path jar = ThirdPartyPlugin.misbehaving("uncounted", "", "if (true) throw new IllegalStateException(\"no idea\");",
            scratch.resolve("plugins").resolve("uncounted.jar"), scratch);
        final CliFixture.Result result = CliFixture.run("demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB",
            "--l3", "uncounted", "--set", "plugins.dir=" + jar.getParent());
        assertThat(result.exitCode()).as("stderr: %s", result.err()).isEqualTo(ExitCode.OK);
        assertThat(result.out()).contains(", L3 tier l3 (uncounted: stores nothing), ")
            .contains("\nL3 tier l3 (uncounted): usage() threw java.lang.IllegalStateException: no idea\n")
            .contains("every page read back matched");
        assertThat(result.err()).isEmpty();
    }

    @Test
    void shouldExitWithThreeNamingABinaryConfigFileAndWhereItIsNotText() throws IOException
    {
        final Path binary = scratch.resolve("kvtier.conf.gz");
        Files.write(binary, new byte[] {0x1f, (byte) 0x8b, 0x08, 0x00, 0x00});
        for (final String command : new String[] {"serve", "demo"})
        {
            final CliFixture.Result result = CliFixture.run(command, "--config", binary.toString());
            assertThat(result.exitCode()).as("%s: %s", command, result.err()).isEqualTo(ExitCode.CONFIG);
            assertThat(result.err()).as(command).isEqualTo("kvtier: configuration rejected: config file " + binary + " is not a text file:"
                + " byte 0x00 at offset 3 (line 1); a config file is UTF-8 text, one key = value per line" + System.lineSeparator());
        }

        final Path latin1 = Files.write(scratch.resolve("latin1.conf"), "# caf\u00e9\npool.size = 4MiB\n".getBytes(StandardCharsets.ISO_8859_1));
        final CliFixture.Result result = CliFixture.run("serve", "--config", latin1.toString());
        assertThat(result.exitCode()).isEqualTo(ExitCode.CONFIG);
        assertThat(result.err()).contains("config file " + latin1 + " is not valid UTF-8 at byte offset 5 (line 1): byte 0xe9")
            .doesNotContain("Input length");
    }
}

package io.kvtier.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * kvtier as {@code ./kvtier} runs it: on the module path ({@code cli/target/modules} and the CLI's
 * classes, built by {@code package}), with native access granted by module name and not to ALL-UNNAMED.
 * A third-party plugin jar without a module descriptor in {@code plugins.dir} still loads there: its
 * class loader is an unnamed module's that takes the SPI from the engine's named {@code io.kvtier.spi}.
 * Run by failsafe in {@code verify}.
 */
class ModulePathIT
{
    private static final String MODULE_PATH = System.getProperty("kvtier.module-path", "target/modules:target/classes");

    /** What the launcher grants, by name: read from it, so that this test runs what {@code ./kvtier} runs. */
    private static final String NATIVE_ACCESS = launcherNativeAccess();

    @Test
    void shouldRunOnTheModulePathWithNativeAccessByName(@TempDir final Path dir) throws Exception
    {
        final String version = run(dir, "--version");
        assertThat(version).contains("native access: enabled").doesNotContain("WARNING");
        // A named module's packages have no manifest version: it comes from the module descriptor.
        assertThat(version).as("the version line").doesNotContain("(development build)").containsPattern("kvtier [0-9]");
    }

    @Test
    void shouldServeFromAPluginJarWithoutAModuleDescriptor(@TempDir final Path dir) throws Exception
    {
        final Path plugins = Files.createDirectories(dir.resolve("plugins"));
        final Path jar = ThirdPartyPlugin.memoryTier(plugins.resolve("memory-tier.jar"), Files.createDirectories(dir.resolve("build")));
        try (JarFile file = new JarFile(jar.toFile()))
        {
            assertThat(Collections.list(file.entries()).stream().map(ZipEntry::getName))
                .as("the plugin is a plain jar, as third parties build them")
                .noneMatch(name -> name.endsWith("module-info.class"))
                .contains("META-INF/services/io.kvtier.spi.StorageTierProvider");
        }

        final String demo = run(dir, "demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB",
            "--l3", "memory", "--set", "plugins.dir=" + plugins);

        assertThat(demo).contains("L3 tier l3 (memory)").contains("every page read back matched");
        assertThat(demo).containsPattern("hit in L3 +[1-9]");
    }

    @Test
    void shouldFindTheFaultsTierOnTheModulePathAndNeverServeWhatItBreaks(@TempDir final Path dir) throws Exception
    {
        final Path log = dir.resolve("faults.jsonl");
        final String demo = run(dir, "demo", "--progress", "never", "--conversations", "12", "--pool-size", "2MiB", "--page-size", "8KiB",
            "--l3", "faults", "--set", "tier.l3.wrap=posix", "--set", "tier.l3.wrap.dir=" + dir.resolve("l3"), "--set", "tier.l3.wrap.fanout-levels=1", "--set", "tier.l3.seed=20",
            "--set", "tier.l3.faults=eio-read:0.05, short-read:0.05, eio-write:0.02, torn-write:0.02, bit-flip:0.05, replace:0.02",
            "--set", "tier.l3.fault-log=" + log);

        assertThat(demo).contains("L3 tier l3 (faults)").contains("every page read back matched");
        assertThat(Files.readAllLines(log)).as("the faults it injected, one JSON object a line")
            .isNotEmpty()
            .allMatch(line -> line.matches("\\{\"t_ms\":\\d+,\"kind\":\"[a-z-]+\",\"key\":\"[0-9a-f]{32}\",\"op\":\"(read|write)\"}"));
    }

    /** @return the modules the repository's {@code kvtier} script grants native access to */
    private static String launcherNativeAccess()
    {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("mvnw")))
        {
            dir = dir.getParent();
        }
        if (dir == null)
        {
            throw new IllegalStateException("no repository root (mvnw) above " + Path.of("").toAbsolutePath() + " to read the kvtier launcher from");
        }
        final Path launcher = dir.resolve("kvtier");
        final String prefix = "native_access=\"";
        try
        {
            return Files.readAllLines(launcher).stream().map(String::strip).filter(line -> line.startsWith(prefix) && line.endsWith("\""))
                .map(line -> line.substring(prefix.length(), line.length() - 1)).findFirst()
                .orElseThrow(() -> new IllegalStateException(launcher + " has no line native_access=\"...\""));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read the launcher " + launcher, ex);
        }
    }

    private static String run(final Path dir, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=" + NATIVE_ACCESS, "--module-path", MODULE_PATH, "-m", "io.kvtier.cli/io.kvtier.cli.Main"));
        command.addAll(List.of(args));
        final Path out = Files.createTempFile(dir, "out", ".txt");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try
        {
            assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("kvtier %s finished", String.join(" ", args)).isTrue();
            final String output = Files.readString(out);
            assertThat(process.exitValue()).as("kvtier %s said: %s", String.join(" ", args), output).isZero();
            return output;
        }
        finally
        {
            process.destroyForcibly();
        }
    }
}

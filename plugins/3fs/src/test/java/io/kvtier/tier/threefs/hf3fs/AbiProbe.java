package io.kvtier.tier.threefs.hf3fs;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Compiles a small C program with this machine's gcc and headers, runs it, and reads back the
 * {@code name value} lines it prints, so that an ABI test compares the Java layouts and constants
 * with what the C compiler says rather than with numbers copied into the test.
 *
 * <p>Without gcc (or without the headers a probe includes) the calling test is skipped, naming
 * what to install: the layouts are still checked by the unit tests that do not need a compiler.
 * The 3FS tier's own, as its bindings are: {@code native} has one for the fronts it keeps.
 */
final class AbiProbe
{
    private AbiProbe()
    {
    }

    /**
     * @param workDir  a scratch directory
     * @param name     a short name for the probe (used for its files)
     * @param source   the C program; it prints one {@code name value} line per fact, values as
     *                 decimal integers
     * @param gccFlags extra gcc flags (include paths)
     * @return the facts in the order printed
     */
    static Map<String, Long> run(final Path workDir, final String name, final String source, final String... gccFlags)
        throws IOException, InterruptedException
    {
        final Path c = workDir.resolve(name + ".c");
        Files.writeString(c, source);
        final Path binary = workDir.resolve(name);
        final List<String> command = new java.util.ArrayList<>(List.of("gcc", "-std=gnu11", "-o", binary.toString(), c.toString()));
        command.addAll(List.of(gccFlags));
        final Process gcc;
        try
        {
            gcc = new ProcessBuilder(command).redirectErrorStream(true).start();
        }
        catch (final IOException ex)
        {
            Assumptions.abort("gcc is not installed, so the ABI probe '" + name + "' cannot be compiled; install it with: apt-get install gcc");
            throw ex;
        }
        final String gccOutput = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!gcc.waitFor(120, TimeUnit.SECONDS))
        {
            gcc.destroyForcibly();
            throw new IllegalStateException("gcc did not finish compiling the ABI probe '" + name + "' within 120 s");
        }
        if (gcc.exitValue() != 0)
        {
            Assumptions.assumeFalse(gccOutput.contains("No such file or directory") && gccOutput.contains(".h"),
                () -> "a header the ABI probe '" + name + "' includes is missing (install linux-libc-dev or the library's headers): " + gccOutput);
            throw new IllegalStateException("the ABI probe '" + name + "' did not compile:\n" + gccOutput);
        }
        final Process probe = new ProcessBuilder(binary.toString()).redirectErrorStream(true).start();
        final String output = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!probe.waitFor(60, TimeUnit.SECONDS) || probe.exitValue() != 0)
        {
            throw new IllegalStateException("the ABI probe '" + name + "' failed:\n" + output);
        }
        final Map<String, Long> facts = new LinkedHashMap<>();
        for (final String line : output.split("\n"))
        {
            if (line.isBlank())
            {
                continue;
            }
            final String[] parts = line.trim().split("\\s+");
            if (parts.length != 2)
            {
                throw new IllegalStateException("the ABI probe '" + name + "' printed a line that is not 'name value': " + line);
            }
            facts.put(parts[0], Long.parseLong(parts[1]));
        }
        return facts;
    }
}

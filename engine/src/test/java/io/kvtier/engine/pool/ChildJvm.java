package io.kvtier.engine.pool;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a main class of the test class path in a second JVM and returns what it printed. */
final class ChildJvm
{
    private ChildJvm()
    {
    }

    static Process start(final Path out, final Class<?> main, final String... args) throws Exception
    {
        return start(out, true, main, args);
    }

    static Process start(final Path out, final boolean nativeAccess, final Class<?> main, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (nativeAccess)
        {
            command.add("--enable-native-access=ALL-UNNAMED");
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(List.of(args));
        // Never inheritIO: the child's output would corrupt surefire's channel to this JVM.
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    }

    static String run(final Path out, final Class<?> main, final String... args) throws Exception
    {
        return run(out, true, main, args);
    }

    static String run(final Path out, final boolean nativeAccess, final Class<?> main, final String... args) throws Exception
    {
        final Process process = start(out, nativeAccess, main, args);
        if (!process.waitFor(120, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new AssertionError("child JVM " + main.getSimpleName() + " did not finish in 120 s; output: " + Files.readString(out));
        }
        return Files.readString(out).strip();
    }
}

package io.kvtier.bench.ipc;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts a second JVM that runs one of our main classes with this JVM's java and class path: the
 * running kvtier.jar, or the test class path under Maven.
 */
public final class JavaProcesses
{
    private JavaProcesses()
    {
    }

    /**
     * @param main the class whose {@code main} the new JVM runs
     * @param args its arguments
     * @return a process builder for it, stderr inherited so that a failing child says why
     */
    public static ProcessBuilder java(final Class<?> main, final String... args)
    {
        final List<String> command = new ArrayList<>(List.of(javaExecutable(), "--enable-native-access=ALL-UNNAMED",
            // A small, quickly started JVM: the child only drives a ring, it holds no data of its own.
            "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC",
            "-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    }

    /**
     * @param main the class whose {@code main} the new JVM runs
     * @param args its arguments
     * @return the started process
     * @throws IOException if it cannot be started
     */
    public static Process start(final Class<?> main, final String... args) throws IOException
    {
        return java(main, args).start();
    }

    private static String javaExecutable()
    {
        return ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }
}

package io.kvtier.bench.ipc;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Starts a second JVM that runs one of our main classes the way this JVM runs it: on the module path
 * ({@code ./kvtier}) with this JVM's module path, or on the class path (kvtier.jar, tests under Maven)
 * with its class path; native access is granted to what has it here.
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
        final Module module = main.getModule();
        final String nativeAccess = nativeAccess(module);
        final List<String> command = new ArrayList<>(List.of(javaExecutable()));
        if (!nativeAccess.isEmpty())
        {
            command.add("--enable-native-access=" + nativeAccess);
        }
        // A small, quickly started JVM: the child only drives a ring, it holds no data of its own.
        command.addAll(List.of("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC"));
        if (module.isNamed())
        {
            command.addAll(List.of("--module-path", System.getProperty("jdk.module.path"), "-m", module.getName() + "/" + main.getName()));
        }
        else
        {
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        }
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

    /** @return the modules granted native access in this JVM, by name (none: empty), or ALL-UNNAMED on the class path */
    private static String nativeAccess(final Module main)
    {
        if (!main.isNamed())
        {
            return "ALL-UNNAMED";
        }
        return ModuleLayer.boot().modules().stream().filter(Module::isNativeAccessEnabled).map(Module::getName).sorted()
            .collect(Collectors.joining(","));
    }

    private static String javaExecutable()
    {
        return ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }
}

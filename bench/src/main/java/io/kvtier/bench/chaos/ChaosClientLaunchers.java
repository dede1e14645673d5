package io.kvtier.bench.chaos;

import io.kvtier.bench.ipc.JavaProcesses;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How a chaos campaign starts the honest client of each language, each speaking {@link ChaosClientProcess}'s
 * protocol: Java ({@link ChaosClientProcess} in a JVM like this one), C ({@code clients/c/build/kvtier_chaos_client},
 * which clients/c's Makefile builds) and Python ({@code python3 -m kvtier.chaos_client} from {@code clients/python},
 * over the C client library). The C and Python ones come from the checkout this code runs from (above its jar or
 * classes directory, else above the working directory); where one cannot run, {@link Launcher#missing()} says what
 * is missing and how to get it.
 */
final class ChaosClientLaunchers
{
    /** The C chaos client as clients/c's Makefile builds it, relative to clients/c. */
    static final Path C_CLIENT = Path.of("build", "kvtier_chaos_client");
    /** The C client library the Python binding loads, relative to clients/c. */
    static final Path C_LIBRARY = Path.of("build", "libkvtier_client.so");
    /** The Python chaos client's module, relative to clients/python. */
    static final Path PYTHON_MODULE = Path.of("kvtier", "chaos_client.py");
    /** What {@link #make} says when it succeeded. */
    private static final String BUILT = "built";
    private static final String BUILD_HINT = "make -C clients/c (or ./mvnw -pl clients compile) builds it; it needs gcc and make"
        + " (apt-get install gcc make)";

    /**
     * One language's way to start a client, or what it lacks.
     *
     * @param language    java, c or python
     * @param command     the command before the client's arguments (empty when it cannot run)
     * @param environment variables the process needs besides this one's
     * @param directory   its working directory, or null for this process's
     * @param missing     null when the language can run, else what is missing and how to get it
     */
    record Launcher(String language, List<String> command, Map<String, String> environment, Path directory, String missing)
    {
        /**
         * @param args the client's arguments (socket, seed, acknowledgement file, model, and wrong-writer or none)
         * @return a process builder for one client
         */
        ProcessBuilder start(final List<String> args)
        {
            if ("java".equals(language))
            {
                return JavaProcesses.java(ChaosClientProcess.class, args.toArray(String[]::new));
            }
            final List<String> full = new ArrayList<>(command);
            full.addAll(args);
            final ProcessBuilder builder = new ProcessBuilder(full).directory(directory == null ? null : directory.toFile());
            builder.environment().putAll(environment);
            return builder;
        }
    }

    private ChaosClientLaunchers()
    {
    }

    /**
     * Finds, and where it is not built and can be, builds what each language's client needs.
     *
     * @param languages java, c or python each
     * @param log       where the build's progress goes (stderr)
     * @return how to start each language's clients, or what is missing, in the order given
     */
    static List<Launcher> prepare(final java.util.Collection<String> languages, final java.io.PrintWriter log)
    {
        // clients/c's Makefile builds the C client and the library the Python binding loads: run it once.
        final Map<Path, String> made = new java.util.HashMap<>();
        final List<Launcher> launchers = new ArrayList<>();
        for (final String language : languages)
        {
            launchers.add(switch (language)
            {
                case "java" -> new Launcher(language, List.of(), Map.of(), null, null);
                case "c" -> prepareC(made, log);
                case "python" -> preparePython(made, log);
                default -> new Launcher(language, List.of(), Map.of(), null, "there is no " + language + " chaos client (allowed: java, c, python)");
            });
        }
        return launchers;
    }

    private static Launcher prepareC(final Map<Path, String> made, final java.io.PrintWriter log)
    {
        final Optional<Path> dir = checkoutDir(Path.of("clients", "c"), Path.of("chaos", "kvtier_chaos_client.c"));
        if (dir.isEmpty())
        {
            return new Launcher("c", List.of(), Map.of(), null, "clients/c is not in a checkout above " + Path.of("").toAbsolutePath()
                + " or this code's jar: run kvtier chaos from a kvtier checkout, where " + BUILD_HINT);
        }
        final String built = made.computeIfAbsent(dir.get(), d -> make(d, log));
        final Path binary = dir.get().resolve(C_CLIENT);
        if (!Files.isExecutable(binary))
        {
            return new Launcher("c", List.of(), Map.of(), null, "the C chaos client " + binary + " is not built"
                + (built != null && !BUILT.equals(built) ? " (" + built + ")" : "") + ": " + BUILD_HINT);
        }
        return new Launcher("c", List.of(binary.toString()), Map.of(), null, null);
    }

    private static Launcher preparePython(final Map<Path, String> made, final java.io.PrintWriter log)
    {
        final Optional<Path> dir = checkoutDir(Path.of("clients", "python"), PYTHON_MODULE);
        if (dir.isEmpty())
        {
            return new Launcher("python", List.of(), Map.of(), null, "clients/python (with " + PYTHON_MODULE + ") is not in a checkout above "
                + Path.of("").toAbsolutePath() + " or this code's jar: run kvtier chaos from a kvtier checkout");
        }
        if (!onPath("python3"))
        {
            return new Launcher("python", List.of(), Map.of(), null, "python3 is not on the PATH (apt-get install python3)");
        }
        String library = System.getenv("KVTIER_CLIENT_LIB");
        String built = null;
        if (library == null)
        {
            final Path c = dir.get().resolveSibling("c");
            built = made.computeIfAbsent(c, d -> make(d, log));
            library = c.resolve(C_LIBRARY).toString();
        }
        if (!Files.isRegularFile(Path.of(library)))
        {
            return new Launcher("python", List.of(), Map.of(), null, "the Python binding needs the C client library " + library + ", which is not built"
                + (built != null && !BUILT.equals(built) ? " (" + built + ")" : "") + ": " + BUILD_HINT + "; or set KVTIER_CLIENT_LIB to it");
        }
        final String pythonPath = System.getenv("PYTHONPATH") == null ? dir.get().toString() : dir.get() + File.pathSeparator + System.getenv("PYTHONPATH");
        final Map<String, String> environment = Map.of("PYTHONPATH", pythonPath, "KVTIER_CLIENT_LIB", library);
        // Import it once as each client will, so that a binding that cannot load is named here, not as clients dying at start.
        // In clients/python, so that python3 -m finds this kvtier package first whatever the working directory holds.
        final ProcessBuilder probe = new ProcessBuilder("python3", "-c", "import kvtier, kvtier.chaos_client; kvtier.load_library()")
            .directory(dir.get().toFile()).redirectErrorStream(true);
        probe.environment().putAll(environment);
        final String said = run(probe, 60);
        if (said != null)
        {
            return new Launcher("python", List.of(), Map.of(), null, "python3 cannot import kvtier.chaos_client from " + dir.get() + " with KVTIER_CLIENT_LIB="
                + library + ": " + said);
        }
        return new Launcher("python", List.of("python3", "-m", "kvtier.chaos_client"), environment, dir.get(), null);
    }

    /**
     * Runs clients/c's Makefile (nothing to do when all is built) where gcc and make are on the PATH.
     *
     * @return {@link #BUILT} when it ran and succeeded, else why it did not build
     */
    private static String make(final Path dir, final java.io.PrintWriter log)
    {
        if (!onPath("make") || !onPath("gcc"))
        {
            return "gcc or make is not on the PATH";
        }
        log.println("chaos: make -C " + dir + " (the C client library and the C chaos client)");
        log.flush();
        final String said = run(new ProcessBuilder("make", "-s", "-C", dir.toString(), "all").redirectErrorStream(true), 300);
        return said == null ? BUILT : "make -C " + dir + " failed: " + said;
    }

    /** @return null when the command exited 0 in time, else its output's last lines (or why it did not run) */
    private static String run(final ProcessBuilder builder, final int seconds)
    {
        try
        {
            final Process process = builder.start();
            process.getOutputStream().close();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!process.waitFor(seconds, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return "did not end in " + seconds + " s";
            }
            if (process.exitValue() == 0)
            {
                return null;
            }
            final String[] lines = output.split("\n");
            return "exit " + process.exitValue() + ": " + String.join(" | ", List.of(lines).subList(Math.max(0, lines.length - 3), lines.length));
        }
        catch (final IOException ex)
        {
            return ex.getMessage();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    /** @return the directory {@code relative} holding {@code marker}, above this code's location or the working directory */
    private static Optional<Path> checkoutDir(final Path relative, final Path marker)
    {
        final List<Path> starts = new ArrayList<>();
        try
        {
            starts.add(Path.of(ChaosClientLaunchers.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        }
        catch (final URISyntaxException | RuntimeException ex)
        {
            // No code source: the working directory alone.
        }
        starts.add(Path.of(""));
        for (final Path start : starts)
        {
            for (Path at = start.toAbsolutePath(); at != null; at = at.getParent())
            {
                final Path dir = at.resolve(relative);
                if (Files.isRegularFile(dir.resolve(marker)))
                {
                    return Optional.of(dir);
                }
            }
        }
        return Optional.empty();
    }

    private static boolean onPath(final String program)
    {
        final String path = System.getenv("PATH");
        if (path != null)
        {
            for (final String dir : path.split(File.pathSeparator))
            {
                if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program)))
                {
                    return true;
                }
            }
        }
        return false;
    }
}

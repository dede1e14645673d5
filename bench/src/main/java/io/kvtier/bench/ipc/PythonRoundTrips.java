package io.kvtier.bench.ipc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One-key LOOKUP round trips through the Python binding of the C client (clients/python over
 * clients/c/build/libkvtier_client.so), in a python3 process of its own, for {@code kvtier bench
 * ipc} to print beside the Java client's. Optional: when the binding, its library or python3 is
 * missing, {@link #missing} says which and the benchmark reports it instead of a figure.
 */
public final class PythonRoundTrips
{
    /** The binding's module, in its directory. */
    static final String MODULE = "kvtier_client.py";
    /** The C library the binding loads, relative to the binding's directory. */
    static final Path LIBRARY = Path.of("..", "c", "build", "libkvtier_client.so");

    /**
     * The figures.
     *
     * @param roundTrips lookups timed
     * @param p50Nanos   median
     * @param p99Nanos   99th percentile
     * @param p999Nanos  99.9th percentile
     * @param maxNanos   slowest
     */
    public record Figures(long roundTrips, long p50Nanos, long p99Nanos, long p999Nanos, long maxNanos)
    {
    }

    private PythonRoundTrips()
    {
    }

    /**
     * @return the binding's directory in the checkout this code runs from ({@code clients/python}
     *         above the jar or classes directory, else above the working directory), if there is one
     */
    public static Optional<Path> findBinding()
    {
        return CheckoutDirectories.find(PythonRoundTrips.class, Path.of("clients", "python"), Path.of(MODULE));
    }

    /**
     * @param binding the binding's directory, or null when none was found
     * @return what is missing to run the Python round trips, or null when nothing is
     */
    public static String missing(final Path binding)
    {
        if (binding == null)
        {
            return "the Python binding (clients/python/" + MODULE + ") is not in this checkout; give its directory with --python-binding";
        }
        if (!Files.isRegularFile(binding.resolve(MODULE)))
        {
            return binding.resolve(MODULE) + " does not exist";
        }
        if (System.getenv("KVTIER_CLIENT_LIB") == null && !Files.isRegularFile(binding.resolve(LIBRARY)))
        {
            return "the C client library " + binding.resolve(LIBRARY).normalize() + " is not built (./mvnw -pl clients compile builds it; it needs gcc and make)";
        }
        if (!onPath("python3"))
        {
            return "python3 is not on the PATH";
        }
        return null;
    }

    private static boolean onPath(final String program)
    {
        final String path = System.getenv("PATH");
        if (path == null)
        {
            return false;
        }
        for (final String dir : path.split(java.io.File.pathSeparator))
        {
            if (Files.isExecutable(Path.of(dir, program)))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @param binding    the binding's directory ({@link #missing} said nothing is missing)
     * @param socketPath the engine's IPC socket
     * @param warmups    unrecorded lookups first
     * @param iterations recorded lookups
     * @return the figures
     * @throws IOException          if the script cannot run or fails
     * @throws InterruptedException if interrupted while waiting for it
     */
    public static Figures measure(final Path binding, final Path socketPath, final int warmups, final int iterations) throws IOException, InterruptedException
    {
        return measure(binding, socketPath, warmups, iterations, "backoff");
    }

    /**
     * As {@link #measure(Path, Path, int, int)}, the client waiting as {@code wait} says.
     *
     * @param binding    the binding's directory
     * @param socketPath the engine's IPC socket
     * @param warmups    unrecorded lookups first
     * @param iterations recorded lookups
     * @param wait       the binding's wait: {@code backoff} (its default) or {@code awake}
     * @return the figures
     * @throws IOException          if the script cannot run or fails
     * @throws InterruptedException if interrupted while waiting for it
     */
    public static Figures measure(final Path binding, final Path socketPath, final int warmups, final int iterations, final String wait)
        throws IOException, InterruptedException
    {
        final Path script = Files.createTempFile("kvtier-python-round-trips-", ".py");
        try
        {
            try (InputStream in = PythonRoundTrips.class.getResourceAsStream("python_round_trips.py"))
            {
                if (in == null)
                {
                    throw new IOException("python_round_trips.py is missing from the class path");
                }
                Files.write(script, in.readAllBytes());
            }
            final Process python = new ProcessBuilder("python3", script.toString(), binding.toString(), socketPath.toString(),
                Integer.toString(warmups), Integer.toString(iterations), wait).redirectErrorStream(true).start();
            python.getOutputStream().close();
            final String output = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!python.waitFor(120, TimeUnit.SECONDS) || python.exitValue() != 0)
            {
                python.destroyForcibly();
                throw new IOException("the Python round trips failed: " + output);
            }
            for (final String line : output.split("\n"))
            {
                final String[] f = line.trim().split(" ");
                if (f.length == 6 && f[0].equals("kvtier-python-bench"))
                {
                    return new Figures(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]));
                }
            }
            throw new IOException("the Python round trips printed no figures: " + output);
        }
        finally
        {
            Files.deleteIfExists(script);
        }
    }
}

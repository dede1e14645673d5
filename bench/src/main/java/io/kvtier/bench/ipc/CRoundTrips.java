package io.kvtier.bench.ipc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One-key LOOKUP round trips of the C client timed in C ({@code clients/c/bench/kvtier_bench_client.c}, which
 * clients/c's Makefile builds into {@code build/kvtier_bench_client}), in a process of its own, for {@code kvtier
 * bench ipc} to print beside the Java client's and the Python binding's: the Python figure is this one plus the
 * binding's own cost. The program makes the lookup python_round_trips.py makes, of the same page, and optionally the
 * Java client's batched lookups. Optional: when the program is not built, {@link #missing} says so and how to build
 * it, and the benchmark reports that instead of a figure.
 */
public final class CRoundTrips
{
    /** The program's source, relative to the C client's directory: what marks clients/c in a checkout. */
    static final Path SOURCE = Path.of("bench", "kvtier_bench_client.c");
    /** The program, relative to the C client's directory. */
    static final Path PROGRAM = Path.of("build", "kvtier_bench_client");
    /** The first word of the program's line of figures. */
    static final String PREFIX = "kvtier-c-bench";
    /** The words of that line. */
    private static final int FIELDS = 8;
    /** The program's wait flag for the client library's default wait, KVT_WAIT_BACKOFF. */
    public static final String BACKOFF = "backoff";
    /** The program's wait flag for KVT_WAIT_AWAKE. */
    public static final String AWAKE = "awake";
    /** What a run may take whatever its counts: connecting, writing the pages, and a host busy with other work. */
    private static final Duration BASE_TIMEOUT = Duration.ofSeconds(120);
    /** What it may take more per key looked up: far more than any run has needed (a one-key round trip takes microseconds, a key of a batch less). */
    private static final Duration TIMEOUT_PER_KEY = Duration.ofNanos(100_000);

    /**
     * The figures.
     *
     * @param roundTrips   one-key lookups timed
     * @param p50Nanos     median
     * @param p99Nanos     99th percentile
     * @param p999Nanos    99.9th percentile
     * @param maxNanos     slowest
     * @param batchedKeys  keys the timed batched lookups found (0 when there were none)
     * @param batchedNanos the time they took together
     */
    public record Figures(long roundTrips, long p50Nanos, long p99Nanos, long p999Nanos, long maxNanos, long batchedKeys, long batchedNanos)
    {
        /** @return keys per second of the batched lookups (0 when there were none) */
        public double batchedKeysPerSecond()
        {
            return batchedNanos > 0 ? batchedKeys / (batchedNanos / 1e9) : 0;
        }
    }

    private CRoundTrips()
    {
    }

    /**
     * @return the C client's directory in the checkout this code runs from ({@code clients/c} above the jar or classes
     *         directory, else above the working directory), if there is one; its program may not be built
     */
    public static Optional<Path> findClient()
    {
        return CheckoutDirectories.find(CRoundTrips.class, Path.of("clients", "c"), SOURCE);
    }

    /**
     * @param client the C client's directory ({@code clients/c}), or null when none was found
     * @return what is missing to run the C round trips, or null when nothing is
     */
    public static String missing(final Path client)
    {
        if (client == null)
        {
            return "the C client (clients/c/" + SOURCE + ") is not in this checkout; give its directory with --c-client";
        }
        final Path program = client.resolve(PROGRAM).toAbsolutePath().normalize();
        if (!Files.isRegularFile(program) || !Files.isExecutable(program))
        {
            return "the C bench client " + program + " is not built (./mvnw -pl clients compile, or make -C " + client.toAbsolutePath().normalize()
                + ", builds it; it needs gcc and make)";
        }
        return null;
    }

    /**
     * One-key lookups only.
     *
     * @param client     the C client's directory ({@link #missing} said nothing is missing)
     * @param socketPath the engine's IPC socket
     * @param warmups    unrecorded lookups first
     * @param iterations recorded lookups
     * @param wait       {@link #BACKOFF} (the client library's default) or {@link #AWAKE}
     * @return the figures, with no batched lookups
     * @throws IOException          if the program cannot run, fails or does not finish in time
     * @throws InterruptedException if interrupted while waiting for it
     */
    public static Figures measure(final Path client, final Path socketPath, final int warmups, final int iterations, final String wait)
        throws IOException, InterruptedException
    {
        return measure(client, socketPath, warmups, iterations, wait, 0, 0);
    }

    /**
     * One-key lookups, then (unless {@code batchKeys} is 0) batched lookups of the chain of {@code batchKeys} pages the
     * Java client writes, {@code batches} of them timed after a tenth as many (at least one) untimed.
     *
     * @param client     the C client's directory ({@link #missing} said nothing is missing)
     * @param socketPath the engine's IPC socket
     * @param warmups    unrecorded one-key lookups first
     * @param iterations recorded one-key lookups
     * @param wait       {@link #BACKOFF} (the client library's default) or {@link #AWAKE}
     * @param batchKeys  keys per batched lookup, 0 for none
     * @param batches    batched lookups timed (ignored when {@code batchKeys} is 0)
     * @return the figures
     * @throws IOException          if the program cannot run, fails or does not finish in time
     * @throws InterruptedException if interrupted while waiting for it
     */
    public static Figures measure(final Path client, final Path socketPath, final int warmups, final int iterations, final String wait,
                                  final int batchKeys, final int batches) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(client.resolve(PROGRAM).toString(), socketPath.toString(), Integer.toString(warmups),
            Integer.toString(iterations), wait));
        if (batchKeys > 0)
        {
            command.add(Integer.toString(batchKeys));
            command.add(Integer.toString(batches));
        }
        final Duration timeout = timeout(warmups, iterations, batchKeys, batches);
        // Its output goes to a file, not a pipe: a pipe read to its end would wait for a hung program past the timeout.
        final Path output = Files.createTempFile("kvtier-c-round-trips-", ".out");
        try
        {
            final Process program = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            program.getOutputStream().close();
            final boolean ended = program.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!ended)
            {
                program.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IOException("the C round trips (" + String.join(" ", command) + ") did not end within " + timeout.toSeconds()
                    + " s; their output: " + Files.readString(output, StandardCharsets.UTF_8));
            }
            final String text = Files.readString(output, StandardCharsets.UTF_8);
            if (program.exitValue() != 0)
            {
                throw new IOException("the C round trips (" + String.join(" ", command) + ") failed with exit code " + program.exitValue()
                    + ": " + text);
            }
            return parse(text);
        }
        finally
        {
            Files.deleteIfExists(output);
        }
    }

    /** Long enough for a run of these counts on a busy host, short enough that a hung program does not hang the benchmark for good. */
    static Duration timeout(final int warmups, final int iterations, final int batchKeys, final int batches)
    {
        final long batchLookups = batchKeys > 0 ? batches + Math.max(1, batches / 10) : 0;
        final long keys = (long)warmups + iterations + batchLookups * batchKeys;
        return BASE_TIMEOUT.plus(TIMEOUT_PER_KEY.multipliedBy(keys));
    }

    /**
     * @param output what the program printed
     * @return the figures of its {@value #PREFIX} line
     * @throws IOException if it has no such line
     */
    static Figures parse(final String output) throws IOException
    {
        for (final String line : output.split("\n"))
        {
            final String[] f = line.trim().split(" ");
            if (f.length == FIELDS && f[0].equals(PREFIX))
            {
                try
                {
                    return new Figures(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]),
                        Long.parseLong(f[6]), Long.parseLong(f[7]));
                }
                catch (final NumberFormatException ex)
                {
                    throw new IOException("the C round trips printed a line of figures that are not numbers: " + line, ex);
                }
            }
        }
        throw new IOException("the C round trips printed no figures: " + output);
    }
}

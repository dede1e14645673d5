package io.kvtier.bench.ipc;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.engine.Engine;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code kvtier bench ipc}'s measurement, against an engine already serving IPC clients: the raw
 * ping-pong baseline ({@link PingPongBaseline}), the same lookup through an in-process session for
 * reference ({@link InProcessLookupTiming}), and then the Java client in its own process
 * ({@link IpcBenchClient}), one after the other in the same run, with the same number of round trips.
 */
public final class IpcBenchmark
{
    /**
     * How much to measure.
     *
     * @param warmups    unrecorded round trips first, in each of the two
     * @param iterations recorded round trips, in each
     * @param batchKeys  keys per batched lookup
     * @param batches    batched lookups timed
     */
    public record Plan(int warmups, int iterations, int batchKeys, int batches)
    {
        /** Validates. */
        public Plan
        {
            if (warmups < 0 || iterations < 1 || batchKeys < 1 || batches < 1)
            {
                throw new IllegalArgumentException("warmups=" + warmups + " must be >= 0, iterations=" + iterations + ", batchKeys=" + batchKeys
                    + " and batches=" + batches + " >= 1");
            }
        }
    }

    /**
     * The figures of one run.
     *
     * @param plan            what was measured
     * @param roundTrips      one-key lookups timed through the client
     * @param rttP50Nanos     their median round trip
     * @param rttP99Nanos     99th percentile
     * @param rttP999Nanos    99.9th percentile
     * @param rttMaxNanos     slowest
     * @param baseline        the ping-pong's round trips
     * @param inProcess       the same lookup through an in-process session of the same engine
     * @param python          the same lookup through the Python binding, or null
     * @param pythonMissing   why there is no Python figure, or null
     * @param batchedKeys     keys looked up by the batched lookups
     * @param batchedNanos    how long they took
     */
    public record Result(Plan plan, long roundTrips, long rttP50Nanos, long rttP99Nanos, long rttP999Nanos, long rttMaxNanos, Histogram baseline,
                         Histogram inProcess, PythonRoundTrips.Figures python, String pythonMissing, long batchedKeys, long batchedNanos)
    {
        /** @return the client's median round trip over the baseline's */
        public double rttP50Ratio()
        {
            return rttP50Nanos / (double)Math.max(1, baseline.getValueAtPercentile(50));
        }

        /** @return keys per second of the batched lookups */
        public double batchedKeysPerSecond()
        {
            return batchedKeys / Math.max(1e-9, batchedNanos / 1e9);
        }

        /** @return the figures as one JSON object */
        public String toJson()
        {
            final StringWriter text = new StringWriter();
            try (JsonGenerator json = new JsonFactory().createGenerator(text))
            {
                json.writeStartObject();
                json.writeNumberField("rtt_p50_ns", rttP50Nanos);
                json.writeNumberField("rtt_p99_ns", rttP99Nanos);
                json.writeNumberField("rtt_p999_ns", rttP999Nanos);
                json.writeNumberField("rtt_max_ns", rttMaxNanos);
                json.writeNumberField("round_trips", roundTrips);
                json.writeNumberField("baseline_rtt_p50_ns", baseline.getValueAtPercentile(50));
                json.writeNumberField("baseline_rtt_p99_ns", baseline.getValueAtPercentile(99));
                json.writeNumberField("baseline_rtt_p999_ns", baseline.getValueAtPercentile(99.9));
                json.writeNumberField("baseline_rtt_max_ns", baseline.getMaxValue());
                json.writeNumberField("baseline_round_trips", baseline.getTotalCount());
                json.writeNumberField("rtt_p50_ratio", Math.round(rttP50Ratio() * 1000) / 1000.0);
                json.writeNumberField("inprocess_rtt_p50_ns", inProcess.getValueAtPercentile(50));
                json.writeNumberField("inprocess_rtt_p99_ns", inProcess.getValueAtPercentile(99));
                json.writeNumberField("inprocess_rtt_p999_ns", inProcess.getValueAtPercentile(99.9));
                if (python != null)
                {
                    json.writeNumberField("python_rtt_p50_ns", python.p50Nanos());
                    json.writeNumberField("python_rtt_p99_ns", python.p99Nanos());
                    json.writeNumberField("python_rtt_p999_ns", python.p999Nanos());
                    json.writeNumberField("python_rtt_p50_ratio", Math.round(python.p50Nanos() * 1000.0 / Math.max(1, baseline.getValueAtPercentile(50))) / 1000.0);
                }
                else
                {
                    json.writeStringField("python_missing", pythonMissing);
                }
                json.writeNumberField("batched_keys_per_s", Math.round(batchedKeysPerSecond()));
                json.writeNumberField("batch_keys", plan.batchKeys());
                json.writeNumberField("batches", plan.batches());
                json.writeNumberField("warmups", plan.warmups());
                json.writeStringField("client", "java");
                json.writeEndObject();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("a StringWriter does not fail", ex);
            }
            return text.toString();
        }

        /** @return the figures, side by side */
        public String toText()
        {
            return javaText() + (python != null
                ? String.format(Locale.ROOT, """
                one-key LOOKUP round trip, Python binding of the C client in another process (%,d round trips)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns   (p50 ratio to the baseline %.2f)
                """, python.roundTrips(), python.p50Nanos(), python.p99Nanos(), python.p999Nanos(), python.maxNanos(),
                python.p50Nanos() / (double)Math.max(1, baseline.getValueAtPercentile(50)))
                : "Python binding: not measured: " + pythonMissing + System.lineSeparator());
        }

        private String javaText()
        {
            return String.format(Locale.ROOT, """
                one-key LOOKUP round trip, Java client in another process (%,d round trips)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns
                baseline: raw shared-memory ping-pong between two processes (%,d round trips)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns
                p50 ratio (kvtier / baseline)   %.2f
                for reference: the same lookup through an in-process Session of the same engine (no IPC)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns
                batched LOOKUPs of %,d keys      %,.0f keys/s (%,d lookups)
                """, roundTrips, rttP50Nanos, rttP99Nanos, rttP999Nanos, rttMaxNanos, baseline.getTotalCount(),
                baseline.getValueAtPercentile(50), baseline.getValueAtPercentile(99), baseline.getValueAtPercentile(99.9), baseline.getMaxValue(),
                rttP50Ratio(), inProcess.getValueAtPercentile(50), inProcess.getValueAtPercentile(99), inProcess.getValueAtPercentile(99.9),
                plan.batchKeys(), batchedKeysPerSecond(), plan.batches());
        }
    }

    private IpcBenchmark()
    {
    }

    /**
     * @param engine        the engine, serving IPC, for the in-process reference
     * @param socketPath    the engine's IPC socket
     * @param baselineDir   where the baseline's shared file goes (/dev/shm, as the engine's pool)
     * @param plan          how much to measure
     * @param pythonBinding the Python binding's directory (clients/python), or null when there is none
     * @return the figures
     * @throws IOException          if a process cannot be started or fails
     * @throws InterruptedException if interrupted while waiting for one
     */
    public static Result measure(final Engine engine, final Path socketPath, final Path baselineDir, final Plan plan, final Path pythonBinding)
        throws IOException, InterruptedException
    {
        final Histogram baseline = PingPongBaseline.measure(baselineDir, plan.warmups(), plan.iterations());
        final Histogram inProcess = InProcessLookupTiming.measure(engine, plan.warmups(), plan.iterations());
        final Process client = JavaProcesses.java(IpcBenchClient.class, socketPath.toString(), Integer.toString(plan.warmups()),
            Integer.toString(plan.iterations()), Integer.toString(plan.batchKeys()), Integer.toString(plan.batches())).start();
        try
        {
            client.getOutputStream().close();
            final String output = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!client.waitFor(60, TimeUnit.SECONDS) || client.exitValue() != 0)
            {
                throw new IOException("the client process failed (exit code " + (client.isAlive() ? "none yet" : client.exitValue())
                    + "); its output: " + output);
            }
            final IpcBenchClient.IpcBenchFigures figures = IpcBenchClient.IpcBenchFigures.parse(output);
            final String pythonMissing = PythonRoundTrips.missing(pythonBinding);
            final PythonRoundTrips.Figures python = pythonMissing == null
                ? PythonRoundTrips.measure(pythonBinding, socketPath, plan.warmups(), plan.iterations()) : null;
            return new Result(plan, figures.roundTrips(), figures.p50Nanos(), figures.p99Nanos(), figures.p999Nanos(), figures.maxNanos(), baseline,
                inProcess, python, pythonMissing, figures.batchedKeys(), figures.batchedNanos());
        }
        finally
        {
            if (client.isAlive())
            {
                client.destroyForcibly();
            }
        }
    }
}

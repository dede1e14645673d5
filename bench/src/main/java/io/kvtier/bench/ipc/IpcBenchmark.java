package io.kvtier.bench.ipc;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.workload.JitSettling;
import io.kvtier.bench.workload.RunPhase;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.engine.Engine;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
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
 * ({@link IpcBenchClient}), one after the other in the same run, with the same number of round trips; then, when the
 * checkout has them built, the C client through its Python binding ({@link PythonRoundTrips}) and timed in C
 * ({@link CRoundTrips}).
 * Then the loaded case: the same baseline and the same client again while {@link BackgroundLoad} keeps
 * one core's worth of work runnable beside them. Around each timed part it reads how both sides
 * waited: the engine thread's sleeps and yields from the engine's counters, the client's from the
 * client.
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
     * @param loaded       whether to measure the loaded case too
     * @param clientIdle   how the client process waits for its answers
     * @param jitWaitNanos the longest each warm-up goes on, past its round trips, while the compilers of the client's JVM or
     *                     of the engine's are busy (0: not at all)
     */
    public record Plan(int warmups, int iterations, int batchKeys, int batches, boolean loaded, IdleStrategy.Kind clientIdle, long jitWaitNanos)
    {
        /** How long a warm-up waits at most for the compilers unless told otherwise. */
        public static final long JIT_WAIT_DEFAULT_NANOS = TimeUnit.SECONDS.toNanos(10);

        /** Validates. */
        public Plan
        {
            if (warmups < 0 || iterations < 1 || batchKeys < 1 || batches < 1 || jitWaitNanos < 0)
            {
                throw new IllegalArgumentException("warmups=" + warmups + " and jitWaitNanos=" + jitWaitNanos + " must be >= 0, iterations="
                    + iterations + ", batchKeys=" + batchKeys + " and batches=" + batches + " >= 1");
            }
            if (clientIdle == null)
            {
                throw new IllegalArgumentException("clientIdle must name a strategy");
            }
        }

        /**
         * The quiet and the loaded case, the client waiting as its default says.
         *
         * @param warmups    unrecorded round trips first
         * @param iterations recorded round trips
         * @param batchKeys  keys per batched lookup
         * @param batches    batched lookups timed
         */
        public Plan(final int warmups, final int iterations, final int batchKeys, final int batches)
        {
            this(warmups, iterations, batchKeys, batches, true, IdleStrategy.CLIENT_DEFAULT, JIT_WAIT_DEFAULT_NANOS);
        }

        /**
         * @param clientIdle how the client process waits for its answers
         * @return this plan with the client waiting so
         */
        public Plan withClientIdle(final IdleStrategy.Kind clientIdle)
        {
            return new Plan(warmups, iterations, batchKeys, batches, loaded, clientIdle, jitWaitNanos);
        }
    }

    /**
     * How the engine thread idled over a part: its counters' growth.
     *
     * @param sleeps       sleeps announced
     * @param sleepNanos   time in them
     * @param yields       yields
     * @param budgetNanos  the adaptive spin budget at the end (0 for another strategy)
     */
    public record EngineWaits(long sleeps, long sleepNanos, long yields, long budgetNanos)
    {
        static EngineWaits read(final EngineCounters counters)
        {
            return new EngineWaits(counters.getOpaque(EngineCounter.ENGINE_SLEEPS), counters.getOpaque(EngineCounter.ENGINE_SLEEP_NANOS),
                counters.getOpaque(EngineCounter.ENGINE_YIELDS), counters.getOpaque(EngineCounter.ENGINE_SPIN_BUDGET_NANOS));
        }

        EngineWaits since(final EngineWaits earlier)
        {
            return new EngineWaits(sleeps - earlier.sleeps, sleepNanos - earlier.sleepNanos, yields - earlier.yields, budgetNanos);
        }
    }

    /**
     * One run of the client process, and how both sides waited in each of its timed parts.
     *
     * @param baseline       the ping-pong measured just before it, under the same conditions
     * @param wakeUps        the futex ping-pong measured with it: two wake-ups per round trip; null when there is no futex
     * @param wakeUpsMissing why there is no wake-up figure, or null
     * @param client         the client's figures
     * @param oneKeyEngine   the engine thread's idling during the one-key lookups
     * @param batchedEngine  and during the batched ones
     * @param engineCompileMillis the engine JVM's compiler threads' CPU time during the one-key lookups, -1 when unknown
     */
    public record Phase(Histogram baseline, Histogram wakeUps, String wakeUpsMissing, IpcBenchClient.IpcBenchFigures client, EngineWaits oneKeyEngine,
                        EngineWaits batchedEngine, long engineCompileMillis)
    {
        /** @return the client's median round trip over the baseline's */
        public double rttP50Ratio()
        {
            return client.p50Nanos() / (double)Math.max(1, baseline.getValueAtPercentile(50));
        }

        /** @return keys per second of the batched lookups */
        public double batchedKeysPerSecond()
        {
            return client.batchedKeys() / Math.max(1e-9, client.batchedNanos() / 1e9);
        }
    }

    /**
     * The figures of one run.
     *
     * @param plan          what was measured
     * @param engineIdle    the engine's {@code engine.idle-strategy}
     * @param quiet         the quiet case
     * @param loaded        the loaded case, or null when not measured
     * @param inProcess     the same lookup through an in-process session of the same engine
     * @param python        the same lookup through the Python binding, or null
     * @param pythonAwake   the same, the binding's client waiting {@code awake} (the C client's option), or null
     * @param pythonMissing why there is no Python figure, or null
     * @param c             the same lookup from the C client, timed in C, waiting with its default back-off, and the Java client's
     *                      batched lookups; or null
     * @param cAwake        the same one-key lookup, the C client waiting {@code KVT_WAIT_AWAKE}, or null
     * @param cMissing      why there is no C figure, or null
     */
    public record Result(Plan plan, String engineIdle, Phase quiet, Phase loaded, Histogram inProcess, PythonRoundTrips.Figures python,
                         PythonRoundTrips.Figures pythonAwake, String pythonMissing, CRoundTrips.Figures c, CRoundTrips.Figures cAwake,
                         String cMissing)
    {
        /** @return the client's median round trip over the baseline's, quiet */
        public double rttP50Ratio()
        {
            return quiet.rttP50Ratio();
        }

        /** @return the figures as one JSON object */
        public String toJson()
        {
            final StringWriter text = new StringWriter();
            try (JsonGenerator json = new JsonFactory().createGenerator(text))
            {
                json.writeStartObject();
                phaseJson(json, quiet, "");
                json.writeNumberField("inprocess_rtt_p50_ns", inProcess.getValueAtPercentile(50));
                json.writeNumberField("inprocess_rtt_p99_ns", inProcess.getValueAtPercentile(99));
                json.writeNumberField("inprocess_rtt_p999_ns", inProcess.getValueAtPercentile(99.9));
                final Histogram baseline = quiet.baseline();
                if (python != null)
                {
                    json.writeNumberField("python_rtt_p50_ns", python.p50Nanos());
                    json.writeNumberField("python_rtt_p99_ns", python.p99Nanos());
                    json.writeNumberField("python_rtt_p999_ns", python.p999Nanos());
                    json.writeNumberField("python_rtt_p50_ratio", Math.round(python.p50Nanos() * 1000.0 / Math.max(1, baseline.getValueAtPercentile(50))) / 1000.0);
                    json.writeNumberField("python_awake_rtt_p50_ns", pythonAwake.p50Nanos());
                    json.writeNumberField("python_awake_rtt_p99_ns", pythonAwake.p99Nanos());
                    json.writeNumberField("python_awake_rtt_p999_ns", pythonAwake.p999Nanos());
                    json.writeNumberField("python_awake_rtt_p50_ratio",
                        Math.round(pythonAwake.p50Nanos() * 1000.0 / Math.max(1, baseline.getValueAtPercentile(50))) / 1000.0);
                }
                else
                {
                    json.writeStringField("python_missing", pythonMissing);
                }
                if (c != null)
                {
                    cJson(json, "c_", c, baseline);
                    cJson(json, "c_awake_", cAwake, baseline);
                    json.writeNumberField("c_batched_keys_per_s", Math.round(c.batchedKeysPerSecond()));
                }
                else
                {
                    json.writeStringField("c_missing", cMissing);
                }
                if (loaded != null)
                {
                    phaseJson(json, loaded, "_loaded");
                    json.writeStringField("load", BackgroundLoad.DESCRIPTION);
                }
                else
                {
                    json.writeStringField("load_missing", "not measured: --no-load");
                }
                json.writeNumberField("batch_keys", plan.batchKeys());
                json.writeNumberField("batches", plan.batches());
                json.writeNumberField("warmups", plan.warmups());
                json.writeStringField("client", "java");
                json.writeStringField("engine_idle_strategy", engineIdle);
                json.writeStringField("client_idle_strategy", plan.clientIdle().configName());
                json.writeEndObject();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("a StringWriter does not fail", ex);
            }
            return text.toString();
        }

        private static void cJson(final JsonGenerator json, final String prefix, final CRoundTrips.Figures figures, final Histogram baseline)
            throws IOException
        {
            json.writeNumberField(prefix + "rtt_p50_ns", figures.p50Nanos());
            json.writeNumberField(prefix + "rtt_p99_ns", figures.p99Nanos());
            json.writeNumberField(prefix + "rtt_p999_ns", figures.p999Nanos());
            json.writeNumberField(prefix + "rtt_p50_ratio", Math.round(figures.p50Nanos() * 1000.0 / Math.max(1, baseline.getValueAtPercentile(50))) / 1000.0);
        }

        private static void phaseJson(final JsonGenerator json, final Phase phase, final String suffix) throws IOException
        {
            final IpcBenchClient.IpcBenchFigures c = phase.client();
            final Histogram baseline = phase.baseline();
            json.writeNumberField("rtt_p50_ns" + suffix, c.p50Nanos());
            json.writeNumberField("rtt_p99_ns" + suffix, c.p99Nanos());
            json.writeNumberField("rtt_p999_ns" + suffix, c.p999Nanos());
            json.writeNumberField("rtt_max_ns" + suffix, c.maxNanos());
            json.writeNumberField("round_trips" + suffix, c.roundTrips());
            json.writeNumberField("baseline_rtt_p50_ns" + suffix, baseline.getValueAtPercentile(50));
            json.writeNumberField("baseline_rtt_p99_ns" + suffix, baseline.getValueAtPercentile(99));
            json.writeNumberField("baseline_rtt_p999_ns" + suffix, baseline.getValueAtPercentile(99.9));
            json.writeNumberField("baseline_rtt_max_ns" + suffix, baseline.getMaxValue());
            json.writeNumberField("baseline_round_trips" + suffix, baseline.getTotalCount());
            json.writeNumberField("rtt_p50_ratio" + suffix, Math.round(phase.rttP50Ratio() * 1000) / 1000.0);
            json.writeNumberField("batched_keys_per_s" + suffix, Math.round(phase.batchedKeysPerSecond()));
            json.writeNumberField("warmup_round_trips" + suffix, c.warmups());
            json.writeNumberField("client_jit_ms" + suffix, c.compileMillis());
            json.writeNumberField("engine_jit_ms" + suffix, phase.engineCompileMillis());
            if (phase.wakeUps() != null)
            {
                json.writeNumberField("futex_rtt_p50_ns" + suffix, phase.wakeUps().getValueAtPercentile(50));
                json.writeNumberField("futex_rtt_p99_ns" + suffix, phase.wakeUps().getValueAtPercentile(99));
                json.writeNumberField("futex_round_trips" + suffix, phase.wakeUps().getTotalCount());
            }
            else
            {
                json.writeStringField("futex_missing" + suffix, phase.wakeUpsMissing());
            }
            waitsJson(json, "", suffix, c.oneKeyWaits(), phase.oneKeyEngine());
            waitsJson(json, "batched_", suffix, c.batchedWaits(), phase.batchedEngine());
        }

        private static void waitsJson(final JsonGenerator json, final String prefix, final String suffix, final IdleStrategy.Counts client,
                                      final EngineWaits engine) throws IOException
        {
            json.writeNumberField(prefix + "engine_sleeps" + suffix, engine.sleeps());
            json.writeNumberField(prefix + "engine_sleep_ns" + suffix, engine.sleepNanos());
            json.writeNumberField(prefix + "engine_yields" + suffix, engine.yields());
            json.writeNumberField(prefix + "engine_spin_budget_ns" + suffix, engine.budgetNanos());
            json.writeNumberField(prefix + "client_waits" + suffix, client.waits());
            json.writeNumberField(prefix + "client_sleeps" + suffix, client.sleeps());
            json.writeNumberField(prefix + "client_sleep_ns" + suffix, client.sleepNanos());
            json.writeNumberField(prefix + "client_yields" + suffix, client.yields());
            json.writeNumberField(prefix + "client_wakes_sent" + suffix, client.wakesSent());
        }

        /** @return the figures, side by side */
        public String toText()
        {
            final Histogram baseline = quiet.baseline();
            return String.format(Locale.ROOT, "engine.idle-strategy %s, client idle strategy %s%n", engineIdle, plan.clientIdle().configName())
                + phaseText("quiet host", quiet)
                + String.format(Locale.ROOT, """
                for reference: the same lookup through an in-process Session of the same engine (no IPC)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns
                """, inProcess.getValueAtPercentile(50), inProcess.getValueAtPercentile(99), inProcess.getValueAtPercentile(99.9))
                + (python != null
                ? String.format(Locale.ROOT, """
                one-key LOOKUP round trip, Python binding of the C client in another process (%,d round trips)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns   (p50 ratio to the baseline %.2f)
                  the same with wait="awake": p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns   (p50 ratio %.2f)
                """, python.roundTrips(), python.p50Nanos(), python.p99Nanos(), python.p999Nanos(), python.maxNanos(),
                python.p50Nanos() / (double)Math.max(1, baseline.getValueAtPercentile(50)),
                pythonAwake.p50Nanos(), pythonAwake.p99Nanos(), pythonAwake.p999Nanos(), pythonAwake.maxNanos(),
                pythonAwake.p50Nanos() / (double)Math.max(1, baseline.getValueAtPercentile(50)))
                : "Python binding: not measured: " + pythonMissing + System.lineSeparator())
                + (c != null
                ? String.format(Locale.ROOT, """
                one-key LOOKUP round trip, C client in another process, timed in C (%,d round trips)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns   (p50 ratio to the baseline %.2f)
                  the same with KVT_WAIT_AWAKE: p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns   (p50 ratio %.2f)
                  batched LOOKUPs of %,d keys      %,.0f keys/s (%,d lookups)
                """, c.roundTrips(), c.p50Nanos(), c.p99Nanos(), c.p999Nanos(), c.maxNanos(),
                c.p50Nanos() / (double)Math.max(1, baseline.getValueAtPercentile(50)),
                cAwake.p50Nanos(), cAwake.p99Nanos(), cAwake.p999Nanos(), cAwake.maxNanos(),
                cAwake.p50Nanos() / (double)Math.max(1, baseline.getValueAtPercentile(50)), plan.batchKeys(), c.batchedKeysPerSecond(),
                plan.batches())
                : "C client: not measured: " + cMissing + System.lineSeparator())
                + (loaded != null ? phaseText("loaded host: " + BackgroundLoad.DESCRIPTION, loaded) : "loaded host: not measured (--no-load)"
                + System.lineSeparator());
        }

        private String phaseText(final String title, final Phase phase)
        {
            final IpcBenchClient.IpcBenchFigures c = phase.client();
            final Histogram baseline = phase.baseline();
            return String.format(Locale.ROOT, """
                %s
                one-key LOOKUP round trip, Java client in another process (%,d round trips)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns
                baseline: raw shared-memory ping-pong between two processes (%,d round trips)
                  p50 %,d ns   p99 %,d ns   p99.9 %,d ns   max %,d ns
                p50 ratio (kvtier / baseline)   %.2f
                  after %,d warm-up round trips; compilers' CPU meanwhile: client JVM %,d ms, engine JVM %,d ms (-1: unknown)
                  %s
                  waits per one-key round trip: engine sleeps %.3f, yields %.3f; client sleeps %.3f, yields %.3f, wakes of the engine %.3f
                batched LOOKUPs of %,d keys      %,.0f keys/s (%,d lookups)
                  waits per batched lookup: engine sleeps %.3f, yields %.3f; client sleeps %.3f, yields %.3f, wakes of the engine %.3f
                """, title, c.roundTrips(), c.p50Nanos(), c.p99Nanos(), c.p999Nanos(), c.maxNanos(), baseline.getTotalCount(),
                baseline.getValueAtPercentile(50), baseline.getValueAtPercentile(99), baseline.getValueAtPercentile(99.9), baseline.getMaxValue(),
                phase.rttP50Ratio(), c.warmups(), c.compileMillis(), phase.engineCompileMillis(), phase.wakeUps() != null
                    ? String.format(Locale.ROOT, "a wake-up, for scale: futex ping-pong (two wake-ups a round trip, %,d round trips) p50 %,d ns   p99 %,d ns",
                    phase.wakeUps().getTotalCount(), phase.wakeUps().getValueAtPercentile(50), phase.wakeUps().getValueAtPercentile(99))
                    : "a wake-up: not measured: " + phase.wakeUpsMissing(), per(phase.oneKeyEngine().sleeps(), c.roundTrips()), per(phase.oneKeyEngine().yields(), c.roundTrips()),
                per(c.oneKeyWaits().sleeps(), c.roundTrips()), per(c.oneKeyWaits().yields(), c.roundTrips()), per(c.oneKeyWaits().wakesSent(), c.roundTrips()),
                plan.batchKeys(), phase.batchedKeysPerSecond(), plan.batches(), per(phase.batchedEngine().sleeps(), plan.batches()),
                per(phase.batchedEngine().yields(), plan.batches()), per(c.batchedWaits().sleeps(), plan.batches()),
                per(c.batchedWaits().yields(), plan.batches()), per(c.batchedWaits().wakesSent(), plan.batches()));
        }

        private static double per(final long count, final long of)
        {
            return count / (double)Math.max(1, of);
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
     * @param cClient       the C client's directory (clients/c), or null when there is none
     * @return the figures
     * @throws IOException          if a process cannot be started or fails
     * @throws InterruptedException if interrupted while waiting for one
     */
    public static Result measure(final Engine engine, final Path socketPath, final Path baselineDir, final Plan plan, final Path pythonBinding,
                                 final Path cClient) throws IOException, InterruptedException
    {
        final Phase quiet = phase(engine, socketPath, baselineDir, plan);
        final Histogram inProcess = InProcessLookupTiming.measure(engine, plan.warmups(), plan.iterations());
        final String pythonMissing = PythonRoundTrips.missing(pythonBinding);
        // The binding's default wait (the C client's back-off), then its awake wait, one after the other on the quiet host.
        final PythonRoundTrips.Figures python = pythonMissing == null
            ? PythonRoundTrips.measure(pythonBinding, socketPath, plan.warmups(), plan.iterations(), "backoff") : null;
        final PythonRoundTrips.Figures pythonAwake = pythonMissing == null
            ? PythonRoundTrips.measure(pythonBinding, socketPath, plan.warmups(), plan.iterations(), "awake") : null;
        final String cMissing = CRoundTrips.missing(cClient);
        // The same two waits timed in C. The batched lookups go with the default wait, as an application gets it; a lookup of
        // 64 keys or more waits as the back-off whichever wait is set, so at the default --batch-keys a second batched figure
        // would measure the same thing again.
        final CRoundTrips.Figures c = cMissing == null
            ? CRoundTrips.measure(cClient, socketPath, plan.warmups(), plan.iterations(), CRoundTrips.BACKOFF, plan.batchKeys(), plan.batches()) : null;
        final CRoundTrips.Figures cAwake = cMissing == null
            ? CRoundTrips.measure(cClient, socketPath, plan.warmups(), plan.iterations(), CRoundTrips.AWAKE) : null;
        Phase loaded = null;
        if (plan.loaded())
        {
            final Process load = BackgroundLoad.start();
            try
            {
                loaded = phase(engine, socketPath, baselineDir, plan);
            }
            finally
            {
                BackgroundLoad.stop(load);
            }
        }
        return new Result(plan, engine.config().get(io.kvtier.engine.config.EngineSettings.ENGINE_IDLE_STRATEGY).configName(), quiet, loaded,
            inProcess, python, pythonAwake, pythonMissing, c, cAwake, cMissing);
    }

    /** The baseline, then the client process, under whatever else runs now. */
    private static Phase phase(final Engine engine, final Path socketPath, final Path baselineDir, final Plan plan)
        throws IOException, InterruptedException
    {
        return phase(engine, socketPath, plan, Baselines.measure(baselineDir, plan));
    }

    /**
     * The ping-pong and the wake-up baseline of one phase.
     *
     * @param pingPong       the ping-pong's round trips
     * @param wakeUps        the futex ping-pong's, or null when there is no futex
     * @param wakeUpsMissing why there is no wake-up figure, or null
     */
    record Baselines(Histogram pingPong, Histogram wakeUps, String wakeUpsMissing)
    {
        /**
         * @param baselineDir where the shared files go
         * @param plan        how many round trips
         * @return both baselines, measured now
         * @throws IOException          if a process cannot be started or fails
         * @throws InterruptedException if interrupted while waiting for one
         */
        static Baselines measure(final Path baselineDir, final Plan plan) throws IOException, InterruptedException
        {
            final Histogram baseline = PingPongBaseline.measure(baselineDir, plan.warmups(), plan.iterations());
            try
            {
                // Each of its round trips takes tens of microseconds: a tenth of the count says enough.
                return new Baselines(baseline, PingPongBaseline.measureWakeUps(baselineDir, plan.warmups() / 10, Math.max(1, plan.iterations() / 10)),
                    null);
            }
            catch (final IOException ex)
            {
                return new Baselines(baseline, null, ex.getMessage());
            }
        }
    }

    /** The client process against {@code engine}, beside baselines measured just before. */
    static Phase phase(final Engine engine, final Path socketPath, final Plan plan, final Baselines baselines)
        throws IOException, InterruptedException
    {
        final Histogram baseline = baselines.pingPong();
        final Histogram wakeUps = baselines.wakeUps();
        final String wakeUpsMissing = baselines.wakeUpsMissing();
        final Process client = JavaProcesses.java(IpcBenchClient.class, socketPath.toString(), Integer.toString(plan.warmups()),
            Integer.toString(plan.iterations()), Integer.toString(plan.batchKeys()), Integer.toString(plan.batches()), plan.clientIdle().name(),
            Long.toString(plan.jitWaitNanos())).start();
        final StringBuilder output = new StringBuilder();
        try
        {
            final EngineCounters counters = engine.counters();
            EngineWaits oneKeyStart = null;
            EngineWaits batchedStart = null;
            EngineWaits oneKey = null;
            EngineWaits batched = null;
            long compiledBefore = -1;
            long oneKeyCompileMillis = -1;
            // The engine's JVM is this one: its compilers are watched here, while the client's warm-ups ask.
            final JitSettling jit = new JitSettling();
            final OutputStream toClient = client.getOutputStream();
            final BufferedReader fromClient = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = fromClient.readLine()) != null)
            {
                if (line.startsWith(IpcBenchClient.PHASE))
                {
                    final String phaseName = line.substring(IpcBenchClient.PHASE.length());
                    if (phaseName.equals(IpcBenchClient.SETTLING))
                    {
                        if (jit.settled(System.nanoTime()))
                        {
                            toClient.write(IpcBenchClient.SETTLED.getBytes(StandardCharsets.US_ASCII));
                        }
                        toClient.write('\n');
                        toClient.flush();
                        continue;
                    }
                    final EngineWaits now = EngineWaits.read(counters);
                    switch (phaseName)
                    {
                        case IpcBenchClient.ONE_KEY ->
                        {
                            oneKeyStart = now;
                            compiledBefore = RunPhase.compileMillisSoFar();
                        }
                        case IpcBenchClient.BATCHED ->
                        {
                            oneKey = oneKeyStart == null ? null : now.since(oneKeyStart);
                            batchedStart = now;
                            final long compiled = RunPhase.compileMillisSoFar();
                            oneKeyCompileMillis = compiledBefore < 0 || compiled < 0 ? -1 : compiled - compiledBefore;
                        }
                        case IpcBenchClient.DONE -> batched = batchedStart == null ? null : now.since(batchedStart);
                        default -> throw new IOException("the client process named an unknown phase: " + line);
                    }
                    toClient.write('\n');
                    toClient.flush();
                }
                else
                {
                    output.append(line).append('\n');
                }
            }
            toClient.close();
            if (!client.waitFor(60, TimeUnit.SECONDS) || client.exitValue() != 0)
            {
                throw new IOException("the client process failed (exit code " + (client.isAlive() ? "none yet" : client.exitValue())
                    + "); its output: " + output);
            }
            if (oneKey == null || batched == null)
            {
                throw new IOException("the client process did not go through its phases; its output: " + output);
            }
            return new Phase(baseline, wakeUps, wakeUpsMissing, IpcBenchClient.IpcBenchFigures.parse(output.toString()), oneKey, batched,
                oneKeyCompileMillis);
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

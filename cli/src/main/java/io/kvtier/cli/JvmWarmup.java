package io.kvtier.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.workload.ChatWorkload;
import io.kvtier.bench.workload.RunPhase;
import io.kvtier.bench.workload.WorkloadRunner;
import io.kvtier.client.Namespace;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.EngineConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The demo's untimed first pass, which compiles the engine's code before the measured run starts. On a host of two cores the
 * JIT compilers otherwise compile through most of a demo's run (a second or more of CPU each second, the long tail of an
 * engine's paths: evictions, migrations, loads) and the steady state the demo measures shares its cores with them, where
 * the no-engine baseline's few methods are long compiled. The pass replays the same workload (at most {@link #CONVERSATIONS_MAX}
 * conversations of it) with another seed, in up to {@link #ROUNDS_MAX} rounds of seeds of their own until a round leaves the
 * compilers quiet ({@link #compilersQuiet}), against an
 * engine of its own, with its own pool file and its own temporary L3 directories, removed before the measured engine
 * starts: the measured run starts with an empty pool and empty tiers, as it would without the pass, and only the JVM is warm.
 * Over IPC its clients are processes of the same kind on a socket of its own, so the engine's IPC paths are compiled too;
 * the measured run's client processes are new ones, and warm themselves up in its own warm-up.
 *
 * <p>After the pass the demo waits, briefly, for the compilers to finish what it gave them ({@link #awaitQuietJit}), so
 * that a compile the pass queued last does not run in the measured run. Measured, that wait is a quarter to half a second:
 * what the measured run still compiled after a one-round pass was code the pass had not run often enough for C2, which
 * the rounds are for (docs/PERFORMANCE.md, the demo, round ten).
 *
 * @param skipped   why there was no pass, or null
 * @param rounds    rounds of the workload the pass replayed
 * @param requests  requests the pass made
 * @param elapsedNanos its wall time, the engine's start and close included, the wait for the compilers not
 * @param compileMillis the JIT compilers' CPU time during it and the wait after it, -1 when unknown
 * @param settleNanos how long the demo then waited for the compilers to go quiet, -1 when their CPU time is unknown
 */
record JvmWarmup(String skipped, int rounds, long requests, long elapsedNanos, long compileMillis, long settleNanos)
{
    /** Added to the demo's seed for the pass, so its pages are not the measured run's. */
    static final long SEED_OFFSET = 0x5EED;
    /** The most conversations the pass replays: the default demo's, enough for the engine's paths; a longer run warms up in its own warm-up. */
    static final int CONVERSATIONS_MAX = 540;
    /** The most rounds of the workload the pass replays. */
    static final int ROUNDS_MAX = 3;
    /** A round whose compilers used at most this share of its wall time ends the pass. */
    static final double QUIET_COMPILE_SHARE = 0.1;

    /** The compilers count as quiet once a window of this length took them at most {@link #JIT_QUIET_MILLIS} of CPU. */
    static final long JIT_SETTLE_WINDOW_MILLIS = 250;
    /** The compilers' CPU in a quiet window: 4% of a core, the odd method the next window may still compile. */
    static final long JIT_QUIET_MILLIS = 10;
    /** The longest wait for quiet compilers; past it the measured run starts anyway, as it would have. */
    static final long JIT_SETTLE_MAX_MILLIS = 20_000;

    /** Sleeps, in tests without the clock moving. */
    interface Sleeper
    {
        /**
         * @param millis how long
         * @throws InterruptedException if interrupted
         */
        void sleep(long millis) throws InterruptedException;
    }

    /**
     * @param reason why there is no pass
     * @return a pass not run
     */
    static JvmWarmup skipped(final String reason)
    {
        return new JvmWarmup(reason, 0, 0, 0, -1, -1);
    }

    /**
     * Runs the pass.
     *
     * @param config        the measured engine's settings; the pass's engine takes them with a pool file, L3 directories and socket of its own
     * @param poolPath      the measured engine's pool file
     * @param conversations the demo's conversations
     * @param seed          the demo's seed
     * @param clients       the demo's clients
     * @param pageTokens    tokens per page
     * @param namespace     the demo's namespace
     * @param processClients over IPC, the demo's client processes for a given socket; null for sessions in this process
     * @return what the pass did, or why there was none: a pass that fails (its engine cannot start, say) is reported, not thrown
     * @throws InterruptedException if interrupted
     */
    static JvmWarmup run(final Map<String, String> config, final Path poolPath, final int conversations, final long seed, final int clients,
                         final int pageTokens, final Namespace namespace,
                         final java.util.function.Function<Path, WorkloadRunner.ClientFactory> processClients) throws InterruptedException
    {
        try
        {
            return runOnce(config, poolPath, conversations, seed, clients, pageTokens, namespace, processClients);
        }
        catch (final IOException | RuntimeException ex)
        {
            // The measured run goes on with a cold JVM and says so; should the same cause stop it, it says that itself.
            return skipped("it failed: " + (ex.getMessage() == null ? ex.toString() : ex.getMessage()));
        }
    }

    private static JvmWarmup runOnce(final Map<String, String> config, final Path poolPath, final int conversations, final long seed,
                                     final int clients, final int pageTokens, final Namespace namespace,
                                     final java.util.function.Function<Path, WorkloadRunner.ClientFactory> processClients)
        throws IOException, InterruptedException
    {
        final long start = System.nanoTime();
        final long compiledBefore = RunPhase.compileMillisSoFar();
        final Map<String, String> warm = new LinkedHashMap<>(config);
        warm.put(EngineConfig.POOL_PATH, poolPath + "-jvm-warmup");
        final Path socket = Path.of(poolPath + "-jvm-warmup.sock");
        warm.put(IpcSettings.ENABLED, Boolean.toString(processClients != null));
        warm.remove(IpcSettings.SOCKET_PATH);
        if (processClients != null)
        {
            warm.put(IpcSettings.SOCKET_PATH, socket.toString());
        }
        final Path l3 = Files.createTempDirectory("kvtier-demo-warmup-l3-");
        final Path cold = Files.createTempDirectory("kvtier-demo-warmup-cold-");
        try
        {
            warm.put("tier.l3.dir", l3.toString());
            warm.put("tier." + DemoCommand.COLD_TIER + ".dir", cold.toString());
            final long requests;
            final int rounds;
            // Ctrl-C ends the JVM without unwinding this method: the hook closes the engine, which removes its pool file, waiting
            // for a start under way to end first, or removes the file itself when no start was made; registered before the start.
            final Path warmPool = Path.of(warm.get(EngineConfig.POOL_PATH));
            final HookClosableEngine started = new HookClosableEngine();
            final Thread cleanup = new Thread(() ->
            {
                started.closeFromHook();
                DemoCommand.deleteQuietly(warmPool);
                DemoCommand.deleteQuietly(socket);
                DemoCommand.deleteTree(l3);
                DemoCommand.deleteTree(cold);
            }, "kvtier-demo-warmup-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
            try (Engine engine = started.start(EngineConfig.from(warm)))
            {
                final WorkloadRunner.Options options = new WorkloadRunner.Options(clients, pageTokens, namespace, 0);
                long made = 0;
                int round = 0;
                boolean quiet = false;
                while (round < ROUNDS_MAX && !quiet)
                {
                    // Each round's pages are new to the engine (another seed), so its tiers fill and evict as the measured run's do.
                    final ChatWorkload workload = new ChatWorkload(ChatWorkload.Shape.demo(seed + SEED_OFFSET + round,
                        Math.min(conversations, CONVERSATIONS_MAX)));
                    final WorkloadRunner runner = processClients == null ? new WorkloadRunner(engine, workload, options)
                        : new WorkloadRunner(engine, workload, options, processClients.apply(socket));
                    final long roundStart = System.nanoTime();
                    final long compiledAtRoundStart = RunPhase.compileMillisSoFar();
                    made += runner.run(null, 100).requests();
                    round++;
                    final long compiledAtRoundEnd = RunPhase.compileMillisSoFar();
                    quiet = compiledAtRoundStart < 0 || compiledAtRoundEnd < 0
                        || compilersQuiet(compiledAtRoundEnd - compiledAtRoundStart, System.nanoTime() - roundStart);
                }
                requests = made;
                rounds = round;
            }
            finally
            {
                try
                {
                    Runtime.getRuntime().removeShutdownHook(cleanup);
                }
                catch (final IllegalStateException ex)
                {
                    // the JVM is exiting: the hook does the cleanup
                }
            }
            final long elapsed = System.nanoTime() - start;
            // Removed before the wait, so that the filesystem's work on them is done before the measured run too.
            DemoCommand.deleteTree(l3);
            DemoCommand.deleteTree(cold);
            final long settleStart = System.nanoTime();
            final boolean known = awaitQuietJit(RunPhase::compileMillisSoFar, Thread::sleep, JIT_SETTLE_WINDOW_MILLIS, JIT_QUIET_MILLIS,
                JIT_SETTLE_MAX_MILLIS) >= 0;
            final long settle = known ? System.nanoTime() - settleStart : -1;
            final long compiledAfter = RunPhase.compileMillisSoFar();
            return new JvmWarmup(null, rounds, requests, elapsed, compiledBefore < 0 || compiledAfter < 0 ? -1 : compiledAfter - compiledBefore,
                settle);
        }
        finally
        {
            DemoCommand.deleteTree(l3);
            DemoCommand.deleteTree(cold);
        }
    }

    /**
     * Whether a round of the pass left the compilers little to do: the engine's hot paths that run in batches (a tier's
     * reads and writes, a call a batch) reach the C2 compiler's thresholds only after more requests than one round makes,
     * and were compiled during the measured run's steady state after a pass of one round.
     *
     * @param compileMillis the compilers' CPU time in the round
     * @param wallNanos     the round's wall time
     * @return whether the compilers used at most {@link #QUIET_COMPILE_SHARE} of it
     */
    static boolean compilersQuiet(final long compileMillis, final long wallNanos)
    {
        return compileMillis * 1_000_000.0 <= QUIET_COMPILE_SHARE * wallNanos;
    }

    /**
     * Waits until the JIT compilers use at most {@code quietMillis} of CPU in a window of {@code windowMillis}, or until
     * {@code maxMillis} have passed.
     *
     * @param compileMillis the compilers' CPU time so far in milliseconds, negative when unknown
     * @param sleeper       sleeps a window
     * @param windowMillis  the window
     * @param quietMillis   the compilers' CPU in a quiet window
     * @param maxMillis     the longest wait
     * @return the windows waited, the quiet one included; -1 when the compilers' CPU time is unknown (no wait then)
     * @throws InterruptedException if interrupted
     */
    static int awaitQuietJit(final java.util.function.LongSupplier compileMillis, final Sleeper sleeper, final long windowMillis,
                             final long quietMillis, final long maxMillis) throws InterruptedException
    {
        long before = compileMillis.getAsLong();
        if (before < 0)
        {
            return -1;
        }
        final long windows = Math.max(1, maxMillis / windowMillis);
        int waited = 0;
        while (waited < windows)
        {
            sleeper.sleep(windowMillis);
            waited++;
            final long now = compileMillis.getAsLong();
            if (now < 0)
            {
                return -1;
            }
            if (now - before <= quietMillis)
            {
                break;
            }
            before = now;
        }
        return waited;
    }

    /** @return one line for the text summary */
    String toText()
    {
        if (skipped != null)
        {
            return "jvm warm-up         none: " + skipped;
        }
        return String.format(Locale.ROOT, "jvm warm-up         %,d requests of other seeds (%d round%s) on an engine of its own (pool and L3 removed after), %.2f s%s%s;"
            + " not in any figure below", requests, rounds, rounds == 1 ? "" : "s", elapsedNanos / 1e9,
            settleNanos < 0 ? "" : String.format(Locale.ROOT, ", then %.2f s for the JIT compilers to go quiet", settleNanos / 1e9),
            compileMillis < 0 ? "" : String.format(Locale.ROOT, ", JIT compilers %.2f s of CPU", compileMillis / 1e3));
    }

    /**
     * Writes {@code jvm_warmup}.
     *
     * @param g the report's generator, inside its object
     * @throws IOException from the generator
     */
    void writeJson(final JsonGenerator g) throws IOException
    {
        g.writeObjectFieldStart("jvm_warmup");
        if (skipped != null)
        {
            g.writeStringField("skipped", skipped);
        }
        else
        {
            g.writeNumberField("rounds", rounds);
            g.writeNumberField("requests", requests);
            g.writeNumberField("elapsed_s", Math.round(elapsedNanos / 1e5) / 1e4);
            g.writeNumberField("jit_compile_ms", compileMillis);
            g.writeNumberField("jit_settle_s", settleNanos < 0 ? -1 : Math.round(settleNanos / 1e5) / 1e4);
        }
        g.writeEndObject();
    }
}

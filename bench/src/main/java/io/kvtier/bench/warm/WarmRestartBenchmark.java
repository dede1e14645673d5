package io.kvtier.bench.warm;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.ipc.JavaProcesses;
import io.kvtier.bench.replay.TraceRequest;
import io.kvtier.engine.Engine;
import io.kvtier.engine.Session;
import io.kvtier.engine.config.EngineConfig;
import io.kvtier.engine.status.EngineCounter;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code kvtier bench restart}'s measurement: what a warm restart is worth to the requests that come right
 * after a crash.
 *
 * <ol>
 *   <li>An engine in a process of its own ({@link DyingEngine}) replays the first {@link Plan#before} requests
 *       of the synthetic chat trace, then is killed with SIGKILL: its pool file stays at its path, as a
 *       crashed engine's does; or, with {@link Plan#cleanStop}, it stops cleanly with
 *       {@code pool.keep-on-stop = true}, as an engine stopped for an upgrade does.</li>
 *   <li>The dead pool is copied, byte for byte, to a second path; both are a dead engine's pool.</li>
 *   <li>Warm: an engine in this process starts on the first, with {@code pool.warm-restart = true}, and
 *       replays the next {@link Plan#after} requests, paced at {@link Plan#rate} per second, so they are the
 *       first {@link Plan#window} after the restart; adoption runs meanwhile.</li>
 *   <li>Cold, the baseline: an engine starts on the copy with {@code pool.warm-restart = false} and replays the
 *       same requests, paced alike.</li>
 * </ol>
 * Before either, an engine is started and closed on a fresh pool, so that neither restart's start pays for
 * loading classes. Each phase reports the pool hit rate (blocks found in the pool over blocks asked for), how long the engine
 * took to start, and for the warm one what adoption did and when it had accounted for every page. The
 * engines have no L3 tier, so a block is a hit only if it is in the pool. Every hit page's first word is
 * checked against its block; {@code wrong_pages} must be 0.
 */
public final class WarmRestartBenchmark
{
    /**
     * What to run.
     *
     * @param pageBytes     pool.page-size
     * @param poolBytes     pool.size
     * @param conversations conversation slots of the chat trace
     * @param before        requests the dying engine replays
     * @param rate          requests per second after the restart
     * @param window        how long after the restart is measured
     * @param seed          the trace's seed
     * @param cleanStop     whether the first engine stops cleanly keeping its pool ({@code pool.keep-on-stop}) instead
     *                      of being killed
     */
    public record Plan(long pageBytes, long poolBytes, int conversations, int before, double rate, Duration window, long seed, boolean cleanStop)
    {
        /** A plan whose first engine is killed. */
        public Plan(final long pageBytes, final long poolBytes, final int conversations, final int before, final double rate, final Duration window,
                    final long seed)
        {
            this(pageBytes, poolBytes, conversations, before, rate, window, seed, false);
        }

        /** Validates. */
        public Plan
        {
            if (pageBytes <= 0 || pageBytes % 4096 != 0)
            {
                throw new IllegalArgumentException("--page-size " + pageBytes + " must be a positive multiple of 4096 (4KiB), as pool.page-size");
            }
            if (poolBytes < 16 * pageBytes)
            {
                throw new IllegalArgumentException("--pool-size " + poolBytes + " must hold at least 16 pages of " + pageBytes + " bytes");
            }
            if (conversations < 1 || before < 1)
            {
                throw new IllegalArgumentException("--conversations " + conversations + " and --before " + before + " must be at least 1");
            }
            if (!(rate > 0) || window.isNegative() || window.isZero())
            {
                throw new IllegalArgumentException("--rate " + rate + " and --window " + window + " must be positive");
            }
        }

        /** @return requests replayed after the restart: the window at the rate */
        public int after()
        {
            return (int)Math.max(1, Math.ceil(rate * window.toNanos() / 1e9));
        }
    }

    /**
     * One restart's figures.
     *
     * @param name          warm or cold
     * @param startMillis   how long {@code Engine.start} took
     * @param requests      requests replayed
     * @param blocks        blocks they asked for
     * @param hits          blocks found in the pool
     * @param wrongPages    hit pages whose first word was not their block's (must be 0)
     * @param adopted       pages adopted ({@code pool_pages_adopted})
     * @param corrupt       pages dropped for failing verification ({@code pool_adopt_corrupt})
     * @param skipped       pages not adopted for another reason ({@code pool_adopt_skipped})
     * @param adoptedMillis when adoption had accounted for every committed page of the dead pool, from the
     *                      start of the replay, seen between requests; -1 if it had not by the end
     * @param seconds       how long the replay took
     */
    public record Phase(String name, double startMillis, long requests, long blocks, long hits, long wrongPages, long adopted, long corrupt,
                        long skipped, double adoptedMillis, double seconds)
    {
        /** @return hits over blocks */
        public double hitRate()
        {
            return blocks == 0 ? 0 : hits / (double)blocks;
        }
    }

    /**
     * @param plan          what was run
     * @param directory     where the pools were
     * @param pagesAtCrash  committed pages in the dead engine's pool
     * @param hitRateBefore the dying engine's own hit rate over its requests
     * @param warm          the warm restart
     * @param cold          the cold one, the baseline
     */
    public record Result(Plan plan, Path directory, long pagesAtCrash, double hitRateBefore, Phase warm, Phase cold)
    {
        /** @return whether any hit page held another block's bytes */
        public boolean wrongPages()
        {
            return warm.wrongPages() + cold.wrongPages() > 0;
        }

        /** @return the figures as one JSON object */
        public String toJson()
        {
            final StringWriter text = new StringWriter();
            try (JsonGenerator json = new JsonFactory().createGenerator(text))
            {
                json.writeStartObject();
                json.writeStringField("bench", "restart");
                json.writeStringField("trace", "chat");
                json.writeStringField("stop", plan.cleanStop() ? "clean, pool.keep-on-stop=true" : "SIGKILL");
                json.writeStringField("baseline", "cold: the same dead pool, copied, restarted with pool.warm-restart=false");
                json.writeNumberField("page_bytes", plan.pageBytes());
                json.writeNumberField("pool_bytes", plan.poolBytes());
                json.writeNumberField("conversations", plan.conversations());
                json.writeNumberField("requests_before_crash", plan.before());
                json.writeNumberField("hit_rate_before_crash", round(hitRateBefore));
                json.writeNumberField("pages_at_crash", pagesAtCrash);
                json.writeNumberField("window_s", plan.window().toNanos() / 1e9);
                json.writeNumberField("rate_per_s", plan.rate());
                json.writeNumberField("requests_after_restart", plan.after());
                json.writeNumberField("hit_rate_warm", round(warm.hitRate()));
                json.writeNumberField("hit_rate_cold", round(cold.hitRate()));
                json.writeNumberField("wrong_pages", warm.wrongPages() + cold.wrongPages());
                for (final Phase phase : List.of(warm, cold))
                {
                    json.writeObjectFieldStart(phase.name());
                    json.writeNumberField("hit_rate", round(phase.hitRate()));
                    json.writeNumberField("blocks", phase.blocks());
                    json.writeNumberField("hits", phase.hits());
                    json.writeNumberField("requests", phase.requests());
                    json.writeNumberField("start_ms", round(phase.startMillis()));
                    json.writeNumberField("replay_s", round(phase.seconds()));
                    json.writeNumberField("pages_adopted", phase.adopted());
                    json.writeNumberField("adopt_corrupt", phase.corrupt());
                    json.writeNumberField("adopt_skipped", phase.skipped());
                    json.writeNumberField("adopted_by_ms", round(phase.adoptedMillis()));
                    json.writeNumberField("wrong_pages", phase.wrongPages());
                    json.writeEndObject();
                }
                json.writeEndObject();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("a StringWriter does not fail", ex);
            }
            return text.toString();
        }

        /** @return a few lines for a terminal */
        public String toText()
        {
            final StringBuilder text = new StringBuilder();
            text.append(String.format(Locale.ROOT, "restart of an engine " + (plan.cleanStop() ? "stopped cleanly (pool.keep-on-stop)" : "killed")
                + " after %,d chat requests (%,d committed pages of %d KiB in a %d MiB pool,"
                + " its hit rate %.3f); then %,d requests, %.0f/s for %s, on each restart:%n", plan.before(), pagesAtCrash, plan.pageBytes() >> 10,
                plan.poolBytes() >> 20, hitRateBefore, plan.after(), plan.rate(), plan.window()));
            text.append(String.format(Locale.ROOT, "%-5s %9s %9s %9s %9s %9s %9s %11s%n", "", "hit rate", "hits", "blocks", "start ms", "adopted",
                "corrupt", "adopted by"));
            for (final Phase phase : List.of(warm, cold))
            {
                text.append(String.format(Locale.ROOT, "%-5s %9.3f %9d %9d %9.1f %9d %9d %11s%n", phase.name(), phase.hitRate(), phase.hits(),
                    phase.blocks(), phase.startMillis(), phase.adopted(), phase.corrupt(),
                    phase.adoptedMillis() < 0 ? "n/a" : String.format(Locale.ROOT, "%.0f ms", phase.adoptedMillis())));
            }
            text.append(String.format(Locale.ROOT, "warm against cold: hit rate %.3f against %.3f; wrong pages served: %d",
                warm.hitRate(), cold.hitRate(), warm.wrongPages() + cold.wrongPages()));
            return text.toString();
        }
    }

    private WarmRestartBenchmark()
    {
    }

    /**
     * @param pool      pool.path
     * @param pageBytes pool.page-size
     * @param poolBytes pool.size
     * @param warm      pool.warm-restart
     * @return the engine's settings
     */
    static Map<String, String> settings(final String pool, final long pageBytes, final long poolBytes, final boolean warm)
    {
        final Map<String, String> settings = new HashMap<>();
        settings.put(EngineConfig.POOL_PATH, pool);
        settings.put(EngineConfig.POOL_PAGE_SIZE, Long.toString(pageBytes));
        settings.put(EngineConfig.POOL_SIZE, Long.toString(poolBytes));
        settings.put(EngineConfig.POOL_WARM_RESTART, Boolean.toString(warm));
        return settings;
    }

    /**
     * Runs the plan.
     *
     * @param directory where the pools go (/dev/shm)
     * @param plan      what to run
     * @return the figures
     * @throws IOException if the dying engine cannot be started or fails, or a pool cannot be made
     */
    public static Result measure(final Path directory, final Plan plan) throws IOException
    {
        final List<TraceRequest> trace = RestartWorkload.trace(plan.seed(), plan.before() + plan.after(), plan.conversations());
        final List<TraceRequest> after = trace.subList(plan.before(), trace.size());
        final Path pool = directory.resolve("kvtier-bench-restart-" + ProcessHandle.current().pid());
        final Path copy = directory.resolve("kvtier-bench-restart-" + ProcessHandle.current().pid() + "-cold");
        Process dying = null;
        try
        {
            Files.deleteIfExists(pool);
            dying = JavaProcesses.java(DyingEngine.class, pool.toString(), Long.toString(plan.pageBytes()), Long.toString(plan.poolBytes()),
                Integer.toString(plan.conversations()), Integer.toString(plan.before()), Long.toString(plan.seed()),
                plan.cleanStop() ? DyingEngine.STOP : DyingEngine.WAIT_FOR_KILL).start();
            final String[] ready = awaitReady(dying);
            final long pagesAtCrash = Long.parseLong(ready[1]);
            final double hitRateBefore = Long.parseLong(ready[3]) / (double)Math.max(1, Long.parseLong(ready[2]));
            if (Long.parseLong(ready[4]) != 0)
            {
                throw new IllegalStateException("the dying engine served " + ready[4] + " wrong pages before the crash");
            }
            if (!plan.cleanStop())
            {
                dying.destroyForcibly(); // SIGKILL: the pool file stays, as a crashed engine's does
            }
            try
            {
                if (!dying.waitFor(30, TimeUnit.SECONDS))
                {
                    throw new IOException("the first engine (pid " + dying.pid() + ") did not end within 30 s of "
                        + (plan.cleanStop() ? "its clean stop" : "SIGKILL"));
                }
                if (plan.cleanStop() && dying.exitValue() != 0)
                {
                    throw new IOException("the first engine's clean stop ended with exit code " + dying.exitValue() + "; its errors are above");
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while the dying engine died", ex);
            }
            Files.copy(pool, copy);
            warmUp(directory, plan);
            final Phase warm = restart("warm", pool, true, after, plan, pagesAtCrash);
            final Phase cold = restart("cold", copy, false, after, plan, pagesAtCrash);
            return new Result(plan, directory, pagesAtCrash, hitRateBefore, warm, cold);
        }
        finally
        {
            if (dying != null)
            {
                dying.destroyForcibly();
            }
            Files.deleteIfExists(pool);
            Files.deleteIfExists(copy);
        }
    }

    /** Starts and closes an engine on a fresh pool: the classes both restarts use are loaded before either is timed. */
    private static void warmUp(final Path directory, final Plan plan) throws IOException
    {
        final Path fresh = directory.resolve("kvtier-bench-restart-" + ProcessHandle.current().pid() + "-warm-up");
        try (Engine engine = Engine.start(EngineConfig.from(settings(fresh.toString(), plan.pageBytes(), plan.poolBytes(), false)));
             Session session = engine.openSession())
        {
            session.keys().add(RestartWorkload.KEY_HIGH, 0);
            session.lookup(0, 1);
        }
        finally
        {
            Files.deleteIfExists(fresh);
        }
    }

    private static String[] awaitReady(final Process dying) throws IOException
    {
        final BufferedReader lines = new BufferedReader(new InputStreamReader(dying.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = lines.readLine()) != null)
        {
            if (line.startsWith("ready "))
            {
                return line.split(" ");
            }
        }
        throw new IOException("the dying engine ended before it was ready (exit code " + dying.exitValue() + "); its errors are above");
    }

    private static Phase restart(final String name, final Path pool, final boolean warm, final List<TraceRequest> requests, final Plan plan,
                                 final long pagesAtCrash) throws IOException
    {
        final long startedAt = System.nanoTime();
        try (Engine engine = Engine.start(EngineConfig.from(settings(pool.toString(), plan.pageBytes(), plan.poolBytes(), warm)));
             Session session = engine.openSession())
        {
            final long replayAt = System.nanoTime();
            final double startMillis = (replayAt - startedAt) / 1e6;
            final RestartWorkload workload = new RestartWorkload(plan.pageBytes());
            final long gapNanos = (long)(1e9 / plan.rate());
            double adoptedMillis = -1;
            for (int i = 0; i < requests.size(); i++)
            {
                final long due = replayAt + i * gapNanos;
                while (System.nanoTime() - due < 0)
                {
                    if (adoptedMillis < 0 && accounted(engine) >= pagesAtCrash)
                    {
                        adoptedMillis = (System.nanoTime() - replayAt) / 1e6;
                    }
                    LockSupport.parkNanos(Math.min(1_000_000L, due - System.nanoTime()));
                }
                workload.replay(session, requests.get(i));
            }
            if (adoptedMillis < 0 && accounted(engine) >= pagesAtCrash)
            {
                adoptedMillis = (System.nanoTime() - replayAt) / 1e6;
            }
            final double seconds = (System.nanoTime() - replayAt) / 1e9;
            return new Phase(name, startMillis, workload.requests, workload.blocks, workload.hits, workload.wrong,
                engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED), engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT),
                engine.counters().getOpaque(EngineCounter.POOL_ADOPT_SKIPPED), warm ? adoptedMillis : -1, seconds);
        }
    }

    private static long accounted(final Engine engine)
    {
        return engine.counters().getOpaque(EngineCounter.POOL_PAGES_ADOPTED) + engine.counters().getOpaque(EngineCounter.POOL_ADOPT_CORRUPT)
            + engine.counters().getOpaque(EngineCounter.POOL_ADOPT_SKIPPED);
    }

    private static double round(final double value)
    {
        return Math.round(value * 1000) / 1000.0;
    }
}

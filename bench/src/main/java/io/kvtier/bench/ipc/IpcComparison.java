package io.kvtier.bench.ipc;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.client.protocol.IdleStrategy;
import io.kvtier.engine.Engine;
import io.kvtier.engine.config.IdleStrategyKind;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * {@code kvtier bench ipc --compare}: idle strategies measured against each other in one run,
 * interleaved. On a host whose load comes and goes (other builds, other benchmarks), two strategies
 * measured one after the other are measured under different loads, and the difference says nothing;
 * here every round measures each pair of strategies once, one right after the other, in an order that
 * rotates from round to round, each turn with its own ping-pong baseline just before it and then a
 * fresh engine (an engine thread that spins would otherwise take a core from the others' turns).
 * The loaded case does the same with the background load running through the whole round. What it
 * reports per pair is the median over rounds of each figure, and every round's ratio, so that a
 * difference can be seen to hold round after round or not.
 */
public final class IpcComparison
{
    /**
     * One pair of strategies: how the engine thread idles and how the client waits for its answers.
     *
     * @param engine the engine's {@code engine.idle-strategy}
     * @param client the client's {@link IdleStrategy.Kind}
     */
    public record Strategies(IdleStrategyKind engine, IdleStrategy.Kind client)
    {
        /** Validates. */
        public Strategies
        {
            if (engine == null || client == null)
            {
                throw new IllegalArgumentException("a pair of strategies names both the engine's and the client's");
            }
        }

        /**
         * Reads {@code ENGINE/CLIENT}, as {@code backoff/backoff} or {@code spin/adaptive}.
         *
         * @param text the pair
         * @return the pair
         * @throws IllegalArgumentException naming what is wrong and what is allowed
         */
        public static Strategies parse(final String text)
        {
            final String[] parts = text.split("/", -1);
            if (parts.length != 2)
            {
                throw new IllegalArgumentException("\"" + text + "\" is not ENGINE/CLIENT (as backoff/adaptive)");
            }
            IdleStrategyKind engine = null;
            for (final IdleStrategyKind kind : IdleStrategyKind.values())
            {
                if (kind.configName().equals(parts[0]))
                {
                    engine = kind;
                }
            }
            IdleStrategy.Kind client = null;
            for (final IdleStrategy.Kind kind : IdleStrategy.Kind.values())
            {
                if (kind.configName().equals(parts[1]))
                {
                    client = kind;
                }
            }
            if (engine == null)
            {
                throw new IllegalArgumentException("\"" + text + "\": the engine's strategy \"" + parts[0] + "\" is none of "
                    + Arrays.stream(IdleStrategyKind.values()).map(IdleStrategyKind::configName).toList());
            }
            if (client == null)
            {
                throw new IllegalArgumentException("\"" + text + "\": the client's strategy \"" + parts[1] + "\" is none of "
                    + Arrays.stream(IdleStrategy.Kind.values()).map(IdleStrategy.Kind::configName).toList());
            }
            return new Strategies(engine, client);
        }

        /** @return {@code ENGINE/CLIENT} */
        public String label()
        {
            return engine.configName() + "/" + client.configName();
        }
    }

    /** Starts an engine serving IPC whose thread idles as told; the comparison closes it after its turn. */
    @FunctionalInterface
    public interface EngineStarter
    {
        /**
         * @param idle the engine's {@code engine.idle-strategy}
         * @param turn a number no other turn of this run has, for the engine's file names
         * @return the engine and its IPC socket
         * @throws IOException if it cannot start
         */
        Started start(IdleStrategyKind idle, int turn) throws IOException;
    }

    /**
     * An engine started for one turn.
     *
     * @param engine the engine
     * @param socket its IPC socket
     */
    public record Started(Engine engine, Path socket)
    {
    }

    /**
     * What one pair measured over the rounds.
     *
     * @param strategies the pair
     * @param quiet      one phase per round, on the host as it is
     * @param loaded     one phase per round beside the background load (empty when not measured)
     */
    public record PairFigures(Strategies strategies, List<IpcBenchmark.Phase> quiet, List<IpcBenchmark.Phase> loaded)
    {
    }

    /**
     * The figures of a comparison.
     *
     * @param plan   how much each turn measured (its client strategy unused: each pair names its own)
     * @param rounds rounds run
     * @param pairs  per pair, in the order given
     */
    public record Result(IpcBenchmark.Plan plan, int rounds, List<PairFigures> pairs)
    {
        /** @return the figures as one JSON object */
        public String toJson()
        {
            final StringWriter text = new StringWriter();
            try (JsonGenerator json = new JsonFactory().createGenerator(text))
            {
                json.writeStartObject();
                json.writeNumberField("rounds", rounds);
                json.writeStringField("order", "each round measures every pair once, one right after the other, the order rotated by one each round;"
                    + " each turn has its own engine and its own ping-pong baseline just before it");
                json.writeNumberField("round_trips", plan.iterations());
                json.writeNumberField("batch_keys", plan.batchKeys());
                json.writeNumberField("batches", plan.batches());
                if (plan.loaded())
                {
                    json.writeStringField("load", BackgroundLoad.DESCRIPTION);
                }
                else
                {
                    json.writeStringField("load_missing", "not measured: --no-load");
                }
                json.writeArrayFieldStart("compare");
                for (final PairFigures pair : pairs)
                {
                    json.writeStartObject();
                    json.writeStringField("engine_idle_strategy", pair.strategies().engine().configName());
                    json.writeStringField("client_idle_strategy", pair.strategies().client().configName());
                    casesJson(json, pair.quiet(), "");
                    if (!pair.loaded().isEmpty())
                    {
                        casesJson(json, pair.loaded(), "_loaded");
                    }
                    json.writeEndObject();
                }
                json.writeEndArray();
                json.writeEndObject();
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("a StringWriter does not fail", ex);
            }
            return text.toString();
        }

        private static void casesJson(final JsonGenerator json, final List<IpcBenchmark.Phase> phases, final String suffix) throws IOException
        {
            json.writeArrayFieldStart("rtt_p50_ratio" + suffix + "_by_round");
            for (final IpcBenchmark.Phase phase : phases)
            {
                json.writeNumber(Math.round(phase.rttP50Ratio() * 1000) / 1000.0);
            }
            json.writeEndArray();
            json.writeNumberField("rtt_p50_ratio" + suffix, round3(median(phases, IpcBenchmark.Phase::rttP50Ratio)));
            json.writeNumberField("rtt_p50_ns" + suffix, Math.round(median(phases, p -> p.client().p50Nanos())));
            json.writeNumberField("rtt_p99_ns" + suffix, Math.round(median(phases, p -> p.client().p99Nanos())));
            json.writeNumberField("baseline_rtt_p50_ns" + suffix, Math.round(median(phases, p -> p.baseline().getValueAtPercentile(50))));
            json.writeNumberField("batched_keys_per_s" + suffix, Math.round(median(phases, IpcBenchmark.Phase::batchedKeysPerSecond)));
            json.writeNumberField("warmup_round_trips" + suffix, Math.round(median(phases, p -> p.client().warmups())));
            json.writeNumberField("client_jit_ms" + suffix, Math.round(median(phases, p -> p.client().compileMillis())));
            json.writeNumberField("engine_jit_ms" + suffix, Math.round(median(phases, IpcBenchmark.Phase::engineCompileMillis)));
            if (phases.stream().allMatch(p -> p.wakeUps() != null))
            {
                json.writeNumberField("futex_rtt_p50_ns" + suffix, Math.round(median(phases, p -> p.wakeUps().getValueAtPercentile(50))));
            }
            json.writeNumberField("engine_sleeps_per_rtt" + suffix, round3(perRoundTrip(phases, p -> p.oneKeyEngine().sleeps())));
            json.writeNumberField("engine_yields_per_rtt" + suffix, round3(perRoundTrip(phases, p -> p.oneKeyEngine().yields())));
            json.writeNumberField("client_sleeps_per_rtt" + suffix, round3(perRoundTrip(phases, p -> p.client().oneKeyWaits().sleeps())));
            json.writeNumberField("client_yields_per_rtt" + suffix, round3(perRoundTrip(phases, p -> p.client().oneKeyWaits().yields())));
            json.writeNumberField("client_wakes_sent_per_rtt" + suffix, round3(perRoundTrip(phases, p -> p.client().oneKeyWaits().wakesSent())));
        }

        /** @return the figures as a table, a line per pair and case */
        public String toText()
        {
            final StringBuilder out = new StringBuilder();
            out.append(String.format(Locale.ROOT, "interleaved comparison: %d rounds, each pair once a round, the order rotated each round;"
                + " %,d one-key round trips and %,d batched LOOKUPs of %,d keys a turn%n", rounds, plan.iterations(), plan.batches(), plan.batchKeys()));
            out.append("loaded: ").append(plan.loaded() ? BackgroundLoad.DESCRIPTION : "not measured (--no-load)").append(System.lineSeparator());
            out.append(String.format(Locale.ROOT, "%-20s %-7s %12s %12s %12s %10s %14s  %s%n", "engine/client", "case", "p50 ns", "p99 ns",
                "baseline ns", "ratio", "batched keys/s", "ratio by round; per round trip: engine sleeps, yields; client sleeps, yields"));
            for (final PairFigures pair : pairs)
            {
                textLine(out, pair.strategies().label(), "quiet", pair.quiet());
                if (!pair.loaded().isEmpty())
                {
                    textLine(out, pair.strategies().label(), "loaded", pair.loaded());
                }
            }
            out.append("(medians over the rounds; the ratio is each turn's p50 over its own baseline's)").append(System.lineSeparator());
            return out.toString();
        }

        private static void textLine(final StringBuilder out, final String label, final String which, final List<IpcBenchmark.Phase> phases)
        {
            final StringBuilder byRound = new StringBuilder();
            for (final IpcBenchmark.Phase phase : phases)
            {
                byRound.append(byRound.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.2f", phase.rttP50Ratio()));
            }
            out.append(String.format(Locale.ROOT, "%-20s %-7s %,12d %,12d %,12d %10.2f %,14.0f  [%s]; %.3f, %.3f; %.3f, %.3f%n", label, which,
                Math.round(median(phases, p -> p.client().p50Nanos())), Math.round(median(phases, p -> p.client().p99Nanos())),
                Math.round(median(phases, p -> p.baseline().getValueAtPercentile(50))), median(phases, IpcBenchmark.Phase::rttP50Ratio),
                median(phases, IpcBenchmark.Phase::batchedKeysPerSecond), byRound, perRoundTrip(phases, p -> p.oneKeyEngine().sleeps()),
                perRoundTrip(phases, p -> p.oneKeyEngine().yields()), perRoundTrip(phases, p -> p.client().oneKeyWaits().sleeps()),
                perRoundTrip(phases, p -> p.client().oneKeyWaits().yields())));
        }
    }

    private IpcComparison()
    {
    }

    /**
     * Runs the comparison.
     *
     * @param starter     starts an engine for each turn
     * @param baselineDir where the baselines' shared files go
     * @param plan        how much each turn measures, and whether the loaded case is measured
     * @param pairs       the pairs of strategies, at least one
     * @param rounds      rounds, at least one
     * @return the figures
     * @throws IOException          if an engine or a process cannot be started or fails
     * @throws InterruptedException if interrupted while waiting for one
     */
    public static Result measure(final EngineStarter starter, final Path baselineDir, final IpcBenchmark.Plan plan, final List<Strategies> pairs,
                                 final int rounds) throws IOException, InterruptedException
    {
        if (pairs.isEmpty() || rounds < 1)
        {
            throw new IllegalArgumentException("a comparison needs at least one pair of strategies (it has " + pairs.size() + ") and one round (rounds="
                + rounds + ")");
        }
        final List<List<IpcBenchmark.Phase>> quiet = new ArrayList<>();
        final List<List<IpcBenchmark.Phase>> loaded = new ArrayList<>();
        for (int i = 0; i < pairs.size(); i++)
        {
            quiet.add(new ArrayList<>());
            loaded.add(new ArrayList<>());
        }
        int turn = 0;
        for (int round = 0; round < rounds; round++)
        {
            for (int k = 0; k < pairs.size(); k++)
            {
                final int i = (k + round) % pairs.size();
                quiet.get(i).add(turn(starter, turn++, baselineDir, plan, pairs.get(i)));
            }
            if (plan.loaded())
            {
                final Process load = BackgroundLoad.start();
                try
                {
                    for (int k = 0; k < pairs.size(); k++)
                    {
                        final int i = (k + round) % pairs.size();
                        loaded.get(i).add(turn(starter, turn++, baselineDir, plan, pairs.get(i)));
                    }
                }
                finally
                {
                    BackgroundLoad.stop(load);
                }
            }
        }
        final List<PairFigures> figures = new ArrayList<>();
        for (int i = 0; i < pairs.size(); i++)
        {
            figures.add(new PairFigures(pairs.get(i), List.copyOf(quiet.get(i)), List.copyOf(loaded.get(i))));
        }
        return new Result(plan, rounds, List.copyOf(figures));
    }

    /**
     * One turn: the baselines, then a fresh engine idling as the pair says (started after them, so that an
     * engine thread that spins does not run beside its own baseline) and the client waiting as the pair says.
     */
    private static IpcBenchmark.Phase turn(final EngineStarter starter, final int turn, final Path baselineDir, final IpcBenchmark.Plan plan,
                                           final Strategies pair) throws IOException, InterruptedException
    {
        final IpcBenchmark.Baselines baselines = IpcBenchmark.Baselines.measure(baselineDir, plan);
        final Started started = starter.start(pair.engine(), turn);
        try (Engine engine = started.engine())
        {
            return IpcBenchmark.phase(engine, started.socket(),
                plan.withClientIdle(pair.client()), baselines);
        }
        finally
        {
            Files.deleteIfExists(started.socket());
        }
    }

    /**
     * @param phases   one per round
     * @param quantity what to take of each
     * @return its median over the rounds (the mean of the middle two for an even count)
     */
    static double median(final List<IpcBenchmark.Phase> phases, final ToDoubleFunction<IpcBenchmark.Phase> quantity)
    {
        return io.kvtier.bench.Median.of(phases, quantity);
    }

    /** @return a count summed over the rounds, per timed one-key round trip */
    private static double perRoundTrip(final List<IpcBenchmark.Phase> phases, final ToDoubleFunction<IpcBenchmark.Phase> count)
    {
        double sum = 0;
        long roundTrips = 0;
        for (final IpcBenchmark.Phase phase : phases)
        {
            sum += count.applyAsDouble(phase);
            roundTrips += phase.client().roundTrips();
        }
        return sum / Math.max(1, roundTrips);
    }

    private static double round3(final double value)
    {
        return Math.round(value * 1000) / 1000.0;
    }
}

package io.kvtier.bench.migrate;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.bench.Median;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Writes {@link MigrationBenchmark.Result} out: one JSON object, or lines of text. Figures over runs are
 * medians with their range (the least and the most of the runs); a ratio is the median of each run's
 * own ratio, so that a run's noise stays with its baseline.
 */
final class MigrationBenchmarkReport
{
    /** What the throughput baseline is, for the JSON and the text. */
    static final String BASELINE = "raw copy of as many files of the same size (payload + 4 KiB frame block) from the fast tier's directory to"
        + " the slow tier's with Java NIO FileChannel: read, write a temp file, fsync when the tiers fsync, rename, delete the source";

    private MigrationBenchmarkReport()
    {
    }

    private static double[] range(final List<MigrationBenchmark.Round> rounds, final ToDoubleFunction<MigrationBenchmark.Round> figure)
    {
        final double[] values = rounds.stream().mapToDouble(figure).toArray();
        return new double[] {Arrays.stream(values).min().orElse(0), Arrays.stream(values).max().orElse(0)};
    }

    private static double round(final double value, final int digits)
    {
        final double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }

    private static void figure(final JsonGenerator json, final String name, final List<MigrationBenchmark.Round> rounds,
                               final ToDoubleFunction<MigrationBenchmark.Round> figure, final int digits) throws IOException
    {
        final double[] range = range(rounds, figure);
        json.writeNumberField(name, round(Median.of(rounds, figure), digits));
        json.writeArrayFieldStart(name + "_range");
        json.writeNumber(round(range[0], digits));
        json.writeNumber(round(range[1], digits));
        json.writeEndArray();
    }

    private static void throughput(final JsonGenerator json, final String name, final List<MigrationBenchmark.Round> rounds,
                                   final java.util.function.Function<MigrationBenchmark.Round, MigrationBenchmark.Throughput> which) throws IOException
    {
        json.writeObjectFieldStart(name);
        figure(json, "pages_s", rounds, r -> which.apply(r).pagesPerSecond(), 1);
        figure(json, "mib_s", rounds, r -> which.apply(r).mibPerSecond(), 1);
        json.writeEndObject();
    }

    private static void latency(final JsonGenerator json, final String name, final List<MigrationBenchmark.Round> rounds,
                                final java.util.function.Function<MigrationBenchmark.Round, MigrationBenchmark.Latency> which) throws IOException
    {
        json.writeObjectFieldStart(name);
        json.writeNumberField("requests", which.apply(rounds.getFirst()).requests());
        figure(json, "p50_ns", rounds, r -> which.apply(r).p50(), 0);
        figure(json, "p99_ns", rounds, r -> which.apply(r).p99(), 0);
        figure(json, "p999_ns", rounds, r -> which.apply(r).p999(), 0);
        figure(json, "max_ns", rounds, r -> which.apply(r).max(), 0);
        json.writeEndObject();
    }

    /** @return the result as one JSON object: plan, throughput (migration and both raw copies), foreground (without and with), runs, check */
    static String json(final MigrationBenchmark.Result result)
    {
        final MigrationBenchmark.Plan plan = result.plan();
        final List<MigrationBenchmark.Round> rounds = result.rounds();
        final StringWriter text = new StringWriter();
        try (JsonGenerator json = new JsonFactory().createGenerator(text))
        {
            json.useDefaultPrettyPrinter();
            json.writeStartObject();
            json.writeStringField("bench", "migrate");
            json.writeNumberField("page_bytes", plan.pageBytes());
            json.writeNumberField("file_bytes", plan.fileBytes());
            json.writeNumberField("pages", plan.pages());
            json.writeNumberField("runs", plan.runs());
            json.writeNumberField("concurrency", plan.concurrency());
            json.writeNumberField("background_pages", plan.backgroundPages());
            json.writeNumberField("requests", plan.requests());
            json.writeNumberField("request_pages", plan.requestKeys());
            json.writeBooleanField("fsync", plan.fsync());
            json.writeObjectFieldStart("tier_settings");
            for (final Map.Entry<String, String> setting : new java.util.TreeMap<>(plan.tierSettings()).entrySet())
            {
                json.writeStringField(setting.getKey(), setting.getValue());
            }
            json.writeEndObject();
            json.writeStringField("fast_dir", result.fastDir().toString());
            json.writeStringField("slow_dir", result.slowDir().toString());

            json.writeObjectFieldStart("throughput");
            json.writeStringField("baseline", BASELINE);
            throughput(json, "migration", rounds, MigrationBenchmark.Round::migration);
            throughput(json, "raw_copy_1_thread", rounds, MigrationBenchmark.Round::rawSingle);
            throughput(json, "raw_copy_concurrent", rounds, MigrationBenchmark.Round::rawConcurrent);
            figure(json, "ratio", rounds, r -> r.migration().mibPerSecond() / r.rawConcurrent().mibPerSecond(), 3);
            figure(json, "ratio_1_thread", rounds, r -> r.migration().mibPerSecond() / r.rawSingle().mibPerSecond(), 3);
            json.writeEndObject();

            json.writeObjectFieldStart("foreground");
            json.writeStringField("request", "acquire + release of " + plan.requestKeys() + " pages resident in the pool, one in-process Session");
            json.writeStringField("baseline", "without_migration");
            latency(json, "without_migration", rounds, MigrationBenchmark.Round::without);
            latency(json, "with_migration", rounds, MigrationBenchmark.Round::with);
            figure(json, "p99_ratio", rounds, r -> (double)r.with().p99() / r.without().p99(), 3);
            figure(json, "migration_overlap", rounds, MigrationBenchmark.Round::overlap, 3);
            json.writeEndObject();

            json.writeArrayFieldStart("rounds");
            for (final MigrationBenchmark.Round round : rounds)
            {
                json.writeStartObject();
                json.writeNumberField("run", round.run());
                json.writeBooleanField("migration_first", round.migrationFirst());
                json.writeNumberField("migration_mib_s", round(round.migration().mibPerSecond(), 1));
                json.writeNumberField("raw_copy_1_thread_mib_s", round(round.rawSingle().mibPerSecond(), 1));
                json.writeNumberField("raw_copy_concurrent_mib_s", round(round.rawConcurrent().mibPerSecond(), 1));
                json.writeNumberField("without_migration_p99_ns", round.without().p99());
                json.writeNumberField("with_migration_p99_ns", round.with().p99());
                json.writeNumberField("migration_overlap", round(round.overlap(), 3));
                json.writeNumberField("background_pages", round.backgroundPages());
                json.writeEndObject();
            }
            json.writeEndArray();

            final MigrationBenchmark.Check check = result.check();
            json.writeObjectFieldStart("check");
            json.writeNumberField("pages_asked", check.pagesAsked());
            json.writeNumberField("pages_migrated", check.pagesMigrated());
            json.writeNumberField("migration_failures", check.migrationFailures());
            json.writeObjectFieldStart("refusals");
            for (final Map.Entry<String, Long> refusal : check.refusals().entrySet())
            {
                json.writeNumberField(refusal.getKey(), refusal.getValue());
            }
            json.writeEndObject();
            json.writeNumberField("pages_read_back", check.pagesReadBack());
            json.writeNumberField("pages_missing", check.missing());
            json.writeNumberField("pages_corrupt", check.corrupt());
            json.writeNumberField("slow_tier_hits", check.slowHits());
            json.writeNumberField("l3_corrupt", check.l3Corrupt());
            json.writeBooleanField("pages_verified", check.verified());
            json.writeArrayFieldStart("problems");
            for (final String problem : check.problems())
            {
                json.writeString(problem);
            }
            json.writeEndArray();
            json.writeEndObject();
            json.writeEndObject();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return text.toString();
    }

    private static String fmt(final String pattern, final Object... values)
    {
        return String.format(Locale.ROOT, pattern, values);
    }

    private static String withRange(final List<MigrationBenchmark.Round> rounds, final ToDoubleFunction<MigrationBenchmark.Round> figure,
                                    final String pattern)
    {
        final double[] range = range(rounds, figure);
        return fmt(pattern, Median.of(rounds, figure)) + " (" + fmt(pattern, range[0]) + "-" + fmt(pattern, range[1]) + ")";
    }

    private static String micros(final List<MigrationBenchmark.Round> rounds, final ToDoubleFunction<MigrationBenchmark.Round> nanos)
    {
        return withRange(rounds, r -> nanos.applyAsDouble(r) / 1000, "%.1f") + " µs";
    }

    /** @return the result as lines of text: medians with their ranges over the runs, then the checks */
    static String text(final MigrationBenchmark.Result result)
    {
        final MigrationBenchmark.Plan plan = result.plan();
        final List<MigrationBenchmark.Round> rounds = result.rounds();
        final MigrationBenchmark.Check check = result.check();
        final StringBuilder out = new StringBuilder();
        out.append(fmt("kvtier bench migrate: %d pages of %d KiB per migration, %d runs, concurrency %d, fsync %s%n", plan.pages(),
            plan.pageBytes() >> 10, plan.runs(), plan.concurrency(), plan.fsync() ? "on" : "off"));
        if (!plan.tierSettings().isEmpty())
        {
            out.append("  tier settings ").append(new java.util.TreeMap<>(plan.tierSettings())).append('\n');
        }
        out.append(fmt("  fast tier %s, slow tier %s (removed)%n", result.fastDir(), result.slowDir()));
        out.append("throughput, medians (ranges) over the runs:\n");
        out.append("  migration fast -> slow         ").append(withRange(rounds, r -> r.migration().mibPerSecond(), "%.1f")).append(" MiB/s, ")
            .append(withRange(rounds, r -> r.migration().pagesPerSecond(), "%.0f")).append(" pages/s\n");
        out.append("  raw copy, 1 thread             ").append(withRange(rounds, r -> r.rawSingle().mibPerSecond(), "%.1f")).append(" MiB/s\n");
        out.append(fmt("%-33s", "  raw copy, " + plan.concurrency() + " threads"))
            .append(withRange(rounds, r -> r.rawConcurrent().mibPerSecond(), "%.1f")).append(" MiB/s\n");
        out.append("  ratio to the raw copy          ")
            .append(withRange(rounds, r -> r.migration().mibPerSecond() / r.rawConcurrent().mibPerSecond(), "%.2f")).append(fmt(" (%d threads), ",
                plan.concurrency())).append(withRange(rounds, r -> r.migration().mibPerSecond() / r.rawSingle().mibPerSecond(), "%.2f"))
            .append(" (1 thread)\n");
        out.append(fmt("foreground: %d requests of acquire + release of %d resident pages, medians (ranges)%n", plan.requests(), plan.requestKeys()));
        out.append("  without a migration  p50 ").append(micros(rounds, r -> r.without().p50())).append(", p99 ")
            .append(micros(rounds, r -> r.without().p99())).append(", p99.9 ").append(micros(rounds, r -> r.without().p999())).append(", max ")
            .append(micros(rounds, r -> r.without().max())).append('\n');
        out.append("  during a migration   p50 ").append(micros(rounds, r -> r.with().p50())).append(", p99 ")
            .append(micros(rounds, r -> r.with().p99())).append(", p99.9 ").append(micros(rounds, r -> r.with().p999())).append(", max ")
            .append(micros(rounds, r -> r.with().max())).append('\n');
        out.append(fmt("  share of the loop a migration of %d pages ran ", plan.backgroundPages()))
            .append(withRange(rounds, MigrationBenchmark.Round::overlap, "%.2f"))
            .append(rounds.stream().anyMatch(r -> r.overlap() < 1) ? ": it ended before the loop in some runs (raise --background-pages)\n" : "\n");
        out.append(fmt("check: %d pages asked, %d migrated, %d failed, refusals %s; %d read back from L3: %d missing, %d not byte-exact; %s%n",
            check.pagesAsked(), check.pagesMigrated(), check.migrationFailures(), check.refusals(), check.pagesReadBack(), check.missing(),
            check.corrupt(), check.verified() ? "verified" : "FAILED: " + String.join("; ", check.problems())));
        return out.toString().stripTrailing();
    }
}

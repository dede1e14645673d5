package io.kvtier.bench.tier;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.kvtier.spi.ConfigValues;
import io.kvtier.spi.TierCapability;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;

import static io.kvtier.bench.tier.TierBenchmark.GOAL_MIN_PAGE_BYTES;
import static io.kvtier.bench.tier.TierBenchmark.GOAL_RATIO;

/**
 * How a {@link TierBenchmark.Result} is written out: the JSON of {@code --json} and the table a person
 * reads. Kept apart from the measurement so the output's field names and columns, which scripts and
 * {@code docs/PERFORMANCE.md} depend on, are in one place and change without touching how a case is run.
 */
final class TierBenchmarkReport
{
    private TierBenchmarkReport()
    {
    }

    /**
     * @param result the figures
     * @return them as one JSON object with a {@code results} array
     */
    static String json(final TierBenchmark.Result result)
    {
        final StringWriter text = new StringWriter();
        try (JsonGenerator json = new JsonFactory().createGenerator(text))
        {
            json.writeStartObject();
            json.writeStringField("bench", "tier");
            json.writeStringField("backend", result.plan().backend());
            json.writeObjectFieldStart("tier_settings");
            for (final Map.Entry<String, String> setting : result.settings().entrySet())
            {
                json.writeStringField(setting.getKey(), setting.getValue());
            }
            json.writeEndObject();
            json.writeArrayFieldStart("tier_capabilities");
            for (final TierCapability capability : result.capabilities())
            {
                json.writeString(capability.name());
            }
            json.writeEndArray();
            json.writeStringField("tier_describe", result.describe());
            json.writeStringField("directory", result.plan().directory().toString());
            json.writeNumberField("case_bytes", result.plan().caseBytes());
            json.writeNumberField("runs", result.plan().runs());
            json.writeNumberField("max_batch", result.plan().maxBatch());
            json.writeStringField("caller_wait", TierDriver.WAIT_DESCRIPTION);
            final boolean fio = isFio(result);
            json.writeStringField("baseline", result.baseline());
            json.writeStringField("baseline_describe", result.baselineDescribe());
            writeNullable(json, "baseline_version", result.baselineVersion());
            writeNullable(json, "baseline_missing", result.baselineMissing());
            // The fio fields from before the baseline was chosen by backend, kept for readers of posix runs.
            writeNullable(json, "fio_version", fio ? result.baselineVersion() : null);
            writeNullable(json, "fio_missing", fio ? result.baselineMissing() : "the " + result.plan().backend() + " backend's baseline is " + result.baseline() + ", not fio");
            json.writeStringField("fio_job", Fio.JOB_DESCRIPTION);
            json.writeNumberField("goal_ratio", GOAL_RATIO);
            json.writeNumberField("goal_min_page_bytes", GOAL_MIN_PAGE_BYTES);
            json.writeArrayFieldStart("results");
            for (final TierBenchmark.Case c : result.cases())
            {
                json.writeStartObject();
                json.writeStringField("op", c.op());
                json.writeNumberField("page_bytes", c.pageBytes());
                json.writeNumberField("queue_depth", c.queueDepth());
                json.writeNumberField("pages", c.pages());
                json.writeNumberField("bytes", c.bytes());
                json.writeNumberField("kvtier_mb_s", round(c.kvtierMbs()));
                json.writeNumberField("kvtier_iops", round(c.kvtierIops()));
                writeNullable(json, "baseline_mb_s", c.baselineMbs());
                writeNullable(json, "baseline_iops", c.baselineIops());
                writeNullable(json, "fio_mb_s", fio ? c.baselineMbs() : Double.NaN);
                writeNullable(json, "fio_iops", fio ? c.baselineIops() : Double.NaN);
                if (c.baseline() == null)
                {
                    json.writeNullField("ratio");
                }
                else
                {
                    json.writeNumberField("ratio", Math.round(c.ratio() * 1000) / 1000.0);
                }
                json.writeEndObject();
            }
            json.writeEndArray();
            writeGoal(json, "goal", result, result::goalGeomean, result::goalCount);
            json.writeNumberField("goal_64k_ratio", TierBenchmark.SMALL_GOAL_RATIO);
            writeGoal(json, "goal_64k", result, result::smallGoalGeomean, result::smallGoalCount);
            json.writeEndObject();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("a StringWriter does not fail", ex);
        }
        return text.toString();
    }

    /** Writes a string field, or JSON null for a missing value, so that every key is always present. */
    private static void writeNullable(final JsonGenerator json, final String name, final String value) throws IOException
    {
        if (value == null)
        {
            json.writeNullField(name);
        }
        else
        {
            json.writeStringField(name, value);
        }
    }

    /** Writes a number field rounded to a tenth, or JSON null for NaN (no baseline), which JSON cannot hold. */
    private static void writeNullable(final JsonGenerator json, final String name, final double value) throws IOException
    {
        if (Double.isNaN(value))
        {
            json.writeNullField(name);
        }
        else
        {
            json.writeNumberField(name, round(value));
        }
    }

    /**
     * @param result the figures
     * @return whether the baseline is fio, whose older field names the JSON keeps for readers of posix runs
     */
    private static boolean isFio(final TierBenchmark.Result result)
    {
        return "fio".equals(result.baseline());
    }

    /** One goal's object: per op, the geometric mean of its cases' ratios, and how many of them meet it. */
    private static void writeGoal(final JsonGenerator json, final String name, final TierBenchmark.Result result,
                                  final java.util.function.ToDoubleFunction<String> geomeanOf,
                                  final java.util.function.Function<String, int[]> countOf) throws IOException
    {
        json.writeObjectFieldStart(name);
        for (final String op : result.plan().ops())
        {
            json.writeObjectFieldStart(op);
            final double geomean = geomeanOf.applyAsDouble(op);
            if (Double.isNaN(geomean))
            {
                json.writeNullField("geomean_ratio");
            }
            else
            {
                json.writeNumberField("geomean_ratio", Math.round(geomean * 1000) / 1000.0);
            }
            final int[] count = countOf.apply(op);
            json.writeNumberField("cases_met", count[0]);
            json.writeNumberField("cases", count[1]);
            json.writeEndObject();
        }
        json.writeEndObject();
    }

    /**
     * @param result the figures
     * @return them as a table
     */
    static String text(final TierBenchmark.Result result)
    {
        final StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "tier %s (%s; declares %s), %s per case, %d run(s) each, alternating with %s%n",
            result.plan().backend(), result.settings(), result.capabilities(), ConfigValues.formatSize(result.plan().caseBytes()), result.plan().runs(), result.baseline()));
        out.append("tier: ").append(result.describe()).append(System.lineSeparator());
        out.append("caller: ").append(TierDriver.WAIT_DESCRIPTION).append(System.lineSeparator());
        out.append(result.baselineMissing() == null
            ? "baseline: " + result.baseline() + " (" + result.baselineVersion() + "): " + result.baselineDescribe() + System.lineSeparator()
            : "baseline: " + result.baseline() + " n/a: " + result.baselineMissing() + System.lineSeparator() + "  (" + result.baselineDescribe() + ")" + System.lineSeparator());
        out.append(String.format(Locale.ROOT, "%-6s %8s %4s %12s %10s %12s %10s %7s%n", "op", "page", "qd", "kvtier MB/s", "IOPS",
            (isFio(result) ? "fio" : "base") + " MB/s", "IOPS", "ratio"));
        for (final TierBenchmark.Case c : result.cases())
        {
            final boolean none = c.baseline() == null;
            out.append(String.format(Locale.ROOT, "%-6s %8s %4d %12.1f %10.0f %12s %10s %7s%s%n", c.op(), ConfigValues.formatSize(c.pageBytes()),
                c.queueDepth(), c.kvtierMbs(), c.kvtierIops(), none ? "n/a" : String.format(Locale.ROOT, "%.1f", c.baselineMbs()),
                none ? "n/a" : String.format(Locale.ROOT, "%.0f", c.baselineIops()),
                none ? "n/a" : String.format(Locale.ROOT, "%.3f", c.ratio()),
                !none && c.pageBytes() >= GOAL_MIN_PAGE_BYTES && c.ratio() < GOAL_RATIO ? "  (below the goal of " + GOAL_RATIO + ")" : ""));
        }
        for (final String op : result.plan().ops())
        {
            final int[] count = result.goalCount(op);
            if (count[1] > 0)
            {
                out.append(String.format(Locale.ROOT, "%s, pages of %s and more: geometric mean of the ratios %.3f; %d of %d cases at least %s%n", op,
                    ConfigValues.formatSize(GOAL_MIN_PAGE_BYTES), result.goalGeomean(op), count[0], count[1], GOAL_RATIO));
            }
            final int[] small = result.smallGoalCount(op);
            if (small[1] > 0)
            {
                out.append(String.format(Locale.ROOT, "%s, pages of %s: geometric mean of the ratios %.3f; %d of %d cases at least %s%n", op,
                    ConfigValues.formatSize(TierBenchmark.SMALL_GOAL_PAGE_BYTES), result.smallGoalGeomean(op), small[0], small[1],
                    TierBenchmark.SMALL_GOAL_RATIO));
            }
        }
        return out.toString();
    }

    /** @return {@code value} rounded to a tenth, as precise as the figures are */
    private static double round(final double value)
    {
        return Math.round(value * 10) / 10.0;
    }
}

package io.kvtier.metrics;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.kvtier.engine.Session;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * What docs/ says about the metrics matches a real scrape: the table of docs/metrics.md is rendered from one
 * (this test fails when they drift, and rewrites the table when asked), and every metric the Grafana
 * dashboard's PromQL names is a series that a scrape serves.
 */
class MetricsDocsTest
{
    static final Path METRICS_MD = Path.of("..", "docs", "metrics.md");
    static final Path DASHBOARD = Path.of("..", "docs", "grafana", "kvtier-dashboard.json");
    static final String BEGIN = "<!-- metrics-table:begin";
    static final String END = "<!-- metrics-table:end -->";
    static final String REWRITE_PROPERTY = "kvtier.rewrite-metrics-doc";
    static final String REWRITE_COMMAND = "./mvnw -q -pl metrics -am test -Dtest=MetricsDocsTest -Dsurefire.failIfNoSpecifiedTests=false -D"
        + REWRITE_PROPERTY + "=true";
    private static final Pattern METRIC = Pattern.compile("kvtier_[a-zA-Z0-9_:]*");

    /** A scrape of an engine with two tiers that took a few requests of each kind the dashboard shows. */
    private static Map<String, PrometheusText.Family> scrape(final Path nvme, final Path shared) throws Exception
    {
        try (MetricsFixture fixture = MetricsFixture.start(nvme, shared))
        {
            try (Session session = fixture.engine.openSession())
            {
                MetricsFixture.keys(session, 7, 2);
                MetricsFixture.write(session, 0, 2);
                session.flush();
                session.lookup(0, 2);
                session.acquire(0, 2);
                session.release();
            }
            return PrometheusText.parse(fixture.get(null).body());
        }
    }

    @Test
    void shouldListEveryMetricOfAScrapeInDocsMetricsMd(@TempDir final Path nvme, @TempDir final Path shared) throws Exception
    {
        final List<String> rendered = render(scrape(nvme, shared));
        final List<String> doc = Files.readAllLines(METRICS_MD, StandardCharsets.UTF_8);
        final int begin = indexOfPrefix(doc, BEGIN);
        final int end = indexOfPrefix(doc, END);
        assertThat(begin).as("docs/metrics.md marks the table with %s -->", BEGIN).isNotNegative();
        assertThat(end).as("docs/metrics.md ends the table with %s", END).isGreaterThan(begin);
        final List<String> documented = doc.subList(begin + 1, end);
        if (documented.equals(rendered))
        {
            return;
        }
        if (Boolean.getBoolean(REWRITE_PROPERTY))
        {
            final List<String> rewritten = new ArrayList<>(doc.subList(0, begin + 1));
            rewritten.addAll(rendered);
            rewritten.addAll(doc.subList(end, doc.size()));
            Files.write(METRICS_MD, rewritten, StandardCharsets.UTF_8);
            return;
        }
        final List<String> missing = new ArrayList<>(rendered);
        missing.removeAll(documented);
        final List<String> stale = new ArrayList<>(documented);
        stale.removeAll(rendered);
        fail("docs/metrics.md's table differs from a real scrape:%n- in the file only: %s%n+ in the scrape only: %s%nRewrite the table with:%n  %s",
            stale, missing, REWRITE_COMMAND);
    }

    @Test
    void shouldNameInTheDashboardOnlyMetricsThatAScrapeServes(@TempDir final Path nvme, @TempDir final Path shared) throws Exception
    {
        final Map<String, PrometheusText.Family> families = scrape(nvme, shared);
        final Set<String> served = new TreeSet<>();
        for (final PrometheusText.Family family : families.values())
        {
            family.samples.forEach(sample -> served.add(sample.name()));
        }
        final List<String> exprs = exprs(DASHBOARD);
        assertThat(exprs).as("the dashboard's queries").hasSizeGreaterThanOrEqualTo(10);
        final Set<String> named = new TreeSet<>();
        for (final String expr : exprs)
        {
            final Matcher matcher = METRIC.matcher(expr);
            boolean any = false;
            while (matcher.find())
            {
                named.add(matcher.group());
                any = true;
            }
            assertThat(any).as("a query that names no kvtier metric: %s", expr).isTrue();
        }
        // A histogram's series are its _bucket, _sum and _count: each is a sample name of the scrape, as is every counter's _total.
        assertThat(served).as("the series a scrape serves").containsAll(named);
        for (final String name : named)
        {
            if (name.endsWith("_bucket"))
            {
                assertThat(families.get(name.substring(0, name.length() - "_bucket".length())).type).as(name).isEqualTo("histogram");
            }
        }
    }

    @Test
    void shouldFindAMetricTheScrapeLacksWhenTheDashboardNamesOne()
    {
        final Set<String> served = Set.of("kvtier_requests_total");
        final Matcher matcher = METRIC.matcher("sum(rate(kvtier_request_total[5m])) / sum(rate(kvtier_requests_total[5m]))");
        final Set<String> named = new TreeSet<>();
        while (matcher.find())
        {
            named.add(matcher.group());
        }
        assertThat(named).containsExactly("kvtier_request_total", "kvtier_requests_total");
        assertThat(served.containsAll(named)).isFalse();
    }

    /** Every "expr" string anywhere in the dashboard's JSON. */
    static List<String> exprs(final Path dashboard) throws IOException
    {
        final List<String> exprs = new ArrayList<>();
        try (JsonParser parser = new JsonFactory().createParser(dashboard.toFile()))
        {
            JsonToken token;
            while ((token = parser.nextToken()) != null)
            {
                if (token == JsonToken.FIELD_NAME && parser.currentName().equals("expr"))
                {
                    assertThat(parser.nextToken()).as("expr is a string").isEqualTo(JsonToken.VALUE_STRING);
                    exprs.add(parser.getText());
                }
            }
        }
        return exprs;
    }

    /** The table: one row per family, sorted by name: name, type, labels, help. */
    static List<String> render(final Map<String, PrometheusText.Family> families)
    {
        final List<String> rows = new ArrayList<>();
        rows.add("| Metric | Type | Labels | Meaning |");
        rows.add("|---|---|---|---|");
        for (final String name : new TreeSet<>(families.keySet()))
        {
            final PrometheusText.Family family = families.get(name);
            final Set<String> labels = new TreeSet<>();
            family.samples.forEach(sample -> labels.addAll(sample.labels().keySet()));
            labels.remove("le");
            rows.add("| `" + name + "` | " + family.type + " | " + (labels.isEmpty() ? "" : "`" + String.join("`, `", labels) + "`") + " | "
                + family.help.replace("|", "\\|") + " |");
        }
        return rows;
    }

    private static int indexOfPrefix(final List<String> lines, final String prefix)
    {
        for (int i = 0; i < lines.size(); i++)
        {
            if (lines.get(i).startsWith(prefix))
            {
                return i;
            }
        }
        return -1;
    }
}

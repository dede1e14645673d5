package io.kvtier.bench.metrics;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** ScrapeCost runs once, briefly, and reports each mode and the scraper: its figures are docs/PERFORMANCE.md's. */
class ScrapeCostTest
{
    @Test
    void shouldRunEveryModeAndReportTheScrapes() throws Exception
    {
        final PrintStream out = System.out;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try
        {
            ScrapeCost.main(new String[] {"1", "50"});
        }
        finally
        {
            System.setOut(out);
        }
        final String report = captured.toString(StandardCharsets.UTF_8);
        assertThat(report).contains("1 rounds alternating").containsPattern("alone +wall median +\\d+ ns/request")
            .containsPattern("scraper +wall median +\\d+ ns/request").containsPattern("spinner +wall median +\\d+ ns/request")
            .containsPattern("scraper: \\d+ scrapes/s while the loop ran, [0-9.]+ µs per scrape, \\d+ bytes each");
    }
}

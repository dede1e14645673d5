package io.kvtier.cli;

import io.kvtier.bench.workload.WorkloadRunner;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A one-line progress bar on stderr, redrawn in place.
 */
final class ProgressBar implements WorkloadRunner.ProgressListener
{
    private static final int WIDTH = 30;

    private final PrintWriter err;
    private int lastLength;

    ProgressBar(final PrintWriter err)
    {
        this.err = err;
    }

    @Override
    public void progress(final long requests, final long expected, final long pagesRequested, final long hitPagesL2, final long hitPagesL3,
                         final long elapsedNanos)
    {
        final double fraction = expected == 0 ? 0 : Math.min(1.0, (double)requests / expected);
        final int filled = (int)Math.round(fraction * WIDTH);
        final String line = String.format(Locale.ROOT, "[%s%s] %3.0f%%  %,d requests  L2 %.1f%%  L3 %.1f%%  %,.0f req/s",
            "#".repeat(filled), ".".repeat(WIDTH - filled), 100 * fraction, requests,
            pagesRequested == 0 ? 0.0 : 100.0 * hitPagesL2 / pagesRequested,
            pagesRequested == 0 ? 0.0 : 100.0 * hitPagesL3 / pagesRequested,
            requests / Math.max(1e-9, elapsedNanos / 1e9));
        err.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
        err.flush();
        lastLength = line.length();
    }

    void done()
    {
        err.println();
        err.flush();
    }
}

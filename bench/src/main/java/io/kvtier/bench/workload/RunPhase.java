package io.kvtier.bench.workload;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;

/**
 * One stretch of a workload run, the warm-up or the steady state after it: what the clients did in it
 * and how long it took. A run reports the two apart because a JVM's first second (class loading, the
 * JIT compiling the hot paths, pages of the pool touched for the first time) says little about how
 * fast the path is once it runs.
 *
 * @param requests     requests answered in the stretch
 * @param pagesRead    pages read back in it (verified or not)
 * @param pagesWritten pages written and committed in it
 * @param pageSize     payload bytes per page
 * @param elapsedNanos its wall time
 */
public record RunPhase(long requests, long pagesRead, long pagesWritten, long pageSize, long elapsedNanos)
{
    /** @return whether the stretch held any request at all */
    public boolean isEmpty()
    {
        return requests == 0 || elapsedNanos <= 0;
    }

    /** @return requests per second, 0 for an empty stretch */
    public double requestsPerSecond()
    {
        return isEmpty() ? 0.0 : requests / (elapsedNanos / 1e9);
    }

    /** @return page payload bytes read and written per second, in MB (10^6), 0 for an empty stretch */
    public double pageMegabytesPerSecond()
    {
        return isEmpty() ? 0.0 : (pagesRead + pagesWritten) * (double)pageSize / 1e6 / (elapsedNanos / 1e9);
    }

    /**
     * @param later the counts at the end of the stretch
     * @return the part of {@code later} that came after this one (counts and time subtracted)
     */
    RunPhase until(final RunPhase later)
    {
        return new RunPhase(later.requests - requests, later.pagesRead - pagesRead, later.pagesWritten - pagesWritten, pageSize,
            later.elapsedNanos - elapsedNanos);
    }

    /**
     * Writes the stretch's fields into the object being written.
     *
     * @param json where
     * @throws IOException if writing fails
     */
    public void writeFields(final JsonGenerator json) throws IOException
    {
        json.writeNumberField("requests", requests);
        json.writeNumberField("pages_read", pagesRead);
        json.writeNumberField("pages_written", pagesWritten);
        json.writeNumberField("elapsed_s", WorkloadReport.round(elapsedNanos / 1e9));
        json.writeNumberField("throughput_page_mb_per_s", WorkloadReport.round(pageMegabytesPerSecond()));
    }
}

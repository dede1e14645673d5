package io.kvtier.bench.workload;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Locale;

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
 * @param compileMillis the CPU time this JVM's JIT compiler threads used in the stretch, in milliseconds
 *                      ({@link #compileMillisSoFar()}), -1 when unknown: a steady state that still compiles much is
 *                      not steady yet, and on a host of few cores the compilers take CPU from the run
 */
public record RunPhase(long requests, long pagesRead, long pagesWritten, long pageSize, long elapsedNanos, long compileMillis)
{
    /**
     * A stretch whose compile time is not known.
     *
     * @param requests     requests answered in the stretch
     * @param pagesRead    pages read back in it (verified or not)
     * @param pagesWritten pages written and committed in it
     * @param pageSize     payload bytes per page
     * @param elapsedNanos its wall time
     */
    public RunPhase(final long requests, final long pagesRead, final long pagesWritten, final long pageSize, final long elapsedNanos)
    {
        this(requests, pagesRead, pagesWritten, pageSize, elapsedNanos, -1);
    }

    /**
     * @return the CPU time this JVM's JIT compiler threads have used since it started, in milliseconds: from the
     *         kernel's per-thread accounting ({@code /proc/self/task/TID/schedstat} of the threads named C1 or C2
     *         CompilerThread), else the JVM's own figure, which is the compilations' wall time and so grows on a busy
     *         host while the compilers wait for a core; -1 when neither is there
     */
    public static long compileMillisSoFar()
    {
        final long cpuNanos = compilerCpuNanos();
        if (cpuNanos >= 0)
        {
            return cpuNanos / 1_000_000;
        }
        final CompilationMXBean compilation = ManagementFactory.getCompilationMXBean();
        return compilation != null && compilation.isCompilationTimeMonitoringSupported() ? compilation.getTotalCompilationTime() : -1;
    }

    /** @return the summed on-CPU nanoseconds of the compiler threads alive now, -1 when /proc does not say */
    private static long compilerCpuNanos()
    {
        final ThreadsCpu threads = ThreadsCpu.now();
        final long nanos = threads.nanos(ThreadsCpu.JIT);
        return threads.isKnown() && nanos > 0 ? nanos : -1;
    }

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

    /** @return ", JIT compilers N s of CPU" for the text summaries, or nothing when their time is not known */
    String compileText()
    {
        return compileMillis < 0 ? "" : String.format(Locale.ROOT, ", JIT compilers %.2f s of CPU", compileMillis / 1e3);
    }

    /**
     * @param later the counts at the end of the stretch
     * @return the part of {@code later} that came after this one (counts and time subtracted)
     */
    RunPhase until(final RunPhase later)
    {
        return new RunPhase(later.requests - requests, later.pagesRead - pagesRead, later.pagesWritten - pagesWritten, pageSize,
            later.elapsedNanos - elapsedNanos, later.compileMillis >= 0 && compileMillis >= 0 ? later.compileMillis - compileMillis : -1);
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
        if (compileMillis >= 0)
        {
            json.writeNumberField("jit_compile_ms", compileMillis);
        }
    }
}

package io.kvtier.bench.workload;

/**
 * Tells when this JVM's JIT compilers have quieted down: the warm-up of a run on a host of few cores lasts
 * until then, because compilers busy on one of two cores take half the machine from the path being measured
 * (on this project's 2 vCPUs perf found a third of a demo's CPU samples in the C1 and C2 compiler threads 5 to 11 s
 * into the run, when its steady state began at a fixed quarter of the requests).
 *
 * <p>Settled means: over the last {@link #WINDOW_NANOS} or more, the compilers spent less than
 * {@link #SETTLED_CORE_SHARE} of one core's time compiling. Samples are taken at most every
 * {@link #SAMPLE_NANOS}; the two kept span one window. Called by the clients of a run after each request,
 * only while the warm-up lasts, so the lock is not on any measured path; {@code kvtier bench tier} asks it
 * between the rounds of its warm-up, and {@code kvtier bench ipc}'s client process and its engine's JVM each
 * watch their own compilers with one.
 */
public final class JitSettling
{
    /** The span the compile rate is measured over. */
    public static final long WINDOW_NANOS = 500_000_000L;
    /** The most often a sample is taken: each reads the compiler threads' CPU time from /proc. */
    static final long SAMPLE_NANOS = 50_000_000L;
    /** The compile time per wall time under which the compilers count as settled. */
    static final double SETTLED_CORE_SHARE = 0.1;

    private final CompileClock clock;
    private final long[] sampleNanos = new long[(int)(WINDOW_NANOS / SAMPLE_NANOS) + 2];
    private final long[] sampleCompileMillis = new long[sampleNanos.length];
    private int samples;
    private int newest = -1;

    /** What the compilers have spent so far; a test gives its own. */
    @FunctionalInterface
    public interface CompileClock
    {
        /** @return the compiler threads' CPU milliseconds since the JVM started, -1 if unknown */
        long compileMillis();
    }

    /** Watches this JVM's compilers. */
    public JitSettling()
    {
        this(RunPhase::compileMillisSoFar);
    }

    /**
     * @param clock where the compile time comes from
     */
    public JitSettling(final CompileClock clock)
    {
        this.clock = clock;
    }

    /**
     * @param nowNanos {@link System#nanoTime()} now
     * @return whether the compilers used less than {@link #SETTLED_CORE_SHARE} of a core over the last window; true
     *         when the JVM does not say what they spend (nothing to wait for)
     */
    public synchronized boolean settled(final long nowNanos)
    {
        if (newest < 0 || nowNanos - sampleNanos[newest] >= SAMPLE_NANOS)
        {
            final long compiled = clock.compileMillis();
            if (compiled < 0)
            {
                return true;
            }
            newest = (newest + 1) % sampleNanos.length;
            sampleNanos[newest] = nowNanos;
            sampleCompileMillis[newest] = compiled;
            samples = Math.min(samples + 1, sampleNanos.length);
        }
        // The newest sample at least a window older than the newest one.
        for (int back = 1; back < samples; back++)
        {
            final int older = Math.floorMod(newest - back, sampleNanos.length);
            final long span = sampleNanos[newest] - sampleNanos[older];
            if (span >= WINDOW_NANOS)
            {
                // A compiler thread the JVM retired takes its time with it: a fall counts as no compiling.
                final double compiledNanos = Math.max(0, sampleCompileMillis[newest] - sampleCompileMillis[older]) * 1e6;
                return compiledNanos < SETTLED_CORE_SHARE * span;
            }
        }
        return false;
    }
}

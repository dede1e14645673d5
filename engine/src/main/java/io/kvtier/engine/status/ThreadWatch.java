package io.kvtier.engine.status;

import io.kvtier.engine.pool.Counters;
import io.kvtier.client.pool.CountersDescriptor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Watches the engine's long-lived worker threads (the commit sealer, the device thread, tier call
 * threads), so that none of them can die or hang unnoticed: a thread that is gone, or has been busy
 * with one piece of work for longer than {@code health.stuck-after}, is logged once and shown in the
 * pool's counters region, where {@code kvtier stat} and its health check read it.
 *
 * <p>Each watched thread has a gauge of its own, {@code thread_<name>}: 0 while it runs, 1 while it
 * is stuck, 2 once it is dead; the gauges {@code threads_stuck} and {@code threads_dead} sum them up.
 * A watched thread marks the start and end of each piece of work ({@link Watched#begin},
 * {@link Watched#end}, release stores, no allocation), and counts work it had to answer with an
 * internal error ({@link Watched#failed}). {@link #check} runs on one thread, the engine's.
 */
public final class ThreadWatch
{
    private static final System.Logger LOG = System.getLogger(ThreadWatch.class.getName());

    /** Gauge value: the thread runs. */
    public static final long RUNNING = 0;
    /** Gauge value: busy with one piece of work for longer than the stuck threshold. */
    public static final long STUCK = 1;
    /** Gauge value: the thread ended (it should live as long as the engine). */
    public static final long DEAD = 2;

    private static final VarHandle BUSY_SINCE;

    static
    {
        try
        {
            BUSY_SINCE = MethodHandles.lookup().findVarHandle(Watched.class, "busySinceNanos", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** One watched thread: what it is doing, written by it, read by the checker. */
    public static final class Watched
    {
        private final String name;
        private final int gaugeId;
        private Thread thread;
        @SuppressWarnings("unused")
        private volatile long busySinceNanos;
        private volatile long failures;
        private volatile boolean stopping;
        private long reported = RUNNING;

        private Watched(final String name, final int gaugeId)
        {
            this.name = name;
            this.gaugeId = gaugeId;
        }

        /** @param running the thread to watch; set once, before it starts */
        public void thread(final Thread running)
        {
            this.thread = running;
        }

        /** The watched thread starts a piece of work. */
        public void begin()
        {
            // 0 means idle: a clock that reads 0 is nudged so that the work still counts as busy.
            final long now = System.nanoTime();
            BUSY_SINCE.setRelease(this, now == 0 ? 1 : now);
        }

        /** The watched thread finished it, however it ended. */
        public void end()
        {
            BUSY_SINCE.setRelease(this, 0L);
        }

        /** The work failed with something unexpected and was answered with an internal error. */
        public void failed()
        {
            failures++;
        }

        /** The thread is being stopped: its end is not a death. */
        public void stopping()
        {
            stopping = true;
        }

        /** @return work it answered with an internal error */
        public long failures()
        {
            return failures;
        }

        /** @return the thread's name */
        public String name()
        {
            return name;
        }
    }

    private final Counters counters;
    private final long stuckAfterNanos;
    private final List<Watched> watched = new ArrayList<>();
    private final int stuckGauge;
    private final int deadGauge;
    private final int failuresCounter;

    /**
     * @param counters        the pool's counters region
     * @param stuckAfterNanos how long one piece of work may take before its thread counts as stuck
     */
    public ThreadWatch(final Counters counters, final long stuckAfterNanos)
    {
        this.counters = counters;
        this.stuckAfterNanos = stuckAfterNanos;
        this.stuckGauge = EngineCounter.THREADS_STUCK.id();
        this.deadGauge = EngineCounter.THREADS_DEAD.id();
        this.failuresCounter = EngineCounter.THREAD_FAILURES.id();
    }

    /**
     * Starts watching a thread: names its gauge in the counters region. At start only.
     *
     * @param name the thread's name
     * @return what the thread marks its work on; give it the thread with {@link Watched#thread}
     */
    public synchronized Watched watch(final String name)
    {
        final int id = CountersDescriptor.FIRST_THREAD_ID + watched.size();
        if (id >= CountersDescriptor.FIRST_TIER_INFO_ID)
        {
            throw new IllegalStateException("more watched threads than the counters region has room for: " + watched.size());
        }
        final Watched w = new Watched(name, id);
        counters.allocate(id, CountersDescriptor.TYPE_GAUGE, gaugeName(name), "Thread " + name
            + ": 0 runs, 1 stuck (busy with one piece of work past health.stuck-after), 2 dead (ended while the engine runs).");
        counters.valueOpaque(id, RUNNING);
        watched.add(w);
        return w;
    }

    /** @return the gauge's name for a thread's name: {@code thread_} and the name with every non-alphanumeric as {@code _} */
    public static String gaugeName(final String threadName)
    {
        return "thread_" + threadName.replaceAll("[^A-Za-z0-9]", "_");
    }

    /**
     * Looks at every watched thread once; logs and shows each change of state. One thread (the
     * engine's) calls it, every tick or so; allocation-free unless a state changes.
     *
     * @param nowNanos {@link System#nanoTime()}
     */
    public synchronized void check(final long nowNanos)
    {
        long stuck = 0;
        long dead = 0;
        long failures = 0;
        for (int i = 0; i < watched.size(); i++)
        {
            final Watched w = watched.get(i);
            final long busySince = (long)BUSY_SINCE.getAcquire(w);
            final long state;
            // A thread not started yet is not dead: only one that ran and ended is.
            if (w.thread != null && w.thread.getState() == Thread.State.TERMINATED && !w.stopping)
            {
                state = DEAD;
            }
            else if (busySince != 0 && nowNanos - busySince > stuckAfterNanos)
            {
                state = STUCK;
            }
            else
            {
                state = RUNNING;
            }
            if (state != w.reported)
            {
                report(w, state, busySince == 0 ? 0 : nowNanos - busySince);
                w.reported = state;
                counters.valueOpaque(w.gaugeId, state);
            }
            stuck += state == STUCK ? 1 : 0;
            dead += state == DEAD ? 1 : 0;
            failures += w.failures;
        }
        counters.valueOpaque(stuckGauge, stuck);
        counters.valueOpaque(deadGauge, dead);
        counters.valueOpaque(failuresCounter, failures);
    }

    private static void report(final Watched w, final long state, final long busyNanos)
    {
        if (state == DEAD)
        {
            LOG.log(System.Logger.Level.ERROR, "thread {0} has ended while the engine runs: the work it does is not being done (kvtier stat shows"
                + " it as dead)", w.name);
        }
        else if (state == STUCK)
        {
            LOG.log(System.Logger.Level.ERROR, "thread {0} has been busy with one piece of work for {1} s (kvtier stat shows it as stuck)",
                w.name, TimeUnit.NANOSECONDS.toSeconds(busyNanos));
        }
        else
        {
            LOG.log(System.Logger.Level.WARNING, "thread {0} runs again", w.name);
        }
    }
}

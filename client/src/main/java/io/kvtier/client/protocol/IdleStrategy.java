package io.kvtier.client.protocol;

import java.lang.invoke.VarHandle;

/**
 * How one end of the IPC protocol waits for work (docs/ipc-protocol.md section 5): spin, then yield,
 * then sleep on a futex word, each sleep bounded so that a wake-up lost to a crash costs at most that
 * bound. The sleep is the Dekker half of the sleeper: announce it (store 1 in the word, full fence),
 * look for work once more, and only then sleep; the other side stores its work, fences, and wakes the
 * sleeper if the word reads 1. Shared by the engine (on the control file's Doorbell) and the client
 * (on its Client Sleeping word). Allocation-free; one thread.
 *
 * <p>{@link Kind#ADAPTIVE}, a client's choice beside {@link Kind#BACKOFF}, waits by what it sees of the engine rather than by a
 * fixed count: while the engine is awake (its Doorbell reads 0) and has taken the request (its Request
 * Head passed it), the answer is being made, and it spins for a budget of twice the waits it has seen
 * (at least {@link #MIN_SPIN_NANOS}, at most {@link #MAX_SPIN_NANOS}), then sleeps. It sleeps sooner
 * when the engine has gone to sleep (the answer waits on other work: a tier, the sealer), and when the
 * engine, awake and not just woken by this client, has left the request untaken for
 * {@link #TAKE_PATIENCE_NANOS}: it is then busy with other clients, or off its core, perhaps waiting for
 * this very one, and a spinning client would only keep it off longer. It never yields: on a busy host a
 * yield hands the core to another process for the rest of its time slice.
 *
 * <p>{@link Kind#TIMED} waits as {@code ADAPTIVE} does while the engine works on the request (spin for a
 * budget that follows the waits seen, up to {@link #TIMED_MAX_SPIN_NANOS}, then sleep; sleep soon once the
 * engine sleeps), but hands its core over instead of sleeping when an awake engine leaves the request
 * untaken for {@link #TIMED_TAKE_PATIENCE_NANOS}: such an engine is off its core, and the one core it can be
 * waiting for is this one, which a yield gives it at once without a futex wake-up on either side (a
 * yield on a core no one else wants returns at once). A client that sleeps while requests flow has the
 * scheduler place it again on each wake-up, perhaps on the engine's core; one that spins or yields keeps
 * its core. It sleeps only when the request stays untaken for {@link #TIMED_YIELD_LIMIT_NANOS}.
 *
 * <p>{@link Kind#AWAKE} spins for as long as the engine is awake, whether or not it has taken the request yet,
 * for a budget that follows the waits seen (up to {@link #TIMED_MAX_SPIN_NANOS}), then sleeps; it sleeps soon
 * once the engine sleeps, and it never yields. An awake engine that leaves the request untaken is off its core
 * for a moment (preempted by another process) or busy with other clients. The wait ends as soon as the engine
 * is back, which a spinning client sees at once, where a client that slept would need a futex wake. On a
 * host whose cores are all busy, the scheduler keeps client and engine on different cores for most of the
 * round trips, and a median counts round trips: there, waiting that neither yields nor sleeps while the other
 * side is awake keeps the median near the quiet host's.
 */
public final class IdleStrategy
{
    /** How a client waits for its answers unless told otherwise ({@code IpcConnection}, {@code KvtierClient}). */
    public static final Kind CLIENT_DEFAULT = Kind.AWAKE;
    /** The longest one sleep lasts. */
    public static final long MAX_SLEEP_NANOS = 1_000_000;
    /** {@link Kind#ADAPTIVE}: the least it spins while the engine is awake, however quick its answers were. */
    public static final long MIN_SPIN_NANOS = 20_000;
    /** {@link Kind#ADAPTIVE}: the most it spins while the engine is awake before it sleeps. */
    public static final long MAX_SPIN_NANOS = 100_000;
    /** {@link Kind#ADAPTIVE}: how long an awake engine may leave the request untaken before this side sleeps. */
    public static final long TAKE_PATIENCE_NANOS = 3_000;
    /** {@link Kind#TIMED}: the most it spins while the engine is awake and working on the request before it sleeps. */
    public static final long TIMED_MAX_SPIN_NANOS = 500_000;
    /** {@link Kind#TIMED}: how long an awake engine may leave the request untaken before this side yields to it. */
    public static final long TIMED_TAKE_PATIENCE_NANOS = 20_000;
    /** {@link Kind#TIMED}: how long it yields to an awake engine that leaves the request untaken before it sleeps. */
    public static final long TIMED_YIELD_LIMIT_NANOS = 200_000;

    private static final int SPINS = 100;
    private static final int YIELDS = 50;
    /** {@link Kind#ADAPTIVE} reads the clock and looks at the engine once every this many idles. */
    private static final int LOOK_EVERY = 8;
    /** Where the idle count stops growing: a multiple of {@link #LOOK_EVERY}, so that a wait that long still looks at every idle. */
    private static final int SATURATED = Integer.MAX_VALUE & -LOOK_EVERY;
    /** {@link Kind#ADAPTIVE}'s spin budget is this many times its average wait. */
    private static final int BUDGET_OVER_AVERAGE = 2;

    /** What the sleeper looks at once more after announcing its sleep. */
    @FunctionalInterface
    public interface WorkCheck
    {
        /** @return whether there is work: the sleep is skipped */
        boolean hasWork();
    }

    /** What a waiting client sees of the engine, for {@link Kind#ADAPTIVE}. */
    public interface Peer
    {
        /** @return whether the engine is awake: its Doorbell reads 0 (a volatile read of a line it writes only when it sleeps or wakes) */
        boolean awakeVolatile();

        /** @return whether the engine has taken what this side waits on (its Request Head passed the request), read with acquire */
        boolean tookItAcquire();

        /** @return whether this side woke the engine from a sleep for this wait: it is still coming to a core, not kept off one */
        boolean wokeIt();
    }

    /** A peer that is always awake and has always taken the request: {@link Kind#ADAPTIVE} then only spins, then sleeps. */
    public static final Peer ALWAYS_AWAKE = new Peer()
    {
        @Override
        public boolean awakeVolatile()
        {
            return true;
        }

        @Override
        public boolean tookItAcquire()
        {
            return true;
        }

        @Override
        public boolean wokeIt()
        {
            return false;
        }
    };

    /** The strategies of {@code ipc.idle-strategy} and of a client. */
    public enum Kind
    {
        /** Spin, yield, then sleep at most 1 ms at a time. */
        BACKOFF,
        /** Never sleep: a core per waiter, the lowest latency. */
        SPIN,
        /** Sleep at once: no core spent waiting. */
        SLEEP,
        /** Spin while the engine is awake and working on the request, for a budget that follows the waits seen, then sleep. */
        ADAPTIVE,
        /** As {@code ADAPTIVE} while the engine works on the request, but yield, not sleep, while an awake engine leaves it untaken. */
        TIMED,
        /** Spin while the engine is awake, taken or not, for a budget that follows the waits seen; sleep when it sleeps; never yield (a client's default). */
        AWAKE;

        /** @return the name in settings */
        public String configName()
        {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * How a waiting side spent its waits so far: plain counts its own thread keeps.
     *
     * @param waits      waits that found their answer (ADAPTIVE) or began (others)
     * @param yields     {@code Thread.yield()} calls
     * @param sleeps     futex sleeps entered (an announced sleep skipped because work came counts too)
     * @param sleepNanos time spent in them
     * @param wakesSent  futex wakes this side issued to a peer that slept
     */
    public record Counts(long waits, long yields, long sleeps, long sleepNanos, long wakesSent)
    {
        /**
         * @param earlier counts taken before
         * @return what happened since
         */
        public Counts minus(final Counts earlier)
        {
            return new Counts(waits - earlier.waits, yields - earlier.yields, sleeps - earlier.sleeps, sleepNanos - earlier.sleepNanos,
                wakesSent - earlier.wakesSent);
        }
    }

    private final Kind kind;
    private final long sleepNanos;
    private final int backoffYields;
    private final Peer peer;
    private final java.util.function.LongSupplier clock;
    private int idleCount;
    private long waitStartNanos;
    private long averageWaitNanos = MIN_SPIN_NANOS / BUDGET_OVER_AVERAGE;
    private boolean peerAsleepSeen;
    private long waits;
    private long yields;
    private long sleeps;
    private long sleptNanos;
    private long wakesSent;

    /**
     * @param kind       the strategy ({@link Kind#ADAPTIVE} with a peer always awake)
     * @param sleepNanos the longest sleep, at most {@link #MAX_SLEEP_NANOS} is what the protocol expects
     */
    public IdleStrategy(final Kind kind, final long sleepNanos)
    {
        this(kind, sleepNanos, ALWAYS_AWAKE, System::nanoTime);
    }

    /**
     * @param kind       the strategy
     * @param sleepNanos the longest sleep
     * @param peer       what this side sees of the other, for {@link Kind#ADAPTIVE}
     */
    public IdleStrategy(final Kind kind, final long sleepNanos, final Peer peer)
    {
        this(kind, sleepNanos, peer, System::nanoTime);
    }

    /**
     * @param kind       the strategy
     * @param sleepNanos the longest sleep
     * @param peer       what this side sees of the other, for {@link Kind#ADAPTIVE}
     * @param clock      nanoseconds, {@code System::nanoTime} but in tests
     */
    IdleStrategy(final Kind kind, final long sleepNanos, final Peer peer, final java.util.function.LongSupplier clock)
    {
        this(kind, sleepNanos, peer, clock, YIELDS);
    }

    /**
     * {@link Kind#BACKOFF} that yields {@code yields} times after its spins, not {@value #YIELDS}, before it sleeps:
     * for answers that take the engine longer than the usual spins and yields last, so that the wait ends without a
     * futex wake-up on either side.
     *
     * @param sleepNanos the longest sleep
     * @param yields     the yields after the spins
     * @return the strategy
     */
    public static IdleStrategy backoffYielding(final long sleepNanos, final int yields)
    {
        return new IdleStrategy(Kind.BACKOFF, sleepNanos, ALWAYS_AWAKE, System::nanoTime, yields);
    }

    private IdleStrategy(final Kind kind, final long sleepNanos, final Peer peer, final java.util.function.LongSupplier clock,
                         final int backoffYields)
    {
        this.kind = kind;
        this.sleepNanos = sleepNanos;
        this.peer = peer;
        this.clock = clock;
        this.backoffYields = backoffYields;
    }

    /** @return the strategy */
    public Kind kind()
    {
        return kind;
    }

    /** A wait begins: the next idle starts from spinning again. */
    public void reset()
    {
        idleCount = 0;
        peerAsleepSeen = false;
        if (!timesItsWaits())
        {
            waits++;
        }
    }

    /**
     * The wait begun at {@link #reset()} found what it waited for. {@link Kind#ADAPTIVE} folds how long
     * it took into the average its spin budget follows; the others do nothing.
     */
    public void arrived()
    {
        if (timesItsWaits())
        {
            waits++;
            if (idleCount > 0)
            {
                final long waited = Math.min(clock.getAsLong() - waitStartNanos, MAX_SLEEP_NANOS);
                averageWaitNanos += (waited - averageWaitNanos) >> 3;
            }
        }
    }

    /** @return how long {@link Kind#ADAPTIVE}, {@link Kind#TIMED} or {@link Kind#AWAKE} spins while the engine is awake before it sleeps, now */
    public long spinBudgetNanos()
    {
        return Math.clamp(averageWaitNanos * BUDGET_OVER_AVERAGE, MIN_SPIN_NANOS, kind == Kind.ADAPTIVE ? MAX_SPIN_NANOS : TIMED_MAX_SPIN_NANOS);
    }

    /** Whether the strategy times its waits (its budget follows them): a wait then counts once it ends. */
    private boolean timesItsWaits()
    {
        return timesWaits(kind);
    }

    /**
     * @param kind a strategy
     * @return whether it times its waits, following them with its spin budget and looking at the engine
     */
    public static boolean timesWaits(final Kind kind)
    {
        return kind == Kind.ADAPTIVE || kind == Kind.TIMED || kind == Kind.AWAKE;
    }

    /** @return the counts so far (allocates the record: not for a hot path) */
    public Counts counts()
    {
        return new Counts(waits, yields, sleeps, sleptNanos, wakesSent);
    }

    /**
     * Idles once: a spin, a yield, or a bounded sleep on {@code word}, depending on the strategy and on
     * how long this side has found nothing.
     *
     * @param word  the word this side sleeps on
     * @param check looked at after the sleep is announced; work there skips the sleep
     */
    public void idle(final FutexWord word, final WorkCheck check)
    {
        final int count = idleCount;
        if (count < SATURATED)
        {
            idleCount = count + 1;
        }
        switch (kind)
        {
            case SPIN -> Thread.onSpinWait();
            case SLEEP -> sleep(word, check);
            case BACKOFF ->
            {
                if (count < SPINS)
                {
                    Thread.onSpinWait();
                }
                else if (count < SPINS + backoffYields)
                {
                    yieldCounted();
                }
                else
                {
                    sleep(word, check);
                }
            }
            case ADAPTIVE -> adaptive(count, word, check);
            case TIMED -> timed(count, word, check);
            case AWAKE -> awake(count, word, check);
            default -> throw new IllegalStateException("unknown idle strategy " + kind);
        }
    }

    /**
     * What ADAPTIVE and TIMED do alike on each call: spin between looks at the engine, and sleep once it was seen
     * asleep twice in a row, one look apart (not the moment between its announcement and its last look).
     *
     * @param count the calls of this wait before this one
     * @param word  the word to sleep on
     * @param check whether the work came meanwhile
     * @return the time waited so far when the engine is awake and this call is a look, else -1: the call spun or slept
     */
    private long lookAtTheEngine(final int count, final FutexWord word, final WorkCheck check)
    {
        if (count == 0)
        {
            waitStartNanos = clock.getAsLong();
            Thread.onSpinWait();
            return -1;
        }
        if (count % LOOK_EVERY != 0)
        {
            Thread.onSpinWait();
            return -1;
        }
        final long waited = clock.getAsLong() - waitStartNanos;
        if (!peer.awakeVolatile())
        {
            if (peerAsleepSeen)
            {
                sleep(word, check);
            }
            else
            {
                peerAsleepSeen = true;
                Thread.onSpinWait();
            }
            return -1;
        }
        peerAsleepSeen = false;
        return waited;
    }

    private void adaptive(final int count, final FutexWord word, final WorkCheck check)
    {
        final long waited = lookAtTheEngine(count, word, check);
        if (waited < 0)
        {
            return;
        }
        if (waited >= spinBudgetNanos())
        {
            sleep(word, check);
        }
        else if (waited >= TAKE_PATIENCE_NANOS && !peer.wokeIt() && !peer.tookItAcquire())
        {
            sleep(word, check);
        }
        else
        {
            Thread.onSpinWait();
        }
    }

    private void awake(final int count, final FutexWord word, final WorkCheck check)
    {
        final long waited = lookAtTheEngine(count, word, check);
        if (waited < 0)
        {
            return;
        }
        if (waited >= spinBudgetNanos())
        {
            sleep(word, check);
        }
        else
        {
            Thread.onSpinWait();
        }
    }

    private void timed(final int count, final FutexWord word, final WorkCheck check)
    {
        // As ADAPTIVE while the engine sleeps: the answer then waits on something else than a core.
        final long waited = lookAtTheEngine(count, word, check);
        if (waited < 0)
        {
            return;
        }
        if (peer.tookItAcquire())
        {
            if (waited >= spinBudgetNanos())
            {
                sleep(word, check);
            }
            else
            {
                Thread.onSpinWait();
            }
        }
        else if (waited >= TIMED_YIELD_LIMIT_NANOS)
        {
            sleep(word, check);
        }
        else if (waited >= TIMED_TAKE_PATIENCE_NANOS)
        {
            yieldCounted();
        }
        else
        {
            Thread.onSpinWait();
        }
    }

    private void yieldCounted()
    {
        yields++;
        Thread.yield();
    }

    private void sleep(final FutexWord word, final WorkCheck check)
    {
        sleeps++;
        word.setVolatile(1);
        VarHandle.fullFence();
        if (!check.hasWork())
        {
            final long start = System.nanoTime();
            word.await(1, sleepNanos);
            sleptNanos += System.nanoTime() - start;
        }
        word.setVolatile(0);
    }

    /**
     * The waker's half: after publishing work (a release store), fence, and wake the sleeper if its
     * word says it sleeps.
     *
     * @param word the sleeper's word
     * @return whether it woke one (the word read 1)
     */
    public static boolean wake(final FutexWord word)
    {
        VarHandle.fullFence();
        return word.wakeIfSleeping();
    }

    /**
     * {@link #wake} counted among this side's {@link Counts#wakesSent()}.
     *
     * @param word the sleeper's word
     * @return whether it woke one
     */
    public boolean wakeCounted(final FutexWord word)
    {
        final boolean woke = wake(word);
        if (woke)
        {
            wakesSent++;
        }
        return woke;
    }
}

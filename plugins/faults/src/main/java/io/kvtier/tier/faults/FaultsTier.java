package io.kvtier.tier.faults;

import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;
import io.kvtier.spi.TierWaterLevels;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A tier that hands every call to a wrapped tier and injects faults on the way, each drawn from its
 * {@link FaultSchedule} at the rates in force and written to its {@link FaultLog} before it takes
 * effect. Keys with no fault reach the wrapped tier as the engine handed them (its segments, zero-copy);
 * a fault that changes what is stored (torn-write, bit-flip, replace) or what a read returns
 * (short-read) goes through a scratch frame of its own. Delayed keys (slow-read, stall-read) and late
 * writes run on one timer thread, which {@link #close()} stops before it closes the wrapped tier, so
 * nothing is written into the engine's memory once close returns.
 */
final class FaultsTier implements StorageTier
{
    /** Keys written lately, the candidates a replace stores another key's frame under. */
    private static final int RECENT_KEYS = 64;
    /** The unit a short read or a torn write stops at. */
    private static final long BLOCK = 4096;
    /** How often the control file is read. */
    static final long CONTROL_PERIOD_MILLIS = 100;
    /** How long close waits for a delayed key being handed to the wrapped tier. */
    private static final long TIMER_STOP_SECONDS = 30;

    /** The operations of the SPI, as the fault log names them. */
    private enum Op
    {
        EXISTS("exists"), READ("read"), WRITE("write"), REMOVE("remove");

        final String logName;

        Op(final String logName)
        {
            this.logName = logName;
        }
    }

    private final String name;
    private final String wrappedType;
    private final StorageTier wrapped;
    private final FaultSettings settings;
    private final FaultSchedule schedule;
    private final FaultLog log;
    private final boolean trusted;
    private final System.Logger logger;
    private final ScheduledThreadPoolExecutor timer;
    private final Set<Delayed> pending = ConcurrentHashMap.newKeySet();
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
    private final Map<FaultKind, AtomicLong> injected = new EnumMap<>(FaultKind.class);
    private final Object closeLock = new Object();
    private final long[] recentHigh = new long[RECENT_KEYS];
    private final long[] recentLow = new long[RECENT_KEYS];
    private volatile FaultRates rates;
    private volatile boolean closed;
    private boolean closeDone;
    private int recentCount;
    private int recentNext;
    private CountDownLatch blockRelease = new CountDownLatch(1);
    private String controlText = "";
    private String controlRefused;

    /**
     * @param settings    the tier's settings
     * @param wrappedType the wrapped tier's type
     * @param wrapped     the wrapped tier, started; closed with this one
     * @param log         the fault log, open
     * @param trusted     whether the engine hands this tier its own pool pages (it offered transfer memory)
     * @param logger      the tier's logger
     */
    FaultsTier(final FaultSettings settings, final String wrappedType, final StorageTier wrapped, final FaultLog log, final boolean trusted,
               final System.Logger logger)
    {
        this.name = settings.tierName;
        this.settings = settings;
        this.wrappedType = wrappedType;
        this.wrapped = wrapped;
        this.log = log;
        this.trusted = trusted;
        this.logger = logger;
        this.schedule = new FaultSchedule(settings.seed);
        this.rates = settings.rates;
        for (final FaultKind kind : FaultKind.values())
        {
            injected.put(kind, new AtomicLong());
        }
        timer = new ScheduledThreadPoolExecutor(1, task ->
        {
            final Thread thread = new Thread(task, "kvtier-faults-" + name);
            thread.setDaemon(true);
            return thread;
        });
        // Once closing, delayed work not started is dropped (close answers its keys itself), and nothing new starts.
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timer.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
        timer.setRemoveOnCancelPolicy(true);
        if (settings.faultControl != null)
        {
            // Read once now, so that the first call already runs at the rates the file sets.
            readControl();
            timer.scheduleWithFixedDelay(this::readControl, CONTROL_PERIOD_MILLIS, CONTROL_PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Set<TierCapability> capabilities()
    {
        return wrapped.capabilities();
    }

    @Override
    public String describe()
    {
        final String inner = wrapped.describe();
        return "faults " + rates + ", seed " + settings.seed + ", over " + wrappedType + (inner == null || inner.isBlank() ? "" : ": " + inner);
    }

    @Override
    public Optional<TierWaterLevels> waterLevels()
    {
        return wrapped.waterLevels();
    }

    @Override
    public TierUsage usage()
    {
        return wrapped.usage();
    }

    @Override
    public void reportUsage(final TierUsage.Consumer consumer)
    {
        wrapped.reportUsage(consumer);
    }

    @Override
    public void exists(final TierBatch batch)
    {
        call(Op.EXISTS, batch);
    }

    @Override
    public void read(final TierBatch batch)
    {
        call(Op.READ, batch);
    }

    @Override
    public void write(final TierBatch batch)
    {
        call(Op.WRITE, batch);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        call(Op.REMOVE, batch);
    }

    /**
     * @param kind a fault kind
     * @return how many times this tier injected it
     */
    long injected(final FaultKind kind)
    {
        return injected.get(kind).get();
    }

    /** @return the rates in force */
    FaultRates rates()
    {
        return rates;
    }

    /**
     * @param controlText a control file's contents
     * @return the rates this tier runs at with it
     */
    FaultRates expectedRates(final String controlText)
    {
        return settings.rates.control(controlText);
    }

    private void call(final Op op, final TierBatch batch)
    {
        // Everything is copied out before any key completes: after the last completion the batch is the engine's.
        final int size = batch.size();
        final long[] high = new long[size];
        final long[] low = new long[size];
        final MemorySegment[] segments = new MemorySegment[size];
        for (int i = 0; i < size; i++)
        {
            high[i] = batch.keyHigh(i);
            low[i] = batch.keyLow(i);
            segments[i] = batch.segment(i);
        }
        gate.readLock().lock();
        try
        {
            if (closed)
            {
                completeAll(batch, size, TierStatus.CLOSED);
                return;
            }
            if (schedule.blockCall(rates) && size > 0 && record(FaultKind.BLOCK_CALL, high[0], low[0], op))
            {
                if (!awaitBlockRelease())
                {
                    completeAll(batch, size, TierStatus.CLOSED);
                    return;
                }
            }
            switch (op)
            {
                case READ -> read(batch, high, low, segments);
                case WRITE -> write(batch, high, low, segments);
                default ->
                {
                    final KeyView view = new KeyView(size);
                    for (int i = 0; i < size; i++)
                    {
                        view.add(high[i], low[i], segments[i], forward(batch, i));
                    }
                    submit(op, view);
                }
            }
        }
        finally
        {
            gate.readLock().unlock();
        }
    }

    private void read(final TierBatch batch, final long[] high, final long[] low, final MemorySegment[] segments)
    {
        final int size = high.length;
        final FaultKind[] kinds = new FaultKind[size];
        final long[] params = new long[size];
        schedule.draw(FaultKind.Applies.READ, rates, kinds, params);
        final KeyView now = new KeyView(size);
        final KeyView slow = new KeyView(size);
        final KeyView stalled = new KeyView(size);
        for (int i = 0; i < size; i++)
        {
            final FaultKind kind = kinds[i];
            final long h = high[i];
            final long l = low[i];
            final MemorySegment segment = segments[i];
            final long param = params[i];
            if (kind == null || kind == FaultKind.SHORT_READ || kind == FaultKind.LATE_WRITE)
            {
                // These two are logged when they happen: only a read the wrapped tier answered OK can be short or written late.
                if (kind == FaultKind.SHORT_READ)
                {
                    shortRead(now, batch, i, h, l, segment, param);
                }
                else if (kind == FaultKind.LATE_WRITE)
                {
                    now.add(h, l, segment, lateWrite(batch, i, h, l, segment, param));
                }
                else
                {
                    now.add(h, l, segment, forward(batch, i));
                }
            }
            else if (!record(kind, h, l, Op.READ))
            {
                now.add(h, l, segment, forward(batch, i));
            }
            else
            {
                switch (kind)
                {
                    case EIO_READ -> batch.complete(i, TierStatus.IO_ERROR);
                    case SLOW_READ -> slow.add(h, l, segment, forward(batch, i));
                    case STALL_READ -> stalled.add(h, l, segment, forward(batch, i));
                    default -> throw new IllegalStateException("not a read fault: " + kind);
                }
            }
        }
        later(Op.READ, slow, settings.slow);
        later(Op.READ, stalled, settings.stall);
        submit(Op.READ, now);
    }

    private void shortRead(final KeyView view, final TierBatch batch, final int index, final long high, final long low, final MemorySegment segment,
                           final long param)
    {
        final Arena arena = Arena.ofShared();
        final MemorySegment scratch = arena.allocate(segment.byteSize(), 4096);
        view.add(high, low, scratch, status ->
        {
            try
            {
                if (status == TierStatus.OK && record(FaultKind.SHORT_READ, high, low, Op.READ))
                {
                    // Fewer bytes than the frame reach the segment, whole blocks as a short read stops; the rest keeps whatever it held.
                    MemorySegment.copy(scratch, 0, segment, 0, blockPrefix(param, segment.byteSize()));
                }
                else if (status == TierStatus.OK)
                {
                    MemorySegment.copy(scratch, 0, segment, 0, segment.byteSize());
                }
            }
            finally
            {
                arena.close();
            }
            batch.complete(index, status);
        });
    }

    private KeyView.Done lateWrite(final TierBatch batch, final int index, final long high, final long low, final MemorySegment segment,
                                   final long param)
    {
        return status ->
        {
            batch.complete(index, status);
            if (status == TierStatus.OK)
            {
                // The segment is the engine's from here on: this is the fault.
                final long delayMicros = Math.floorMod(param >>> 32, 1000L);
                schedule(new Delayed(null, () ->
                {
                    if (!closed && record(FaultKind.LATE_WRITE, high, low, Op.READ))
                    {
                        scribble(segment, param);
                    }
                }), TimeUnit.MICROSECONDS.toNanos(delayMicros));
            }
        };
    }

    /**
     * @return a length of whole 4 KiB blocks short of the frame by one block at least, from 0: where a short read
     *         or a crash mid-write stops (frames are multiples of 4 KiB)
     */
    static long blockPrefix(final long param, final long frame)
    {
        return BLOCK * Math.floorMod(param, Math.max(1, frame / BLOCK));
    }

    private static void scribble(final MemorySegment segment, final long param)
    {
        final long size = segment.byteSize();
        final long from = Math.floorMod(param, size);
        final long to = Math.min(size, from + 4096);
        for (long at = from; at < to; at++)
        {
            segment.set(ValueLayout.JAVA_BYTE, at, (byte)~segment.get(ValueLayout.JAVA_BYTE, at));
        }
    }

    private void write(final TierBatch batch, final long[] high, final long[] low, final MemorySegment[] segments)
    {
        final int size = high.length;
        final FaultKind[] kinds = new FaultKind[size];
        final long[] params = new long[size];
        schedule.draw(FaultKind.Applies.WRITE, rates, kinds, params);
        final KeyView now = new KeyView(2 * size);
        final long[] other = new long[2];
        for (int i = 0; i < size; i++)
        {
            final FaultKind kind = kinds[i];
            final long h = high[i];
            final long l = low[i];
            final MemorySegment source = segments[i];
            final long param = params[i];
            final int index = i;
            if (kind == FaultKind.REPLACE && pickOther(param, h, l, other) && record(kind, other[0], other[1], Op.WRITE))
            {
                // The frame goes under a key written earlier too, replacing that key's object; its own write goes on.
                final Arena arena = Arena.ofShared();
                final MemorySegment copy = arena.allocate(source.byteSize(), 4096).copyFrom(source);
                now.add(other[0], other[1], copy, status -> arena.close());
                now.add(h, l, source, written(batch, i, h, l));
            }
            else if (kind == null || kind == FaultKind.REPLACE || !record(kind, h, l, Op.WRITE))
            {
                now.add(h, l, source, written(batch, i, h, l));
            }
            else
            {
                switch (kind)
                {
                    case EIO_WRITE -> batch.complete(i, TierStatus.IO_ERROR);
                    case ENOSPC_WRITE -> batch.complete(i, TierStatus.NO_SPACE);
                    case TORN_WRITE ->
                    {
                        // What a crash mid-write leaves: the frame's first bytes, zeros after them; the write failed.
                        final Arena arena = Arena.ofShared();
                        final MemorySegment torn = arena.allocate(source.byteSize(), 4096);
                        MemorySegment.copy(source, 0, torn, 0, blockPrefix(param, source.byteSize()));
                        now.add(h, l, torn, status ->
                        {
                            arena.close();
                            batch.complete(index, TierStatus.IO_ERROR);
                        });
                    }
                    case BIT_FLIP ->
                    {
                        final Arena arena = Arena.ofShared();
                        final MemorySegment flipped = arena.allocate(source.byteSize(), 4096).copyFrom(source);
                        final long bit = Math.floorMod(param, source.byteSize() * 8);
                        flipped.set(ValueLayout.JAVA_BYTE, bit >>> 3, (byte)(flipped.get(ValueLayout.JAVA_BYTE, bit >>> 3) ^ (1 << (bit & 7))));
                        now.add(h, l, flipped, status ->
                        {
                            arena.close();
                            batch.complete(index, status);
                        });
                    }
                    default -> throw new IllegalStateException("not a write fault: " + kind);
                }
            }
        }
        submit(Op.WRITE, now);
    }

    /** @return a completion that answers the engine's key as the wrapped tier did; the key is remembered for replace in call order */
    private KeyView.Done written(final TierBatch batch, final int index, final long high, final long low)
    {
        // In the order the keys were handed over, not completed: a replace's target is then the same on every run of a seed.
        remember(high, low);
        return forward(batch, index);
    }

    private static KeyView.Done forward(final TierBatch batch, final int index)
    {
        return status -> batch.complete(index, status);
    }

    private static void completeAll(final TierBatch batch, final int size, final TierStatus status)
    {
        for (int i = 0; i < size; i++)
        {
            batch.complete(i, status);
        }
    }

    private synchronized void remember(final long high, final long low)
    {
        recentHigh[recentNext] = high;
        recentLow[recentNext] = low;
        recentNext = (recentNext + 1) % RECENT_KEYS;
        recentCount = Math.min(RECENT_KEYS, recentCount + 1);
    }

    /** @return whether a key written earlier, other than the one given, was found; it is put in {@code out} */
    private synchronized boolean pickOther(final long param, final long high, final long low, final long[] out)
    {
        for (int tries = 0; tries < recentCount; tries++)
        {
            final int at = (int)Math.floorMod(param + tries, (long)recentCount);
            if (recentHigh[at] != high || recentLow[at] != low)
            {
                out[0] = recentHigh[at];
                out[1] = recentLow[at];
                return true;
            }
        }
        return false;
    }

    private boolean record(final FaultKind kind, final long high, final long low, final Op op)
    {
        if (!log.record(kind, high, low, op.logName))
        {
            logger.log(System.Logger.Level.WARNING, "faults tier " + name + ": could not append to the fault log " + settings.faultLog
                + "; not injecting " + kind + " on " + new io.kvtier.spi.PageKey(high, low));
            return false;
        }
        injected.get(kind).incrementAndGet();
        return true;
    }

    /** Hands a view to the wrapped tier; what it throws answers the view's keys IO_ERROR, as the engine answers a plugin failure. */
    private void submit(final Op op, final KeyView view)
    {
        if (view.isEmpty())
        {
            return;
        }
        try
        {
            switch (op)
            {
                case EXISTS -> wrapped.exists(view);
                case READ -> wrapped.read(view);
                case WRITE -> wrapped.write(view);
                case REMOVE -> wrapped.remove(view);
                default -> throw new IllegalStateException("unknown op " + op);
            }
        }
        catch (final RuntimeException ex)
        {
            logger.log(System.Logger.Level.WARNING, "faults tier " + name + ": the wrapped " + wrappedType + " tier threw from " + op.logName, ex);
            view.completeRemaining(TierStatus.IO_ERROR);
        }
    }

    private void later(final Op op, final KeyView view, final Duration delay)
    {
        if (!view.isEmpty())
        {
            schedule(new Delayed(view, () -> submit(op, view)), delay.toNanos());
        }
    }

    private void schedule(final Delayed task, final long delayNanos)
    {
        pending.add(task);
        try
        {
            timer.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }
        catch (final RejectedExecutionException ex)
        {
            // Closing: close answers the keys of what it finds pending; this one it may have missed.
            if (pending.remove(task))
            {
                task.abandon();
            }
        }
    }

    /** @return true once released by a heal (block-call's rate back to 0); false when released by close */
    private boolean awaitBlockRelease()
    {
        final CountDownLatch latch;
        synchronized (this)
        {
            latch = blockRelease;
        }
        boolean interrupted = false;
        while (!closed && rates.rate(FaultKind.BLOCK_CALL) > 0)
        {
            try
            {
                latch.await();
                break;
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
        return !closed;
    }

    private synchronized void releaseBlocked()
    {
        blockRelease.countDown();
        blockRelease = new CountDownLatch(1);
    }

    /** Reads the control file and applies it over the configured rates when it changed; a file that is missing applies nothing. */
    private void readControl()
    {
        String text;
        try
        {
            text = Files.readString(settings.faultControl, StandardCharsets.UTF_8);
        }
        catch (final NoSuchFileException ex)
        {
            text = "";
        }
        catch (final IOException | RuntimeException ex)
        {
            logger.log(System.Logger.Level.WARNING, "faults tier " + name + ": cannot read " + settings.qualified(FaultSettings.FAULT_CONTROL)
                + " = " + settings.faultControl + ": " + ex);
            return;
        }
        if (text.equals(controlText) || text.equals(controlRefused))
        {
            return;
        }
        try
        {
            final FaultRates next = settings.rates.control(text);
            if (next.rate(FaultKind.LATE_WRITE) > 0 && trusted && !settings.unsafeLateWrite)
            {
                throw new IllegalArgumentException(lateWriteOnTrusted());
            }
            rates = next;
            controlText = text;
            controlRefused = null;
            logger.log(System.Logger.Level.INFO, "faults tier " + name + ": rates now " + next + " (" + settings.faultControl + ")");
            if (next.rate(FaultKind.BLOCK_CALL) == 0)
            {
                releaseBlocked();
            }
        }
        catch (final IllegalArgumentException ex)
        {
            controlRefused = text;
            logger.log(System.Logger.Level.WARNING, "faults tier " + name + ": ignoring " + settings.faultControl + ", rates stay " + rates + ": "
                + ex.getMessage());
        }
    }

    /** @return why late-write is refused on a tier the engine trusts */
    String lateWriteOnTrusted()
    {
        return "late-write writes into the memory of reads the tier completed, which for a tier the engine trusts are the pool's own pages"
            + " that clients are served from; set tier." + name + ".trusted = false, so its reads land in the engine's staging frames";
    }

    @Override
    public void close()
    {
        synchronized (closeLock)
        {
            if (closeDone)
            {
                return;
            }
            closed = true;
            releaseBlocked();
            // Calls in progress, a blocked one included, end before anything below.
            gate.writeLock().lock();
            gate.writeLock().unlock();
            for (final Delayed task : List.copyOf(pending))
            {
                if (pending.remove(task))
                {
                    task.abandon();
                }
            }
            timer.shutdown();
            boolean interrupted = false;
            try
            {
                while (true)
                {
                    try
                    {
                        if (!timer.awaitTermination(TIMER_STOP_SECONDS, TimeUnit.SECONDS))
                        {
                            logger.log(System.Logger.Level.WARNING, "faults tier " + name + ": its timer thread did not stop within "
                                + TIMER_STOP_SECONDS + " s (a delayed key still being handed to the wrapped tier)");
                        }
                        break;
                    }
                    catch (final InterruptedException ex)
                    {
                        interrupted = true;
                    }
                }
                wrapped.close();
            }
            finally
            {
                log.close();
                closeDone = true;
                if (interrupted)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** Work the timer runs later: keys handed to the wrapped tier after a delay, or a late write. */
    private final class Delayed implements Runnable
    {
        private final KeyView view;
        private final Runnable action;

        Delayed(final KeyView view, final Runnable action)
        {
            this.view = view;
            this.action = action;
        }

        @Override
        public void run()
        {
            // Whoever removes it from pending owns it: the timer runs it, or close answers its keys.
            if (pending.remove(this))
            {
                action.run();
            }
        }

        /** Answers its keys CLOSED: the tier closed before their delay ended. */
        void abandon()
        {
            if (view != null)
            {
                view.completeRemaining(TierStatus.CLOSED);
            }
        }
    }
}

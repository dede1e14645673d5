package io.kvtier.tck;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A test-only tier keeping objects in heap arrays: the reference the kit must pass, and, with
 * {@link Fault}s switched on, the broken tiers the kit must catch.
 *
 * <p>Objects live in a {@link Volume} named by the {@code volume} setting and kept in a static map,
 * standing in for a storage service that outlives its clients: instances on the same volume share
 * objects (SHARED) and a new instance sees what a closed one wrote (PERSISTENT). Reads, writes and
 * removes run on two worker threads; exists completes in the caller's thread, so the kit meets both
 * kinds of completion.
 */
final class InMemoryTier implements StorageTier
{
    /** Ways to break the contract on purpose. */
    enum Fault
    {
        /** A read batch with one missing key completes every key NOT_FOUND. */
        FAIL_WHOLE_BATCH_ON_MISSING,
        /** Reads copy 16 bytes past the end of the slice. */
        WRITE_PAST_SLICE,
        /** exists completes each key twice and swallows the exception. */
        DOUBLE_COMPLETE,
        /** close() does nothing; the tier keeps serving. */
        SERVE_AFTER_CLOSE,
        /** Unknown settings are accepted silently. */
        ACCEPT_UNKNOWN_SETTINGS,
        /** Bad values fail with a plain IllegalArgumentException that names no key. */
        VAGUE_CONFIG_ERRORS,
        /** A read into a segment of the wrong size copies what fits and reports OK. */
        PARTIAL_READ,
        /** Declares PERSISTENT but each instance starts empty. */
        FORGET_ON_RESTART,
        /** Evicts to stay within capacity without calling objectRemoved. */
        EVICT_SILENTLY,
        /** Removes do not lower usage. */
        STALE_USAGE,
        /** The last key of a batch of more than 256 keys is never completed. */
        DROP_LAST_KEY_OF_LARGE_BATCH,
        /** Overwrites copy into the stored array in place, in two halves, with a read in between. */
        TORN_OVERWRITE,
        /** remove reads the batch again after completing every key. */
        TOUCH_AFTER_COMPLETION,
        /** A read completes each key, then writes one more byte into that key's segment. */
        WRITE_AFTER_COMPLETE,
        /** exists reads key 0 even of an empty batch, and throws. */
        THROW_ON_EMPTY_BATCH,
        /** The provider declares no SPI version. */
        DECLARE_NO_SPI_VERSION
    }

    private static final Map<String, Volume> VOLUMES = new ConcurrentHashMap<>();

    private final String name;
    private final TierContext context;
    private final Volume volume;
    private final long capacity;
    private final Set<Fault> faults;
    private final ExecutorService workers;
    private volatile boolean closed;

    private InMemoryTier(final String name, final TierContext context, final Volume volume, final long capacity, final Set<Fault> faults)
    {
        this.name = name;
        this.context = context;
        this.volume = volume;
        this.capacity = capacity;
        this.faults = faults;
        final AtomicInteger threads = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(2, task ->
        {
            final Thread thread = new Thread(task, "in-memory-tier-" + name + "-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Forgets every volume, so tests do not keep each other's objects alive. */
    static void dropVolumes()
    {
        VOLUMES.clear();
    }

    /** The provider, optionally with faults. */
    static final class Provider implements StorageTierProvider
    {
        private final Set<Fault> faults;

        Provider(final Fault... faults)
        {
            this.faults = faults.length == 0 ? EnumSet.noneOf(Fault.class) : EnumSet.of(faults[0], faults);
        }

        @Override
        public String type()
        {
            return "in-memory";
        }

        @Override
        public SpiVersion spiVersion()
        {
            if (faults.contains(Fault.DECLARE_NO_SPI_VERSION))
            {
                return StorageTierProvider.super.spiVersion();
            }
            return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
        }

        @Override
        public StorageTier create(final TierConfig config, final TierContext context)
        {
            if (!faults.contains(Fault.ACCEPT_UNKNOWN_SETTINGS))
            {
                config.rejectUnknown(Set.of("volume", "capacity"));
            }
            final String volumeName;
            final long capacity;
            if (faults.contains(Fault.VAGUE_CONFIG_ERRORS))
            {
                volumeName = config.values().get("volume");
                if (volumeName == null || volumeName.isBlank())
                {
                    throw new IllegalArgumentException("bad config");
                }
                capacity = config.has("capacity") ? Long.parseLong(config.values().get("capacity")) : TierUsage.UNBOUNDED;
            }
            else
            {
                volumeName = config.string("volume");
                capacity = config.size("capacity", TierUsage.UNBOUNDED, context.objectSize(), Long.MAX_VALUE);
            }
            final Volume volume = faults.contains(Fault.FORGET_ON_RESTART) ? new Volume() : VOLUMES.computeIfAbsent(volumeName, v -> new Volume());
            return new InMemoryTier(config.tierName(), context, volume, capacity, faults);
        }
    }

    /** The objects of one volume; the monitor guards the map and the counters. */
    private static final class Volume
    {
        private final LinkedHashMap<PageKey, byte[]> objects = new LinkedHashMap<>(16, 0.75f, true);
        private long usedBytes;
        private final AtomicInteger reads = new AtomicInteger();
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Set<TierCapability> capabilities()
    {
        return capacity == TierUsage.UNBOUNDED
            ? EnumSet.of(TierCapability.PERSISTENT, TierCapability.SHARED)
            : EnumSet.of(TierCapability.PERSISTENT, TierCapability.SHARED, TierCapability.SELF_EVICTING);
    }

    private boolean isClosed()
    {
        return closed && !faults.contains(Fault.SERVE_AFTER_CLOSE);
    }

    @Override
    public void exists(final TierBatch batch)
    {
        if (faults.contains(Fault.THROW_ON_EMPTY_BATCH))
        {
            batch.keyHigh(0);
        }
        for (int i = 0; i < batch.size(); i++)
        {
            final TierStatus status;
            if (isClosed())
            {
                status = TierStatus.CLOSED;
            }
            else
            {
                synchronized (volume)
                {
                    status = volume.objects.containsKey(batch.key(i)) ? TierStatus.OK : TierStatus.NOT_FOUND;
                }
            }
            batch.complete(i, status);
            if (faults.contains(Fault.DOUBLE_COMPLETE))
            {
                try
                {
                    batch.complete(i, status);
                }
                catch (final IllegalStateException ignored)
                {
                    // The fault: a tier that "handles" the contract violation by hiding it.
                }
            }
        }
    }

    @Override
    public void read(final TierBatch batch)
    {
        submit(batch, this::readAll);
    }

    @Override
    public void write(final TierBatch batch)
    {
        submit(batch, this::writeAll);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        submit(batch, this::removeAll);
    }

    private void submit(final TierBatch batch, final java.util.function.Consumer<TierBatch> operation)
    {
        if (isClosed())
        {
            completeAll(batch, TierStatus.CLOSED);
            return;
        }
        try
        {
            workers.execute(() -> operation.accept(batch));
        }
        catch (final RejectedExecutionException ex)
        {
            completeAll(batch, TierStatus.CLOSED);
        }
    }

    private static void completeAll(final TierBatch batch, final TierStatus status)
    {
        for (int i = 0; i < batch.size(); i++)
        {
            batch.complete(i, status);
        }
    }

    private boolean dropped(final TierBatch batch, final int index)
    {
        return faults.contains(Fault.DROP_LAST_KEY_OF_LARGE_BATCH) && batch.size() > 256 && index == batch.size() - 1;
    }

    private void readAll(final TierBatch batch)
    {
        if (faults.contains(Fault.FAIL_WHOLE_BATCH_ON_MISSING))
        {
            synchronized (volume)
            {
                for (int i = 0; i < batch.size(); i++)
                {
                    if (!volume.objects.containsKey(batch.key(i)))
                    {
                        completeAll(batch, TierStatus.NOT_FOUND);
                        return;
                    }
                }
            }
        }
        for (int i = 0; i < batch.size(); i++)
        {
            if (!dropped(batch, i))
            {
                final MemorySegment destination = batch.segment(i);
                batch.complete(i, isClosed() ? TierStatus.CLOSED : readOne(batch.key(i), destination));
                if (faults.contains(Fault.WRITE_AFTER_COMPLETE) && destination.byteSize() > 0)
                {
                    // The segment is the engine's now: it may already have verified it and handed it to a reader.
                    destination.set(JAVA_BYTE, 0, (byte)(destination.get(JAVA_BYTE, 0) ^ 0x01));
                }
            }
        }
    }

    private TierStatus readOne(final PageKey key, final MemorySegment destination)
    {
        try
        {
            return copyOut(key, destination);
        }
        finally
        {
            // Counted after the copy, so TORN_OVERWRITE resumes only once a read has seen the half-written array.
            volume.reads.incrementAndGet();
        }
    }

    @SuppressWarnings("restricted")
    private TierStatus copyOut(final PageKey key, final MemorySegment destination)
    {
        final byte[] object;
        synchronized (volume)
        {
            object = volume.objects.get(key);
        }
        if (object == null)
        {
            return TierStatus.NOT_FOUND;
        }
        if (object.length != destination.byteSize() && !faults.contains(Fault.PARTIAL_READ))
        {
            return TierStatus.CORRUPT;
        }
        final int length = (int)Math.min(object.length, destination.byteSize());
        MemorySegment.copy(object, 0, destination, JAVA_BYTE, 0, length);
        if (faults.contains(Fault.WRITE_PAST_SLICE))
        {
            // reinterpret keeps the arena's scope, so this scribbles on the guard bytes, not on freed memory.
            destination.reinterpret(destination.byteSize() + 16).asSlice(destination.byteSize(), 16).fill((byte)0x7E);
        }
        return TierStatus.OK;
    }

    private void writeAll(final TierBatch batch)
    {
        for (int i = 0; i < batch.size(); i++)
        {
            if (!dropped(batch, i))
            {
                batch.complete(i, isClosed() ? TierStatus.CLOSED : writeOne(batch.key(i), batch.segment(i)));
            }
        }
    }

    private TierStatus writeOne(final PageKey key, final MemorySegment source)
    {
        final byte[] object = source.toArray(JAVA_BYTE);
        if (faults.contains(Fault.TORN_OVERWRITE))
        {
            final byte[] existing;
            synchronized (volume)
            {
                existing = volume.objects.get(key);
            }
            if (existing != null && existing.length == object.length)
            {
                final int half = object.length / 2;
                System.arraycopy(object, 0, existing, 0, half);
                awaitRead();
                System.arraycopy(object, half, existing, half, object.length - half);
                return TierStatus.OK;
            }
        }
        synchronized (volume)
        {
            final byte[] previous = volume.objects.put(key, object);
            volume.usedBytes += object.length - (previous == null ? 0 : previous.length);
            while (volume.usedBytes > capacity)
            {
                final Iterator<Map.Entry<PageKey, byte[]>> eldest = volume.objects.entrySet().iterator();
                final Map.Entry<PageKey, byte[]> victim = eldest.next();
                eldest.remove();
                volume.usedBytes -= victim.getValue().length;
                if (!faults.contains(Fault.EVICT_SILENTLY))
                {
                    context.objectRemoved(victim.getKey().high(), victim.getKey().low());
                }
            }
        }
        return TierStatus.OK;
    }

    private void awaitRead()
    {
        final int before = volume.reads.get();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
        while (volume.reads.get() == before && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
    }

    private void removeAll(final TierBatch batch)
    {
        for (int i = 0; i < batch.size(); i++)
        {
            if (dropped(batch, i))
            {
                continue;
            }
            if (isClosed())
            {
                batch.complete(i, TierStatus.CLOSED);
                continue;
            }
            final byte[] previous;
            synchronized (volume)
            {
                previous = volume.objects.remove(batch.key(i));
                if (previous != null && !faults.contains(Fault.STALE_USAGE))
                {
                    volume.usedBytes -= previous.length;
                }
            }
            batch.complete(i, previous == null ? TierStatus.NOT_FOUND : TierStatus.OK);
        }
        if (faults.contains(Fault.TOUCH_AFTER_COMPLETION) && batch.size() > 0)
        {
            context.logger().log(System.Logger.Level.TRACE, "removed {0}", batch.keyHigh(0));
        }
    }

    @Override
    public TierUsage usage()
    {
        synchronized (volume)
        {
            return new TierUsage(volume.usedBytes, capacity, volume.objects.size());
        }
    }

    @Override
    public void close()
    {
        if (faults.contains(Fault.SERVE_AFTER_CLOSE))
        {
            return;
        }
        closed = true;
        workers.shutdown();
        try
        {
            if (!workers.awaitTermination(30, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("in-memory tier workers did not stop");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}

package io.kvtier.engine;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tier that breaks the SPI's promises in the ways a plugin in production can, each switched on by
 * the test: a call that does not return ({@link #blockCalls}), a close that does not return
 * ({@link #blockClose}), writes it never completes ({@link #dropWrites}), and a read that writes into
 * its segment after completing it ({@link #scribbleAfterRead}), as a late DMA or a retry thread would.
 * Otherwise it keeps frames in memory and completes every key on a thread of its own. Registered under
 * type {@code misbehaving}; tests reach an instance by its tier name. Every gate ignores interrupts, as
 * a plugin stuck in native code would: only the test's {@link #release} lets it go.
 */
public final class MisbehavingTier implements StorageTier
{
    static final Map<String, MisbehavingTier> BY_NAME = new ConcurrentHashMap<>();

    /** What {@link #scribbleAfterRead} writes over a segment it no longer owns. */
    static final byte SCRIBBLE = 0x6B;

    final String name;
    final Map<PageKey, byte[]> objects = new ConcurrentHashMap<>();
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger callsEntered = new AtomicInteger();
    /** Batches whose write it kept without completing them. */
    final List<TierBatch> droppedWrites = new CopyOnWriteArrayList<>();
    /** Released once per segment scribbled on after its key completed. */
    final Semaphore scribbled = new Semaphore(0);
    /** Counted down when close() is entered. */
    final CountDownLatch closeEntered = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final ExecutorService executor;
    volatile boolean blockCalls;
    volatile boolean blockClose;
    volatile boolean dropWrites;
    volatile boolean scribbleAfterRead;
    private volatile boolean closed;

    MisbehavingTier(final String name)
    {
        this.name = name;
        this.executor = Executors.newSingleThreadExecutor(r ->
        {
            final Thread t = new Thread(r, "misbehaving-tier-" + name);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * @param name a tier name
     * @return the running tier of that name (for tests in other packages)
     */
    public static MisbehavingTier get(final String name)
    {
        return BY_NAME.get(name);
    }

    /** From now on, keeps every write batch without completing any of its keys (for tests in other packages). */
    public void dropWrites()
    {
        dropWrites = true;
    }

    /** @return write batches kept without completing them */
    public int droppedWriteBatches()
    {
        return droppedWrites.size();
    }

    /** Opens every gate for good: blocked calls and closes return, and later ones do not block. */
    public void release()
    {
        blockCalls = false;
        blockClose = false;
        release.countDown();
    }

    private void gate(final boolean blocked)
    {
        if (!blocked)
        {
            return;
        }
        boolean interrupted = false;
        while (release.getCount() > 0)
        {
            try
            {
                release.await();
            }
            catch (final InterruptedException ex)
            {
                interrupted = true; // a plugin stuck in native code does not hear interrupts either
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String name()
    {
        return name;
    }

    /** Runs a batch's work on the tier's thread; after close, which a call stuck until then can outlive, completes it CLOSED. */
    private void run(final TierBatch batch, final Runnable work)
    {
        try
        {
            executor.execute(work);
        }
        catch (final java.util.concurrent.RejectedExecutionException ex)
        {
            for (int i = 0; i < batch.size(); i++)
            {
                batch.complete(i, TierStatus.CLOSED);
            }
        }
    }

    @Override
    public void exists(final TierBatch batch)
    {
        callsEntered.incrementAndGet();
        gate(blockCalls);
        run(batch, () ->
        {
            for (int i = 0; i < batch.size(); i++)
            {
                batch.complete(i, closed ? TierStatus.CLOSED : objects.containsKey(batch.key(i)) ? TierStatus.OK : TierStatus.NOT_FOUND);
            }
        });
    }

    @Override
    public void read(final TierBatch batch)
    {
        reads.incrementAndGet();
        callsEntered.incrementAndGet();
        gate(blockCalls);
        run(batch, () ->
        {
            for (int i = 0; i < batch.size(); i++)
            {
                final byte[] bytes = objects.get(batch.key(i));
                if (closed || bytes == null)
                {
                    batch.complete(i, closed ? TierStatus.CLOSED : TierStatus.NOT_FOUND);
                    continue;
                }
                final MemorySegment segment = batch.segment(i);
                MemorySegment.copy(bytes, 0, segment, ValueLayout.JAVA_BYTE, 0, bytes.length);
                batch.complete(i, TierStatus.OK);
                if (scribbleAfterRead)
                {
                    // The key is the engine's again: this is the write the SPI forbids.
                    segment.asSlice(0, Math.min(segment.byteSize(), 64)).fill(SCRIBBLE);
                    scribbled.release();
                }
            }
        });
    }

    @Override
    public void write(final TierBatch batch)
    {
        writes.incrementAndGet();
        callsEntered.incrementAndGet();
        gate(blockCalls);
        if (dropWrites)
        {
            droppedWrites.add(batch);
            return;
        }
        run(batch, () ->
        {
            for (int i = 0; i < batch.size(); i++)
            {
                if (closed)
                {
                    batch.complete(i, TierStatus.CLOSED);
                    continue;
                }
                objects.put(batch.key(i), batch.segment(i).toArray(ValueLayout.JAVA_BYTE));
                batch.complete(i, TierStatus.OK);
            }
        });
    }

    @Override
    public void remove(final TierBatch batch)
    {
        callsEntered.incrementAndGet();
        gate(blockCalls);
        run(batch, () ->
        {
            for (int i = 0; i < batch.size(); i++)
            {
                batch.complete(i, objects.remove(batch.key(i)) != null ? TierStatus.OK : TierStatus.NOT_FOUND);
            }
        });
    }

    @Override
    public TierUsage usage()
    {
        return new TierUsage(0, TierUsage.UNBOUNDED, objects.size());
    }

    @Override
    public void close()
    {
        closeEntered.countDown();
        gate(blockClose);
        closed = true;
        executor.shutdown();
        BY_NAME.remove(name, this);
    }

    /** The provider, type {@code misbehaving}; it takes no settings of its own. */
    public static final class Provider implements StorageTierProvider
    {
        @Override
        public String type()
        {
            return "misbehaving";
        }

        @Override
        public SpiVersion spiVersion()
        {
            return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
        }

        @Override
        public StorageTier create(final TierConfig config, final TierContext context)
        {
            config.rejectUnknown(Set.of());
            final MisbehavingTier tier = new MisbehavingTier(config.tierName());
            BY_NAME.put(config.tierName(), tier);
            return tier;
        }
    }
}

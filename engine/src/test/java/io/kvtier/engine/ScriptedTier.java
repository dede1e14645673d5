package io.kvtier.engine;

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
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An in-memory tier for engine tests, scriptable from the test: hold writes or reads at a gate, fail
 * chosen keys, corrupt stored bytes, throw from an operation. Completes keys on its own thread, as
 * real tiers do. Registered under type {@code scripted}; tests reach an instance by its tier name.
 */
public final class ScriptedTier implements StorageTier
{
    static final Map<String, ScriptedTier> BY_NAME = new ConcurrentHashMap<>();

    final String name;
    long capacity = TierUsage.UNBOUNDED;
    final TierContext context;
    final Map<PageKey, byte[]> objects = new ConcurrentHashMap<>();
    final Map<PageKey, TierStatus> readFailures = new ConcurrentHashMap<>();
    final AtomicInteger reads = new AtomicInteger();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger exists = new AtomicInteger();
    final AtomicInteger removes = new AtomicInteger();
    final AtomicReference<CountDownLatch> writeGate = new AtomicReference<>();
    final AtomicReference<CountDownLatch> readGate = new AtomicReference<>();
    volatile boolean throwOnRead;
    /** When set, writes complete with this status instead of storing the object... */
    volatile TierStatus writeFailure;
    /** ...for this many more keys. */
    final AtomicInteger writeFailuresLeft = new AtomicInteger(Integer.MAX_VALUE);
    volatile boolean shared;
    private final ExecutorService executor;
    private volatile boolean closed;

    ScriptedTier(final String name, final TierContext context)
    {
        this.name = name;
        this.context = context;
        this.executor = Executors.newFixedThreadPool(2, r ->
        {
            final Thread t = new Thread(r, "scripted-tier-" + name);
            t.setDaemon(true);
            return t;
        });
    }

    static ScriptedTier get(final String name)
    {
        return BY_NAME.get(name);
    }

    /**
     * For tests of other packages: holds every write of the tier of that name.
     *
     * @param name a scripted tier's name
     * @return the latch that lets the writes go
     */
    public static CountDownLatch holdWritesOf(final String name)
    {
        return get(name).holdWrites();
    }

    /** Holds every write until the returned latch is counted down. */
    CountDownLatch holdWrites()
    {
        final CountDownLatch gate = new CountDownLatch(1);
        writeGate.set(gate);
        return gate;
    }

    /** Holds every read until the returned latch is counted down. */
    CountDownLatch holdReads()
    {
        final CountDownLatch gate = new CountDownLatch(1);
        readGate.set(gate);
        return gate;
    }

    /** Flips one payload byte of a stored object, as bit rot or a bad disk would. */
    void corrupt(final PageKey key, final int offset)
    {
        final byte[] bytes = objects.get(key);
        bytes[offset] ^= 0x5A;
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Set<TierCapability> capabilities()
    {
        return shared ? EnumSet.of(TierCapability.SHARED) : Set.of();
    }

    private static void await(final AtomicReference<CountDownLatch> gate)
    {
        final CountDownLatch latch = gate.get();
        if (latch != null)
        {
            try
            {
                latch.await();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void exists(final TierBatch batch)
    {
        exists.incrementAndGet();
        executor.execute(() ->
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
        if (throwOnRead)
        {
            throw new IllegalStateException("scripted failure in read");
        }
        executor.execute(() ->
        {
            await(readGate);
            for (int i = 0; i < batch.size(); i++)
            {
                final PageKey key = batch.key(i);
                final TierStatus failure = readFailures.get(key);
                if (closed)
                {
                    batch.complete(i, TierStatus.CLOSED);
                    continue;
                }
                if (failure != null)
                {
                    batch.complete(i, failure);
                    continue;
                }
                final byte[] bytes = objects.get(key);
                if (bytes == null)
                {
                    batch.complete(i, TierStatus.NOT_FOUND);
                    continue;
                }
                final MemorySegment segment = batch.segment(i);
                if (segment.byteSize() != bytes.length)
                {
                    batch.complete(i, TierStatus.CORRUPT);
                    continue;
                }
                MemorySegment.copy(bytes, 0, segment, ValueLayout.JAVA_BYTE, 0, bytes.length);
                batch.complete(i, TierStatus.OK);
            }
        });
    }

    @Override
    public void write(final TierBatch batch)
    {
        writes.incrementAndGet();
        executor.execute(() ->
        {
            await(writeGate);
            for (int i = 0; i < batch.size(); i++)
            {
                if (closed)
                {
                    batch.complete(i, TierStatus.CLOSED);
                    continue;
                }
                final TierStatus failure = writeFailure;
                if (failure != null && writeFailuresLeft.getAndUpdate(left -> left > 0 ? left - 1 : 0) > 0)
                {
                    batch.complete(i, failure);
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
        removes.incrementAndGet();
        executor.execute(() ->
        {
            for (int i = 0; i < batch.size(); i++)
            {
                batch.complete(i, objects.remove(batch.key(i)) != null ? TierStatus.OK : TierStatus.NOT_FOUND);
            }
        });
    }

    /** Drops an object as a self-evicting tier would, and tells the engine. */
    void dropOnItsOwn(final PageKey key)
    {
        objects.remove(key);
        context.objectRemoved(key.high(), key.low());
    }

    @Override
    public TierUsage usage()
    {
        long bytes = 0;
        for (final byte[] object : objects.values())
        {
            bytes += object.length;
        }
        return new TierUsage(bytes, capacity, objects.size());
    }

    @Override
    public void close()
    {
        closed = true;
        final CountDownLatch w = writeGate.get();
        if (w != null)
        {
            w.countDown();
        }
        final CountDownLatch r = readGate.get();
        if (r != null)
        {
            r.countDown();
        }
        executor.shutdown();
        BY_NAME.remove(name, this);
    }

    /** The provider, type {@code scripted}; setting {@code shared = true} declares SHARED. */
    public static final class Provider implements StorageTierProvider
    {
        @Override
        public String type()
        {
            return "scripted";
        }

        @Override
        public SpiVersion spiVersion()
        {
            return new SpiVersion(SpiVersion.MAJOR, SpiVersion.MINOR);
        }

        @Override
        public StorageTier create(final TierConfig config, final TierContext context)
        {
            config.rejectUnknown(Set.of("shared", "capacity"));
            final ScriptedTier tier = new ScriptedTier(config.tierName(), context);
            tier.shared = config.bool("shared", false);
            // A capacity it reports without evicting by itself: the engine's view of a tier that fills up and stays full.
            tier.capacity = config.size("capacity", TierUsage.UNBOUNDED, 1, TierUsage.UNBOUNDED);
            BY_NAME.put(config.tierName(), tier);
            return tier;
        }
    }
}

package io.kvtier.tck;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.SpiVersion;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.StorageTierProvider;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierCapability;
import io.kvtier.spi.TierConfig;
import io.kvtier.spi.TierConfigException;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A test-only tier keeping each object in a file of a directory: the reference the kit must pass,
 * and, with {@link Fault}s switched on, the broken tiers the kit must catch.
 *
 * <p>The {@code volume} setting names the directory. An object is a file named by its key's 32 hex
 * digits, written to a temporary file and renamed over that name, so a reader sees the whole old or
 * the whole new object. Every instance on the volume, in this process or another, sees the same
 * files, so the tier is PERSISTENT and SHARED for real: the kit checks both from a second JVM, which
 * objects kept in this JVM's memory could not pass. Reads, writes and removes run on eight worker
 * threads, so several writes are in flight at once, as in a real tier (and a writer the kit kills dies
 * with some in flight, which it needs to catch a tier that writes in place); exists completes in the
 * caller's thread, so the kit meets both kinds of completion. With a {@code capacity} the tier evicts
 * the objects it used least recently and reports each.
 */
final class ReferenceTier implements StorageTier
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
        /** Declares PERSISTENT but each instance starts on an empty directory of its own. */
        FORGET_ON_RESTART,
        /** Evicts to stay within capacity without calling objectRemoved. */
        EVICT_SILENTLY,
        /** Removes do not lower usage. */
        STALE_USAGE,
        /** The last key of a batch of more than 256 keys is never completed. */
        DROP_LAST_KEY_OF_LARGE_BATCH,
        /** Overwrites write into the stored file in place, in two halves, with a read in between. */
        TORN_OVERWRITE,
        /** remove reads the batch again after completing every key. */
        TOUCH_AFTER_COMPLETION,
        /** A read completes each key, then writes one more byte into that key's segment. */
        WRITE_AFTER_COMPLETE,
        /** exists reads key 0 even of an empty batch, and throws. */
        THROW_ON_EMPTY_BATCH,
        /** The provider declares no SPI version. */
        DECLARE_NO_SPI_VERSION,
        /** close() does its work, then never returns (it waits for a thread that never ends). */
        HANG_ON_CLOSE,
        /** remove() blocks its caller until the tier is closed, instead of returning at once. */
        BLOCK_IN_REMOVE,
        /** Reads copy at most the first 128 KiB of an object, through a fixed-size buffer, and report OK. */
        COPY_AT_MOST_128_KIB,
        /** Objects live in a plain HashMap of this JVM that every operation, run in the caller's thread, changes without a lock. */
        UNSYNCHRONISED_MAP,
        /** Objects are named by PageKey.hashCode(), so keys whose hash codes collide overwrite each other. */
        INDEX_BY_HASH_CODE,
        /** Objects live in a map held in a static field: they survive a reopen in this JVM but no other process sees them. */
        JVM_STATIC_MAP,
        /** Every loop over a batch reads batch.size() in its condition, so once more after completing the last key. */
        SIZE_AFTER_LAST_COMPLETION,
        /** A write completes at once and copies its source later, at the tier's next operation. */
        DEFER_WRITE_COPY,
        /** Objects are named by both halves in hex without leading zeros, so different keys can share a name. */
        NAME_BY_UNPADDED_HEX,
        /** Each write opens the object's file once more and keeps the descriptor until close. */
        LEAK_DESCRIPTOR_PER_WRITE,
        /**
         * Writes truncate and rewrite the object's file in place, under a lock of the key's that its reads take
         * too: no reader in this process sees a partial object, but a writer killed mid-write leaves one behind.
         */
        WRITE_IN_PLACE_UNDER_LOCK,
        /**
         * An object whose last block is a trailer and zeros is read as a tier that stores such objects compactly would
         * read it if it forgot to give the zeros back: the payload and the trailer, the rest of the slice left as it was.
         */
        FORGET_TRAILER_BLOCK_ZEROS,
        /**
         * Writes whose batch declares the trailer block padding past the trailer (SPI 1.3) store the whole block as
         * zeros, as a tier that took the padding to start at the block rather than after the trailer would.
         */
        PADDING_TAKES_THE_TRAILER
    }

    private static final int COPY_BUFFER = 128 * 1024;
    /** The maps of {@link Fault#JVM_STATIC_MAP} and {@link Fault#UNSYNCHRONISED_MAP}, by volume. */
    private static final Map<String, Map<PageKey, byte[]>> STATIC_VOLUMES = new ConcurrentHashMap<>();

    private final String name;
    private final TierContext context;
    private final Store store;
    private final long capacity;
    private final Set<Fault> faults;
    private final ExecutorService workers;
    private final LinkedHashMap<PageKey, Long> recency = new LinkedHashMap<>(16, 0.75f, true);
    private final AtomicInteger reads = new AtomicInteger();
    private final AtomicLong staleBytes = new AtomicLong();
    private final AtomicLong staleObjects = new AtomicLong();
    private final ConcurrentLinkedQueue<Runnable> deferredWrites = new ConcurrentLinkedQueue<>();
    private final List<FileChannel> leaked = new ArrayList<>();
    private final CountDownLatch closing = new CountDownLatch(1);
    private final Map<PageKey, ReentrantReadWriteLock> inPlace = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private ReferenceTier(final String name, final TierContext context, final Store store, final long capacity, final Set<Fault> faults)
    {
        this.name = name;
        this.context = context;
        this.store = store;
        this.capacity = capacity;
        this.faults = faults;
        final AtomicInteger threads = new AtomicInteger();
        this.workers = Executors.newFixedThreadPool(8, task ->
        {
            final Thread thread = new Thread(task, "reference-tier-" + name + "-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Forgets the in-memory volumes of the faults that keep objects in this JVM, so tests do not see each other's. */
    static void dropStaticVolumes()
    {
        STATIC_VOLUMES.clear();
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
            return "reference";
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
                if (!Files.isDirectory(Path.of(volumeName)))
                {
                    throw new TierConfigException(config.qualified("volume"), config.qualified("volume") + " = \"" + volumeName
                        + "\" is not a directory");
                }
            }
            return new ReferenceTier(config.tierName(), context, store(volumeName), capacity, faults);
        }

        private Store store(final String volume)
        {
            if (faults.contains(Fault.JVM_STATIC_MAP))
            {
                return new MapStore(STATIC_VOLUMES.computeIfAbsent(volume, v -> new HashMap<>()), true);
            }
            if (faults.contains(Fault.UNSYNCHRONISED_MAP))
            {
                return new MapStore(STATIC_VOLUMES.computeIfAbsent(volume, v -> new HashMap<>()), false);
            }
            final Path directory = Path.of(volume);
            if (faults.contains(Fault.FORGET_ON_RESTART))
            {
                try
                {
                    return new FileStore(Files.createDirectories(directory.resolve("instance-" + UUID.randomUUID())), PageKey::toHex);
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex);
                }
            }
            if (faults.contains(Fault.INDEX_BY_HASH_CODE))
            {
                return new FileStore(directory, key -> Integer.toHexString(key.hashCode()));
            }
            if (faults.contains(Fault.NAME_BY_UNPADDED_HEX))
            {
                return new FileStore(directory, key -> Long.toHexString(key.high()) + Long.toHexString(key.low()));
            }
            return new FileStore(directory, PageKey::toHex);
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
        return capacity == TierUsage.UNBOUNDED
            ? EnumSet.of(TierCapability.PERSISTENT, TierCapability.SHARED)
            : EnumSet.of(TierCapability.PERSISTENT, TierCapability.SHARED, TierCapability.SELF_EVICTING);
    }

    private boolean isClosed()
    {
        return closed && !faults.contains(Fault.SERVE_AFTER_CLOSE);
    }

    /**
     * @param batch the batch
     * @param size  its size, read once before any key was completed
     * @return the bound of a loop over the batch: {@code size}, or with the fault the batch's size read again
     */
    private int bound(final TierBatch batch, final int size)
    {
        return faults.contains(Fault.SIZE_AFTER_LAST_COMPLETION) ? batch.size() : size;
    }

    @Override
    public void exists(final TierBatch batch)
    {
        flushDeferredWrites();
        if (faults.contains(Fault.THROW_ON_EMPTY_BATCH))
        {
            batch.keyHigh(0);
        }
        final int size = batch.size();
        for (int i = 0; i < bound(batch, size); i++)
        {
            final TierStatus status = isClosed() ? TierStatus.CLOSED : probe(batch.key(i));
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

    private TierStatus probe(final PageKey key)
    {
        try
        {
            return store.contains(key) ? TierStatus.OK : TierStatus.NOT_FOUND;
        }
        catch (final IOException ex)
        {
            return TierStatus.IO_ERROR;
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
        if (faults.contains(Fault.BLOCK_IN_REMOVE))
        {
            awaitUninterruptibly(closing);
        }
        submit(batch, this::removeAll);
    }

    private void submit(final TierBatch batch, final Consumer<TierBatch> operation)
    {
        if (isClosed())
        {
            completeAll(batch, TierStatus.CLOSED);
            return;
        }
        if (faults.contains(Fault.UNSYNCHRONISED_MAP))
        {
            // As the guide's example does, which is safe only because its map is a ConcurrentHashMap.
            operation.accept(batch);
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

    private void completeAll(final TierBatch batch, final TierStatus status)
    {
        final int size = batch.size();
        for (int i = 0; i < bound(batch, size); i++)
        {
            batch.complete(i, status);
        }
    }

    private boolean dropped(final int size, final int index)
    {
        return faults.contains(Fault.DROP_LAST_KEY_OF_LARGE_BATCH) && size > 256 && index == size - 1;
    }

    private void readAll(final TierBatch batch)
    {
        flushDeferredWrites();
        final int size = batch.size();
        if (faults.contains(Fault.FAIL_WHOLE_BATCH_ON_MISSING))
        {
            for (int i = 0; i < size; i++)
            {
                if (probe(batch.key(i)) != TierStatus.OK)
                {
                    completeAll(batch, TierStatus.NOT_FOUND);
                    return;
                }
            }
        }
        for (int i = 0; i < bound(batch, size); i++)
        {
            if (!dropped(size, i))
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
        catch (final IOException ex)
        {
            return TierStatus.IO_ERROR;
        }
        finally
        {
            // Counted after the copy, so TORN_OVERWRITE resumes only once a read has seen the half-written file.
            reads.incrementAndGet();
        }
    }

    private byte[] load(final PageKey key) throws IOException
    {
        if (!faults.contains(Fault.WRITE_IN_PLACE_UNDER_LOCK))
        {
            return store.get(key);
        }
        final ReentrantReadWriteLock lock = inPlace.computeIfAbsent(key, k -> new ReentrantReadWriteLock());
        lock.readLock().lock();
        try
        {
            return store.get(key);
        }
        finally
        {
            lock.readLock().unlock();
        }
    }

    @SuppressWarnings("restricted")
    private TierStatus copyOut(final PageKey key, final MemorySegment destination) throws IOException
    {
        final byte[] object = load(key);
        if (object == null)
        {
            return TierStatus.NOT_FOUND;
        }
        if (object.length != destination.byteSize() && !faults.contains(Fault.PARTIAL_READ))
        {
            return TierStatus.CORRUPT;
        }
        touch(key);
        int length = (int)Math.min(object.length, destination.byteSize());
        if (faults.contains(Fault.COPY_AT_MOST_128_KIB))
        {
            length = Math.min(length, COPY_BUFFER);
        }
        if (faults.contains(Fault.FORGET_TRAILER_BLOCK_ZEROS))
        {
            length = (int)Math.min(length, io.kvtier.spi.TrailerBlock.storedLength(MemorySegment.ofArray(object)));
        }
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
        flushDeferredWrites();
        final int size = batch.size();
        for (int i = 0; i < bound(batch, size); i++)
        {
            if (dropped(size, i))
            {
                continue;
            }
            if (isClosed())
            {
                batch.complete(i, TierStatus.CLOSED);
            }
            else if (faults.contains(Fault.DEFER_WRITE_COPY))
            {
                final PageKey key = batch.key(i);
                final MemorySegment source = batch.segment(i);
                // The fault: the segment is the engine's again once the key completes, and this copies it later.
                deferredWrites.add(() -> writeOne(key, source.toArray(JAVA_BYTE)));
                batch.complete(i, TierStatus.OK);
            }
            else
            {
                final byte[] object = batch.segment(i).toArray(JAVA_BYTE);
                if (faults.contains(Fault.PADDING_TAKES_THE_TRAILER) && batch.trailerBlockIsPadding(i) && object.length >= 2 * io.kvtier.spi.TrailerBlock.BYTES)
                {
                    Arrays.fill(object, object.length - io.kvtier.spi.TrailerBlock.BYTES, object.length, (byte)0);
                }
                batch.complete(i, writeOne(batch.key(i), object));
            }
        }
    }

    private void flushDeferredWrites()
    {
        Runnable deferred;
        while ((deferred = deferredWrites.poll()) != null)
        {
            deferred.run();
        }
    }

    private TierStatus writeOne(final PageKey key, final byte[] object)
    {
        try
        {
            if (faults.contains(Fault.TORN_OVERWRITE) && store.overwriteInPlace(key, object, this::awaitRead))
            {
                return TierStatus.OK;
            }
            if (faults.contains(Fault.WRITE_IN_PLACE_UNDER_LOCK))
            {
                final ReentrantReadWriteLock lock = inPlace.computeIfAbsent(key, k -> new ReentrantReadWriteLock());
                lock.writeLock().lock();
                try
                {
                    store.rewriteInPlace(key, object);
                    return TierStatus.OK;
                }
                finally
                {
                    lock.writeLock().unlock();
                }
            }
            if (capacity == TierUsage.UNBOUNDED)
            {
                store.put(key, object);
            }
            else
            {
                synchronized (recency)
                {
                    store.put(key, object);
                    recency.put(key, (long)object.length);
                    evictOverCapacity();
                }
            }
            if (faults.contains(Fault.LEAK_DESCRIPTOR_PER_WRITE))
            {
                final FileChannel channel = store.open(key);
                synchronized (leaked)
                {
                    leaked.add(channel);
                }
            }
            return TierStatus.OK;
        }
        catch (final IOException ex)
        {
            return TierStatus.IO_ERROR;
        }
    }

    /** Drops the least recently used objects until the volume fits its capacity; the caller holds {@link #recency}. */
    private void evictOverCapacity() throws IOException
    {
        long used = store.usage()[0];
        final Iterator<Map.Entry<PageKey, Long>> eldest = recency.entrySet().iterator();
        while (used > capacity && eldest.hasNext())
        {
            final PageKey victim = eldest.next().getKey();
            eldest.remove();
            final long length = store.remove(victim);
            if (length >= 0)
            {
                used -= length;
                if (!faults.contains(Fault.EVICT_SILENTLY))
                {
                    context.objectRemoved(victim.high(), victim.low());
                }
            }
        }
    }

    private void touch(final PageKey key)
    {
        if (capacity != TierUsage.UNBOUNDED)
        {
            synchronized (recency)
            {
                recency.get(key);
            }
        }
    }

    private void awaitRead()
    {
        final int before = reads.get();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
        while (reads.get() == before && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
    }

    private void removeAll(final TierBatch batch)
    {
        flushDeferredWrites();
        final int size = batch.size();
        for (int i = 0; i < bound(batch, size); i++)
        {
            if (dropped(size, i))
            {
                continue;
            }
            batch.complete(i, isClosed() ? TierStatus.CLOSED : removeOne(batch.key(i)));
        }
        if (faults.contains(Fault.TOUCH_AFTER_COMPLETION) && size > 0)
        {
            context.logger().log(System.Logger.Level.TRACE, "removed {0}", batch.keyHigh(0));
        }
    }

    private TierStatus removeOne(final PageKey key)
    {
        try
        {
            final long length;
            if (capacity == TierUsage.UNBOUNDED)
            {
                length = store.remove(key);
            }
            else
            {
                synchronized (recency)
                {
                    length = store.remove(key);
                    recency.remove(key);
                }
            }
            if (length >= 0 && faults.contains(Fault.STALE_USAGE))
            {
                staleBytes.addAndGet(length);
                staleObjects.incrementAndGet();
            }
            return length >= 0 ? TierStatus.OK : TierStatus.NOT_FOUND;
        }
        catch (final IOException ex)
        {
            return TierStatus.IO_ERROR;
        }
    }

    @Override
    public TierUsage usage()
    {
        try
        {
            final long[] usage = store.usage();
            return new TierUsage(usage[0] + staleBytes.get(), capacity, usage[1] + staleObjects.get());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
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
        closing.countDown();
        workers.shutdown();
        try
        {
            if (!workers.awaitTermination(30, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("reference tier workers did not stop");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        synchronized (leaked)
        {
            for (final FileChannel channel : leaked)
            {
                try
                {
                    channel.close();
                }
                catch (final IOException ignored)
                {
                    // Closing a read-only channel reports nothing worth failing close() for.
                }
            }
            leaked.clear();
        }
        if (faults.contains(Fault.HANG_ON_CLOSE))
        {
            // The fault: waits for a thread that never ends.
            while (true)
            {
                LockSupport.park(this);
            }
        }
    }

    private static void awaitUninterruptibly(final CountDownLatch latch)
    {
        boolean interrupted = false;
        while (latch.getCount() > 0)
        {
            try
            {
                latch.await();
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
    }

    /** Where a tier's objects live. */
    private interface Store
    {
        /**
         * @param key a key
         * @return its object, or null when there is none
         * @throws IOException when the store cannot tell
         */
        byte[] get(PageKey key) throws IOException;

        /**
         * @param key a key
         * @return whether it has an object
         * @throws IOException when the store cannot tell
         */
        boolean contains(PageKey key) throws IOException;

        /**
         * Stores an object, replacing any previous one atomically.
         *
         * @param key    its key
         * @param object its bytes, no longer changed by the caller
         * @throws IOException when it could not be stored
         */
        void put(PageKey key, byte[] object) throws IOException;

        /**
         * @param key a key
         * @return the length of the object removed, or -1 when there was none
         * @throws IOException when it could not be removed
         */
        long remove(PageKey key) throws IOException;

        /**
         * For {@link Fault#TORN_OVERWRITE}: writes over an existing object of the same length, in place.
         *
         * @param key      its key
         * @param object   the new bytes
         * @param halfway  run between the two halves
         * @return false, having done nothing, when there is no such object
         * @throws IOException when the write failed
         */
        boolean overwriteInPlace(PageKey key, byte[] object, Runnable halfway) throws IOException;

        /**
         * For {@link Fault#WRITE_IN_PLACE_UNDER_LOCK}: truncates the object and writes the new bytes over it.
         *
         * @param key    its key
         * @param object the new bytes
         * @throws IOException when the write failed
         */
        void rewriteInPlace(PageKey key, byte[] object) throws IOException;

        /**
         * For {@link Fault#LEAK_DESCRIPTOR_PER_WRITE}.
         *
         * @param key a stored key
         * @return a channel open on its object
         * @throws IOException when it cannot be opened
         */
        FileChannel open(PageKey key) throws IOException;

        /**
         * @return bytes used and objects held
         * @throws IOException when the store cannot tell
         */
        long[] usage() throws IOException;
    }

    /** Objects as files of a directory, each written to a temporary file and renamed over its name. */
    private static final class FileStore implements Store
    {
        private static final String TEMPORARY = ".tmp";

        private final Path directory;
        private final Function<PageKey, String> naming;

        FileStore(final Path directory, final Function<PageKey, String> naming)
        {
            this.directory = directory;
            this.naming = naming;
        }

        private Path path(final PageKey key)
        {
            return directory.resolve(naming.apply(key));
        }

        @Override
        public byte[] get(final PageKey key) throws IOException
        {
            try
            {
                return Files.readAllBytes(path(key));
            }
            catch (final NoSuchFileException ex)
            {
                return null;
            }
        }

        @Override
        public boolean contains(final PageKey key)
        {
            return Files.exists(path(key));
        }

        @Override
        public void put(final PageKey key, final byte[] object) throws IOException
        {
            final Path temporary = directory.resolve(naming.apply(key) + "." + UUID.randomUUID() + TEMPORARY);
            try
            {
                Files.write(temporary, object);
                Files.move(temporary, path(key), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            finally
            {
                Files.deleteIfExists(temporary);
            }
        }

        @Override
        public long remove(final PageKey key) throws IOException
        {
            final Path path = path(key);
            final long length;
            try
            {
                length = Files.size(path);
            }
            catch (final NoSuchFileException ex)
            {
                return -1;
            }
            return Files.deleteIfExists(path) ? length : -1;
        }

        @Override
        public boolean overwriteInPlace(final PageKey key, final byte[] object, final Runnable halfway) throws IOException
        {
            try (FileChannel channel = FileChannel.open(path(key), StandardOpenOption.WRITE))
            {
                if (channel.size() != object.length)
                {
                    return false;
                }
                final int half = object.length / 2;
                channel.write(ByteBuffer.wrap(object, 0, half), 0);
                halfway.run();
                channel.write(ByteBuffer.wrap(object, half, object.length - half), half);
                return true;
            }
            catch (final NoSuchFileException ex)
            {
                return false;
            }
        }

        @Override
        public void rewriteInPlace(final PageKey key, final byte[] object) throws IOException
        {
            Files.write(path(key), object);
        }

        @Override
        public FileChannel open(final PageKey key) throws IOException
        {
            return FileChannel.open(path(key), StandardOpenOption.READ);
        }

        @Override
        public long[] usage() throws IOException
        {
            long bytes = 0;
            long objects = 0;
            try (DirectoryStream<Path> files = Files.newDirectoryStream(directory))
            {
                for (final Path file : files)
                {
                    if (file.getFileName().toString().endsWith(TEMPORARY))
                    {
                        continue;
                    }
                    try
                    {
                        final BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
                        if (attributes.isRegularFile())
                        {
                            bytes += attributes.size();
                            objects++;
                        }
                    }
                    catch (final NoSuchFileException ex)
                    {
                        // Removed since the listing: not there any more.
                    }
                }
            }
            return new long[] {bytes, objects};
        }
    }

    /** Objects in a map of this JVM, locked or (the fault) not. */
    private static final class MapStore implements Store
    {
        private final Map<PageKey, byte[]> objects;
        private final boolean locked;

        MapStore(final Map<PageKey, byte[]> objects, final boolean locked)
        {
            this.objects = objects;
            this.locked = locked;
        }

        @Override
        public byte[] get(final PageKey key)
        {
            if (locked)
            {
                synchronized (objects)
                {
                    return objects.get(key);
                }
            }
            return objects.get(key);
        }

        @Override
        public boolean contains(final PageKey key)
        {
            return get(key) != null;
        }

        @Override
        public void put(final PageKey key, final byte[] object)
        {
            if (locked)
            {
                synchronized (objects)
                {
                    objects.put(key, object);
                }
            }
            else
            {
                objects.put(key, object);
            }
        }

        @Override
        public long remove(final PageKey key)
        {
            final byte[] removed;
            if (locked)
            {
                synchronized (objects)
                {
                    removed = objects.remove(key);
                }
            }
            else
            {
                removed = objects.remove(key);
            }
            return removed == null ? -1 : removed.length;
        }

        @Override
        public boolean overwriteInPlace(final PageKey key, final byte[] object, final Runnable halfway)
        {
            final byte[] existing = get(key);
            if (existing == null || existing.length != object.length)
            {
                return false;
            }
            final int half = object.length / 2;
            System.arraycopy(object, 0, existing, 0, half);
            halfway.run();
            System.arraycopy(object, half, existing, half, object.length - half);
            return true;
        }

        @Override
        public void rewriteInPlace(final PageKey key, final byte[] object)
        {
            put(key, object);
        }

        @Override
        public FileChannel open(final PageKey key) throws IOException
        {
            throw new IOException("objects of a map have no file");
        }

        @Override
        public long[] usage()
        {
            if (locked)
            {
                synchronized (objects)
                {
                    return count();
                }
            }
            return count();
        }

        private long[] count()
        {
            long bytes = 0;
            for (final byte[] object : objects.values())
            {
                bytes += object.length;
            }
            return new long[] {bytes, objects.size()};
        }
    }
}

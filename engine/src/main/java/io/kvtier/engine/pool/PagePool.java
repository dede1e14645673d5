package io.kvtier.engine.pool;

import io.kvtier.client.pool.ClientSlotDescriptor;
import io.kvtier.client.pool.ClientSlots;
import io.kvtier.client.pool.PageMetadataDescriptor;
import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.pool.PinTable;
import io.kvtier.client.pool.PoolHeader;
import io.kvtier.collections.KeyTable;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The engine's pool file and its life: {@link #create} makes and owns the file (one engine per file,
 * enforced with an open-file-description lock plus the creator's PID and heartbeat in the header;
 * see {@link PoolFile}); {@link #close} marks it closed, deletes it and unmaps it. Another process
 * maps the pool through the client module's {@link io.kvtier.client.pool.MappedPool}, or pins pages
 * through its {@link io.kvtier.client.pool.PoolClient}.
 *
 * <p>Each region of the file is read and written through the class beside its descriptor:
 * {@link PoolHeader}, {@link PageMetadata}, {@link PageFrames}, {@link ClientSlots},
 * {@link PinTable}, and the key index's {@link KeyTable}. This class adds only the owner's side of the
 * pin protocol, which spans the metadata and the pin table.
 */
public final class PagePool implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(PagePool.class.getName());
    /** How long a close waits for the chunk being allocated (a posix_fallocate cannot be interrupted). */
    private static final long GROWTH_STOP_MILLIS = 30_000;

    private final Path path;
    private final Arena arena;
    private final PoolFile ownedFile;
    private final MemorySegment file;
    private final PagePoolDescriptor.Layout layout;
    private final PoolHeader header;
    private final PageMetadata metadata;
    private final PageFrames frames;
    private final ClientSlots clientSlots;
    private final PinTable pinTable;
    private final KeyTable index;
    private final PoolGrowth growth;
    private PreviousPool previous;
    private String adoptRefusal;

    private boolean closed;
    private boolean keepFileOnClose;

    private PagePool(final Path path, final Arena arena, final PoolFile ownedFile, final MemorySegment file, final PagePoolDescriptor.Layout layout,
                     final KeyTable index, final PoolGrowth growth)
    {
        this.growth = growth;
        this.path = path;
        this.arena = arena;
        this.ownedFile = ownedFile;
        this.file = file;
        this.layout = layout;
        this.index = index;
        this.header = new PoolHeader(file.asSlice(0, PagePoolDescriptor.HEADER_LENGTH));
        this.metadata = new PageMetadata(
            file.asSlice(layout.metadataOffset(), (long)layout.pageCount() * PageMetadataDescriptor.ENTRY_LENGTH), layout.pageCount());
        this.frames = new PageFrames(file.asSlice(layout.dataOffset(), (long)layout.pageCount() * layout.frameLength()),
            layout.pageSize(), layout.frameLength(), layout.pageCount(), metadata);
        this.clientSlots = new ClientSlots(
            file.asSlice(layout.clientSlotsOffset(), (long)layout.clientSlots() * ClientSlotDescriptor.SLOT_LENGTH), layout.clientSlots());
        this.pinTable = new PinTable(file.asSlice(layout.pinTableOffset(), layout.pinTableLength()), layout.clientSlots());
    }

    /**
     * Creates the pool file, or replaces one left by a dead engine (see {@link PoolFile}).
     *
     * @param path          the pool file
     * @param pageSize      payload bytes per page
     * @param pageCount     pages
     * @param indexEntries  entries of the key index
     * @param clientSlots   processes that may pin pages directly
     * @param clientTimeout a client silent this long loses its pins
     * @return the owned pool
     * @throws PoolOwnedException if a live engine owns the file
     * @throws PoolPathException  if the path is a directory, a file that is not a pool, or on a
     *                            filesystem too small for the pool
     * @throws IOException        if the file cannot be created or mapped
     */
    public static PagePool create(final Path path, final long pageSize, final int pageCount, final long indexEntries, final int clientSlots,
                                  final java.time.Duration clientTimeout) throws IOException
    {
        return create(path, pageSize, pageCount, indexEntries, clientSlots, clientTimeout, false);
    }

    /**
     * Creates the pool file as {@link #create(Path, long, int, long, int, java.time.Duration)} does and,
     * with {@code adoptPrevious}, keeps the pool of a dead engine it replaces mapped read-only, for the
     * engine to adopt its committed pages ({@link #takePrevious}); a pool whose geometry differs is let
     * go, and {@link #adoptRefusal} says why.
     *
     * @param path          the pool file
     * @param pageSize      payload bytes per page
     * @param pageCount     pages
     * @param indexEntries  entries of the key index
     * @param clientSlots   processes that may pin pages directly
     * @param clientTimeout a client silent this long loses its pins
     * @param adoptPrevious whether to keep a dead engine's pool for a warm restart
     * @return the owned pool
     * @throws PoolOwnedException if a live engine owns the file
     * @throws PoolPathException  if the path is a directory, a file that is not a pool, or on a
     *                            filesystem too small for the pool
     * @throws IOException        if the file cannot be created or mapped
     */
    public static PagePool create(final Path path, final long pageSize, final int pageCount, final long indexEntries, final int clientSlots,
                                  final java.time.Duration clientTimeout, final boolean adoptPrevious) throws IOException
    {
        return create(path, pageSize, pageCount, indexEntries, clientSlots, clientTimeout, adoptPrevious, Long.MAX_VALUE, Long.MAX_VALUE);
    }

    /**
     * Creates the pool file as {@link #create(Path, long, int, long, int, java.time.Duration, boolean)} does,
     * allocating the blocks of its header, metadata, index and the frames of the first {@code allocateFirst}
     * bytes of pages before it returns, and the rest in the background ({@link PoolGrowth}): the pages join
     * {@link #allocatedPagesAcquire()} as their chunks are allocated.
     *
     * @param path          the pool file
     * @param pageSize      payload bytes per page
     * @param pageCount     pages
     * @param indexEntries  entries of the key index
     * @param clientSlots   processes that may pin pages directly
     * @param clientTimeout a client silent this long loses its pins
     * @param adoptPrevious whether to keep a dead engine's pool for a warm restart
     * @param allocateFirst page payload bytes allocated before this returns ({@code pool.allocate-first}); the
     *                      pool's size or more allocates all of it
     * @param allocateChunk bytes the background allocates at a time ({@code pool.allocate-chunk})
     * @return the owned pool, its growth started
     * @throws PoolOwnedException if a live engine owns the file
     * @throws PoolPathException  if the path is a directory, a file that is not a pool, or on a
     *                            filesystem too small for the pool
     * @throws IOException        if the file cannot be created or mapped
     */
    public static PagePool create(final Path path, final long pageSize, final int pageCount, final long indexEntries, final int clientSlots,
                                  final java.time.Duration clientTimeout, final boolean adoptPrevious, final long allocateFirst,
                                  final long allocateChunk) throws IOException
    {
        return create(path, pageSize, pageCount, indexEntries, clientSlots, clientTimeout, adoptPrevious, allocateFirst, allocateChunk,
            NumaPlacement.OFF);
    }

    /**
     * Creates the pool file as {@link #create(Path, long, int, long, int, java.time.Duration, boolean, long, long)} does,
     * its memory placed on the NUMA nodes {@code numa} names: this thread takes the placement while it allocates the
     * first share, the mapping is bound before the growth starts, and the growth thread takes it too.
     *
     * @param path          the pool file
     * @param pageSize      payload bytes per page
     * @param pageCount     pages
     * @param indexEntries  entries of the key index
     * @param clientSlots   processes that may pin pages directly
     * @param clientTimeout a client silent this long loses its pins
     * @param adoptPrevious whether to keep a dead engine's pool for a warm restart
     * @param allocateFirst page payload bytes allocated before this returns
     * @param allocateChunk bytes the background allocates at a time
     * @param numa          where the pool's memory lies ({@code pool.numa}); checked by the caller
     *                      ({@link NumaPlacement#unavailableOn})
     * @return the owned pool, its growth started
     * @throws PoolOwnedException if a live engine owns the file
     * @throws PoolPathException  if the path is a directory, a file that is not a pool, or on a
     *                            filesystem too small for the pool
     * @throws IOException        if the file cannot be created or mapped, or the kernel refused the placement
     */
    public static PagePool create(final Path path, final long pageSize, final int pageCount, final long indexEntries, final int clientSlots,
                                  final java.time.Duration clientTimeout, final boolean adoptPrevious, final long allocateFirst,
                                  final long allocateChunk, final NumaPlacement numa) throws IOException
    {
        placeOrThrow(numa, numa.applyToThisThread(true), "set_mempolicy for the thread that creates the pool " + path);
        try
        {
            return createPlaced(path, pageSize, pageCount, indexEntries, clientSlots, clientTimeout, adoptPrevious, allocateFirst,
                allocateChunk, numa);
        }
        finally
        {
            numa.applyToThisThread(false);
        }
    }

    private static void placeOrThrow(final NumaPlacement numa, final int rc, final String call) throws IOException
    {
        if (rc != 0)
        {
            final String reason = io.kvtier.nativeaccess.libc.LibC.instance().map(libc -> libc.strerror(rc)).orElse("errno " + -rc);
            throw new IOException("pool.numa = " + numa.text() + ": the kernel refused it (" + call + ": " + reason + ")");
        }
    }

    private static PagePool createPlaced(final Path path, final long pageSize, final int pageCount, final long indexEntries, final int clientSlots,
                                         final java.time.Duration clientTimeout, final boolean adoptPrevious, final long allocateFirst,
                                         final long allocateChunk, final NumaPlacement numa) throws IOException
    {
        final PagePoolDescriptor.Layout layout = PagePoolDescriptor.layout(pageSize, pageCount, indexEntries, clientSlots);
        final long firstShare = PoolGrowth.firstShare(layout, allocateFirst);
        for (int attempt = 0; ; attempt++)
        {
            final PoolFile owned = PoolFile.prepare(path, layout.fileLength(), adoptPrevious ? layout : null, firstShare);
            final Arena arena = Arena.ofShared();
            try
            {
                final MemorySegment file = owned.channel().map(FileChannel.MapMode.READ_WRITE, 0, layout.fileLength(), arena);
                // The file's own policy, before anything else is allocated: the growth, and any page a fault brings in, follow it.
                placeOrThrow(numa, numa.applyTo(file), "mbind of the pool's mapping");
                final MemorySegment indexRegion = file.asSlice(layout.indexOffset(), layout.indexLength());
                final KeyTable index = KeyTable.format(indexRegion, indexEntries);
                PoolHeader.format(file.asSlice(0, PagePoolDescriptor.HEADER_LENGTH), layout, owned.epoch(),
                    (int)Math.min(Integer.MAX_VALUE, clientTimeout.toMillis()));
                if (owned.publish())
                {
                    final PoolGrowth growth = PoolGrowth.of(path, owned.lockFd(), layout, owned.allocatedLength(), allocateChunk);
                    if (numa.placed())
                    {
                        growth.beforeGrowing(() -> numa.applyToThisThread(true));
                    }
                    final PagePool pool = new PagePool(path, arena, owned, file, layout, index, growth);
                    growth.start();
                    pool.previous = owned.takeAdoptable();
                    pool.adoptRefusal = owned.adoptRefusal();
                    return pool;
                }
                if (attempt > 8)
                {
                    throw new IOException("pool.path = \"" + path + "\" kept being created by another process while this engine started");
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                arena.close();
                owned.abandon();
                throw ex;
            }
            // Another engine created the pool first: drop ours and look again (it will be refused as owned).
            arena.close();
            owned.abandon();
        }
    }

    /** @return the pool file */
    public Path path()
    {
        return path;
    }

    /** @return payload bytes per page */
    public long pageSize()
    {
        return layout.pageSize();
    }

    /** @return bytes per frame (payload plus trailer block) */
    public long frameLength()
    {
        return layout.frameLength();
    }

    /** @return pages in the pool */
    public int pageCount()
    {
        return layout.pageCount();
    }

    /** @return where each region lies */
    public PagePoolDescriptor.Layout layout()
    {
        return layout;
    }

    /**
     * @return pages whose blocks are all allocated, {@code [0, n)}: no page at or above it may be handed out
     *         (its first store could fault on a full filesystem); {@link #pageCount()} once the pool is grown
     */
    public int allocatedPagesAcquire()
    {
        return growth.allocatedPagesAcquire();
    }

    /** @return bytes of the pool file, from its start, whose blocks are allocated */
    public long allocatedBytesAcquire()
    {
        return growth.allocatedBytesAcquire();
    }

    /** @return whether more pages may still join {@link #allocatedPagesAcquire()} */
    public boolean growing()
    {
        return growth.growing();
    }

    /**
     * Asks the kernel for transparent huge pages over the pool's mapping ({@code pool.transparent-huge-pages =
     * advise}) and logs once what came of it: on this host's tmpfs, often nothing, and then why.
     */
    public void adviseTransparentHugePages()
    {
        final String said = TransparentHugePages.advise(file, path, TransparentHugePages.SHMEM_ENABLED);
        LOG.log(said.contains("no effect") ? System.Logger.Level.WARNING : System.Logger.Level.INFO, said);
    }

    /** @return the header: state, epoch, heartbeat */
    public PoolHeader header()
    {
        return header;
    }

    /** @return the pages' metadata */
    public PageMetadata metadata()
    {
        return metadata;
    }

    /** @return the page frames and their codec */
    public PageFrames frames()
    {
        return frames;
    }

    /** @return the slots of processes that pin pages directly */
    public ClientSlots clientSlots()
    {
        return clientSlots;
    }

    /** @return the pins those processes hold */
    public PinTable pinTable()
    {
        return pinTable;
    }

    /** @return the key index living in the file */
    public KeyTable index()
    {
        return index;
    }

    /** @return the counters region */
    public MemorySegment counters()
    {
        return file.asSlice(layout.countersOffset(), layout.countersLength());
    }

    /**
     * Pins a SERVING page of a known generation for a reader in the engine's process.
     *
     * @param page       a page
     * @param generation the generation the reader saw
     * @return whether the page was SERVING in that generation and is now pinned
     */
    public boolean tryPin(final int page, final int generation)
    {
        while (true)
        {
            final long word = metadata.stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.generation(word) != generation
                || PageStateWord.pins(word) == PageStateWord.MAX_PINS)
            {
                return false;
            }
            if (metadata.compareAndSetStateWord(page, word, PageStateWord.pinned(word)))
            {
                return true;
            }
        }
    }

    /**
     * Pins a SERVING page whatever its generation.
     *
     * @param page a page
     * @return whether the page was SERVING and is now pinned
     */
    public boolean tryPin(final int page)
    {
        while (true)
        {
            final long word = metadata.stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) == PageStateWord.MAX_PINS)
            {
                return false;
            }
            if (metadata.compareAndSetStateWord(page, word, PageStateWord.pinned(word)))
            {
                return true;
            }
        }
    }

    /**
     * Drops one pin.
     *
     * @param page a pinned SERVING page
     * @throws IllegalStateException if the page has no pin to drop
     */
    public void unpin(final int page)
    {
        while (true)
        {
            final long word = metadata.stateWordAcquire(page);
            if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) == 0)
            {
                throw new IllegalStateException("page " + page + " has no pin to drop: " + PageStateWord.stateName(PageStateWord.state(word))
                    + " with " + PageStateWord.pins(word) + " pins");
            }
            if (metadata.compareAndSetStateWord(page, word, PageStateWord.unpinned(word)))
            {
                return;
            }
        }
    }

    /**
     * Evicts a page seen SERVING with no pins in {@code word}: SERVING → EVICTING, then, unless a
     * client process holds a pin on it in the pin table, EVICTING → FREE with the next generation (so
     * stale handles fail); otherwise the word goes back to SERVING. The engine thread is the only
     * caller, and the only writer of EVICTING words.
     *
     * @param page a page
     * @param word its state word as last read
     * @return whether the page is now FREE
     */
    public boolean evictIfUnpinned(final int page, final long word)
    {
        if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) != 0)
        {
            return false;
        }
        final int generation = PageStateWord.generation(word);
        final long evicting = PageStateWord.word(generation, 0, PageStateWord.EVICTING);
        if (!metadata.compareAndSetStateWord(page, word, evicting))
        {
            return false;
        }
        // The CAS above and the volatile reads below pair with the client's CAS of its pin entry
        // followed by its volatile re-read of this word: one of the two sides sees the other.
        if (pinTable.hasPinsVolatile(page))
        {
            metadata.stateWordVolatile(page, word);
            return false;
        }
        metadata.stateWordVolatile(page, PageStateWord.word(generation + 1, 0, PageStateWord.FREE));
        return true;
    }

    /**
     * Hands over the dead engine's pool this one replaced, kept mapped for a warm restart; the caller
     * adopts its pages and closes it.
     *
     * @return the old pool, or null when there was none, it was not asked for, or it was refused
     */
    public PreviousPool takePrevious()
    {
        final PreviousPool taken = previous;
        previous = null;
        return taken;
    }

    /** @return why a dead engine's pool found at the path could not be adopted (its geometry), or null */
    public String adoptRefusal()
    {
        return adoptRefusal;
    }

    /** @return the descriptor holding the owner's lock, -1 without native access */
    int lockFd()
    {
        return ownedFile.lockFd();
    }

    /**
     * Has {@link #close()} leave the file at its path, marked closed, for the next engine there to adopt
     * (a warm restart after a clean stop, {@code pool.keep-on-stop}); {@link #closeLeavingMapped()} still
     * removes it, since a tier that may yet write into the pool leaves no page it could be sure of.
     *
     * @param keep whether {@link #close()} keeps the file
     */
    public void keepFileOnClose(final boolean keep)
    {
        keepFileOnClose = keep;
    }

    /**
     * Marks the pool closed, deletes the file if it is still the one at its path (unless
     * {@link #keepFileOnClose} asked to keep it), drops the lock and unmaps the file; clients that
     * still map it keep their mapping until they unmap.
     */
    @Override
    public void close()
    {
        close(true);
    }

    /**
     * Closes the pool as {@link #close()} does but leaves this process's mapping in place until the
     * process exits: for an engine whose tier may still write into the pool from native code (a call
     * that never returned), where an unmapped page would crash the JVM.
     */
    public void closeLeavingMapped()
    {
        close(false);
    }

    private void close(final boolean unmap)
    {
        if (closed)
        {
            return;
        }
        closed = true;
        // Before the descriptor it allocates through is closed, and the file perhaps removed.
        growth.stop(GROWTH_STOP_MILLIS);
        if (previous != null)
        {
            previous.close();
            previous = null;
        }
        header.poolStateRelease(PagePoolDescriptor.STATE_CLOSED);
        final boolean keep = keepFileOnClose && unmap;
        if (unmap)
        {
            arena.close();
        }
        ownedFile.close(!keep);
        if (keep)
        {
            LOG.log(System.Logger.Level.INFO, "pool file " + path() + " kept, marked closed: the next engine at this path adopts its committed"
                + " pages (pool.keep-on-stop, pool.warm-restart)");
        }
    }
}

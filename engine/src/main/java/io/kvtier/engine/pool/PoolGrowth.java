package io.kvtier.engine.pool;

import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.nativeaccess.libc.LibC;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The pool file's blocks allocated in the background, {@code kvtier-pool-grow}: the engine serves with
 * the pages of the share allocated before it started ({@code pool.allocate-first}) while this thread
 * allocates the rest ({@code posix_fallocate}, which on tmpfs commits and zeroes the memory) in chunks of
 * {@code pool.allocate-chunk}, and publishes after each one how many pages now have every block allocated
 * ({@link #allocatedPagesAcquire}). The engine thread hands a page out (to a reservation, a load, an
 * adoption) only below that count, so a filesystem that fills meanwhile can refuse a chunk but never fault
 * a store into the pool (SIGBUS).
 *
 * <p>A chunk the filesystem refuses ({@code ENOSPC}, or any error) ends the growth: one line of the log
 * names {@code pool.path}, the bytes allocated and the free space, and the engine keeps serving with the
 * pages it has.
 *
 * <p>Chunk ends fall on 2 MiB boundaries of the file (the data region starts on one), so that a pool on
 * hugetlbfs is grown in whole huge pages.
 */
public final class PoolGrowth implements Runnable
{
    /** How a range of the file gets its blocks: {@code posix_fallocate} but in tests. */
    @FunctionalInterface
    public interface Allocator
    {
        /**
         * @param fd     the pool file, open for writing
         * @param offset first byte
         * @param length bytes
         * @return 0, or {@code -errno}
         */
        int allocate(int fd, long offset, long length);
    }

    private static final System.Logger LOG = System.getLogger(PoolGrowth.class.getName());
    /** Chunk ends are multiples of this in the file: a huge page, and the data region's alignment. */
    static final long CHUNK_ALIGNMENT = PagePoolDescriptor.DATA_ALIGNMENT;
    /** A test's allocator in place of {@code posix_fallocate}: holds the growth, or fails a chunk. */
    private static volatile Allocator testAllocator;
    /** {@code ENOSYS}: what a growth with no way to allocate would answer, were there one. */
    private static final int ENOSYS = 38;

    private final Path path;
    private final int fd;
    private final long dataOffset;
    private final long frameLength;
    private final int pageCount;
    private final long fileLength;
    private final long chunk;
    private final Allocator allocator;
    private final Thread thread;
    /** What the growth thread does first, before it allocates: take the pool's NUMA placement, say. */
    private Runnable beforeGrowing = () -> { };
    private final long startedNanos = System.nanoTime();
    /** Bytes from the start of the file whose blocks are allocated. */
    private volatile long allocatedEnd;
    /** Pages whose frames lie wholly below {@link #allocatedEnd}: the only ones the engine may hand out. */
    private volatile int allocatedPages;
    private volatile boolean running = true;
    private volatile String failure;

    private PoolGrowth(final Path path, final int fd, final PagePoolDescriptor.Layout layout, final long allocatedEnd, final long chunk,
                       final Allocator allocator)
    {
        this.path = path;
        this.fd = fd;
        this.dataOffset = layout.dataOffset();
        this.frameLength = layout.frameLength();
        this.pageCount = layout.pageCount();
        this.fileLength = layout.fileLength();
        this.chunk = Math.max(CHUNK_ALIGNMENT, chunk / CHUNK_ALIGNMENT * CHUNK_ALIGNMENT);
        this.allocator = allocator;
        this.allocatedEnd = allocatedEnd;
        this.allocatedPages = pagesBelow(allocatedEnd);
        this.thread = allocatedPages < pageCount ? Thread.ofPlatform().name("kvtier-pool-grow").daemon(true).unstarted(this) : null;
    }

    /**
     * @param path         the pool file, for messages
     * @param fd           a descriptor of it open for writing, kept open until {@link #stop}; -1 when the whole file
     *                     is allocated already (no native access)
     * @param layout       the pool's layout
     * @param allocatedEnd bytes from the start already allocated
     * @param chunk        bytes allocated at a time
     * @return the growth, not started; done already when {@code allocatedEnd} covers every frame
     */
    static PoolGrowth of(final Path path, final int fd, final PagePoolDescriptor.Layout layout, final long allocatedEnd, final long chunk)
    {
        final Allocator override = testAllocator;
        // Without native access the file was written whole before it was published: nothing is left to allocate.
        final Allocator allocator = override != null ? override
            : LibC.instance().<Allocator>map(libc -> libc::posixFallocate).orElse((f, o, l) -> -ENOSYS);
        return new PoolGrowth(path, fd, layout, allocatedEnd, chunk, allocator);
    }

    /**
     * The first share of a pool: the bytes from the file's start to allocate before the engine serves, the
     * header, metadata and index and the frames of at least {@code firstBytes} of pages, ending on a
     * {@link #CHUNK_ALIGNMENT} boundary.
     *
     * @param layout     the pool's layout
     * @param firstBytes page payload bytes wanted at once ({@code pool.allocate-first})
     * @return bytes from the file's start, at most its length
     */
    public static long firstShare(final PagePoolDescriptor.Layout layout, final long firstBytes)
    {
        // Rounded up without overflow: Long.MAX_VALUE asks for the whole pool.
        final long wanted = firstBytes / layout.pageSize() + (firstBytes % layout.pageSize() == 0 ? 0 : 1);
        final long pages = Math.min(layout.pageCount(), Math.max(1, wanted));
        final long end = layout.dataOffset() + pages * layout.frameLength();
        return Math.min(layout.fileLength(), (end + CHUNK_ALIGNMENT - 1) / CHUNK_ALIGNMENT * CHUNK_ALIGNMENT);
    }

    /**
     * Puts a test's allocator in place of {@code posix_fallocate} for the pools created until it is removed.
     *
     * @param allocator the allocator, or null for {@code posix_fallocate} again
     */
    static void testAllocator(final Allocator allocator)
    {
        testAllocator = allocator;
    }

    private int pagesBelow(final long end)
    {
        return (int)Math.max(0, Math.min(pageCount, (end - dataOffset) / frameLength));
    }

    /**
     * @param first run on the growth thread before its first allocation; set before {@link #start()}
     */
    void beforeGrowing(final Runnable first)
    {
        this.beforeGrowing = first;
    }

    /** Starts the thread, if any block is left to allocate. */
    void start()
    {
        if (thread != null)
        {
            LOG.log(System.Logger.Level.INFO, "pool {0}: {1} of {2} pages allocated before serving ({3}); the rest are allocated in the"
                + " background in chunks of {4} and join the pool as they are", path, allocatedPages, pageCount, human(allocatedEnd), human(chunk));
            thread.start();
        }
    }

    @Override
    public void run()
    {
        beforeGrowing.run();
        long end = allocatedEnd;
        final long last = Math.min(fileLength, dataOffset + (long)pageCount * frameLength);
        while (running && end < last)
        {
            final long next = Math.min(fileLength, (Math.min(last, end + chunk) + CHUNK_ALIGNMENT - 1) / CHUNK_ALIGNMENT * CHUNK_ALIGNMENT);
            final int rc = allocator.allocate(fd, end, next - end);
            if (rc != 0)
            {
                if (running)
                {
                    fail(end, rc);
                }
                return;
            }
            end = next;
            allocatedEnd = end;
            allocatedPages = pagesBelow(end);
        }
        if (running && end >= last)
        {
            LOG.log(System.Logger.Level.INFO, "pool {0}: all {1} pages allocated ({2}) in {3} ms", path, pageCount, human(end),
                (System.nanoTime() - startedNanos) / 1_000_000);
        }
    }

    private void fail(final long end, final int rc)
    {
        long free = -1;
        try
        {
            free = PoolFilesystem.usableBytes(path.toAbsolutePath().getParent());
        }
        catch (final IOException ignored)
        {
            // the message says the free space is unknown
        }
        final String why = LibC.instance().map(libc -> libc.strerror(rc)).orElse("errno " + -rc);
        failure = why;
        LOG.log(System.Logger.Level.WARNING, "pool.path = \"{0}\": allocating the pool''s blocks in the background stopped at {1} of {2}"
            + " ({3}; its filesystem has {4} free): the engine keeps serving with the {5} of {6} pages allocated. Free space on that filesystem,"
            + " or lower pool.size, and restart for the rest", path, human(end), human(fileLength), why, free < 0 ? "an unknown amount" : human(free),
            allocatedPages, pageCount);
    }

    /** @return pages whose blocks are all allocated: the engine hands out no page at or above this number */
    public int allocatedPagesAcquire()
    {
        return allocatedPages;
    }

    /** @return bytes from the start of the file whose blocks are allocated */
    public long allocatedBytesAcquire()
    {
        return allocatedEnd;
    }

    /** @return whether pages may still join the pool: the growth neither ended nor failed */
    public boolean growing()
    {
        return allocatedPages < pageCount && failure == null && running;
    }

    /** @return why the growth stopped short, or null */
    public String failure()
    {
        return failure;
    }

    /**
     * Stops the thread and waits for the chunk in hand: the caller then closes the descriptor.
     *
     * @param waitMillis how long to wait
     */
    void stop(final long waitMillis)
    {
        running = false;
        if (thread == null || !thread.isAlive())
        {
            return;
        }
        thread.interrupt();
        try
        {
            thread.join(Math.max(1, waitMillis));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive())
        {
            LOG.log(System.Logger.Level.WARNING, "pool {0}: the background allocation did not stop within {1} ms", path, waitMillis);
        }
    }

    private static String human(final long bytes)
    {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (double)(1L << 20));
    }
}

package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.nativeaccess.uring.UringBatch;
import io.kvtier.spi.TierStatus;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page files with their bytes moved through an io_uring owned by this store's worker: the same
 * paths, temp-file protocol, O_DIRECT handling and errors as {@link LibcFileStore}, whose namespace
 * calls (open, rename, unlink, mkdir) it keeps, with each page's read or write submitted to the ring
 * and run to completion by {@link Uring#execute} (short transfers carried on, EAGAIN and EINTR
 * retried). A write with {@code fsync} on submits its fdatasync after the write completes.
 *
 * <p>Reads go in batches ({@link #readPages}): the worker claims up to {@link #RING_ENTRIES} keys of a
 * read job at once, opens their files, and submits all their reads with one {@code io_uring_enter},
 * so the device works on them together. A page whose open, size check or read does not simply
 * succeed is read again alone through {@link #read}, which gives its exact status, logs it, and turns
 * O_DIRECT off when the filesystem refuses it: the fast path has no error handling of its own to get
 * wrong. Writes stay one key at a time: each takes the key's place in the index and its stripe lock
 * for the rename.
 *
 * <p>The tier registers the engine's transfer memory (its pool frames, {@code TierContext.transferMemory})
 * as fixed buffers of this ring at start, so a page slice inside it goes as READ_FIXED/WRITE_FIXED and
 * the kernel does not pin and unpin its pages per transfer; a slice outside it, or every slice when the
 * registration failed (RLIMIT_MEMLOCK), goes as a plain READ/WRITE from the same memory. Page files are
 * not registered as fixed files either: each is opened for one transfer and closed, so registration
 * would add two calls per page to save a file-table lookup.
 */
final class UringFileStore extends LibcFileStore
{
    /** SQ entries per ring: a page is one SQE, a write with fsync two, submitted in turn. */
    static final int RING_ENTRIES = 8;

    private final Uring ring;
    private final UringBatch batch = new UringBatch(RING_ENTRIES);
    private final int[] fds = new int[RING_ENTRIES];
    private final int[] operations = new int[RING_ENTRIES];

    /**
     * @param libc   the libc front, for the namespace calls
     * @param ring   this worker's ring, closed with the store
     * @param layout where pages live
     * @param arena  where the path buffers come from
     * @param fsync  whether to fdatasync a temp file before it is renamed
     * @param direct whether O_DIRECT is in use, shared by the tier's stores
     * @param errors where failures are logged
     */
    UringFileStore(final LibC libc, final Uring ring, final PathLayout layout, final Arena arena, final boolean fsync,
                   final DirectIo direct, final IoErrorLog errors)
    {
        super(libc, layout, arena, fsync, direct, errors);
        this.ring = ring;
    }

    @Override
    public int readBatchSize()
    {
        return RING_ENTRIES;
    }

    @Override
    public void readPages(final long[] keyHigh, final long[] keyLow, final MemorySegment[] destinations, final int count,
                          final TierStatus[] statuses)
    {
        batch.clear();
        for (int k = 0; k < count; k++)
        {
            statuses[k] = null;
            fds[k] = -1;
            final MemorySegment destination = destinations[k];
            preparePagePath(keyHigh[k], keyLow[k]);
            final boolean useDirect = direct.appliesTo(destination.address(), destination.byteSize());
            final int fd = libc.open(pagePath, LibC.O_RDONLY | LibC.O_CLOEXEC | (useDirect ? LibC.O_DIRECT : 0), 0);
            if (fd == -LibC.ENOENT)
            {
                statuses[k] = TierStatus.NOT_FOUND;
                continue;
            }
            if (fd < 0)
            {
                continue;
            }
            if (libc.size(fd) != destination.byteSize())
            {
                libc.close(fd);
                continue;
            }
            fds[k] = fd;
            operations[k] = batch.addRead(fd, destination, 0);
        }
        if (batch.size() > 0)
        {
            ring.execute(batch);
        }
        for (int k = 0; k < count; k++)
        {
            if (fds[k] >= 0)
            {
                final boolean whole = batch.result(operations[k]) == destinations[k].byteSize();
                libc.close(fds[k]);
                fds[k] = -1;
                if (whole)
                {
                    statuses[k] = TierStatus.OK;
                }
            }
        }
        for (int k = 0; k < count; k++)
        {
            if (statuses[k] == null)
            {
                // Anything but a plain success or a missing file: again alone, for its exact status and log line.
                statuses[k] = read(keyHigh[k], keyLow[k], destinations[k]);
            }
        }
    }

    @Override
    long readFully(final int fd, final MemorySegment destination)
    {
        batch.clear();
        batch.addRead(fd, destination, 0);
        ring.execute(batch);
        return batch.result(0);
    }

    @Override
    long writeFully(final int fd, final MemorySegment source)
    {
        batch.clear();
        batch.addWrite(fd, source, 0);
        ring.execute(batch);
        return batch.result(0);
    }

    @Override
    int datasync(final int fd)
    {
        batch.clear();
        batch.addFsync(fd, true);
        ring.execute(batch);
        return (int)batch.result(0);
    }

    /** @return page transfers this ring ran as READ_FIXED/WRITE_FIXED */
    long fixedBufferOperations()
    {
        return ring.fixedBufferOperations();
    }

    @Override
    public void close()
    {
        ring.close();
    }
}

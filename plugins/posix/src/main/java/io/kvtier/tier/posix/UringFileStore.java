package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.nativeaccess.uring.UringBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page files with their bytes moved through an io_uring owned by this store's worker: the same
 * paths, temp-file protocol, O_DIRECT handling and errors as {@link LibcFileStore}, whose namespace
 * calls (open, rename, unlink, mkdir) it keeps, with each page's read or write submitted to the ring
 * and run to completion by {@link Uring#execute} (short transfers carried on, EAGAIN and EINTR
 * retried).
 *
 * <p>Reads and writes go in batches, so the device works on a worker's pages together instead of one
 * at a time. Reads ({@link #readPages}): the worker claims up to {@link #RING_ENTRIES} keys of a read
 * job at once, opens their files, and submits all their reads with one {@code io_uring_enter}. Writes
 * ({@link #writeTemps}): the worker claims up to {@link #RING_ENTRIES} keys of a write job and reserves
 * them in the index; this store opens a temp file per page in its own write slot, submits all the
 * writes with one enter and, with {@code fsync} on, all their fdatasyncs with a second (a batch's
 * operations run in any order, and an fdatasync must not start before its write has completed), then
 * closes each; the tier renames each temp file over its page under that key's stripe lock, as it does
 * a single write. A page whose open, size check, read, write, fdatasync or close does not simply
 * succeed is done again alone through {@link #read} or {@link #writeTemp}, which gives its exact
 * status, logs it, makes missing directories, and turns O_DIRECT off when the filesystem refuses it:
 * the fast paths have no error handling of their own to get wrong. A failed batched write's temp file
 * is unlinked before the retry, and nothing is renamed that did not complete, so no partial page is
 * ever visible under its final name.
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
    /** SQ entries per ring, and pages per batch: a page is one SQE, its fdatasync another, submitted in turn. */
    static final int RING_ENTRIES = 8;

    private final Uring ring;
    private final UringBatch batch = new UringBatch(RING_ENTRIES);
    private final int[] fds = new int[RING_ENTRIES];
    private final int[] operations = new int[RING_ENTRIES];
    private final long[] writeResults = new long[RING_ENTRIES];
    /** Each read page's file size: the destination's, or a compact frame's ({@link TrailerBlock#isCompact}). */
    private final long[] readSizes = new long[RING_ENTRIES];

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
        super(libc, layout, arena, fsync, direct, errors, RING_ENTRIES);
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
            final long size = libc.size(fd);
            if (size != destination.byteSize() && !TrailerBlock.isCompact(size, destination.byteSize()))
            {
                libc.close(fd);
                continue;
            }
            fds[k] = fd;
            readSizes[k] = size;
            // The whole destination, so that O_DIRECT stays aligned: a compact file's read stops at its end.
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
                final boolean whole = batch.result(operations[k]) == readSizes[k];
                libc.close(fds[k]);
                fds[k] = -1;
                if (whole)
                {
                    if (readSizes[k] != destinations[k].byteSize())
                    {
                        TrailerBlock.restore(destinations[k], readSizes[k]);
                    }
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
    public void writeTemps(final long[] keyHigh, final long[] keyLow, final MemorySegment[] sources, final int count,
                           final TierStatus[] statuses)
    {
        batch.clear();
        try
        {
            for (int k = 0; k < count; k++)
            {
                statuses[k] = null;
                fds[k] = -1;
                final MemorySegment source = sources[k];
                prepareSlotPagePath(k, keyHigh[k], keyLow[k]);
                final int fd = openNewTemp(k, direct.appliesTo(source.address(), source.byteSize()), true);
                if (fd < 0)
                {
                    continue;
                }
                fds[k] = fd;
                operations[k] = batch.addWrite(fd, source, 0);
            }
            if (batch.size() > 0)
            {
                ring.execute(batch);
            }
            for (int k = 0; k < count; k++)
            {
                writeResults[k] = fds[k] >= 0 ? batch.result(operations[k]) : -1;
            }
            if (fsync)
            {
                batch.clear();
                for (int k = 0; k < count; k++)
                {
                    if (fds[k] >= 0 && writeResults[k] == sources[k].byteSize())
                    {
                        operations[k] = batch.addFsync(fds[k], true);
                    }
                }
                if (batch.size() > 0)
                {
                    ring.execute(batch);
                }
            }
            for (int k = 0; k < count; k++)
            {
                final int fd = fds[k];
                if (fd < 0)
                {
                    continue;
                }
                fds[k] = -1;
                final boolean written = writeResults[k] == sources[k].byteSize() && (!fsync || batch.result(operations[k]) == 0);
                // A close can report a network filesystem's write error: only a clean one completes the temp file.
                if (libc.close(fd) == 0 && written)
                {
                    tempWritten(k);
                    statuses[k] = TierStatus.OK;
                }
                else
                {
                    libc.unlink(slotTempPaths[k]);
                }
            }
        }
        finally
        {
            // Only reached with descriptors open when something threw: their temp files are abandoned.
            for (int k = 0; k < count; k++)
            {
                if (fds[k] >= 0)
                {
                    libc.close(fds[k]);
                    libc.unlink(slotTempPaths[k]);
                    fds[k] = -1;
                }
            }
        }
        for (int k = 0; k < count; k++)
        {
            if (statuses[k] == null)
            {
                // Anything but a plain success: again alone, for its exact status and log line.
                statuses[k] = writeTemp(k, keyHigh[k], keyLow[k], sources[k]);
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

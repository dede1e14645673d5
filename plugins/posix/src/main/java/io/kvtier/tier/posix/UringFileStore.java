package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.nativeaccess.uring.UringBatch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page files with their bytes moved through an io_uring owned by this store's worker: the same
 * paths, temp-file protocol, O_DIRECT handling and errors as {@link LibcFileStore}, whose namespace
 * calls (open, rename, unlink, mkdir) it keeps, with each page's read or write submitted to the ring
 * and run to completion by {@link Uring#execute} (short transfers carried on, EAGAIN and EINTR
 * retried). A write with {@code fsync} on submits its fdatasync after the write completes.
 *
 * <p>The pool frames are not registered as fixed buffers: the SPI hands a tier one pool slice per
 * key ({@code TierBatch.segment}) and never the pool's whole segment, so there is nothing stable to
 * register once, and registering per key would cost a system call more than it saves. Page files are
 * not registered as fixed files either: each is opened for one transfer and closed, so registration
 * would add two calls per page to save a file-table lookup.
 */
final class UringFileStore extends LibcFileStore
{
    /** SQ entries per ring: a page is one SQE, a write with fsync two, submitted in turn. */
    static final int RING_ENTRIES = 8;

    private final Uring ring;
    private final UringBatch batch = new UringBatch(1);

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

    @Override
    public void close()
    {
        ring.close();
    }
}

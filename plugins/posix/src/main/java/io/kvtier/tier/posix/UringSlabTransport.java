package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.nativeaccess.uring.UringBatch;
import io.kvtier.tier.support.SlabTransport;

import java.lang.foreign.MemorySegment;

/** A slab I/O thread's io_uring ring for its batches, and {@code pread}/{@code pwrite} for a page done alone. */
final class UringSlabTransport implements SlabTransport
{
    private final Uring ring;
    private final LibC libc;

    /**
     * @param ring the thread's ring, closed with the transport
     * @param libc the libc front
     */
    UringSlabTransport(final Uring ring, final LibC libc)
    {
        this.ring = ring;
        this.libc = libc;
    }

    @Override
    public void execute(final UringBatch batch, final boolean[] pageBytes)
    {
        ring.execute(batch);
    }

    @Override
    public long transfer(final boolean write, final int fd, final MemorySegment buffer, final long from, final long length, final long offset)
    {
        return write ? libc.pwriteFully(fd, buffer, from, length, offset) : libc.preadFully(fd, buffer, from, length, offset);
    }

    @Override
    public long fixedBufferOperations()
    {
        return ring.fixedBufferOperations();
    }

    @Override
    public void close()
    {
        ring.close();
    }
}

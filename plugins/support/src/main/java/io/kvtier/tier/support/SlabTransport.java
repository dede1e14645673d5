package io.kvtier.tier.support;

import io.kvtier.nativeaccess.uring.UringBatch;

import java.lang.foreign.MemorySegment;

/**
 * How one I/O thread of a slab (the POSIX tier's {@code layout = slab}) moves bytes between memory and its extent
 * files. The slab decides what goes where (slots, frame headers, tombstones) and fills a {@link UringBatch}; a transport
 * runs it. The POSIX tier's own are an io_uring ring and plain {@code pread}/{@code pwrite}; the 3FS tier's moves page
 * bytes through USRBIO, so a slab on a 3FS mount keeps its extents open and registered and does no file operation a page.
 *
 * <p>One thread uses a transport at a time. A transport that cannot move some operation its own way (memory it cannot
 * address, an fsync) does it with plain calls, so every operation of a batch gets a result.
 */
public interface SlabTransport extends AutoCloseable
{
    /**
     * Runs every operation of the batch to its result ({@link UringBatch#result}): the bytes moved, fewer only at the end
     * of a file or on a short transfer the transport gave up on, 0 for an fsync, or {@code -errno}. Operations of one
     * batch run in any order and at once.
     *
     * @param batch     the operations, filled by the caller
     * @param pageBytes for each operation, whether it moves a page's bytes (between a slice of the engine's and a slot);
     *                  the others are the slab's own records (frame headers, tombstones) and fsyncs, which a transport
     *                  may move another way, and a slab reads its records at start with plain calls
     */
    void execute(UringBatch batch, boolean[] pageBytes);

    /**
     * One transfer of a page's bytes to its end, for a page done alone (after its batched transfer failed, or without batches).
     *
     * @param write  a write from {@code buffer}, else a read into it
     * @param fd     the extent's descriptor
     * @param buffer the memory
     * @param from   where in {@code buffer}
     * @param length bytes
     * @param offset where in the file
     * @return bytes moved, or {@code -errno}
     */
    long transfer(boolean write, int fd, MemorySegment buffer, long from, long length, long offset);

    /** @return page transfers that went as READ_FIXED/WRITE_FIXED of registered buffers, for the tier's tests and log */
    default long fixedBufferOperations()
    {
        return 0;
    }

    /** Frees what the transport holds; nothing may be in flight. */
    @Override
    void close();

    /** Makes each I/O thread's transport, and frees what they share once every one is closed. */
    interface Factory extends AutoCloseable
    {
        /**
         * @param worker the I/O thread's number, from 0
         * @return its transport
         */
        SlabTransport open(int worker);

        /** @return how page bytes move, for the tier's start-up line */
        String describe();

        /** @return a word for it, for the tier's short description ({@code io=<word>}), such as {@code usrbio} */
        String ioName();

        /** Called after every transport is closed and before the extents' descriptors are. */
        @Override
        default void close()
        {
        }
    }
}

package io.kvtier.nativeaccess.uring;

import io.kvtier.nativeaccess.uring.bindings.statx;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.AT_EMPTY_PATH;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.STATX_DIOALIGN;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.errno$layout;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.statx;

/**
 * What O_DIRECT asks of a file's I/O: buffer addresses aligned to {@code memory}, file offsets and
 * lengths to {@code offset}. From {@code statx(STATX_DIOALIGN)} (Linux 6.1+) where the kernel and
 * filesystem report it, else the safe default of 4096 for both.
 *
 * @param memory    alignment of buffer addresses, a power of two; 0 when the kernel says the file does not support O_DIRECT
 * @param offset    alignment of file offsets and lengths, a power of two; 0 likewise
 * @param fromKernel whether the values came from {@code statx} (false: the 4096 default)
 */
public record DirectIoAlignment(long memory, long offset, boolean fromKernel)
{
    /** The alignment assumed when the kernel does not say: the page size, which every filesystem accepts. */
    public static final long DEFAULT = 4096;

    /**
     * What {@link Uring#directIoAlignment} answers: asked of the file itself because the alignment
     * depends on the filesystem and device under it, which the path does not tell.
     *
     * @param fd an open file
     * @return its O_DIRECT alignment from {@code statx(STATX_DIOALIGN)}, or 4096 for both when the
     *         kernel or filesystem does not report it
     */
    static DirectIoAlignment of(final int fd)
    {
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment state = scratch.allocate(errno$layout());
            final MemorySegment buffer = statx.allocate(scratch);
            final MemorySegment empty = scratch.allocateFrom("");
            final int rc = statx(state, fd, empty, AT_EMPTY_PATH(), STATX_DIOALIGN(), buffer);
            if (rc == 0 && (statx.stx_mask(buffer) & STATX_DIOALIGN()) != 0)
            {
                return new DirectIoAlignment(Integer.toUnsignedLong(statx.stx_dio_mem_align(buffer)),
                    Integer.toUnsignedLong(statx.stx_dio_offset_align(buffer)), true);
            }
            return new DirectIoAlignment(DEFAULT, DEFAULT, false);
        }
    }

    /** @return whether O_DIRECT can be used at all (false when statx reported zero alignments) */
    public boolean supported()
    {
        return memory != 0 && offset != 0;
    }

    /**
     * @param address a buffer's address
     * @param length  its length
     * @param fileOffset where in the file
     * @return whether an O_DIRECT transfer of this buffer at this offset is aligned
     */
    public boolean fits(final long address, final long length, final long fileOffset)
    {
        return supported() && (address & (memory - 1)) == 0 && (length & (offset - 1)) == 0 && (fileOffset & (offset - 1)) == 0;
    }
}

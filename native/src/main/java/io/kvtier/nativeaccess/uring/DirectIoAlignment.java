package io.kvtier.nativeaccess.uring;

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

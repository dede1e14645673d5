package io.kvtier.device;

/**
 * One strided copy: {@code height} rows of {@code width} bytes, row {@code i} between
 * {@code deviceAddress + i * devicePitch} and {@code hostOffset + i * hostPitch}. A row count of one
 * is a plain contiguous copy ({@code cudaMemcpyAsync}); more is one {@code cudaMemcpy2DAsync}.
 *
 * @param deviceAddress device address of the first row, relative to the executor's device base
 * @param devicePitch   bytes between device rows (at least {@code width} when {@code height > 1})
 * @param hostOffset    offset of the first row in the host segment (the pool mapping)
 * @param hostPitch     bytes between host rows (at least {@code width} when {@code height > 1})
 * @param width         bytes per row
 * @param height        rows
 */
record CopyOp(long deviceAddress, long devicePitch, long hostOffset, long hostPitch, long width, long height)
{
    /**
     * @throws IllegalArgumentException when a field is out of range, naming it
     */
    public CopyOp
    {
        check(devicePitch, hostPitch, width, height);
    }

    /**
     * The rules of a copy, for {@link CopyOps}, which holds copies without making a record of each.
     *
     * @throws IllegalArgumentException when a field is out of range, naming it
     */
    static void check(final long devicePitch, final long hostPitch, final long width, final long height)
    {
        if (width <= 0 || height <= 0)
        {
            throw new IllegalArgumentException("width=" + width + " height=" + height + " must be positive");
        }
        if (height > 1 && (devicePitch < width || hostPitch < width))
        {
            // cudaMemcpy2D takes unsigned pitches no smaller than the width; rows never overlap.
            throw new IllegalArgumentException("devicePitch=" + devicePitch + " hostPitch=" + hostPitch + " must be at least width=" + width);
        }
    }

    /**
     * @param deviceAddress device address
     * @param hostOffset    host offset
     * @param bytes         length
     * @return a contiguous copy
     */
    public static CopyOp contiguous(final long deviceAddress, final long hostOffset, final long bytes)
    {
        return new CopyOp(deviceAddress, bytes, hostOffset, bytes, bytes, 1);
    }

    /** @return bytes the copy moves */
    public long bytes()
    {
        return width * height;
    }

    /** @return whether it is a single contiguous run */
    public boolean isContiguous()
    {
        return height == 1;
    }
}

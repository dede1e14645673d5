package io.kvtier.tier.posix;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * CRC32C of page payloads for the slab layout, one per worker. {@link CRC32C} takes only arrays and
 * buffers and {@link MemorySegment#asByteBuffer()} allocates, so for slices inside the engine's
 * transfer memory (its pool frames, where every page the engine hands a tier lives) it keeps one
 * buffer view per 1 GiB chunk, made on first use, and only moves their position and limit; a slice
 * elsewhere gets a view of its own.
 */
final class FrameCrc
{
    private static final long CHUNK = 1L << 30;

    private final CRC32C crc = new CRC32C();
    private final MemorySegment region;
    private final long reach;
    private final ByteBuffer[] views;

    /**
     * @param transferMemory the engine's transfer memory, if it offered any
     * @param maxLength      the longest payload checksummed
     */
    FrameCrc(final Optional<MemorySegment> transferMemory, final long maxLength)
    {
        region = transferMemory.orElse(null);
        // Each chunk's view reaches a payload past its end, so a payload that starts in it never straddles two.
        reach = maxLength;
        views = region == null ? new ByteBuffer[0] : new ByteBuffer[(int)((region.byteSize() + CHUNK - 1) / CHUNK)];
    }

    /**
     * The reflected CRC32C polynomial (Castagnoli): in this bit order bit 31 holds the coefficient of
     * x^0 and bit 0 that of x^31, so multiplying by x is a right shift that folds x^32 back in as this.
     */
    private static final int POLYNOMIAL = 0x82F63B78;
    /** x^0 in that bit order: the multiplicative identity. */
    private static final int ONE = 1 << 31;
    /** {@code POWERS[k]} is x^(2^k) mod the polynomial, for the shifts of {@link #combine}: a length in bits has at most 64 of them. */
    private static final int[] POWERS = new int[64];

    static
    {
        POWERS[0] = ONE >>> 1;
        for (int k = 1; k < POWERS.length; k++)
        {
            POWERS[k] = multiply(POWERS[k - 1], POWERS[k - 1]);
        }
    }

    /**
     * @param segment the bytes
     * @param length  how many of them, from the start
     * @return their CRC32C
     */
    int of(final MemorySegment segment, final long length)
    {
        return of(segment, 0, length);
    }

    /**
     * The CRC32C of a payload of which the caller knows the CRC32C of a prefix: only the rest is read.
     *
     * @param segment    the payload
     * @param length     its bytes
     * @param knownBytes how many of its first bytes {@code knownCrc} covers; outside {@code [1, length]} it is not used and the whole payload is read
     * @param knownCrc   the CRC32C of those bytes
     * @return the CRC32C of the payload's {@code length} bytes
     */
    int of(final MemorySegment segment, final long length, final long knownBytes, final int knownCrc)
    {
        if (knownBytes <= 0 || knownBytes > length)
        {
            return of(segment, 0, length);
        }
        final long rest = length - knownBytes;
        return rest == 0 ? knownCrc : combine(knownCrc, of(segment, knownBytes, rest), rest);
    }

    /**
     * The CRC32C of two runs of bytes one after the other, from each run's CRC32C. CRC32C (with its
     * all-ones start and final inversion) is affine in its input, so appending {@code second} bytes to
     * the first run multiplies the first run's contribution by x^(8 * second) modulo the polynomial, and
     * the second run's CRC adds to that; the inversions of the two cancel. Costs a few dozen multiplications
     * of 32-bit polynomials, whatever the lengths.
     *
     * @param firstCrc  the CRC32C of the first run
     * @param secondCrc the CRC32C of the second run
     * @param second    the second run's length in bytes, at least 0
     * @return the CRC32C of the first run followed by the second
     */
    static int combine(final int firstCrc, final int secondCrc, final long second)
    {
        // x^(8 * second) mod P, from the powers x^(2^k) of the set bits of the bit length.
        int shift = ONE;
        long bits = second << 3;
        for (int k = 0; bits != 0; k++, bits >>>= 1)
        {
            if ((bits & 1) != 0)
            {
                shift = multiply(shift, POWERS[k]);
            }
        }
        return multiply(shift, firstCrc) ^ secondCrc;
    }

    /** @return the product of two polynomials of degree below 32, modulo the polynomial, in the reflected bit order */
    private static int multiply(final int a, final int b)
    {
        int product = 0;
        int power = b;
        // Term by term of a from x^0 (bit 31) up: add b·x^i for every term x^i of a.
        for (int bit = 31; bit >= 0; bit--)
        {
            if (((a >>> bit) & 1) != 0)
            {
                product ^= power;
            }
            power = (power & 1) != 0 ? (power >>> 1) ^ POLYNOMIAL : power >>> 1;
        }
        return product;
    }

    /**
     * @param segment the bytes
     * @param from    where in it they start
     * @param length  how many of them
     * @return their CRC32C
     */
    private int of(final MemorySegment segment, final long from, final long length)
    {
        crc.reset();
        final long offset = region == null ? -1 : segment.address() + from - region.address();
        if (offset >= 0 && length <= reach && offset + length <= region.byteSize())
        {
            final int chunk = (int)(offset / CHUNK);
            ByteBuffer view = views[chunk];
            if (view == null)
            {
                final long start = chunk * CHUNK;
                view = region.asSlice(start, Math.min(region.byteSize() - start, CHUNK + reach)).asByteBuffer();
                views[chunk] = view;
            }
            final int at = (int)(offset - chunk * CHUNK);
            view.limit(at + (int)length);
            view.position(at);
            crc.update(view);
        }
        else
        {
            crc.update(segment.asSlice(from, length).asByteBuffer());
        }
        return (int)crc.getValue();
    }
}

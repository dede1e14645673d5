package io.kvtier.spi;

/**
 * The 128-bit identity of a KV page, as computed by the chained hash specified in
 * {@code docs/keys.md}. Two pages with the same key hold the same bytes, on any node.
 *
 * <p>Hot paths pass keys as two {@code long}s ({@link TierBatch#keyHigh(int)},
 * {@link TierBatch#keyLow(int)}) and never build this record; it exists for tests, logs and
 * plugins that prefer an object.
 *
 * @param high the first 8 bytes of the key, big-endian
 * @param low  the last 8 bytes of the key, big-endian
 */
public record PageKey(long high, long low)
{
    /** Length of the canonical text form: 32 lowercase hex digits. */
    public static final int HEX_LENGTH = 32;

    private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** @return the canonical text form: 32 lowercase hex digits, {@code high} first. */
    public String toHex()
    {
        final byte[] text = new byte[HEX_LENGTH];
        writeHex(high, low, text, 0);
        return new String(text, java.nio.charset.StandardCharsets.US_ASCII);
    }

    /**
     * Writes the canonical text form of a key without allocating, for building object names on
     * the I/O path.
     *
     * @param high   the key's high half
     * @param low    the key's low half
     * @param dst    the destination, with at least {@link #HEX_LENGTH} bytes from {@code offset}
     * @param offset where the first digit goes
     */
    public static void writeHex(final long high, final long low, final byte[] dst, final int offset)
    {
        for (int i = 0; i < 16; i++)
        {
            dst[offset + i] = HEX_DIGITS[(int)(high >>> (60 - 4 * i)) & 0xF];
            dst[offset + 16 + i] = HEX_DIGITS[(int)(low >>> (60 - 4 * i)) & 0xF];
        }
    }

    /**
     * Parses the canonical text form.
     *
     * @param hex 32 hex digits, either case
     * @return the key
     * @throws IllegalArgumentException naming the text when it is not 32 hex digits
     */
    public static PageKey fromHex(final String hex)
    {
        if (hex == null || hex.length() != HEX_LENGTH)
        {
            throw new IllegalArgumentException("page key must be " + HEX_LENGTH + " hex digits, got: " + hex);
        }
        try
        {
            return new PageKey(Long.parseUnsignedLong(hex, 0, 16, 16), Long.parseUnsignedLong(hex, 16, 32, 16));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("page key must be " + HEX_LENGTH + " hex digits, got: " + hex, ex);
        }
    }

    @Override
    public String toString()
    {
        return toHex();
    }
}

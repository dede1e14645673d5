package io.kvtier.client;

import java.security.DigestException;
import java.security.MessageDigest;

/**
 * Computes page keys: {@code key = SHA-256("kvtier:page:v1" || parent[16] || u32le(n) || u32le(t0) ..
 * u32le(t(n-1)))[0:16]}, with the key's high half the first 8 bytes big-endian.
 *
 * <p>Reuses its digest and buffers, so hashing allocates nothing. One instance per thread.
 */
public final class PageKeyHasher
{
    /** Domain tag of page keys. */
    public static final String PAGE_TAG = "kvtier:page:v1";

    private static final byte[] PAGE_TAG_BYTES = PAGE_TAG.getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final MessageDigest digest = Namespace.sha256();
    private final byte[] header = new byte[16 + 4];
    private byte[] tokenBytes = new byte[4 * 256];
    private final byte[] out = new byte[32];
    private long high;
    private long low;

    /**
     * Hashes one page.
     *
     * @param parentHigh the parent key's high half (the namespace root for the first page)
     * @param parentLow  the parent key's low half
     * @param tokens     token ids
     * @param from       first token of the page
     * @param count      tokens in the page; a last, partial page has fewer than a full one
     */
    public void hash(final long parentHigh, final long parentLow, final int[] tokens, final int from, final int count)
    {
        putLongBigEndian(header, 0, parentHigh);
        putLongBigEndian(header, 8, parentLow);
        putIntLittleEndian(header, 16, count);
        if (tokenBytes.length < 4 * count)
        {
            tokenBytes = new byte[Integer.highestOneBit(4 * count) << 1];
        }
        for (int i = 0; i < count; i++)
        {
            putIntLittleEndian(tokenBytes, 4 * i, tokens[from + i]);
        }
        digest.update(PAGE_TAG_BYTES);
        digest.update(header);
        digest.update(tokenBytes, 0, 4 * count);
        try
        {
            digest.digest(out, 0, out.length);
        }
        catch (final DigestException ex)
        {
            throw new IllegalStateException(ex);
        }
        high = getLongBigEndian(out, 0);
        low = getLongBigEndian(out, 8);
    }

    /** @return the high half of the last key hashed */
    public long high()
    {
        return high;
    }

    /** @return the low half of the last key hashed */
    public long low()
    {
        return low;
    }

    private static void putLongBigEndian(final byte[] dst, final int at, final long value)
    {
        for (int i = 0; i < 8; i++)
        {
            dst[at + i] = (byte)(value >>> (56 - 8 * i));
        }
    }

    private static long getLongBigEndian(final byte[] src, final int at)
    {
        long value = 0;
        for (int i = 0; i < 8; i++)
        {
            value = (value << 8) | (src[at + i] & 0xFF);
        }
        return value;
    }

    private static void putIntLittleEndian(final byte[] dst, final int at, final int value)
    {
        dst[at] = (byte)value;
        dst[at + 1] = (byte)(value >>> 8);
        dst[at + 2] = (byte)(value >>> 16);
        dst[at + 3] = (byte)(value >>> 24);
    }
}

package io.kvtier.client;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;

/**
 * The name an engine gives a page's object in its L3 tiers (docs/keys.md, "The name of a page in L3"):
 * the page's key when the page has no namespace (tag 0) and the engine no {@code l3.key-salt};
 * otherwise {@code SHA-256("kvtier:l3:v1" || u32le(len(salt)) || salt || u64be(tag) || key)[0:16]},
 * so that namespaces and trust domains sharing a tier never reach each other's objects.
 *
 * <p>One instance per thread; {@link #name} allocates nothing.
 */
public final class L3ObjectName
{
    /** Domain tag of L3 names. */
    public static final String L3_TAG = "kvtier:l3:v1";

    private static final byte[] L3_TAG_BYTES = L3_TAG.getBytes(StandardCharsets.US_ASCII);

    private final MessageDigest digest = Namespace.sha256();
    private final byte[] salt;
    private final byte[] saltField;
    private final byte[] tail = new byte[8 + 16];
    private final byte[] out = new byte[32];
    private long high;
    private long low;

    /**
     * @param salt the engine's {@code l3.key-salt}; empty for none
     */
    public L3ObjectName(final String salt)
    {
        this.salt = salt.getBytes(StandardCharsets.UTF_8);
        this.saltField = new byte[4 + this.salt.length];
        saltField[0] = (byte)this.salt.length;
        saltField[1] = (byte)(this.salt.length >>> 8);
        saltField[2] = (byte)(this.salt.length >>> 16);
        saltField[3] = (byte)(this.salt.length >>> 24);
        System.arraycopy(this.salt, 0, saltField, 4, this.salt.length);
    }

    /** @return whether every name is the key itself for untagged pages (no salt) */
    public boolean unsalted()
    {
        return salt.length == 0;
    }

    /**
     * Computes a page's L3 name; read it with {@link #high()} and {@link #low()}.
     *
     * @param tag     the page's namespace tag (0 for none)
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     */
    public void name(final long tag, final long keyHigh, final long keyLow)
    {
        if (tag == 0 && salt.length == 0)
        {
            high = keyHigh;
            low = keyLow;
            return;
        }
        putLongBigEndian(tail, 0, tag);
        putLongBigEndian(tail, 8, keyHigh);
        putLongBigEndian(tail, 16, keyLow);
        digest.update(L3_TAG_BYTES);
        digest.update(saltField);
        digest.update(tail);
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

    /** @return the high half of the last name computed */
    public long high()
    {
        return high;
    }

    /** @return the low half of the last name computed */
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
}

package io.kvtier.client;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.HexFormat;

/**
 * A reusable chain of page keys in prefix order (docs/keys.md): key {@code i} is
 * {@code SHA-256("kvtier:page:v1" || key(i-1) || u32le(n_i) || u32le(t) for each token)[0:16]}, key
 * {@code -1} being the namespace root. Requests take their keys from a chain. Computing a chain
 * allocates nothing once the chain's token buffer has grown to the longest page.
 *
 * <p>Not thread-safe: one chain per thread.
 */
public final class PageKeyChain
{
    /** A key half as a request's body holds it: big-endian, at any byte offset. */
    private static final ValueLayout.OfLong BIG_ENDIAN_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong NATIVE_LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final boolean SWAP = ByteOrder.nativeOrder() != ByteOrder.BIG_ENDIAN;

    // Key i's halves side by side, high at 2i and low at 2i + 1, in the order a request's body holds them:
    // a run of keys goes in and out of a record in one bulk copy, and a key's halves share a cache line.
    private final long[] keys;
    private final PageKeyHasher hasher = new PageKeyHasher();
    private int size;

    /**
     * @param capacity the most keys the chain holds (at most the client's max keys to send it whole)
     */
    public PageKeyChain(final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be >= 1");
        }
        keys = new long[2 * capacity];
    }

    /** @return the most keys the chain holds */
    public int capacity()
    {
        return keys.length >> 1;
    }

    /** @return keys in the chain */
    public int size()
    {
        return size;
    }

    /**
     * @param index a key's position
     * @return its high half: bytes 0..7, big-endian
     */
    public long high(final int index)
    {
        checkIndex(index);
        return keys[2 * index];
    }

    /**
     * @param index a key's position
     * @return its low half: bytes 8..15, big-endian
     */
    public long low(final int index)
    {
        checkIndex(index);
        return keys[2 * index + 1];
    }

    /**
     * @param index a key's position
     * @return the key as 32 lowercase hex digits, its text form (allocates)
     */
    public String hex(final int index)
    {
        return HexFormat.of().toHexDigits(high(index)) + HexFormat.of().toHexDigits(low(index));
    }

    /** Empties the chain. */
    public void clear()
    {
        size = 0;
    }

    /**
     * Appends a key computed elsewhere.
     *
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @return this
     */
    public PageKeyChain add(final long keyHigh, final long keyLow)
    {
        if (2 * size == keys.length)
        {
            throw new IllegalStateException("key chain is full at " + capacity() + " keys");
        }
        keys[2 * size] = keyHigh;
        keys[2 * size + 1] = keyLow;
        size++;
        return this;
    }

    /**
     * Replaces the key at a position the chain already has (the engine's record of a shared-memory
     * client, whose requests write keys into runs of slots).
     *
     * @param index   a position below {@link #size()}
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @return this
     */
    public PageKeyChain set(final int index, final long keyHigh, final long keyLow)
    {
        checkIndex(index);
        keys[2 * index] = keyHigh;
        keys[2 * index + 1] = keyLow;
        return this;
    }

    /**
     * Replaces keys {@code [first, first + count)}, positions the chain already has, with the {@code count}
     * 16-byte keys that start at {@code offset} in {@code segment}, each as a request's body holds it (two
     * big-endian halves): the engine's copy of a keyed request, one range check and one bulk copy for the run.
     *
     * @param first   the first position, with {@code first + count <= size()}
     * @param segment where the keys are
     * @param offset  the first key's first byte
     * @param count   keys
     * @return this
     * @throws IndexOutOfBoundsException if the positions or the bytes are out of range
     */
    public PageKeyChain copyFrom(final int first, final MemorySegment segment, final long offset, final int count)
    {
        checkRange(first, count);
        // A plain copy and then the byte order in place: the compiler turns the second loop into vector byte
        // shuffles, where a copy that swaps as it goes takes a native call's element-by-element loop.
        MemorySegment.copy(segment, NATIVE_LONG, offset, keys, 2 * first, 2 * count);
        if (SWAP)
        {
            final long[] k = keys;
            for (int i = 2 * first, end = 2 * (first + count); i < end; i++)
            {
                k[i] = Long.reverseBytes(k[i]);
            }
        }
        return this;
    }

    /**
     * Writes keys {@code [from, from + count)} as a request's body holds them (16 bytes a key, two big-endian
     * halves) at {@code offset} in {@code segment}: one range check and one bulk copy for the run.
     *
     * @param from    the first position, with {@code from + count <= size()}
     * @param count   keys
     * @param segment where they go
     * @param offset  the first key's first byte
     * @return this
     * @throws IndexOutOfBoundsException if the positions or the bytes are out of range
     */
    public PageKeyChain copyTo(final int from, final int count, final MemorySegment segment, final long offset)
    {
        checkRange(from, count);
        MemorySegment.copy(keys, 2 * from, segment, BIG_ENDIAN_LONG, offset, 2 * count);
        return this;
    }

    /**
     * Replaces the chain with the keys of {@code tokens} split into pages of {@code pageTokens}.
     *
     * @param namespace  whose root the chain starts from
     * @param tokens     token ids (unsigned 32-bit)
     * @param tokenCount how many of them
     * @param pageTokens tokens per full page
     * @param partial    whether a last page of fewer tokens gets a key (its own, never a full page's)
     * @return this
     */
    public PageKeyChain compute(final Namespace namespace, final int[] tokens, final int tokenCount, final int pageTokens, final boolean partial)
    {
        return compute(namespace.rootHigh(), namespace.rootLow(), tokens, tokenCount, pageTokens, partial);
    }

    /**
     * As {@link #compute(Namespace, int[], int, int, boolean)} from a root computed once
     * ({@link Namespace#rootHigh()}, {@link Namespace#rootLow()}), without allocating.
     *
     * @param rootHigh   the root's high half
     * @param rootLow    the root's low half
     * @param tokens     token ids
     * @param tokenCount how many of them
     * @param pageTokens tokens per full page
     * @param partial    whether a last partial page gets a key
     * @return this
     */
    public PageKeyChain compute(final long rootHigh, final long rootLow, final int[] tokens, final int tokenCount, final int pageTokens,
                                final boolean partial)
    {
        if (pageTokens < 1 || tokenCount < 0 || tokenCount > tokens.length)
        {
            throw new IllegalArgumentException("pageTokens=" + pageTokens + " must be >= 1 and tokenCount=" + tokenCount
                + " within the " + tokens.length + " tokens");
        }
        final int pages = partial ? (tokenCount + pageTokens - 1) / pageTokens : tokenCount / pageTokens;
        if (pages > capacity())
        {
            throw new IllegalArgumentException(tokenCount + " tokens make " + pages + " pages, more than the chain's capacity of " + capacity());
        }
        long parentHigh = rootHigh;
        long parentLow = rootLow;
        for (int page = 0; page < pages; page++)
        {
            final int from = page * pageTokens;
            hasher.hash(parentHigh, parentLow, tokens, from, Math.min(pageTokens, tokenCount - from));
            parentHigh = hasher.high();
            parentLow = hasher.low();
            keys[2 * page] = parentHigh;
            keys[2 * page + 1] = parentLow;
        }
        size = pages;
        return this;
    }

    private void checkRange(final int first, final int count)
    {
        if (first < 0 || count < 0 || first > size - count)
        {
            throw new IndexOutOfBoundsException("keys " + first + ".." + ((long)first + count) + " of a chain of " + size);
        }
    }

    private void checkIndex(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("key " + index + " of a chain of " + size);
        }
    }
}

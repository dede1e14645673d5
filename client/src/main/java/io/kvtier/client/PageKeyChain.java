package io.kvtier.client;

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
    private final long[] high;
    private final long[] low;
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
        high = new long[capacity];
        low = new long[capacity];
    }

    /** @return the most keys the chain holds */
    public int capacity()
    {
        return high.length;
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
        return high[index];
    }

    /**
     * @param index a key's position
     * @return its low half: bytes 8..15, big-endian
     */
    public long low(final int index)
    {
        checkIndex(index);
        return low[index];
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
        if (size == high.length)
        {
            throw new IllegalStateException("key chain is full at " + high.length + " keys");
        }
        high[size] = keyHigh;
        low[size] = keyLow;
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
        high[index] = keyHigh;
        low[index] = keyLow;
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
        if (pages > high.length)
        {
            throw new IllegalArgumentException(tokenCount + " tokens make " + pages + " pages, more than the chain's capacity of " + high.length);
        }
        long parentHigh = rootHigh;
        long parentLow = rootLow;
        for (int page = 0; page < pages; page++)
        {
            final int from = page * pageTokens;
            hasher.hash(parentHigh, parentLow, tokens, from, Math.min(pageTokens, tokenCount - from));
            parentHigh = hasher.high();
            parentLow = hasher.low();
            high[page] = parentHigh;
            low[page] = parentLow;
        }
        size = pages;
        return this;
    }

    private void checkIndex(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("key " + index + " of a chain of " + size);
        }
    }
}

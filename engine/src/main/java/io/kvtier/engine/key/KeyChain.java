package io.kvtier.engine.key;

import io.kvtier.client.PageKeyHasher;

import io.kvtier.spi.PageKey;

/**
 * A reusable buffer of page keys in prefix order: key {@code i} is the hash of page {@code i} under
 * key {@code i - 1}. Filling it from tokens allocates nothing once its capacity is reached.
 */
public final class KeyChain
{
    private final long[] high;
    private final long[] low;
    private final int[] tokenCounts;
    private final PageKeyHasher hasher = new PageKeyHasher();
    private int size;

    /**
     * @param capacity the most keys the chain holds
     */
    public KeyChain(final int capacity)
    {
        high = new long[capacity];
        low = new long[capacity];
        tokenCounts = new int[capacity];
    }

    /** @return the most keys the chain holds */
    public int capacity()
    {
        return high.length;
    }

    /** @return the number of keys */
    public int size()
    {
        return size;
    }

    /**
     * @param index a key's position
     * @return its high half
     */
    public long high(final int index)
    {
        checkIndex(index);
        return high[index];
    }

    /**
     * @param index a key's position
     * @return its low half
     */
    public long low(final int index)
    {
        checkIndex(index);
        return low[index];
    }

    /**
     * @param index a key's position
     * @return tokens in that page, or 0 when the key was added directly
     */
    public int tokenCount(final int index)
    {
        checkIndex(index);
        return tokenCounts[index];
    }

    /**
     * @param index a key's position
     * @return the key as an object (allocates)
     */
    public PageKey key(final int index)
    {
        return new PageKey(high(index), low(index));
    }

    /** Empties the chain. */
    public void clear()
    {
        size = 0;
    }

    /**
     * Appends a key computed elsewhere (by a client in another language, say).
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return this
     */
    public KeyChain add(final long keyHigh, final long keyLow)
    {
        if (size == high.length)
        {
            throw new IllegalStateException("key chain is full at " + high.length + " keys");
        }
        high[size] = keyHigh;
        low[size] = keyLow;
        tokenCounts[size] = 0;
        size++;
        return this;
    }

    /**
     * Replaces the key at a position the chain already has (a slot of a shared-memory client, whose
     * requests write keys into runs of slots).
     *
     * @param index   a position below {@link #size()}
     * @param keyHigh the key's high half
     * @param keyLow  its low half
     * @return this
     */
    public KeyChain set(final int index, final long keyHigh, final long keyLow)
    {
        checkIndex(index);
        high[index] = keyHigh;
        low[index] = keyLow;
        tokenCounts[index] = 0;
        return this;
    }

    /**
     * Replaces the chain with the keys of {@code tokens} split into pages of {@code pageTokens}; a
     * last partial page gets its own key, distinct from any full page's.
     *
     * @param rootHigh   the namespace root's high half ({@link io.kvtier.client.Namespace#rootHigh()})
     * @param rootLow    the namespace root's low half
     * @param tokens     token ids
     * @param tokenCount how many of them
     * @param pageTokens tokens per full page
     * @param partial    whether to key a last partial page
     * @return this
     */
    public KeyChain compute(final long rootHigh, final long rootLow, final int[] tokens, final int tokenCount,
                            final int pageTokens, final boolean partial)
    {
        if (pageTokens < 1)
        {
            throw new IllegalArgumentException("pageTokens=" + pageTokens + " must be >= 1");
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
            final int count = Math.min(pageTokens, tokenCount - from);
            hasher.hash(parentHigh, parentLow, tokens, from, count);
            parentHigh = hasher.high();
            parentLow = hasher.low();
            high[page] = parentHigh;
            low[page] = parentLow;
            tokenCounts[page] = count;
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

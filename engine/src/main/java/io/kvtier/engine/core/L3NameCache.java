package io.kvtier.engine.core;

/**
 * Which key an object's name in L3 stands for, for the names this engine made (docs/keys.md, "The name
 * of a page in L3"): a tier that drops an object by itself reports its name, and the index is keyed by
 * the page's key. A name is a hash, so it cannot be turned back into its key; this remembers the last
 * key stored in each of a fixed number of places, enough for the index's L3 entries, and a name it
 * lost is only a report the engine does not act on (the next load of the key finds the object gone).
 * Engine thread only; allocation-free.
 */
final class L3NameCache
{
    private static final int LONGS_PER_ENTRY = 4;

    private final long[] entries;
    private final int mask;
    private long keyHigh;
    private long keyLow;

    /**
     * @param capacity names remembered at most (rounded up to a power of two)
     */
    L3NameCache(final int capacity)
    {
        final int size = Integer.highestOneBit(Math.max(2, capacity - 1)) << 1;
        this.entries = new long[size * LONGS_PER_ENTRY];
        this.mask = size - 1;
    }

    /** Remembers that {@code name} stands for {@code key}, in place of whatever shared its place. */
    void put(final long nameHigh, final long nameLow, final long highOfKey, final long lowOfKey)
    {
        final int at = place(nameHigh, nameLow);
        entries[at] = nameHigh;
        entries[at + 1] = nameLow;
        entries[at + 2] = highOfKey;
        entries[at + 3] = lowOfKey;
    }

    /**
     * @return whether the name is remembered; its key is then {@link #keyHigh()}, {@link #keyLow()}
     */
    boolean find(final long nameHigh, final long nameLow)
    {
        final int at = place(nameHigh, nameLow);
        if (entries[at] != nameHigh || entries[at + 1] != nameLow || (nameHigh == 0 && nameLow == 0))
        {
            return false;
        }
        keyHigh = entries[at + 2];
        keyLow = entries[at + 3];
        return true;
    }

    long keyHigh()
    {
        return keyHigh;
    }

    long keyLow()
    {
        return keyLow;
    }

    private int place(final long nameHigh, final long nameLow)
    {
        // Names are SHA-256 output: their bits are already uniform.
        return (int)(nameLow & mask) * LONGS_PER_ENTRY;
    }
}

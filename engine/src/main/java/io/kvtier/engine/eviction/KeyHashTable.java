package io.kvtier.engine.eviction;

import java.util.Arrays;

/**
 * An open-addressing map from 64-bit key hashes to small ids: linear probing, backward-shift deletion, at most
 * half full, sized at construction. Any long is a valid key. Not thread-safe.
 */
final class KeyHashTable
{
    /** Returned by {@link #get} for an absent key. */
    static final int ABSENT = -1;

    private final long[] keys;
    private final int[] values;
    private final int mask;
    private int size;

    /**
     * @param entries the most entries the table will hold
     */
    KeyHashTable(final int entries)
    {
        final int slots = Math.max(4, Integer.highestOneBit(Math.max(1, entries) * 2 - 1) << 1);
        keys = new long[slots];
        values = new int[slots];
        Arrays.fill(values, ABSENT);
        mask = slots - 1;
    }

    /** @return the number of entries */
    int size()
    {
        return size;
    }

    /**
     * @param key a key
     * @return its value, or {@link #ABSENT}
     */
    int get(final long key)
    {
        return get(key, home(key));
    }

    /**
     * {@link #get(long)} with the key's home slot given: tables of one size share homes, so a caller looking a key
     * up in several of them mixes it once.
     *
     * @param key  a key
     * @param home {@link #home(long)} of the key, from this table or one of the same size
     * @return its value, or {@link #ABSENT}
     */
    int get(final long key, final int home)
    {
        for (int slot = home; ; slot = (slot + 1) & mask)
        {
            if (values[slot] == ABSENT)
            {
                return ABSENT;
            }
            if (keys[slot] == key)
            {
                return values[slot];
            }
        }
    }

    /**
     * Maps a key to a value, replacing any value it had.
     *
     * @param key   a key
     * @param value a value, not {@link #ABSENT}
     */
    void put(final long key, final int value)
    {
        put(key, value, home(key));
    }

    /**
     * {@link #put(long, int)} with the key's home slot given, as for {@link #get(long, int)}.
     *
     * @param key   a key
     * @param value a value, not {@link #ABSENT}
     * @param home  {@link #home(long)} of the key, from this table or one of the same size
     */
    void put(final long key, final int value, final int home)
    {
        int slot = home;
        while (values[slot] != ABSENT && keys[slot] != key)
        {
            slot = (slot + 1) & mask;
        }
        if (values[slot] == ABSENT)
        {
            if (2 * (size + 1) > keys.length)
            {
                throw new IllegalStateException("more than " + keys.length / 2 + " entries in a table sized for them");
            }
            size++;
            keys[slot] = key;
        }
        values[slot] = value;
    }

    /**
     * @param key a key
     * @return whether it was present
     */
    boolean remove(final long key)
    {
        int slot = home(key);
        while (true)
        {
            if (values[slot] == ABSENT)
            {
                return false;
            }
            if (keys[slot] == key)
            {
                break;
            }
            slot = (slot + 1) & mask;
        }
        // Backward shift: move later entries of the run into the hole when their home allows it.
        int hole = slot;
        for (int probe = (hole + 1) & mask; values[probe] != ABSENT; probe = (probe + 1) & mask)
        {
            final int home = home(keys[probe]);
            if (((probe - home) & mask) >= ((probe - hole) & mask))
            {
                keys[hole] = keys[probe];
                values[hole] = values[probe];
                hole = probe;
            }
        }
        values[hole] = ABSENT;
        size--;
        return true;
    }

    /**
     * @param key a key
     * @return the slot its probe starts at: the same in every table sized for the same number of entries
     */
    int home(final long key)
    {
        return (int)FrequencySketch.mix(key) & mask;
    }
}

package io.kvtier.engine.eviction;

import java.util.Arrays;

/**
 * The keys of a set of {@link MiniatureCache}s, in one table: a key's <i>entry</i> holds the key's page in each
 * miniature that has it. The miniatures replay the same sampled events, so they hold mostly the same keys; with a
 * table each, a replayed event searched four tables for one key. With this one, it is searched once for all of them,
 * and a miniature reads its page from the entry: the four pages of an entry are side by side.
 *
 * <p>An entry lives while any miniature holds its key, and its number does not change while it lives (the table maps
 * the key to the number; moving a table slot on removal moves the number, not the entry). Not thread-safe.
 */
final class MiniatureKeys
{
    /** No entry, or no page in a miniature. */
    static final int ABSENT = KeyHashTable.ABSENT;

    private final int miniatures;
    private final KeyHashTable table;
    /** Entry {@code e}'s page in miniature {@code m} at {@code e * miniatures + m}, or {@link #ABSENT}. */
    private final int[] pages;
    private final byte[] holders;
    /** Entry numbers not in use, a stack of {@link #freeCount}. */
    private final int[] free;
    private int freeCount;

    /**
     * @param miniatures how many miniatures share the keys, at most 127
     * @param capacity   the pages of each miniature
     */
    MiniatureKeys(final int miniatures, final int capacity)
    {
        if (miniatures < 1 || miniatures > Byte.MAX_VALUE || capacity < 1)
        {
            throw new IllegalArgumentException("miniatures=" + miniatures + " must be in [1, 127] and capacity=" + capacity + " at least 1");
        }
        final int entries = Math.multiplyExact(miniatures, capacity);
        this.miniatures = miniatures;
        this.table = new KeyHashTable(entries);
        this.pages = new int[Math.multiplyExact(entries, miniatures)];
        Arrays.fill(pages, ABSENT);
        this.holders = new byte[entries];
        this.free = new int[entries];
        for (int entry = 0; entry < entries; entry++)
        {
            free[entry] = entries - 1 - entry; // entry 0 is taken first
        }
        this.freeCount = entries;
    }

    /**
     * @param key a key's hash
     * @return where its search starts: given to {@link #find(long, int)}
     */
    int home(final long key)
    {
        return table.home(key);
    }

    /**
     * @param key a key's hash
     * @return its entry, or {@link #ABSENT} when no miniature holds it
     */
    int find(final long key)
    {
        return table.get(key);
    }

    /**
     * @param key  a key's hash
     * @param home {@link #home} of the key
     * @return its entry, or {@link #ABSENT} when no miniature holds it
     */
    int find(final long key, final int home)
    {
        return table.get(key, home);
    }

    /**
     * @param entry     an entry, or {@link #ABSENT}
     * @param miniature a miniature's number
     * @return the entry's page in that miniature, or {@link #ABSENT}
     */
    int page(final int entry, final int miniature)
    {
        return entry == ABSENT ? ABSENT : pages[entry * miniatures + miniature];
    }

    /**
     * Records that a miniature put a key on a page. The first miniature to hold a key makes its entry.
     *
     * @param entry     the key's entry, or {@link #ABSENT} when no miniature holds it
     * @param key       the key's hash
     * @param home      {@link #home} of the key
     * @param miniature the miniature's number; it does not hold the key
     * @param page      its page in that miniature
     * @return the key's entry
     */
    int hold(final int entry, final long key, final int home, final int miniature, final int page)
    {
        int held = entry;
        if (held == ABSENT)
        {
            held = free[--freeCount];
            table.put(key, held, home);
        }
        pages[held * miniatures + miniature] = page;
        holders[held]++;
        return held;
    }

    /**
     * Records that a miniature dropped a key; the entry goes when no miniature holds the key.
     *
     * @param entry     the key's entry
     * @param key       the key's hash, which the miniature keeps for its page
     * @param miniature the miniature's number; it holds the key
     */
    void release(final int entry, final long key, final int miniature)
    {
        pages[entry * miniatures + miniature] = ABSENT;
        if (--holders[entry] == 0)
        {
            table.remove(key);
            free[freeCount++] = entry;
        }
    }

    /** @return the keys some miniature holds */
    int size()
    {
        return table.size();
    }
}

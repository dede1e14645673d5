package io.kvtier.tier.support;

import java.util.Arrays;

/**
 * The order of use of dense ids {@code [0, capacity)}, least recent first, for {@link FileIndex}'s
 * eviction: a doubly linked list kept in two int arrays, so appending, moving to the back and removing
 * are O(1) and allocate nothing. Not thread-safe.
 */
final class Recency
{
    /** End of the list, and the answer for an empty one. */
    static final int NONE = -1;

    private static final int ABSENT = -2;

    private final int[] prev;
    private final int[] next;
    private int head = NONE;
    private int tail = NONE;

    /**
     * @param capacity ids range over {@code [0, capacity)}
     */
    Recency(final int capacity)
    {
        prev = new int[capacity];
        next = new int[capacity];
        Arrays.fill(prev, ABSENT);
        Arrays.fill(next, ABSENT);
    }

    /** @return the least recently used id, or {@link #NONE} */
    int first()
    {
        return head;
    }

    /**
     * @param id an id in the list
     * @return the next more recently used id, or {@link #NONE}
     */
    int next(final int id)
    {
        return next[id];
    }

    /**
     * Makes an id the most recently used, adding it if it is not in the list.
     *
     * @param id an id
     */
    void touch(final int id)
    {
        if (prev[id] != ABSENT)
        {
            if (id == tail)
            {
                return;
            }
            unlink(id);
        }
        prev[id] = tail;
        next[id] = NONE;
        if (tail == NONE)
        {
            head = id;
        }
        else
        {
            next[tail] = id;
        }
        tail = id;
    }

    /**
     * @param id an id
     * @return whether it was in the list
     */
    boolean remove(final int id)
    {
        if (prev[id] == ABSENT)
        {
            return false;
        }
        unlink(id);
        prev[id] = ABSENT;
        next[id] = ABSENT;
        return true;
    }

    private void unlink(final int id)
    {
        final int before = prev[id];
        final int after = next[id];
        if (before == NONE)
        {
            head = after;
        }
        else
        {
            next[before] = after;
        }
        if (after == NONE)
        {
            tail = before;
        }
        else
        {
            prev[after] = before;
        }
    }
}

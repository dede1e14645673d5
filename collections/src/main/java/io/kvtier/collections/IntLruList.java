package io.kvtier.collections;

import java.util.Arrays;

/**
 * An intrusive recency list over dense ids {@code [0, capacity)}: O(1) append, move-to-back and
 * removal, no allocation after construction, 8 bytes of heap per id.
 *
 * <p>The front is the least recently used id. Not thread-safe.
 */
public final class IntLruList
{
    /** End of list, and the answer for an empty list. */
    public static final int NONE = -1;

    private static final int ABSENT = -2;

    private final int[] prev;
    private final int[] next;
    private int head = NONE;
    private int tail = NONE;
    private int size;

    /**
     * @param capacity ids range over {@code [0, capacity)}
     */
    public IntLruList(final int capacity)
    {
        prev = new int[capacity];
        next = new int[capacity];
        Arrays.fill(prev, ABSENT);
        Arrays.fill(next, ABSENT);
    }

    /** @return the number of ids in the list */
    public int size()
    {
        return size;
    }

    /** @return the id range */
    public int capacity()
    {
        return prev.length;
    }

    /**
     * @param id an id
     * @return whether it is in the list
     */
    public boolean contains(final int id)
    {
        return prev[id] != ABSENT;
    }

    /** @return the least recently used id, or {@link #NONE} */
    public int first()
    {
        return head;
    }

    /** @return the most recently used id, or {@link #NONE} */
    public int last()
    {
        return tail;
    }

    /**
     * @param id an id in the list
     * @return the next more recently used id, or {@link #NONE}
     */
    public int next(final int id)
    {
        return next[id];
    }

    /**
     * Appends an id as the most recently used, moving it if it is already in the list.
     *
     * @param id an id
     */
    public void touch(final int id)
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
        size++;
    }

    /**
     * @param id an id
     * @return whether it was in the list
     */
    public boolean remove(final int id)
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
        final int p = prev[id];
        final int n = next[id];
        if (p == NONE)
        {
            head = n;
        }
        else
        {
            next[p] = n;
        }
        if (n == NONE)
        {
            tail = p;
        }
        else
        {
            prev[n] = p;
        }
        size--;
    }

    /** Empties the list. */
    public void clear()
    {
        Arrays.fill(prev, ABSENT);
        Arrays.fill(next, ABSENT);
        head = NONE;
        tail = NONE;
        size = 0;
    }
}

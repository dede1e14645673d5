package io.kvtier.engine.eviction;

import java.util.Arrays;

/**
 * Several intrusive doubly linked lists over page ids {@code [0, capacity)}: each page is in at most one of
 * them. O(1) append, insertion before a given page and removal; 9 bytes of heap per page and nothing allocated
 * after construction. Not thread-safe.
 */
final class PageLists
{
    /** End of a list. */
    static final int NONE = EvictionPolicy.NONE;

    /** The list of a page that is in none. */
    static final int UNLINKED = -1;

    private final int[] prev;
    private final int[] next;
    private final byte[] listOf;
    private final int[] head;
    private final int[] tail;
    private final int[] size;

    /**
     * @param capacity page ids range over {@code [0, capacity)}
     * @param lists    how many lists, at most 127
     */
    PageLists(final int capacity, final int lists)
    {
        if (capacity < 0 || lists < 1 || lists > Byte.MAX_VALUE)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be at least 0 and lists=" + lists + " between 1 and " + Byte.MAX_VALUE);
        }
        prev = new int[capacity];
        next = new int[capacity];
        listOf = new byte[capacity];
        Arrays.fill(listOf, (byte)UNLINKED);
        head = new int[lists];
        tail = new int[lists];
        size = new int[lists];
        Arrays.fill(head, NONE);
        Arrays.fill(tail, NONE);
    }

    /** @return the page ids' range */
    int capacity()
    {
        return prev.length;
    }

    /**
     * @param page a page id
     * @return the list the page is in, or {@link #UNLINKED}
     */
    int listOf(final int page)
    {
        return listOf[page];
    }

    /**
     * @param list a list
     * @return its first page, or {@link #NONE}
     */
    int head(final int list)
    {
        return head[list];
    }

    /**
     * @param list a list
     * @return its last page, or {@link #NONE}
     */
    int tail(final int list)
    {
        return tail[list];
    }

    /**
     * @param page a page in a list
     * @return the page after it in its list, or {@link #NONE}
     */
    int next(final int page)
    {
        return next[page];
    }

    /**
     * @param page a page in a list
     * @return the page before it in its list, or {@link #NONE}
     */
    int prev(final int page)
    {
        return prev[page];
    }

    /**
     * @param list a list
     * @return how many pages it holds
     */
    int size(final int list)
    {
        return size[list];
    }

    /**
     * Appends a page that is in no list.
     *
     * @param list the list
     * @param page the page
     */
    void addLast(final int list, final int page)
    {
        final int last = tail[list];
        prev[page] = last;
        next[page] = NONE;
        if (last == NONE)
        {
            head[list] = page;
        }
        else
        {
            next[last] = page;
        }
        tail[list] = page;
        listOf[page] = (byte)list;
        size[list]++;
    }

    /**
     * Inserts a page that is in no list at the front of a list.
     *
     * @param list the list
     * @param page the page
     */
    void addFirst(final int list, final int page)
    {
        final int first = head[list];
        if (first == NONE)
        {
            addLast(list, page);
        }
        else
        {
            addBefore(first, page);
        }
    }

    /**
     * Inserts a page that is in no list just after another, in that one's list.
     *
     * @param anchor a page in a list
     * @param page   the page to insert
     */
    void addAfter(final int anchor, final int page)
    {
        final int after = next[anchor];
        if (after == NONE)
        {
            addLast(listOf[anchor], page);
        }
        else
        {
            addBefore(after, page);
        }
    }

    /**
     * Inserts a page that is in no list just before another, in that one's list.
     *
     * @param anchor a page in a list
     * @param page   the page to insert
     */
    void addBefore(final int anchor, final int page)
    {
        final int list = listOf[anchor];
        final int before = prev[anchor];
        prev[page] = before;
        next[page] = anchor;
        prev[anchor] = page;
        if (before == NONE)
        {
            head[list] = page;
        }
        else
        {
            next[before] = page;
        }
        listOf[page] = (byte)list;
        size[list]++;
    }

    /**
     * Takes a page out of its list; does nothing for a page in none.
     *
     * @param page the page
     */
    void remove(final int page)
    {
        final int list = listOf[page];
        if (list == UNLINKED)
        {
            return;
        }
        final int before = prev[page];
        final int after = next[page];
        if (before == NONE)
        {
            head[list] = after;
        }
        else
        {
            next[before] = after;
        }
        if (after == NONE)
        {
            tail[list] = before;
        }
        else
        {
            prev[after] = before;
        }
        listOf[page] = (byte)UNLINKED;
        size[list]--;
    }
}

package io.kvtier.tier.threefs;

import io.kvtier.spi.PageKey;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What this tier instance stored, for its capacity: committed pages in least-recently-used order, their
 * bytes, and the bytes of writes in flight. Callers hold the index's monitor for every call.
 *
 * <p>A plain access-ordered map, which allocates per key: the POSIX tier's allocation-free
 * {@code FileIndex} is package-private there, and the USRBIO path already pays an open, a registration and a
 * rename per page. Eviction chooses victims here and removes them at once; the tier unlinks their files
 * under the key's stripe lock, unless a newer write committed the key again meanwhile.
 */
final class PageIndex
{
    private final long capacity;
    private final long highWater;
    private final long lowWater;
    private final LinkedHashMap<PageKey, Long> pages = new LinkedHashMap<>(1024, 0.75f, true);
    private long usedBytes;
    private long reservedBytes;

    /**
     * @param capacity  the most bytes to hold, or Long.MAX_VALUE
     * @param highWater bytes above which eviction starts
     * @param lowWater  bytes eviction brings the tier down to
     */
    PageIndex(final long capacity, final long highWater, final long lowWater)
    {
        this.capacity = capacity;
        this.highWater = highWater;
        this.lowWater = lowWater;
    }

    /**
     * Counts a page found at start; the caller adopts pages oldest first, so they seed the LRU order.
     *
     * @param key   the page
     * @param bytes its size
     */
    void adopt(final PageKey key, final long bytes)
    {
        final Long old = pages.put(key, bytes);
        usedBytes += bytes - (old == null ? 0 : old);
    }

    /**
     * Makes room for a write: evicts down to the low water level when the write would cross the high one.
     *
     * @param bytes   the write's size
     * @param victims receives the pages chosen for eviction (already forgotten here)
     * @return whether the write fits; when it does, its bytes are reserved until {@link #commit} or {@link #abort}
     */
    boolean reserve(final long bytes, final List<PageKey> victims)
    {
        if (usedBytes + reservedBytes + bytes > highWater)
        {
            evictDownTo(Math.min(lowWater, capacity - bytes - reservedBytes), victims);
        }
        if (capacity != Long.MAX_VALUE && usedBytes + reservedBytes + bytes > capacity)
        {
            return false;
        }
        reservedBytes += bytes;
        return true;
    }

    /**
     * Chooses least recently used pages until the used bytes are at most {@code target}.
     *
     * @param target  bytes to keep at most
     * @param victims receives the chosen pages
     */
    void evictDownTo(final long target, final List<PageKey> victims)
    {
        final Iterator<Map.Entry<PageKey, Long>> oldest = pages.entrySet().iterator();
        while (usedBytes > target && oldest.hasNext())
        {
            final Map.Entry<PageKey, Long> entry = oldest.next();
            usedBytes -= entry.getValue();
            victims.add(entry.getKey());
            oldest.remove();
        }
    }

    /** @return whether used bytes are above the high water level */
    boolean aboveHighWater()
    {
        return usedBytes > highWater;
    }

    /** @return the low water level */
    long lowWater()
    {
        return lowWater;
    }

    /**
     * A reserved write's file is in place.
     *
     * @param key   the page
     * @param bytes its size, as reserved
     */
    void commit(final PageKey key, final long bytes)
    {
        reservedBytes -= bytes;
        final Long old = pages.put(key, bytes);
        usedBytes += bytes - (old == null ? 0 : old);
    }

    /**
     * A reserved write failed.
     *
     * @param bytes its size, as reserved
     */
    void abort(final long bytes)
    {
        reservedBytes -= bytes;
    }

    /**
     * The page's file is gone (removed, or found missing).
     *
     * @param key the page
     */
    void forget(final PageKey key)
    {
        final Long old = pages.remove(key);
        if (old != null)
        {
            usedBytes -= old;
        }
    }

    /**
     * @param key the page
     * @return whether the index holds it
     */
    boolean contains(final PageKey key)
    {
        return pages.containsKey(key);
    }

    /**
     * Marks a page as used now.
     *
     * @param key the page
     */
    void touch(final PageKey key)
    {
        pages.get(key);
    }

    long usedBytes()
    {
        return usedBytes;
    }

    long objects()
    {
        return pages.size();
    }
}

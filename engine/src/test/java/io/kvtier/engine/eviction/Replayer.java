package io.kvtier.engine.eviction;

import java.util.Arrays;

/**
 * Drives a policy as the pool and the trace replay do, without allocating: keys are ints in {@code [0, keys)},
 * a request's hits are its leading run of resident keys, then each key is touched or inserted in order with the
 * page of the key before it as its parent, a full pool evicting the policy's first candidate.
 */
final class Replayer
{
    private static final long KEY_SALT = 0x2545F4914F6CDD1DL;

    private final EvictionPolicy policy;
    private final int capacity;
    private final int[] pageOfKey;
    private final int[] keyOfPage;
    private int size;
    private long hits;
    private long blocks;
    private long evictions;

    /**
     * @param policy   the policy, sized for {@code capacity} pages
     * @param capacity the pool's pages
     * @param keys     keys range over {@code [0, keys)}
     */
    Replayer(final EvictionPolicy policy, final int capacity, final int keys)
    {
        this.policy = policy;
        this.capacity = capacity;
        this.pageOfKey = new int[keys];
        this.keyOfPage = new int[capacity];
        Arrays.fill(pageOfKey, EvictionPolicy.NONE);
    }

    /** @return a key's hash as the pool would report it */
    static long hash(final int key)
    {
        return FrequencySketch.mix(key ^ KEY_SALT);
    }

    /**
     * Replays one request.
     *
     * @param keys   the request's keys, first to last
     * @param length how many of them
     * @return the request's hits
     */
    int request(final int[] keys, final int length)
    {
        int run = 0;
        while (run < length && pageOfKey[keys[run]] != EvictionPolicy.NONE)
        {
            run++;
        }
        hits += run;
        blocks += length;
        int parent = EvictionPolicy.NONE;
        for (int i = 0; i < length; i++)
        {
            final int key = keys[i];
            int page = pageOfKey[key];
            if (page != EvictionPolicy.NONE)
            {
                policy.onAccess(page, parent);
            }
            else
            {
                if (size < capacity)
                {
                    page = size++;
                }
                else
                {
                    page = policy.first();
                    policy.onRemove(page);
                    pageOfKey[keyOfPage[page]] = EvictionPolicy.NONE;
                    evictions++;
                    if (page == parent)
                    {
                        parent = EvictionPolicy.NONE;
                    }
                }
                pageOfKey[key] = page;
                keyOfPage[page] = key;
                policy.onInsert(page, parent, hash(key));
            }
            parent = page;
        }
        return run;
    }

    /** @return a request of consecutive keys from {@code first} */
    int chain(final int[] scratch, final int first, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            scratch[i] = first + i;
        }
        return request(scratch, length);
    }

    /**
     * Removes a resident key's page, as the pool does when it frees a page for another reason.
     *
     * @param key a resident key
     */
    void free(final int key)
    {
        final int page = pageOfKey[key];
        policy.onRemove(page);
        pageOfKey[key] = EvictionPolicy.NONE;
        // Keep the page ids dense: the last page takes the freed one's place.
        final int last = --size;
        if (page != last)
        {
            final int moved = keyOfPage[last];
            policy.onRemove(last);
            pageOfKey[moved] = page;
            keyOfPage[page] = moved;
            policy.onInsert(page, EvictionPolicy.NONE, hash(moved));
        }
    }

    /**
     * @param key a key
     * @return whether it is resident
     */
    boolean resident(final int key)
    {
        return pageOfKey[key] != EvictionPolicy.NONE;
    }

    /**
     * @param key a resident key
     * @return its page
     */
    int pageOf(final int key)
    {
        return pageOfKey[key];
    }

    /**
     * @param page a resident page
     * @return its key
     */
    int keyOf(final int page)
    {
        return keyOfPage[page];
    }

    /** @return resident pages */
    int size()
    {
        return size;
    }

    /** @return hits over blocks so far */
    double hitRate()
    {
        return blocks == 0 ? 0 : (double)hits / blocks;
    }

    /** @return hit blocks so far */
    long hits()
    {
        return hits;
    }

    /** @return evictions so far */
    long evictions()
    {
        return evictions;
    }
}

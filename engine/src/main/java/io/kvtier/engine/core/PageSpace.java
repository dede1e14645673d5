package io.kvtier.engine.core;

/**
 * What the parts ask of the pool's space ({@link PoolSpace}, its owner): pages to write into, pages
 * given back, the eviction order, and requests that wait for room. Engine thread only.
 */
interface PageSpace
{
    /** @return a free page, or {@link PoolSpace#NONE} when none is free even after evicting */
    int allocate();

    /**
     * @return a free page, without evicting anything, and only while the pool is below its high water
     *         level: work in the background (a migration's copy) never pushes a cached page out; or
     *         {@link PoolSpace#NONE}
     */
    int allocateFree();

    /**
     * Returns a page no one can still be writing to the free list at once.
     *
     * @param page the page
     */
    void free(int page);

    /**
     * Rests a page someone may still be writing before it is free again.
     *
     * @param page the page
     */
    void quarantine(int page);

    /**
     * Takes a page out of use for good once its pins are gone (its bytes changed under a reader).
     *
     * @param page the page
     */
    void retire(int page);

    /**
     * Records a use of a resident page in the eviction order.
     *
     * @param page   the page
     * @param parent the page of its key's parent in the chain, or {@link PoolSpace#NONE}
     */
    void touch(int page, int parent);

    /**
     * Evicts an unpinned SERVING page now, if it still is one.
     *
     * @param page the page
     * @param word its state word as last read
     * @return whether it left the pool
     */
    boolean evict(int page, long word);

    /** Evicts down to the low water level once the high one is passed. */
    void evictIfAboveHighWater();

    /**
     * Parks a reserve or an acquire that found no page while write-back evictions are in flight: pages
     * free up as their copies land. Past its wait ({@code l3.io-timeout}) it goes on without.
     *
     * @param r the request
     * @return whether the request now waits for space
     */
    boolean waitForSpace(ClientRecord r);

    /** Resumes the requests that wait for space, as far as space goes. */
    void resumeSpaceWaiters();

    /**
     * Forgets a waiting request whose client is gone.
     *
     * @param r the request
     */
    void forgetWaiter(ClientRecord r);

    /**
     * @return whether pages may still join the free space as the pool's blocks are allocated in the
     *         background: a part that found no free page can wait for them rather than give up
     */
    default boolean growing()
    {
        return false;
    }
}

package io.kvtier.engine.core;

/**
 * What the parts ask of the loads from L3 into the pool ({@link Loads}, their owner): start one, wait
 * for one, and what a loaded page's history is. Engine thread only.
 */
interface LoadTracker
{
    /**
     * @param slot the key's index slot
     * @return the page loading for it, or {@link Loads#NONE}
     */
    int loadingPage(int slot);

    /**
     * The page a key not in the pool is loading into: a load already under way, or one started now from
     * the first L3 tier that holds it.
     *
     * @param slot     the key's index slot
     * @param high     the key's high half
     * @param low      its low half
     * @param prefetch whether it is a prefetch (nobody waits for it yet)
     * @return the page, or {@link Loads#NONE} when L3 lacks it, a client is writing it, or no page can be had
     */
    int loadFor(int slot, long high, long low, boolean prefetch);

    /**
     * Makes a request wait for a page's load.
     *
     * @param page the loading page
     * @param r    the request
     * @param key  the key's index in its chain
     * @param kind what the request does once the load ends
     * @return whether it waits; false when the waiter table is full
     */
    boolean addWaiter(int page, ClientRecord r, int key, byte kind);

    /** @return whether the last {@link #loadFor} that returned {@link Loads#NONE} found no free page */
    boolean starvedForSpace();

    /**
     * @param page a resident page
     * @return whether this is the page's first pin after its load (an L3 hit, whoever started the load)
     */
    boolean takeFirstUse(int page);

    /**
     * @param page     a resident page
     * @param nowNanos the engine clock
     * @param window   how long after its load
     * @return whether its bytes came from L3 within the window
     */
    boolean loadedWithin(int page, long nowNanos, long window);

    /**
     * @param page a page loaded from L3
     * @return the tier it came from
     */
    int tierOf(int page);
}

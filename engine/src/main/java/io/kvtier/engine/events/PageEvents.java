package io.kvtier.engine.events;

/**
 * What the engine thread tells routers about pages: a page became visible in a medium (the pool, or an L3
 * tier) or left it. The engine calls it at the few places that own those moments; an implementation must
 * neither allocate nor block, because it runs on the engine thread.
 */
public interface PageEvents
{
    /** The medium of the pool; an L3 tier's medium is its index plus one ({@link #tierMedium}). */
    int POOL = 0;

    /** Events off: every call does nothing. */
    PageEvents NONE = new PageEvents()
    {
        @Override
        public void stored(final long keyHigh, final long keyLow, final long namespaceTag, final int medium)
        {
        }

        @Override
        public void removed(final long keyHigh, final long keyLow, final long namespaceTag, final int medium)
        {
        }

        @Override
        public void cleared()
        {
        }
    };

    /**
     * @param tier an L3 tier's index
     * @return its medium
     */
    static int tierMedium(final int tier)
    {
        return tier + 1;
    }

    /**
     * A page became visible in a medium: committed and sealed, or loaded and verified, in the pool; backed
     * up or migrated to, or learned of in, an L3 tier.
     *
     * @param keyHigh      the page key's high half
     * @param keyLow       its low half
     * @param namespaceTag the namespace tag it is stored under (0: untagged)
     * @param medium       {@link #POOL} or {@link #tierMedium}
     */
    void stored(long keyHigh, long keyLow, long namespaceTag, int medium);

    /**
     * A page left a medium: evicted or retired from the pool; moved, evicted or dropped from an L3 tier.
     *
     * @param keyHigh      the page key's high half
     * @param keyLow       its low half
     * @param namespaceTag the namespace tag it was stored under
     * @param medium       {@link #POOL} or {@link #tierMedium}
     */
    void removed(long keyHigh, long keyLow, long namespaceTag, int medium);

    /** Nothing is known to be anywhere: the engine starts with an empty pool and index. */
    void cleared();
}

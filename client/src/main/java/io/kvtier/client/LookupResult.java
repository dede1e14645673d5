package io.kvtier.client;

/**
 * What a LOOKUP found: the longest prefix of the keys in the pool, then how many keys after it L3
 * holds. Reused by its client for every lookup: read it before the next request.
 */
public final class LookupResult
{
    int poolPages;
    int l3Pages;

    /** @return leading keys whose pages are in the pool */
    public int poolPages()
    {
        return poolPages;
    }

    /** @return keys after those whose pages are in L3 */
    public int l3Pages()
    {
        return l3Pages;
    }

    /** @return the cached prefix, pool and L3 together */
    public int cachedPages()
    {
        return poolPages + l3Pages;
    }
}

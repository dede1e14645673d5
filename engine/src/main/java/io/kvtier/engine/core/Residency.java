package io.kvtier.engine.core;

import io.kvtier.collections.KeyTable;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.client.PageKeyChain;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PageStateWord;

/**
 * Where a key's page is, read from the index and the pool's metadata: shared by the parts that need
 * to know, owned by none (it holds no state of its own).
 */
final class Residency
{
    static final int NONE = -1;

    private final PagePool pool;
    private final PageIndex index;

    Residency(final PagePool pool, final PageIndex index)
    {
        this.pool = pool;
        this.index = index;
    }

    PageIndex index()
    {
        return index;
    }

    PagePool pool()
    {
        return pool;
    }

    /** @return the pool page holding the key if it is SERVING with that key, else {@link #NONE} */
    int servingPage(final int slot, final long high, final long low)
    {
        if (slot == KeyTable.NONE)
        {
            return NONE;
        }
        final int page = index.page(slot);
        if (page == PageIndex.NO_PAGE)
        {
            return NONE;
        }
        final long word = pool.metadata().stateWordAcquire(page);
        if (PageStateWord.state(word) == PageStateWord.SERVING && pool.metadata().keyHighPlain(page) == high && pool.metadata().keyLowPlain(page) == low)
        {
            return page;
        }
        return NONE;
    }

    /**
     * Whether a request may be given a page: only a page of the namespace the request named, unless
     * the request may see all (docs/ipc-protocol.md section 8). Keys are chained from the namespace's
     * root, so an honest client never names another namespace's key; this stops one that does.
     *
     * @param r    the request
     * @param page a SERVING page
     * @return whether the request may see the page
     */
    boolean visibleTo(final ClientRecord r, final int page)
    {
        return r.allNamespaces || pool.metadata().namespaceTagPlain(page) == r.namespaceTag;
    }

    /**
     * Whether a request may be given a key that is not in the pool yet: its L3 copies (or the load under
     * way) are of the namespace the request names, as {@link #visibleTo} asks of a pool page. A key of
     * another namespace is not counted, probed for, nor loaded for it.
     *
     * @param r    the request
     * @param slot the key's index slot, not {@link KeyTable#NONE}
     * @param loading the page loading for the key, or {@link #NONE}
     * @return whether the request may see it
     */
    boolean visibleInL3(final ClientRecord r, final int slot, final int loading)
    {
        return r.allNamespaces || (loading != NONE ? pool.metadata().namespaceTagPlain(loading) : index.tierTag(slot)) == r.namespaceTag;
    }

    /**
     * @param keys a request's key chain
     * @param key  a key of it
     * @return the SERVING page of the key before it in the chain, or {@link #NONE}: the page the
     *         eviction policy hears as its chain parent
     */
    int chainParent(final PageKeyChain keys, final int key)
    {
        if (key <= 0)
        {
            return NONE;
        }
        final long high = keys.high(key - 1);
        final long low = keys.low(key - 1);
        return servingPage(index.find(high, low), high, low);
    }

    /** @return whether an L3 tier holds the key of a resident page, stored under the page's own tag */
    boolean inL3(final int page)
    {
        final int slot = index.find(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page));
        return slot != KeyTable.NONE && index.tiers(slot) != 0 && index.tierTag(slot) == pool.metadata().namespaceTagPlain(page);
    }

    /** @return whether nothing knows the key: not in the pool, not known in L3 */
    boolean unknown(final int slot)
    {
        return slot == KeyTable.NONE || (index.page(slot) == PageIndex.NO_PAGE && index.tiers(slot) == 0);
    }
}

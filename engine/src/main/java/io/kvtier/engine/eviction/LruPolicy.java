package io.kvtier.engine.eviction;

import io.kvtier.collections.IntLruList;

/**
 * Least recently used: an {@link IntLruList} over the page ids, touched on every insertion and hit, walked from
 * its front. {@code parent} and {@code keyHash} are ignored, so a request's pages are evicted in the order they
 * were touched, first to last, exactly as the engine's recency list did before policies were pluggable and as
 * the trace README's reference figures assume.
 *
 * <p>The walk keeps the page after the one it returned last, and steps that cursor forward when that page is
 * removed, so the caller may remove the page it holds before or after calling {@link #next}.
 */
public final class LruPolicy implements EvictionPolicy
{
    /** This policy's name. */
    public static final String NAME = "lru";

    private final IntLruList recency;
    private int walkLast = NONE;
    private int walkNext = NONE;

    /**
     * @param capacity pages range over {@code [0, capacity)}
     */
    public LruPolicy(final int capacity)
    {
        if (capacity < 0)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be at least 0");
        }
        recency = new IntLruList(capacity);
    }

    @Override
    public void onInsert(final int page, final int parent, final long keyHash)
    {
        endWalk();
        recency.touch(page);
    }

    @Override
    public void onAccess(final int page, final int parent)
    {
        endWalk();
        recency.touch(page);
    }

    @Override
    public void onRemove(final int page)
    {
        if (page == walkNext)
        {
            walkNext = recency.next(page);
        }
        recency.remove(page);
    }

    @Override
    public int first()
    {
        return step(recency.first());
    }

    @Override
    public int next(final int page)
    {
        if (page != walkLast || page == NONE)
        {
            throw new IllegalStateException("next(" + page + ") outside a walk: the walk last returned " + walkLast +
                " (first() starts a walk; onInsert and onAccess end it)");
        }
        return step(walkNext);
    }

    private int step(final int page)
    {
        walkLast = page;
        walkNext = page == NONE ? NONE : recency.next(page);
        return page;
    }

    private void endWalk()
    {
        walkLast = NONE;
        walkNext = NONE;
    }

    /** @return the number of resident pages */
    public int size()
    {
        return recency.size();
    }

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public String toString()
    {
        return NAME;
    }
}

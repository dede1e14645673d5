package io.kvtier.engine.eviction;

/**
 * The order in which the pages of a pool are evicted. The pool-space part of the engine owns one policy for
 * pages {@code 0 .. capacity - 1}, a page being one block of one key chain, tells it what happens to each page,
 * and asks it which pages to evict.
 *
 * <h2>Chains</h2>
 * A page is only useful when every page before it in its key chain is cached too. So the policy hears, with
 * each insertion and hit, the page that holds the previous key of the same request's chain: {@code parent}.
 * It is the resident page touched just before this one in the same request, or {@link #NONE} for a chain
 * head, or when the previous key is not resident (for example it was just evicted to make room). A page equal
 * to its own parent (a key repeated within one request) is taken as {@link #NONE}.
 *
 * <h2>The walk</h2>
 * {@link #first()} starts a walk over every resident page in eviction order and {@link #next(int)} continues
 * it; a policy offers an order rather than one victim because the engine skips pages it cannot evict yet
 * (pinned, being written, being backed up) and evicts the first ones it can. The rules:
 * <ul>
 *   <li>{@code next(page)} takes the page the walk returned last. It does not matter whether the caller has
 *       already removed that page ({@link #onRemove}) or removes it after reading {@code next}: both
 *       <pre>{@code
 * for (int p = policy.first(); p != NONE; ) { int n = policy.next(p); evict(p); p = n; }
 * for (int p = policy.first(); p != NONE; p = policy.next(p)) { evict(p); }
 *       }</pre>
 *       visit the same pages.</li>
 *   <li>Removing any resident page during a walk keeps the walk valid: a page removed before the walk reaches
 *       it is not returned.</li>
 *   <li>{@link #onInsert} and {@link #onAccess} end the walk; the next eviction starts with {@link #first()}.
 *       A policy may reject {@code next} after them.</li>
 *   <li>Skipping a page changes nothing: only the calls above move pages in the order.</li>
 * </ul>
 *
 * <p>Implementations are confined to one thread (the engine's), size every array at construction, allocate
 * nothing afterwards, and do O(1) amortised work per call.
 */
public interface EvictionPolicy
{
    /** No page: the end of a walk, an empty pool, or no parent. */
    int NONE = -1;

    /**
     * A page became resident: a client committed it, or it was loaded from L3.
     *
     * @param page    the page, not resident before this call
     * @param parent  the resident page holding the previous key of the same request's chain, touched just
     *                before this one in this request, or {@link #NONE} (a chain head, or its predecessor is
     *                not resident)
     * @param keyHash a 64-bit hash of the page's key, the same for the same key every time (frequency sketches
     *                and sampling use it)
     */
    void onInsert(int page, int parent, long keyHash);

    /**
     * A resident page was hit.
     *
     * @param page   a resident page
     * @param parent as for {@link #onInsert}
     */
    void onAccess(int page, int parent);

    /**
     * The page left the pool: it was evicted, or freed for another reason. Does nothing for a page that is not
     * resident.
     *
     * @param page the page
     */
    void onRemove(int page);

    /**
     * Starts a walk in eviction order.
     *
     * @return the first page to evict, or {@link #NONE} when no page is resident
     */
    int first();

    /**
     * Continues the walk {@link #first()} started.
     *
     * @param page the page the walk returned last, removed or not
     * @return the next page to evict, or {@link #NONE} at the end
     */
    int next(int page);

    /**
     * Does up to {@code budget} units of work the policy put off, work whose effect on the eviction order no caller
     * can see before it is done (a policy does it by itself before {@link #first}, {@link #next} and {@link #onRemove}
     * answer): the engine thread calls it when it has nothing else to do, so that a request does not wait for it. A
     * policy never depends on it being called: it catches up by itself before the work matters. Ends no walk.
     *
     * @param budget the most units to do, at least 1 (a unit is one event of the policy's choosing)
     * @return the units done: 0 when nothing was put off
     */
    default int maintain(final int budget)
    {
        return 0;
    }

    /** @return the policy's name, as {@link EvictionPolicies#forName} accepts it */
    String name();
}

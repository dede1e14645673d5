package io.kvtier.engine.core;

import io.kvtier.engine.EngineClock;
import io.kvtier.engine.events.PageEvents;
import io.kvtier.engine.eviction.EvictionPolicy;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

import java.util.ArrayDeque;

/**
 * The pool's space: which pages are free, which resident page leaves first, the water levels that
 * start and stop eviction, the quarantine a reclaimed page rests in, and the requests waiting for a
 * page. It owns the free list, the eviction policy (the order resident pages leave in), the
 * quarantine ring and the space waiters, and nothing else; whether a given page may leave is asked of
 * the parts that use pages ({@link EvictionGate}).
 *
 * <p>The policy hears each page's chain: with every insertion and hit, the resident page of the
 * previous key of the same chain, so that a policy can let a chain's tail go before its head.
 *
 * <p>A page found changed after its load ({@link #retire}) leaves the index at once and the pool, through
 * quarantine, as soon as nobody holds a pin on it: the tier that wrote it may be writing it still.
 */
final class PoolSpace implements PageSpace, TimedPart
{
    static final int NONE = -1;

    /**
     * Units of put-off policy work per idle duty cycle: small, so that a request arriving meanwhile waits little
     * (for the adaptive policy, 8 sampled events in four miniatures, about a microsecond at most).
     */
    static final int MAINTENANCE_BUDGET = 8;

    /**
     * What the parts holding per-page state say about evicting a page.
     */
    interface EvictionGate
    {
        /** Evict the page now. */
        int EVICT = 0;
        /** Leave it: it is in use (loading, being copied). */
        int SKIP = 1;
        /** A copy to L3 was started first; the page leaves when it ends, and is out of the eviction order until then. */
        int HELD = 2;
        /** Evict it although its only copy is lost (its backups kept failing); counted and said. */
        int EVICT_LOST = 3;

        /**
         * @param page a resident, unpinned SERVING page
         * @return one of {@link #EVICT}, {@link #SKIP}, {@link #HELD}, {@link #EVICT_LOST}
         */
        int beforeEvict(int page);

        /**
         * A page the gate answered {@link #EVICT_LOST} for left the pool.
         *
         * @param keyHigh its key's high half
         * @param keyLow  its key's low half
         */
        void lost(long keyHigh, long keyLow);

        /**
         * The page left the pool (evicted): per-page state about it is now stale.
         *
         * @param page the page
         */
        void evicted(int page);

        /** @return pages whose eviction waits for a copy to end: they count as freed for the water levels */
        int evictionsPending();

        /** {@link #cleanAhead}: a copy of the page was started. */
        int CLEAN_STARTED = 0;
        /** {@link #cleanAhead}: the page needs no copy now (in L3 already, being copied or loaded, not SERVING). */
        int CLEAN_NOT_NEEDED = 1;
        /** {@link #cleanAhead}: no more copies may start now; the walk stops. */
        int CLEAN_NO_ROOM = 2;

        /** @return whether pages are copied ahead of eviction (write-back with {@code policy.write.clean-ahead}) */
        default boolean cleansAhead()
        {
            return false;
        }

        /**
         * Copies a page eviction will reach soon, so that it can leave without waiting.
         *
         * @param page a resident page near the cold end of the eviction order
         * @return {@link #CLEAN_STARTED}, {@link #CLEAN_NOT_NEEDED} or {@link #CLEAN_NO_ROOM}
         */
        default int cleanAhead(final int page)
        {
            return CLEAN_NO_ROOM;
        }
    }

    /** Continues a request that waited for space. */
    interface SpaceWaiterResumer
    {
        /**
         * @param record a request that waited in {@link #waitForSpace}
         */
        void resume(ClientRecord record);
    }

    private final PagePool pool;
    private final PageIndex index;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final int pageCount;
    /**
     * Pages handed to the free space so far, {@code [0, joined)}: those whose blocks are allocated
     * ({@link PagePool#allocatedPagesAcquire()}); the water levels are fractions of it.
     */
    private int joined;
    private final double evictHigh;
    private final double evictLow;
    private long highWater;
    private long lowWater;
    private final long quarantineNanos;
    private final long spaceWaitNanos;
    private final EvictionPolicy policy;
    /** Whether each page is in the policy's order: resident and not held out of it for a copy. */
    private final boolean[] ordered;
    /** Bumped by every insertion or hit, which end a policy's walk: an eviction walk that sees it move starts over. */
    private int orderChanges;
    private final int[] freeStack;
    private int freeCount;
    private final LongRing quarantine;
    /** Pages to leave the pool through quarantine once unpinned; {@link #listed} says which are in {@link #retiringPages}. */
    private final boolean[] retiring;
    private final boolean[] listed;
    private final int[] retiringPages;
    private int retiringCount;
    private final ArrayDeque<ClientRecord> spaceWaiters;
    /** Cleaning ahead starts once this many pages are in use: below the low water level by the gap between the two. */
    private long cleanMark;
    /** The coldest pages kept copied ahead, and those past the pages an eviction freed that it copies: twice what one eviction frees. */
    private long cleanWindow;
    /** Insertions and evictions so far: with {@link #orderChanges}, what makes another look at the cold end worth it. */
    private long churn;
    private long changesAtLastClean = -1;
    private final EvictionGate gate;
    private final SpaceWaiterResumer resumer;
    private volatile boolean closing;

    PoolSpace(final PagePool pool, final PageIndex index, final EngineCounters counters, final EngineClock clock, final EvictionPolicy policy,
              final double evictHigh, final double evictLow, final long quarantineNanos, final long spaceWaitNanos, final int maxClients,
              final EvictionGate gate, final SpaceWaiterResumer resumer)
    {
        this.gate = gate;
        this.resumer = resumer;
        this.pool = pool;
        this.index = index;
        this.counters = counters;
        this.clock = clock;
        this.pageCount = pool.pageCount();
        this.evictHigh = evictHigh;
        this.evictLow = evictLow;
        this.quarantineNanos = quarantineNanos;
        this.spaceWaitNanos = spaceWaitNanos;
        this.policy = policy;
        this.ordered = new boolean[pageCount];
        this.freeStack = new int[pageCount];
        this.quarantine = new LongRing(pageCount, 2);
        this.retiring = new boolean[pageCount];
        this.listed = new boolean[pageCount];
        this.retiringPages = new int[pageCount];
        this.spaceWaiters = new ArrayDeque<>(maxClients + 1);
        waterLevels(0);
        joinAllocated();
        counters.set(EngineCounter.PAGES_IN_USE, 0);
    }

    private void waterLevels(final int pages)
    {
        highWater = Math.max(1, Math.min(pages, (long)Math.ceil(pages * evictHigh)));
        lowWater = Math.min(highWater - 1, (long)Math.floor(pages * evictLow));
        cleanMark = Math.max(0, lowWater - (highWater - lowWater));
        cleanWindow = Math.max(16, 2 * (highWater - lowWater));
    }

    /**
     * Hands the free space the pages whose blocks were allocated since it last looked (the pool grows in the
     * background, {@code pool.allocate-first}): they join free, the lowest on top, and the water levels grow
     * with them. One plain read once the pool is whole.
     */
    private boolean joinAllocated()
    {
        if (joined == pageCount)
        {
            return false;
        }
        final int allocated = pool.allocatedPagesAcquire();
        if (allocated <= joined)
        {
            return false;
        }
        for (int page = allocated - 1; page >= joined; page--)
        {
            freeStack[freeCount++] = page;
        }
        joined = allocated;
        waterLevels(joined);
        counters.set(EngineCounter.POOL_PAGES_ALLOCATED, joined);
        counters.set(EngineCounter.PAGES_IN_USE, used());
        return true;
    }

    /** @return pages the free space has been given, whose blocks are allocated */
    int joined()
    {
        return joined;
    }

    @Override
    public boolean growing()
    {
        return joined < pageCount && pool.growing();
    }

    void beginClosing()
    {
        closing = true;
    }

    /** @return pages not free, of those joined */
    long used()
    {
        return joined - freeCount;
    }

    /** @return pages on the free list */
    int free()
    {
        return freeCount;
    }

    /**
     * Takes a free page, evicting down to the low water level first when the pool is at its high one.
     *
     * @return the page, or {@link #NONE} when none could be freed
     */
    @Override
    public int allocate()
    {
        joinAllocated();
        if (used() >= highWater || freeCount == 0)
        {
            evictDownTo(Math.min(lowWater, joined - 1L));
        }
        if (freeCount == 0)
        {
            return NONE;
        }
        final int page = freeStack[--freeCount];
        counters.set(EngineCounter.PAGES_IN_USE, used());
        return page;
    }

    @Override
    public int allocateFree()
    {
        joinAllocated();
        if (freeCount == 0 || used() + 1 >= highWater)
        {
            return NONE;
        }
        final int page = freeStack[--freeCount];
        counters.set(EngineCounter.PAGES_IN_USE, used());
        return page;
    }

    /** Returns a page that no one can still be writing to the free list. */
    @Override
    public void free(final int page)
    {
        freeStack[freeCount++] = page;
        counters.set(EngineCounter.PAGES_IN_USE, used());
    }

    /** Rests a reclaimed page before reuse, so that a late writer cannot change a page someone else then owns. */
    @Override
    public void quarantine(final int page)
    {
        if (quarantine.isFull())
        {
            free(page);
            return;
        }
        quarantine.add(page, clock.nanoTime() + quarantineNanos, 0);
        counters.set(EngineCounter.PAGES_QUARANTINED, quarantine.size());
    }

    /**
     * Lets the eviction policy do a little of the work it put off ({@link EvictionPolicy#maintain}): the engine
     * thread found nothing else to do.
     *
     * @return the units of work done, 0 when none was waiting
     */
    int maintain()
    {
        return policy.maintain(MAINTENANCE_BUDGET);
    }

    /**
     * Copies the coldest pages of the eviction order to L3 ahead of eviction (write-back with
     * {@code policy.write.clean-ahead}; nothing otherwise): a look at up to {@code steps} of them from the cold
     * end, and never past the {@link #cleanWindow} coldest, in the engine thread's idle time and on its ticks.
     * An eviction does the same for the window just past the pages it freed ({@link #evictDownTo}), so that the
     * next one finds them copied. A look that saw the whole window is not made again until pages were
     * inserted, hit or evicted; one that found no room for another copy is made again, so that the window
     * fills as copies end. The copies in flight stay within half of {@code l3.max-backup-pages} (the gate's
     * rule), leaving room for the copies evictions start.
     *
     * @param steps pages to look at, at most
     * @return copies started (stepping over pages copied already is not work: an idle engine can sleep)
     */
    int cleanAhead(final int steps)
    {
        final long changes = churn + orderChanges;
        if (!gate.cleansAhead() || used() < cleanMark || changes == changesAtLastClean)
        {
            return 0;
        }
        return cleanFrom(policy.first(), Math.min(steps, cleanWindow), changes);
    }

    /**
     * Continues the walk at {@code start} for at most {@code limit} pages, starting the copies the gate takes,
     * until it says no more may start.
     *
     * @param changes the pool's changes when a look from the cold end began, or -1 for the eviction's look
     * @return copies started
     */
    private int cleanFrom(final int start, final long limit, final long changes)
    {
        int page = start;
        int steps = 0;
        int started = 0;
        while (page != EvictionPolicy.NONE && steps < limit)
        {
            final int answer = gate.cleanAhead(page);
            if (answer == EvictionGate.CLEAN_NO_ROOM)
            {
                return started;
            }
            started += answer == EvictionGate.CLEAN_STARTED ? 1 : 0;
            steps++;
            page = policy.next(page);
        }
        if (changes >= 0 && (page == EvictionPolicy.NONE || steps >= cleanWindow))
        {
            changesAtLastClean = changes;
        }
        return started;
    }

    /** @return the eviction policy's name */
    String policyName()
    {
        return policy.name();
    }

    /**
     * A page became resident (committed, loaded) or was hit: the policy hears it, with its chain parent.
     *
     * @param page   the page
     * @param parent the resident page of the previous key of the same chain, or {@link #NONE}
     */
    @Override
    public void touch(final int page, final int parent)
    {
        if (retiring[page])
        {
            return; // on its way out: never back in the eviction order, which would free it without quarantine
        }
        orderChanges++;
        final int chainParent = parent == page || parent < 0 || !ordered[parent] ? EvictionPolicy.NONE : parent;
        if (ordered[page])
        {
            policy.onAccess(page, chainParent);
        }
        else
        {
            ordered[page] = true;
            churn++;
            policy.onInsert(page, chainParent, pool.metadata().keyHighPlain(page) ^ pool.metadata().keyLowPlain(page));
        }
    }

    /** A page left the eviction order without leaving the pool (held for a copy). */
    void hold(final int page)
    {
        unorder(page);
    }

    private void unorder(final int page)
    {
        if (ordered[page])
        {
            ordered[page] = false;
            policy.onRemove(page);
        }
    }

    @Override
    public void evictIfAboveHighWater()
    {
        if (used() > highWater)
        {
            evictDownTo(lowWater);
        }
    }

    private void evictDownTo(final long target)
    {
        int scanned = 0;
        final long budget = Math.max(64, 4 * (used() - target));
        int page = policy.first();
        while (page != EvictionPolicy.NONE && used() - gate.evictionsPending() > target && scanned < budget)
        {
            scanned++;
            final int changes = orderChanges;
            tryEvict(page);
            // A gate that touched a page (none does today) would have ended the policy's walk.
            page = changes == orderChanges ? policy.next(page) : policy.first();
        }
        if (gate.cleansAhead() && page != EvictionPolicy.NONE)
        {
            // The pages the next eviction reaches first are the ones just past this one's: copy them now.
            cleanFrom(page, cleanWindow, -1);
        }
    }

    private void tryEvict(final int page)
    {
        final long word = pool.metadata().stateWordAcquire(page);
        if (PageStateWord.state(word) != PageStateWord.SERVING || PageStateWord.pins(word) != 0)
        {
            return;
        }
        switch (gate.beforeEvict(page))
        {
            case EvictionGate.EVICT -> evict(page, word);
            case EvictionGate.EVICT_LOST ->
            {
                final long high = pool.metadata().keyHighPlain(page);
                final long low = pool.metadata().keyLowPlain(page);
                if (evict(page, word))
                {
                    gate.lost(high, low);
                }
            }
            case EvictionGate.HELD -> unorder(page);
            default ->
            {
            }
        }
    }

    /**
     * Evicts a SERVING page seen unpinned in {@code word}: SERVING(0 pins) → EVICTING → FREE with a
     * new generation, so stale handles fail. Nothing changes if a client process holds a pin on it in
     * the pin table (see {@link PagePool#evictIfUnpinned}).
     *
     * @return whether the page left the pool
     */
    @Override
    public boolean evict(final int page, final long word)
    {
        if (!pool.evictIfUnpinned(page, word))
        {
            return false;
        }
        gate.evicted(page);
        if (!retiring[page])
        {
            // A retiring page left the index, and routers' view, when it was retired.
            removedEvent(page);
        }
        index.unbindPage(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), page);
        unorder(page);
        churn++;
        if (retiring[page])
        {
            retiring[page] = false;
            quarantine(page);
        }
        else
        {
            free(page);
        }
        counters.increment(EngineCounter.PAGES_EVICTED);
        return true;
    }

    /** Tells routers a page left the pool (KV events), before its key and tag are gone. */
    private void removedEvent(final int page)
    {
        index.events().removed(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), pool.metadata().namespaceTagPlain(page),
            PageEvents.POOL);
    }

    /**
     * Takes a SERVING page out of use for good: out of the index now (no one finds it again), out of the
     * eviction order, and out of the pool through quarantine once no pin holds it, since whatever
     * changed it may not be done.
     *
     * @param page the page
     */
    @Override
    public void retire(final int page)
    {
        if (retiring[page])
        {
            return;
        }
        retiring[page] = true;
        removedEvent(page);
        index.unbindPage(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), page);
        unorder(page);
        if (!listed[page])
        {
            listed[page] = true;
            retiringPages[retiringCount++] = page;
        }
        retireUnpinned();
    }

    /** Quarantines each retiring page nobody holds any more. */
    private void retireUnpinned()
    {
        int kept = 0;
        for (int i = 0; i < retiringCount; i++)
        {
            final int page = retiringPages[i];
            final long word = pool.metadata().stateWordAcquire(page);
            if (retiring[page] && !(PageStateWord.state(word) == PageStateWord.SERVING && PageStateWord.pins(word) == 0 && evict(page, word)))
            {
                retiringPages[kept++] = page;
            }
            else
            {
                listed[page] = false;
            }
        }
        retiringCount = kept;
    }

    /** A page that never became resident, or left its state on its own, leaves the eviction order. */
    void forget(final int page)
    {
        unorder(page);
    }

    /**
     * Parks a reserve or an acquire that found no page while write-back evictions are in flight: pages
     * free up as their copies land. Past its wait ({@code l3.io-timeout}) it goes on without.
     *
     * @return whether the request now waits for space
     */
    @Override
    public boolean waitForSpace(final ClientRecord r)
    {
        final long now = clock.nanoTime();
        if (gate.evictionsPending() == 0 || (r.phase == ClientRecord.PHASE_SPACE_WAIT && now - r.spaceDeadlineNanos >= 0))
        {
            return false;
        }
        if (r.phase != ClientRecord.PHASE_SPACE_WAIT)
        {
            r.phase = ClientRecord.PHASE_SPACE_WAIT;
            r.spaceDeadlineNanos = now + spaceWaitNanos;
        }
        spaceWaiters.add(r);
        return true;
    }

    /** Lets waiting requests try again: a page was freed, or the last pending eviction ended. */
    @Override
    public void resumeSpaceWaiters()
    {
        int budget = spaceWaiters.size();
        while (budget-- > 0 && (freeCount > 0 || gate.evictionsPending() == 0 || closing))
        {
            final ClientRecord r = spaceWaiters.poll();
            if (r.inFlight && r.phase == ClientRecord.PHASE_SPACE_WAIT)
            {
                if (closing)
                {
                    r.spaceDeadlineNanos = clock.nanoTime();
                }
                resumer.resume(r);
            }
        }
    }

    /** A client left: it waits for nothing any more. */
    @Override
    public void forgetWaiter(final ClientRecord r)
    {
        spaceWaiters.remove(r);
    }

    @Override
    public void onTime(final long nowNanos)
    {
        boolean released = joinAllocated();
        while (!quarantine.isEmpty() && quarantine.peek(1) - nowNanos <= 0)
        {
            final int page = (int)quarantine.peek(0);
            quarantine.poll();
            free(page);
            released = true;
        }
        if (released)
        {
            counters.set(EngineCounter.PAGES_QUARANTINED, quarantine.size());
        }
        if (retiringCount > 0)
        {
            retireUnpinned();
        }
        evictIfAboveHighWater();
        for (int n = spaceWaiters.size(); n > 0; n--)
        {
            final ClientRecord r = spaceWaiters.poll();
            if (!r.inFlight || r.phase != ClientRecord.PHASE_SPACE_WAIT)
            {
                continue;
            }
            if (nowNanos - r.spaceDeadlineNanos >= 0)
            {
                resumer.resume(r); // past its deadline it goes on without: POOL_FULL, or a shorter prefix
            }
            else
            {
                spaceWaiters.add(r);
            }
        }
    }
}

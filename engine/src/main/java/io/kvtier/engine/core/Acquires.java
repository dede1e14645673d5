package io.kvtier.engine.core;

import io.kvtier.client.protocol.MessageType;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.collections.KeyTable;

import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.client.PageKeyChain;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

/**
 * Acquires and releases: a client pins the longest prefix of its keys it can have, pool pages at
 * once and L3 pages once they are loaded and verified, each at its exact position; the answer is the
 * leading run of pinned keys, and pins past the first gap are given back. The hits count only here,
 * once the bytes are in place. Owns no state of its own beyond the request's record: the walk keeps
 * its cursor there, so that it can wait (for probes, for space) and go on.
 */
final class Acquires
{
    private static final int NONE = -1;

    private final PagePool pool;
    private final PageIndex index;
    private final Residency residency;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final PageSpace space;
    private final WritePolicy writePolicy;
    private final int writeHitThreshold;
    private final LoadTracker loads;
    private final Probes lookups;
    private final BackupRequests backups;
    private final Reverifier reverifications;
    private final EngineSteps steps;

    Acquires(final Residency residency, final EngineCounters counters, final EngineClock clock, final PageSpace space, final LoadTracker loads,
             final Probes lookups, final BackupRequests backups, final Reverifier reverifications, final WritePolicy writePolicy,
             final int writeHitThreshold, final EngineSteps steps)
    {
        this.steps = steps;
        this.loads = loads;
        this.lookups = lookups;
        this.backups = backups;
        this.reverifications = reverifications;
        this.pool = residency.pool();
        this.index = residency.index();
        this.residency = residency;
        this.counters = counters;
        this.clock = clock;
        this.space = space;
        this.writePolicy = writePolicy;
        this.writeHitThreshold = writeHitThreshold;
    }

    void acquire(final ClientRecord r)
    {
        counters.add(EngineCounter.ACQUIRE_PAGES_REQUESTED, r.count);
        r.cursor = r.from;
        walk(r);
    }

    /**
     * Walks the keys from the request's cursor: pins pool pages, starts or joins loads of L3 pages, and
     * probes the tiers about keys the index does not know (a restarted engine, another node's writes),
     * then carries on from the same key once they answered. Ends at the first key that is nowhere.
     */
    void walk(final ClientRecord r)
    {
        final PageKeyChain keys = r.keys;
        final int end = r.from + r.count;
        final long now = clock.nanoTime(); // once a walk: its pins are microseconds apart, and a read costs tens of nanoseconds
        for (; r.cursor < end; r.cursor++)
        {
            final int i = r.cursor;
            if (PageEntryStatus.isPinned(r.status[i]))
            {
                continue;
            }
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            index.noteUse(high, low);
            final int serving = residency.servingPage(slot, high, low);
            if (serving != NONE)
            {
                if (!pin(r, i, serving, PageEntryStatus.PINNED, now))
                {
                    break;
                }
                continue;
            }
            if (slot != KeyTable.NONE && (index.tiers(slot) != 0 || loads.loadingPage(slot) != NONE)
                && !residency.visibleInL3(r, slot, loads.loadingPage(slot)))
            {
                counters.increment(EngineCounter.NAMESPACE_MISSES);
                break; // another namespace's copy in L3: never loaded for this request
            }
            final int page = loads.loadFor(slot, high, low, false);
            if (page != NONE)
            {
                if (!loads.addWaiter(page, r, i, Loads.WAIT_PIN))
                {
                    break;
                }
                r.status[i] = (byte)PageEntryStatus.WAITING;
                r.pending++;
                continue;
            }
            if (loads.starvedForSpace() && space.waitForSpace(r))
            {
                return;
            }
            if (residency.unknown(slot) && lookups.probeRound(r, i, end))
            {
                r.phase = ClientRecord.PHASE_ACQUIRE_PROBING;
                return;
            }
            break;
        }
        r.cursor = end;
        r.phase = ClientRecord.PHASE_NONE;
        if (r.pending == 0)
        {
            finish(r);
        }
    }

    /**
     * Pins a SERVING page for a key of the request.
     *
     * @return false if the page is no longer SERVING
     */
    boolean pin(final ClientRecord r, final int key, final int page, final int as)
    {
        return pin(r, key, page, as, clock.nanoTime());
    }

    private boolean pin(final ClientRecord r, final int key, final int page, final int as, final long now)
    {
        if (!residency.visibleTo(r, page))
        {
            counters.increment(EngineCounter.NAMESPACE_MISSES);
            return false;
        }
        final long word = pool.metadata().stateWordAcquire(page);
        if (!pool.tryPin(page, PageStateWord.generation(word)))
        {
            return false;
        }
        r.pageIds[key] = page;
        r.generations[key] = PageStateWord.generation(word);
        final int pinnedAs = loads.takeFirstUse(page) ? PageEntryStatus.PINNED_FROM_L3 : as;
        if (reverifications.start(r, key, page, PageStateWord.generation(word), pinnedAs))
        {
            // A recently loaded page drawn for a check: the key waits, pinned, until the check says it may be served.
            r.status[key] = (byte)PageEntryStatus.WAITING;
            r.pending++;
        }
        else
        {
            r.status[key] = (byte)pinnedAs;
        }
        r.hold(key);
        // The chain parent is the page pinned for the key before, when this request pinned it.
        space.touch(page, key > r.from && PageEntryStatus.isPinned(r.status[key - 1]) ? r.pageIds[key - 1] : residency.chainParent(r.keys, key));
        pool.metadata().lastAccessPlain(page, now);
        final int hits = pool.metadata().hitCountPlain(page) + 1;
        pool.metadata().hitCountPlain(page, hits);
        if (writePolicy == WritePolicy.WRITE_THROUGH_SELECTIVE && hits >= writeHitThreshold)
        {
            backups.backupIfMissing(page);
        }
        return true;
    }

    /**
     * Answers the acquire: the leading run of pinned keys; pins past the first gap go back. A
     * LOOKUP_AND_LOCK is not answered here: with its prefix pinned it goes on to reserve pages after it.
     */
    void finish(final ClientRecord r)
    {
        final int end = r.from + r.count;
        int run = r.from;
        int fromPool = 0;
        int fromL3 = 0;
        while (run < end && PageEntryStatus.isPinned(r.status[run]))
        {
            if (r.status[run] == PageEntryStatus.PINNED_FROM_L3)
            {
                fromL3++;
            }
            else
            {
                fromPool++;
            }
            run++;
        }
        // Pins past the first gap are not part of the prefix: give them back, keep the pages cached. Every
        // slot after the prefix is a MISS: the prefix ended before it.
        for (int i = run; i < end; i++)
        {
            if (PageEntryStatus.isPinned(r.status[i]))
            {
                pool.unpin(r.pageIds[i]);
            }
            r.status[i] = (byte)PageEntryStatus.MISS;
            r.pageIds[i] = NONE;
            r.generations[i] = 0;
        }
        r.acquiredFromPool = fromPool;
        r.acquiredFromL3 = fromL3;
        counters.add(EngineCounter.L2_HIT_PAGES, fromPool);
        counters.add(EngineCounter.L3_HIT_PAGES, fromL3);
        if (r.op == MessageType.LOOKUP_AND_LOCK)
        {
            r.lockedPrefix = run - r.from;
            steps.reserveAfterPrefix(r);
            return;
        }
        r.finish(run - r.from);
    }

    /**
     * Drops the client's pins in {@code [from, end)}.
     *
     * @return pins dropped
     */
    int release(final ClientRecord r, final int from, final int end)
    {
        int released = 0;
        for (int i = from; i < end; i++)
        {
            final int status = r.status[i];
            if (PageEntryStatus.isPinned(status))
            {
                pool.unpin(r.pageIds[i]);
                released++;
            }
            if (status != PageEntryStatus.RESERVED)
            {
                r.status[i] = (byte)PageEntryStatus.NONE;
                r.pageIds[i] = NONE;
                r.generations[i] = 0;
            }
        }
        if (released > 0)
        {
            space.resumeSpaceWaiters();
        }
        return released;
    }
}

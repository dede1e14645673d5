package io.kvtier.engine.core;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.pool.PageStateWord;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.collections.KeyTable;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.WritePolicy;
import io.kvtier.engine.events.PageEvents;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.pool.PagePool;
import io.kvtier.engine.pool.Reservation;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

/**
 * Reservations: a client reserves pages for keys the pool lacks, writes them in place, and commits
 * them (they become visible) or aborts them (they never do). It owns the reservation deadlines: a
 * reservation not committed in {@code lease.reservation-timeout} is taken back, and its page rests in
 * quarantine, since its writer may still be writing.
 */
final class Reservations implements TimedPart
{
    private static final System.Logger LOG = System.getLogger(Reservations.class.getName());
    private static final int NONE = -1;

    private final PagePool pool;
    private final PageIndex index;
    private final Residency residency;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final PageSpace space;
    private final long reservationNanos;
    private final WritePolicy writePolicy;
    private final LongRing deadlines;
    private final BackupRequests backups;

    Reservations(final Residency residency, final EngineCounters counters, final EngineClock clock, final PageSpace space,
                 final BackupRequests backups, final long reservationNanos, final WritePolicy writePolicy)
    {
        this.backups = backups;
        this.pool = residency.pool();
        this.index = residency.index();
        this.residency = residency;
        this.counters = counters;
        this.clock = clock;
        this.space = space;
        this.reservationNanos = reservationNanos;
        this.writePolicy = writePolicy;
        this.deadlines = new LongRing(2 * pool.pageCount() + 1, 3);
    }

    /**
     * A LOOKUP_AND_LOCK whose prefix is pinned: reserves pages for the keys after it, at most its Reserve
     * Limit of them; the keys past the limit stay MISS, as the acquire left them.
     */
    void reserveAfterPrefix(final ClientRecord r)
    {
        final int prefixEnd = r.from + r.lockedPrefix;
        final int rest = r.from + r.count - prefixEnd;
        r.reserving = true;
        r.cursor = prefixEnd;
        r.reserveEnd = prefixEnd + (r.reserveLimit < 0 ? rest : Math.min(rest, r.reserveLimit));
        r.resultCount = 0;
        r.phase = ClientRecord.PHASE_NONE;
        reserve(r);
    }

    /**
     * Reserves pages for the request's keys that the pool lacks, from the request's cursor on (up to a
     * LOOKUP_AND_LOCK's {@link ClientRecord#reserveEnd}).
     */
    void reserve(final ClientRecord r)
    {
        final PageKeyChain keys = r.keys;
        final int end = r.reserveEnd;
        final long deadline = clock.nanoTime() + reservationNanos;
        for (; r.cursor < end; r.cursor++)
        {
            final int i = r.cursor;
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            if (slot != KeyTable.NONE && index.page(slot) != PageIndex.NO_PAGE)
            {
                final int page = index.page(slot);
                if (page == r.pageIds[i] && r.status[i] == PageEntryStatus.RESERVED)
                {
                    r.resultCount++; // the slot's own reservation of this key: still RESERVED
                    continue;
                }
                // EXISTS only for a page the client may see: another namespace's page is a key it cannot have.
                final int serving = residency.servingPage(slot, high, low);
                r.status[i] = (byte)(serving != NONE && residency.visibleTo(r, serving) ? PageEntryStatus.EXISTS : PageEntryStatus.BUSY);
                continue;
            }
            final int page = space.allocate();
            if (page == NONE)
            {
                if (space.waitForSpace(r))
                {
                    return;
                }
                counters.increment(EngineCounter.RESERVE_POOL_FULL);
                for (int k = i; k < end; k++)
                {
                    r.status[k] = (byte)PageEntryStatus.POOL_FULL;
                }
                break;
            }
            final long word = pool.metadata().stateWordAcquire(page);
            final int generation = PageStateWord.generation(word);
            pool.metadata().keyPlain(page, high, low);
            pool.metadata().namespaceTagPlain(page, r.namespaceTag);
            pool.metadata().reservationPlain(page, r.id, deadline);
            pool.metadata().hitCountPlain(page, 0);
            // Forget the seal of the page's last use: a commit must find one made for this reservation.
            pool.metadata().payloadInfoPlain(page, 0, 0);
            pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(generation, 0, PageStateWord.WRITING));
            index.bindPage(high, low, page);
            addDeadline(page, generation, deadline);
            r.pageIds[i] = page;
            r.generations[i] = generation;
            r.status[i] = (byte)PageEntryStatus.RESERVED;
            r.lengths[i] = 0;
            r.hold(i);
            r.resultCount++;
            counters.increment(EngineCounter.PAGES_RESERVED);
        }
        if (r.reserving)
        {
            // A LOOKUP_AND_LOCK answers with its prefix as Result Count and its reservations beside it.
            r.l2Pages = r.resultCount;
            r.finish(r.lockedPrefix);
            return;
        }
        r.finish(r.resultCount);
    }

    private void addDeadline(final int page, final int generation, final long deadline)
    {
        if (deadlines.isFull())
        {
            // Most entries are stale (committed or aborted in time); keep the live ones, in order.
            for (int n = deadlines.size(); n > 0; n--)
            {
                final int p = (int)deadlines.peek(0);
                final int g = (int)deadlines.peek(1);
                final long d = deadlines.peek(2);
                deadlines.poll();
                final long word = pool.metadata().stateWordAcquire(p);
                if (Reservation.isWriting(word, g))
                {
                    deadlines.add(p, g, d);
                }
            }
        }
        deadlines.add(page, generation, deadline);
    }

    /** Publishes the request's reserved pages that the client sealed, and answers with how many. */
    void commit(final ClientRecord r)
    {
        r.finish(commitSlots(r));
    }

    /**
     * Publishes the request's reserved pages that the client sealed; a COMMIT_AND_RELEASE with its BACKUP
     * flag has each copied to L3 as well.
     *
     * @return pages committed
     */
    int commitSlots(final ClientRecord r)
    {
        final int end = r.from + r.count;
        int committed = 0;
        final long now = clock.nanoTime(); // once a commit, not once a page: a read costs tens of nanoseconds
        for (int i = r.from; i < end; i++)
        {
            if (r.status[i] != PageEntryStatus.RESERVED)
            {
                continue;
            }
            final int page = r.pageIds[i];
            final long word = pool.metadata().stateWordAcquire(page);
            if (!Reservation.isHeldBy(pool.metadata(), page, word, r.generations[i], r.id))
            {
                r.status[i] = (byte)PageEntryStatus.EXPIRED;
                r.pageIds[i] = NONE;
                r.generations[i] = 0;
                continue;
            }
            final int length = r.lengths[i];
            // The committing client sealed the frame on its own thread (CRC32C, trailer): the engine
            // thread does no per-byte work, it only checks that a seal of this length for this key is there.
            if (length < 1 || length > pool.pageSize() || !pool.frames().isSealed(page, pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), length))
            {
                r.status[i] = (byte)PageEntryStatus.INVALID;
                freeWritingPage(page, word);
                r.pageIds[i] = NONE;
                r.generations[i] = 0;
                continue;
            }
            pool.metadata().reservationPlain(page, EngineConductor.ENGINE_OWNER, 0);
            if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word), 0, PageStateWord.SERVING)))
            {
                throw new IllegalStateException("page " + page + " changed while its writer held it");
            }
            space.touch(page, residency.chainParent(r.keys, i));
            pool.metadata().lastAccessPlain(page, now);
            residency.index().events().stored(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page),
                pool.metadata().namespaceTagPlain(page), PageEvents.POOL);
            r.status[i] = (byte)PageEntryStatus.COMMITTED;
            r.pageIds[i] = NONE;
            r.generations[i] = 0;
            committed++;
            if (writePolicy == WritePolicy.WRITE_THROUGH || r.backupOnCommit)
            {
                backups.backupIfMissing(page);
            }
        }
        counters.add(EngineCounter.PAGES_COMMITTED, committed);
        space.evictIfAboveHighWater();
        return committed;
    }

    /**
     * Gives back the client's reservations in {@code [from, end)}. An abort by the client frees them at
     * once: it says it stopped writing. A client whose lease expired said nothing, and may still be
     * writing through the slices it holds, so its pages rest in quarantine before anyone else gets them.
     *
     * @return reservations the client aborted
     */
    int abort(final ClientRecord r, final int from, final int end, final boolean expired)
    {
        int aborted = 0;
        for (int i = from; i < end; i++)
        {
            if (r.status[i] != PageEntryStatus.RESERVED)
            {
                continue;
            }
            final int page = r.pageIds[i];
            final long word = pool.metadata().stateWordAcquire(page);
            if (Reservation.isHeldBy(pool.metadata(), page, word, r.generations[i], r.id))
            {
                if (expired)
                {
                    reclaim(page, word);
                }
                else
                {
                    freeWritingPage(page, word);
                    aborted++;
                }
            }
            r.status[i] = (byte)PageEntryStatus.NONE;
            r.pageIds[i] = NONE;
            r.generations[i] = 0;
        }
        counters.add(EngineCounter.PAGES_ABORTED, aborted);
        return aborted;
    }

    /** Takes a WRITING page back from a writer that may still be writing: invisible, then quarantined. */
    private void reclaim(final int page, final long word)
    {
        if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, PageStateWord.FREE)))
        {
            throw new IllegalStateException("page " + page + " changed while the engine reclaimed it");
        }
        index.unbindPage(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), page);
        counters.increment(EngineCounter.RESERVATIONS_EXPIRED);
        space.quarantine(page);
    }

    /** Returns a WRITING page to the free list at once: only for pages no one else can still be writing. */
    private void freeWritingPage(final int page, final long word)
    {
        if (!pool.metadata().compareAndSetStateWord(page, word, PageStateWord.word(PageStateWord.generation(word) + 1, 0, PageStateWord.FREE)))
        {
            throw new IllegalStateException("page " + page + " changed while the engine freed it");
        }
        index.unbindPage(pool.metadata().keyHighPlain(page), pool.metadata().keyLowPlain(page), page);
        space.free(page);
    }

    @Override
    public void onTime(final long nowNanos)
    {
        while (!deadlines.isEmpty() && deadlines.peek(2) - nowNanos <= 0)
        {
            final int page = (int)deadlines.peek(0);
            final int generation = (int)deadlines.peek(1);
            deadlines.poll();
            final long word = pool.metadata().stateWordAcquire(page);
            if (!Reservation.isWriting(word, generation) || pool.metadata().ownerPlain(page) == EngineConductor.ENGINE_OWNER)
            {
                continue; // committed or aborted in time
            }
            LOG.log(System.Logger.Level.INFO, "reservation of page {0} by client {1} lapsed uncommitted; reclaimed, never visible",
                page, pool.metadata().ownerPlain(page));
            reclaim(page, word);
        }
    }
}

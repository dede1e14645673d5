package io.kvtier.engine.core;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.PageEntryStatus;
import io.kvtier.collections.KeyTable;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.config.PrefetchMode;
import io.kvtier.engine.index.PageIndex;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;
import io.kvtier.spi.TierStatus;

/**
 * Lookups, probes and prefetch: how much of a prefix is in the pool and how much more in L3, asking
 * the tiers about keys the index does not know, and loading the L3 part ahead of an acquire. Owns the
 * memory of recent negative probes and the deadlines of lookups that wait for their prefetch.
 *
 * <p>A tier that no other engine writes (not {@link io.kvtier.spi.TierCapability#SHARED}) and that held no
 * object when this engine started holds only what this engine wrote, and the index knows all of that: such a
 * tier is not probed ({@link #trustIndex}). The trust ends for a tier when a write to it ends without its
 * outcome known (a timeout, an error: the object may be there) or without the index recording it, when a
 * read of it ends without its outcome known (the index then lets go of a copy the tier may still hold), and
 * for every tier once the index forgets an entry; probing then goes on as for any tier. A probe spared can only
 * cost a hit the index lost, never serve a byte: loads still read and verify every frame.
 */
final class Lookups implements Probes, TimedPart
{
    private static final int NONE = -1;
    private static final System.Logger LOG = System.getLogger(Lookups.class.getName());

    private final PageIndex index;
    private final Residency residency;
    private final EngineCounters counters;
    private final EngineClock clock;
    private final int tierCount;
    private final int probePages;
    private final PrefetchMode prefetchMode;
    private final int prefetchThreshold;
    private final long prefetchTimeoutNanos;
    private final NegativeProbeCache negativeProbes;
    private final LongRing deadlines;
    private int scanRun;
    private int scanTotal;
    private final LoadTracker loads;
    private final TierQueue io;
    private final SessionRecords sessions;
    private final EngineSteps steps;
    /** Per tier: whether the index knows every object the tier holds, so that probing it would find nothing more. */
    private final boolean[] indexKnowsAll;
    /** The index's count of forgotten entries when the trust was given: once it moves, no tier is trusted. */
    private long forgottenWhenTrusted;
    private String[] tierNames = new String[0];

    Lookups(final Residency residency, final EngineCounters counters, final EngineClock clock, final int tierCount, final int probePages,
            final PrefetchMode prefetchMode, final int prefetchThreshold, final long prefetchTimeoutNanos, final long negativeProbeTtlNanos,
            final int maxClients, final LoadTracker loads, final TierQueue io, final SessionRecords sessions, final EngineSteps steps)
    {
        this.loads = loads;
        this.io = io;
        this.sessions = sessions;
        this.steps = steps;
        this.index = residency.index();
        this.residency = residency;
        this.counters = counters;
        this.clock = clock;
        this.tierCount = tierCount;
        this.probePages = probePages;
        this.prefetchMode = prefetchMode;
        this.prefetchThreshold = prefetchThreshold;
        this.prefetchTimeoutNanos = prefetchTimeoutNanos;
        this.negativeProbes = new NegativeProbeCache(Math.max(4096, 4 * probePages * Math.max(1, Math.min(maxClients, 256))), negativeProbeTtlNanos);
        this.deadlines = new LongRing(2 * (maxClients + 1), 3);
        this.indexKnowsAll = new boolean[tierCount];
    }

    /**
     * Stops probing the tiers whose every object this engine will have written: called at start, before the engine
     * thread runs, for the tiers that are not shared and held nothing then.
     *
     * @param trusted per tier, whether it qualifies
     * @param names   the tiers' names, for the log
     */
    void trustIndex(final boolean[] trusted, final java.util.List<String> names)
    {
        tierNames = names.toArray(new String[0]);
        forgottenWhenTrusted = index.forgotten();
        for (int t = 0; t < tierCount; t++)
        {
            indexKnowsAll[t] = trusted[t];
            if (trusted[t])
            {
                LOG.log(System.Logger.Level.INFO, "tier {0} is not shared and held nothing at start: lookups do not probe it, since"
                    + " the index knows every object this engine writes to it (until a write''s outcome is unknown)", tierNames[t]);
            }
        }
    }

    @Override
    public void indexMayMiss(final int tier, final String why)
    {
        if (indexKnowsAll[tier])
        {
            indexKnowsAll[tier] = false;
            LOG.log(System.Logger.Level.INFO, "tier {0}: lookups probe it again: {1}", tierNames[tier], why);
        }
    }

    /** @return whether lookups must probe the tier for keys the index does not know */
    boolean probes(final int tier)
    {
        if (indexKnowsAll[tier] && index.forgotten() != forgottenWhenTrusted)
        {
            for (int t = 0; t < tierCount; t++)
            {
                indexMayMiss(t, "the index forgot an entry (it was full)");
            }
        }
        return !indexKnowsAll[tier];
    }

    /**
     * One pass over {@code [start, end)}: sets {@link #scanRun} to the end of the leading run of pool
     * pages and {@link #scanTotal} to the first key that is neither in the pool, nor loading, nor in L3.
     */
    private void scanPrefix(final ClientRecord r, final int start, final int end)
    {
        final PageKeyChain keys = r.keys;
        int run = start;
        int i = start;
        for (; i < end; i++)
        {
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            if (slot == KeyTable.NONE)
            {
                break;
            }
            index.noteUse(high, low);
            final int serving = residency.servingPage(slot, high, low);
            if (serving != NONE)
            {
                if (!residency.visibleTo(r, serving))
                {
                    counters.increment(EngineCounter.NAMESPACE_MISSES);
                    break;
                }
                if (run == i)
                {
                    run = i + 1;
                }
                continue;
            }
            final int loading = loads.loadingPage(slot);
            if (loading == NONE && (index.tiers(slot) & io.inServiceMask()) == 0)
            {
                break; // nowhere, or only in tiers out of service, whose reads would be refused
            }
            if (!residency.visibleInL3(r, slot, loading))
            {
                counters.increment(EngineCounter.NAMESPACE_MISSES);
                break; // another namespace's copy: the prefix ends here, as for a pool page of another tag
            }
            if (index.page(slot) == PageIndex.NO_PAGE)
            {
                index.touch(slot);
            }
        }
        scanRun = run;
        scanTotal = i;
    }

    void lookup(final ClientRecord r)
    {
        counters.increment(EngineCounter.LOOKUPS);
        final int end = r.from + r.count;
        scanPrefix(r, r.from, end);
        r.lookupRun = scanRun;
        r.lookupTotal = scanTotal;
        if (probeRound(r, scanTotal, end))
        {
            r.phase = ClientRecord.PHASE_PROBING;
            return;
        }
        decide(r);
    }

    /**
     * Asks every tier about the next {@code l3.probe-pages} keys from {@code start} that the index does
     * not know, stopping before a key L3 recently said it lacks (the prefix ends there anyway). A probe
     * round whose keys are all found is followed by another, so a long chain in a shared or restarted L3
     * is found in one request.
     *
     * @return whether probes were queued; the request then waits for {@code probePending} answers
     */
    @Override
    public boolean probeRound(final ClientRecord r, final int start, final int end)
    {
        if (start >= end || start < r.probedUntil || probePages == 0 || tierCount == 0 || !anyProbed())
        {
            return false;
        }
        final PageKeyChain keys = r.keys;
        final long now = clock.nanoTime();
        int stop = Math.min(end, start + probePages);
        for (int i = start; i < stop; i++)
        {
            // What L3 lacks is remembered by name: the object under this request's tag.
            io.name(r.namespaceTag, keys.high(i), keys.low(i));
            if (negativeProbes.isMissing(io.nameHigh(), io.nameLow(), now))
            {
                stop = i;
                counters.increment(EngineCounter.PROBES_SKIPPED);
                break;
            }
        }
        r.probedUntil = Math.max(stop, start + 1);
        int queued = 0;
        for (int t = 0; t < tierCount; t++)
        {
            if (!io.inService(t) || !probes(t))
            {
                continue; // out of service, its answers would be refused anyway; or the index knows all it holds
            }
            for (int i = start; i < stop; i++)
            {
                if (!io.queueKeyIo(t, TierIoBatch.EXISTS, keys.high(i), keys.low(i), r.namespaceTag, r.id, i, r.opSeq))
                {
                    break;
                }
                queued++;
            }
        }
        counters.add(EngineCounter.PROBE_KEYS, queued);
        r.probePending = queued;
        return queued > 0;
    }

    /** @return whether some tier must be probed */
    private boolean anyProbed()
    {
        for (int t = 0; t < tierCount; t++)
        {
            if (probes(t))
            {
                return true;
            }
        }
        return false;
    }

    /** A lookup's probes all answered: count again past what it knew, probe further, or decide. */
    void afterProbe(final ClientRecord r)
    {
        // Probes only add L3 knowledge past the old total, so the count goes on from there. While they waited, a
        // probed key can have been committed to the pool: where the pool run had reached the old total, it goes on
        // through such pages, or they would be answered as L3 pages that no tier holds (a client that takes that
        // answer for an L3 copy evicts its only one).
        final int oldTotal = r.lookupTotal;
        scanPrefix(r, oldTotal, r.from + r.count);
        if (r.lookupRun == oldTotal)
        {
            r.lookupRun = scanRun;
        }
        r.lookupTotal = scanTotal;
        if (probeRound(r, scanTotal, r.from + r.count))
        {
            return;
        }
        decide(r);
    }

    /** With the prefix counted, prefetches its L3 part if it is long enough, then answers or waits. */
    private void decide(final ClientRecord r)
    {
        final int run = r.lookupRun;
        final int total = r.lookupTotal;
        if (prefetchMode != PrefetchMode.OFF && total - run >= prefetchThreshold)
        {
            final boolean wait = prefetchMode == PrefetchMode.WAIT_COMPLETE || prefetchMode == PrefetchMode.TIMEOUT;
            final int waiting = startLoads(r, run, total, wait ? Loads.WAIT_NOTIFY : 0);
            if (wait && waiting > 0)
            {
                r.pending = waiting;
                r.phase = ClientRecord.PHASE_PREFETCH_WAIT;
                if (prefetchMode == PrefetchMode.TIMEOUT)
                {
                    addDeadline(r, clock.nanoTime() + prefetchTimeoutNanos);
                }
                return;
            }
        }
        answer(r, run, total);
    }

    /** Answers a lookup that waited for its prefetch: loads landed or failed meanwhile, so count again. */
    void finishWaiting(final ClientRecord r)
    {
        scanPrefix(r, r.from, r.lookupTotal);
        answer(r, scanRun, scanTotal);
    }

    private void answer(final ClientRecord r, final int run, final int total)
    {
        for (int i = r.from; i < r.from + r.count; i++)
        {
            if (r.status[i] == PageEntryStatus.WAITING)
            {
                r.status[i] = (byte)PageEntryStatus.NONE; // its load is still going (a timed-out wait): not LOADED yet
            }
        }
        r.l2Pages = run - r.from;
        r.l3Pages = total - run;
        r.finish(total - r.from);
    }

    /**
     * Starts loads for the keys of {@code [start, end)} that are in L3 but not in the pool.
     *
     * @return keys the request now waits for (when waitKind is not 0)
     */
    private int startLoads(final ClientRecord r, final int start, final int end, final byte waitKind)
    {
        final PageKeyChain keys = r.keys;
        int waiting = 0;
        for (int i = start; i < end; i++)
        {
            final long high = keys.high(i);
            final long low = keys.low(i);
            final int slot = index.find(high, low);
            if (residency.servingPage(slot, high, low) != NONE)
            {
                continue;
            }
            final int page = loads.loadFor(slot, high, low, true);
            if (page == NONE)
            {
                break;
            }
            if (waitKind != 0)
            {
                if (!loads.addWaiter(page, r, i, waitKind))
                {
                    break;
                }
                r.status[i] = (byte)PageEntryStatus.WAITING;
                waiting++;
            }
        }
        return waiting;
    }

    /** Starts loading the L3 part of the request's prefix and answers at once with the loads started. */
    void prefetch(final ClientRecord r)
    {
        scanPrefix(r, r.from, r.from + r.count);
        final long before = counters.getOpaque(EngineCounter.L3_READS);
        startLoads(r, scanRun, scanTotal, (byte)0);
        r.finish((int)(counters.getOpaque(EngineCounter.L3_READS) - before));
    }

    private void addDeadline(final ClientRecord r, final long deadline)
    {
        if (deadlines.isFull())
        {
            for (int n = deadlines.size(); n > 0; n--)
            {
                final int id = (int)deadlines.peek(0);
                final int seq = (int)deadlines.peek(1);
                final long d = deadlines.peek(2);
                deadlines.poll();
                if (sessions.record(id).awaits(seq))
                {
                    deadlines.add(id, seq, d);
                }
            }
        }
        deadlines.add(r.id, r.opSeq, deadline);
    }

    /** A tier answered the probe of key {@code i} of a batch. */
    void onExistsDone(final TierIoBatch batch, final int i)
    {
        final TierStatus status = batch.status[i];
        if (batch.refused)
        {
            // Never asked (the tier is out of service): no knowledge either way, only the request goes on.
        }
        else if (status == TierStatus.OK)
        {
            counters.increment(EngineCounter.PROBE_HITS);
            negativeProbes.present(batch.nameHigh[i], batch.nameLow[i]);
            io.stored(batch.tag[i], batch.keyHigh[i], batch.keyLow[i]);
            if (!index.addTier(batch.keyHigh[i], batch.keyLow[i], batch.tier, batch.tag[i]))
            {
                counters.increment(EngineCounter.INDEX_FULL);
            }
            else
            {
                // Found because a request is about to use it: spare it from the sweep that makes room for the next hit.
                index.touch(index.find(batch.keyHigh[i], batch.keyLow[i]));
            }
        }
        else if (status == TierStatus.NOT_FOUND)
        {
            final int slot = index.find(batch.keyHigh[i], batch.keyLow[i]);
            if (slot == KeyTable.NONE || index.tiers(slot) == 0 || index.tierTag(slot) != batch.tag[i])
            {
                negativeProbes.missing(batch.nameHigh[i], batch.nameLow[i], clock.nanoTime());
            }
        }
        else
        {
            counters.increment(EngineCounter.L3_ERRORS);
        }
        if (batch.timedOut)
        {
            return; // its requests were answered when it timed out
        }
        answerProbe(batch, i);
    }

    /** One probe of a request ended (answered, or timed out): the request goes on when all have. */
    void answerProbe(final TierIoBatch batch, final int i)
    {
        final ClientRecord r = sessions.record(batch.session[i]);
        if (!r.awaits(batch.opSeq[i]) || (r.phase != ClientRecord.PHASE_PROBING && r.phase != ClientRecord.PHASE_ACQUIRE_PROBING))
        {
            return;
        }
        if (--r.probePending == 0)
        {
            if (r.phase == ClientRecord.PHASE_PROBING)
            {
                afterProbe(r);
            }
            else
            {
                r.phase = ClientRecord.PHASE_NONE;
                steps.walk(r);
            }
        }
    }

    /** This engine wrote an object to L3, under this name: forget that L3 lacked it. */
    @Override
    public void copiedToL3(final long nameHigh, final long nameLow)
    {
        negativeProbes.present(nameHigh, nameLow);
    }

    @Override
    public void onTime(final long nowNanos)
    {
        while (!deadlines.isEmpty() && deadlines.peek(2) - nowNanos <= 0)
        {
            final ClientRecord r = sessions.record((int)deadlines.peek(0));
            final int seq = (int)deadlines.peek(1);
            deadlines.poll();
            if (r.awaits(seq) && r.phase == ClientRecord.PHASE_PREFETCH_WAIT)
            {
                finishWaiting(r);
            }
        }
    }
}

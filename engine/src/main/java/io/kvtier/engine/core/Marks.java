package io.kvtier.engine.core;

import io.kvtier.collections.KeyTable;
import io.kvtier.collections.KeyTableDescriptor;
import io.kvtier.engine.EngineClock;
import io.kvtier.engine.operations.MarkReport;
import io.kvtier.engine.operations.OperationException;
import io.kvtier.engine.status.EngineCounter;
import io.kvtier.engine.status.EngineCounters;

import java.lang.foreign.Arena;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Marks: pages (a chain is its pages) or whole namespaces whose backups go straight to a named tier until
 * the mark expires. A marked backup needs only its marked tier: neither the first tier's fill nor its
 * state matters to it. A page named by several marks follows the newest. Made by operators (the admin
 * API) and by migrations of method mark or both; dropped at expiry, counted in {@code marks_expired}.
 *
 * <p>Looking a page up ({@link #tierFor}) allocates nothing: the marked keys are in a key table whose
 * value is the mark's record. Engine thread only.
 */
final class Marks implements TimedPart
{
    /** No mark names the page. */
    static final int NONE = -1;
    /** Most marks in force at once. */
    static final int MAX_MARKS = 1024;
    /** Most pages all marks together may name. */
    static final int MAX_MARKED_PAGES = 1 << 16;

    private static final System.Logger LOG = System.getLogger(Marks.class.getName());

    private final EngineCounters counters;
    private final EngineClock clock;
    private final KeyTable keys;
    private final long[] ids = new long[MAX_MARKS];
    private final int[] tiers = new int[MAX_MARKS];
    private final long[] expiresNanos = new long[MAX_MARKS];
    private final long[] namespaces = new long[MAX_MARKS];
    private final long[][] pages = new long[MAX_MARKS][];
    private final String[] origins = new String[MAX_MARKS];
    private final String[] tierNames;
    private int live;
    private int namespaceMarks;
    private long nextId = 1;

    /**
     * @param counters  the engine's counters
     * @param clock     the engine clock
     * @param tierNames the tiers' names
     */
    Marks(final EngineCounters counters, final EngineClock clock, final List<String> tierNames)
    {
        this.counters = counters;
        this.clock = clock;
        this.tierNames = tierNames.toArray(new String[0]);
        this.keys = KeyTable.format(Arena.ofAuto().allocate(KeyTableDescriptor.regionLength(MAX_MARKED_PAGES), 8), MAX_MARKED_PAGES);
    }

    /**
     * @param high the page's key, high half
     * @param low  its low half
     * @param tag  the namespace tag it is stored under
     * @return the tier a mark in force sends the page's backups to, or {@link #NONE}
     */
    int tierFor(final long high, final long low, final long tag)
    {
        if (live == 0)
        {
            return NONE;
        }
        final long now = clock.nanoTime();
        final int slot = keys.find(high, low);
        if (slot != KeyTable.NONE)
        {
            final int mark = keys.value(slot);
            if (expiresNanos[mark] - now > 0)
            {
                return tiers[mark];
            }
        }
        if (namespaceMarks > 0 && tag != 0)
        {
            int best = NONE;
            for (int m = 0; m < MAX_MARKS; m++)
            {
                if (ids[m] != 0 && pages[m] == null && namespaces[m] == tag && expiresNanos[m] - now > 0 && (best == NONE || ids[m] > ids[best]))
                {
                    best = m;
                }
            }
            return best == NONE ? NONE : tiers[best];
        }
        return NONE;
    }

    /**
     * Makes a mark.
     *
     * @param tier      the tier its pages' backups go to
     * @param keyPairs  the pages' keys as high, low pairs, or null for a namespace mark
     * @param namespace the namespace tag of a namespace mark, else 0
     * @param ttlNanos  how long it lasts, more than 0
     * @param origin    who made it, for reports
     * @return its report
     * @throws OperationException when too many marks or marked pages are in force
     */
    MarkReport add(final int tier, final long[] keyPairs, final long namespace, final long ttlNanos, final String origin)
    {
        final int pageCount = keyPairs == null ? 0 : keyPairs.length / 2;
        int free = NONE;
        for (int m = 0; m < MAX_MARKS && free == NONE; m++)
        {
            if (ids[m] == 0)
            {
                free = m;
            }
        }
        if (free == NONE)
        {
            throw new OperationException(OperationException.Kind.UNAVAILABLE, null, "too many marks in force (" + MAX_MARKS
                + "); wait for some to expire or delete some");
        }
        if (keys.size() + pageCount > MAX_MARKED_PAGES)
        {
            throw new OperationException(OperationException.Kind.UNAVAILABLE, "keys", "marks may name at most " + MAX_MARKED_PAGES + " pages in all; "
                + keys.size() + " are marked now and this mark names " + pageCount);
        }
        final long now = clock.nanoTime();
        ids[free] = nextId++;
        tiers[free] = tier;
        expiresNanos[free] = now + ttlNanos;
        namespaces[free] = namespace;
        pages[free] = keyPairs;
        origins[free] = origin;
        if (keyPairs == null)
        {
            namespaceMarks++;
        }
        else
        {
            for (int i = 0; i < keyPairs.length; i += 2)
            {
                keys.value(keys.insert(keyPairs[i], keyPairs[i + 1]), free);
            }
        }
        live++;
        counters.set(EngineCounter.MARKS_ACTIVE, live);
        return report(free, now);
    }

    /**
     * @param id a mark's id
     * @return whether it was in force (it is dropped)
     */
    boolean remove(final long id)
    {
        for (int m = 0; m < MAX_MARKS; m++)
        {
            if (ids[m] == id && id != 0)
            {
                drop(m);
                return true;
            }
        }
        return false;
    }

    /** @return the marks in force, the newest first */
    List<MarkReport> reports()
    {
        final long now = clock.nanoTime();
        final List<MarkReport> result = new ArrayList<>();
        for (int m = 0; m < MAX_MARKS; m++)
        {
            if (ids[m] != 0)
            {
                result.add(report(m, now));
            }
        }
        result.sort((a, b) -> Long.compare(b.id(), a.id()));
        return result;
    }

    private MarkReport report(final int m, final long now)
    {
        return new MarkReport(ids[m], tierNames[tiers[m]], pages[m] == null ? 0 : pages[m].length / 2, namespaces[m], origins[m],
            Instant.now().plusNanos(expiresNanos[m] - now));
    }

    private void drop(final int m)
    {
        if (pages[m] == null)
        {
            namespaceMarks--;
        }
        else
        {
            final long[] pairs = pages[m];
            for (int i = 0; i < pairs.length; i += 2)
            {
                final int slot = keys.find(pairs[i], pairs[i + 1]);
                if (slot != KeyTable.NONE && keys.value(slot) == m)
                {
                    keys.removeAt(slot);
                }
            }
        }
        ids[m] = 0;
        pages[m] = null;
        origins[m] = null;
        live--;
        counters.set(EngineCounter.MARKS_ACTIVE, live);
    }

    /** Drops the marks that expired. */
    @Override
    public void onTime(final long nowNanos)
    {
        if (live == 0)
        {
            return;
        }
        for (int m = 0; m < MAX_MARKS; m++)
        {
            if (ids[m] != 0 && expiresNanos[m] - nowNanos <= 0)
            {
                LOG.log(System.Logger.Level.DEBUG, "mark {0} for tier {1} ({2}) expired", ids[m], tierNames[tiers[m]], origins[m]);
                drop(m);
                counters.increment(EngineCounter.MARKS_EXPIRED);
            }
        }
    }
}

package io.kvtier.bench.replay;

import io.kvtier.collections.KeyTable;
import io.kvtier.collections.KeyTableDescriptor;

import java.lang.foreign.Arena;
import java.util.Arrays;

/**
 * The resident set of a replay: a {@link KeyTable} in an off-heap segment from each resident block's key
 * to a dense entry id in {@code [0, size())}, plus each entry's hash id so that an evicted entry's key can
 * be found and removed. This is the shape of the engine's page index, with the page id as entry id.
 *
 * <p>Entry ids are handed out in order and never freed: an eviction immediately {@link #replace}s the
 * victim's key with the incoming block's, so the id stays in use. The table starts small and doubles up
 * to {@code maxEntries}, so a capacity far beyond the trace's distinct blocks (or an unbounded one) costs
 * only what the trace needs.
 *
 * <p>A replay that knows how many blocks it brings (its trace is in memory) sizes the table once, with no
 * growing. At the size where evictions start, the table is formatted for {@value #EVICTING_SPREAD} times
 * the entries it holds, so it stays at most a quarter full (the engine's index allows three quarters): with
 * linear probing and backward-shift deletion, probe runs and the shifts of a deletion grow quickly with the
 * load, and a replay at capacity deletes on nearly every miss (at three quarters, 3e6 tokens of the
 * Mooncake trace took twice as long as 1e6). A table still growing, or one that can never fill, deletes
 * nothing, and is kept denser so that a large replay stays in the caches.
 */
final class BlockIndex implements AutoCloseable
{
    /** Returned by {@link #find} for a block that is not resident. */
    static final int NONE = -1;

    /** High half of every replay key: "mooncake" in ASCII. The low half is the trace hash id. */
    static final long KEY_HIGH = 0x6D6F6F6E63616B65L;

    /** Entry ids are ints, and the recency list and heaps index int arrays by them. */
    static final int MAX_ENTRIES = Integer.MAX_VALUE - 8;

    /**
     * Table entries per resident entry at capacity: at the table's own load limit of three quarters, at
     * least four slots each. It also leaves room for {@link #findOrClaim} to claim a slot while the resident
     * set is full.
     */
    static final int EVICTING_SPREAD = 3;

    /** The same while growing: room for the claim, at a load of at most three eighths. */
    static final int GROWING_SPREAD = 2;

    private static final int INITIAL_ENTRIES = 1 << 12;

    private final long maxEntries;
    private final boolean evicting;
    private Arena arena;
    private KeyTable table;
    private long[] hashIds;
    private int size;
    private long claimedHashId;
    private int claimedSlot = KeyTable.NONE;

    /**
     * An index that grows as blocks arrive.
     *
     * @param maxEntries the most blocks that will be resident at once; may exceed {@link #MAX_ENTRIES}, in
     *                   which case growing past it fails
     */
    BlockIndex(final long maxEntries)
    {
        this(maxEntries, TraceReplay.UNBOUNDED);
    }

    /**
     * @param capacity      the most blocks the cache keeps resident
     * @param residentBound the most distinct blocks the replay can bring, such as its total blocks, or
     *                      {@link TraceReplay#UNBOUNDED} when unknown; a known bound sizes the table once
     */
    BlockIndex(final long capacity, final long residentBound)
    {
        if (capacity < 1 || residentBound < 0)
        {
            throw new IllegalArgumentException("capacity=" + capacity + " must be at least 1 and residentBound=" + residentBound + " at least 0");
        }
        this.maxEntries = Math.min(capacity, Math.max(1, residentBound));
        this.evicting = capacity < residentBound;
        final int initial = (int)Math.min(maxEntries, residentBound == TraceReplay.UNBOUNDED ? INITIAL_ENTRIES : MAX_ENTRIES);
        this.hashIds = new long[initial];
        this.arena = Arena.ofConfined();
        this.table = newTable(arena, initial);
    }

    private KeyTable newTable(final Arena arena, final int entries)
    {
        final long tableEntries;
        if (entries < maxEntries)
        {
            tableEntries = (long)entries * GROWING_SPREAD;
        }
        else if (evicting)
        {
            tableEntries = (long)entries * EVICTING_SPREAD;
        }
        else
        {
            // Never full and never deleting: as dense as the table allows, plus room for a claim.
            tableEntries = entries + 1L;
        }
        return KeyTable.format(arena.allocate(KeyTableDescriptor.regionLength(tableEntries), 64), tableEntries);
    }

    /** @return the number of resident blocks */
    int size()
    {
        return size;
    }

    /** @return the entry ids companion arrays must cover, at least {@link #size()} */
    int entryCapacity()
    {
        return hashIds.length;
    }

    /**
     * @param hashId a trace hash id
     * @return its entry id, or {@link #NONE} if it is not resident
     */
    int find(final long hashId)
    {
        final int slot = table.find(KEY_HIGH, hashId);
        return slot == KeyTable.NONE ? NONE : table.value(slot);
    }

    /**
     * Finds a block or, when it is not resident, claims its table slot for {@link #bindNew} or
     * {@link #bindEvicting} to bind, so that a miss costs one probe rather than a find and an insert.
     *
     * @param hashId a trace hash id
     * @return its entry id, or {@link #NONE} when it was not resident and is now claimed; one of the bind
     *         methods must follow before anything else changes the index
     */
    int findOrClaim(final long hashId)
    {
        final long before = table.size();
        final int slot = table.insert(KEY_HIGH, hashId);
        if (table.size() == before)
        {
            return table.value(slot);
        }
        claimedSlot = slot;
        claimedHashId = hashId;
        return NONE;
    }

    /**
     * Binds the block {@link #findOrClaim} claimed to the next free entry id, growing the table if need be.
     *
     * @return its entry id, which is the previous {@link #size()}
     */
    int bindNew()
    {
        if (size == hashIds.length)
        {
            // The grown table is built from the resident entries, which the claimed block is not yet one of.
            grow();
            claimedSlot = table.insert(KEY_HIGH, claimedHashId);
        }
        final int id = size;
        table.value(claimedSlot, id);
        hashIds[id] = claimedHashId;
        size++;
        claimedSlot = KeyTable.NONE;
        return id;
    }

    /**
     * Evicts the block under an entry id and binds the block {@link #findOrClaim} claimed to that id.
     *
     * @param id a resident entry id
     */
    void bindEvicting(final int id)
    {
        // The value travels with the entry if removing the victim shifts the claimed slot back.
        table.value(claimedSlot, id);
        table.remove(KEY_HIGH, hashIds[id]);
        hashIds[id] = claimedHashId;
        claimedSlot = KeyTable.NONE;
    }

    /**
     * Makes an absent block resident under the next free entry id, growing the table if need be.
     *
     * @param hashId a trace hash id that is not resident
     * @return its entry id, which is the previous {@link #size()}
     */
    int add(final long hashId)
    {
        if (size == hashIds.length)
        {
            grow();
        }
        final int id = size;
        final int slot = table.insert(KEY_HIGH, hashId);
        table.value(slot, id);
        hashIds[id] = hashId;
        size++;
        return id;
    }

    /**
     * Evicts the block under an entry id and makes another resident under the same id.
     *
     * @param id     a resident entry id
     * @param hashId a trace hash id that is not resident
     */
    void replace(final int id, final long hashId)
    {
        table.remove(KEY_HIGH, hashIds[id]);
        final int slot = table.insert(KEY_HIGH, hashId);
        table.value(slot, id);
        hashIds[id] = hashId;
    }

    /**
     * @param id a resident entry id
     * @return the hash id resident under it
     */
    long hashId(final int id)
    {
        return hashIds[id];
    }

    private void grow()
    {
        final long wanted = Math.min(maxEntries, 2L * hashIds.length);
        if (wanted > MAX_ENTRIES)
        {
            throw new IllegalStateException("more than " + hashIds.length + " distinct blocks resident at once: beyond what int entry ids can address");
        }
        final int entries = (int)wanted;
        final Arena grown = Arena.ofConfined();
        final KeyTable larger = newTable(grown, entries);
        for (int id = 0; id < size; id++)
        {
            larger.value(larger.insert(KEY_HIGH, hashIds[id]), id);
        }
        arena.close();
        arena = grown;
        table = larger;
        hashIds = Arrays.copyOf(hashIds, entries);
    }

    /** Frees the table's memory. */
    @Override
    public void close()
    {
        arena.close();
    }
}

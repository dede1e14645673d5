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
 */
final class BlockIndex implements AutoCloseable
{
    /** Returned by {@link #find} for a block that is not resident. */
    static final int NONE = -1;

    /** High half of every replay key: "mooncake" in ASCII. The low half is the trace hash id. */
    static final long KEY_HIGH = 0x6D6F6F6E63616B65L;

    /** Entry ids are ints, and the recency list and heaps index int arrays by them. */
    static final int MAX_ENTRIES = Integer.MAX_VALUE - 8;

    private static final int INITIAL_ENTRIES = 1 << 12;

    private final long maxEntries;
    private Arena arena;
    private KeyTable table;
    private long[] hashIds;
    private int size;

    /**
     * @param maxEntries the most blocks that will be resident at once; may exceed {@link #MAX_ENTRIES}, in
     *                   which case growing past it fails
     */
    BlockIndex(final long maxEntries)
    {
        if (maxEntries < 1)
        {
            throw new IllegalArgumentException("maxEntries=" + maxEntries + " must be at least 1");
        }
        this.maxEntries = maxEntries;
        final int initial = (int)Math.min(maxEntries, INITIAL_ENTRIES);
        this.hashIds = new long[initial];
        this.arena = Arena.ofConfined();
        this.table = KeyTable.format(arena.allocate(KeyTableDescriptor.regionLength(initial), 64), initial);
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
        final KeyTable larger = KeyTable.format(grown.allocate(KeyTableDescriptor.regionLength(entries), 64), entries);
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

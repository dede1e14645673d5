package io.kvtier.tier.support;

import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.spi.TierUsage;

import java.lang.foreign.Arena;

/**
 * What the tier knows about its files: one entry per key in a {@link KeyIds} (key to a dense
 * entry id), per-id state in primitive arrays, and an {@link Recency} of the committed files for
 * eviction. It also keeps the byte and object counts and the capacity admission of writes.
 *
 * <p>Public for the 3FS tier, which keeps the same index of the files it stores.
 *
 * <p>Not thread-safe: the tier guards every call with one lock. Nothing here does I/O or allocates;
 * the calls that choose files to evict only mark them and hand them to the caller, which unlinks
 * them outside the lock and then calls {@link #beginEviction} and {@link #endEviction}.
 *
 * <h2>Entry states</h2>
 * <ul>
 *   <li>{@code FILE}: a committed file of {@code bytes} bytes; in the LRU list unless evicting.</li>
 *   <li>{@code EVICTING}: chosen for eviction and already subtracted from the counts; the entry stays
 *       until {@link #endEviction} so its id and key stay stable while the file is unlinked. A write
 *       that commits meanwhile sets {@code FILE} again, and {@link #beginEviction} then cancels.</li>
 *   <li>{@code writers > 0}: writes of the key are in flight in this process; the entry is never
 *       chosen for eviction, and exists (without {@code FILE}) for a key being written fresh.</li>
 * </ul>
 * An entry with none of these is freed.
 *
 * <h2>Answering probes</h2>
 * For a directory only this tier changes, the index is the truth about which pages exist: its
 * {@code FILE} entries are exactly the files of the start-up scan plus the tier's own published writes,
 * minus its removes and evictions. {@link #exists} answers from it; only an index that overflowed
 * (files counted in bytes but not by key) cannot answer for a key it does not hold. Each publication
 * gets a commit number ({@link #commitOf}), so a read that found no file can drop the entry it was
 * sent for ({@link #forget}) without dropping a newer write of the same key.
 */
public final class FileIndex
{
    /** {@link #reserveWrite}: the write cannot fit even after evicting everything evictable. */
    public static final int NO_SPACE = -1;
    /** {@link #reserveWrite}: an unbounded tier's index is full; the write goes ahead uncounted by key. */
    public static final int UNTRACKED = -2;
    /** {@link #reserveWrite}: files were chosen for eviction; unlink them and ask again. */
    public static final int RETRY = -3;
    /** Entries of an unbounded tier's index by default: files beyond it are still counted in bytes, not tracked one by one. */
    public static final int UNBOUNDED_DEFAULT_ENTRIES = 1 << 18;
    /** The most entries {@link #defaultEntries} gives a bounded tier: 4M entries, a 192 MiB table. */
    public static final int DEFAULT_ENTRIES_LIMIT = 1 << 22;

    private static final byte FILE = 1;
    private static final byte EVICTING = 2;

    private final KeyIds table;
    private final Recency lru;
    private final long[] entryHigh;
    private final long[] entryLow;
    private final long[] entryBytes;
    private final int[] entryWriters;
    private final byte[] entryState;
    private final int[] entryCommit;
    private final int[] freeIds;
    private int freeCount;

    private final long capacity;
    private final long highWaterBytes;
    private final long lowWaterBytes;
    private final boolean bounded;

    private long usedBytes;
    private long reservedBytes;
    private long objects;
    private long untrackedBytes;
    private int commits;
    private boolean overflowed;
    private boolean draining;

    /**
     * @param arena          where the key table's memory comes from
     * @param maxEntries     the most keys tracked at once
     * @param capacity       the most bytes stored, or {@link TierUsage#UNBOUNDED}
     * @param highWaterBytes eviction starts when the used bytes exceed this
     * @param lowWaterBytes  eviction stops at or below this
     */
    public FileIndex(final Arena arena, final int maxEntries, final long capacity, final long highWaterBytes, final long lowWaterBytes)
    {
        table = new KeyIds(arena, maxEntries);
        lru = new Recency(maxEntries);
        entryHigh = new long[maxEntries];
        entryLow = new long[maxEntries];
        entryBytes = new long[maxEntries];
        entryWriters = new int[maxEntries];
        entryState = new byte[maxEntries];
        entryCommit = new int[maxEntries];
        freeIds = new int[maxEntries];
        for (int i = 0; i < maxEntries; i++)
        {
            freeIds[i] = maxEntries - 1 - i;
        }
        freeCount = maxEntries;
        this.capacity = capacity;
        this.bounded = capacity != TierUsage.UNBOUNDED;
        this.highWaterBytes = highWaterBytes;
        this.lowWaterBytes = lowWaterBytes;
    }

    /**
     * @param capacity       the tier's capacity in bytes, or {@link TierUsage#UNBOUNDED}
     * @param objectSize     one object's bytes
     * @param writesInFlight the most writes the tier has reserved at once
     * @return entries enough to track every object a bounded capacity holds; {@link #UNBOUNDED_DEFAULT_ENTRIES} otherwise
     */
    public static int defaultEntries(final long capacity, final long objectSize, final int writesInFlight)
    {
        if (capacity == TierUsage.UNBOUNDED)
        {
            return UNBOUNDED_DEFAULT_ENTRIES;
        }
        // Room for every object the capacity holds plus the writes in flight and files of odd sizes found at start.
        final long wanted = capacity / objectSize + writesInFlight + 64;
        return (int)Math.min(wanted, DEFAULT_ENTRIES_LIMIT);
    }

    /** @return bytes of committed files, tracked and untracked */
    public long usedBytes()
    {
        return usedBytes + untrackedBytes;
    }

    /** @return committed files, or -1 once some went untracked because the index was full */
    public long objects()
    {
        return overflowed ? -1 : objects;
    }

    /** @return bytes reserved by writes in flight */
    public long reservedBytes()
    {
        return reservedBytes;
    }

    /** @return whether some files are counted only in bytes because the index was full */
    public boolean overflowed()
    {
        return overflowed;
    }

    /** @return keys in the table, including entries being written or evicted */
    public long entries()
    {
        return table.size();
    }

    // ------------------------------------------------------------------------------------------------
    // Writes
    // ------------------------------------------------------------------------------------------------

    /**
     * Admits a write of {@code bytes} bytes: registers it on the key's entry (so the file is not
     * evicted while it is written) and reserves the bytes against the capacity, choosing LRU files
     * to evict when they do not fit.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @param bytes   the object's size
     * @param victims receives the files to evict, whatever the answer
     * @return an entry id to pass to {@link #commitWrite}, or {@link #NO_SPACE}, {@link #UNTRACKED}
     *         (also passed to {@link #commitWrite}) or {@link #RETRY}
     */
    public int reserveWrite(final long keyHigh, final long keyLow, final long bytes, final Victims victims)
    {
        if (bounded)
        {
            if (reservedBytes + bytes > capacity)
            {
                return NO_SPACE;
            }
            if (usedBytes + reservedBytes + bytes > capacity)
            {
                chooseVictims(capacity - reservedBytes - bytes, victims);
                if (usedBytes + reservedBytes + bytes > capacity)
                {
                    return victims.isFull() ? RETRY : NO_SPACE;
                }
            }
        }
        final int id = findOrInsert(keyHigh, keyLow);
        if (id == KeyIds.NONE)
        {
            if (!bounded)
            {
                overflowed = true;
                reservedBytes += bytes;
                return UNTRACKED;
            }
            // The index bounds what a bounded tier may hold, like its capacity: make room in it.
            return chooseOneVictim(victims) ? RETRY : NO_SPACE;
        }
        entryWriters[id]++;
        reservedBytes += bytes;
        return id;
    }

    /**
     * Ends a write admitted by {@link #reserveWrite}. Call it with the key's stripe lock held, right
     * after the rename, so it is ordered with evictions of the same key.
     *
     * @param ticket    what {@link #reserveWrite} returned
     * @param bytes     the size passed to {@link #reserveWrite}
     * @param published whether the file now holds the object under its final name
     * @param victims   receives files to evict when the used bytes crossed the high water level
     */
    public void commitWrite(final int ticket, final long bytes, final boolean published, final Victims victims)
    {
        reservedBytes -= bytes;
        if (ticket == UNTRACKED)
        {
            if (published)
            {
                untrackedBytes += bytes;
            }
            return;
        }
        final int id = ticket;
        entryWriters[id]--;
        if (published)
        {
            if ((entryState[id] & FILE) != 0)
            {
                usedBytes += bytes - entryBytes[id];
            }
            else
            {
                usedBytes += bytes;
                objects++;
                entryState[id] |= FILE;
            }
            entryBytes[id] = bytes;
            entryCommit[id] = nextCommit();
            if ((entryState[id] & EVICTING) == 0)
            {
                lru.touch(id);
            }
        }
        else
        {
            freeIfUnused(id);
        }
        if (bounded && usedBytes > highWaterBytes)
        {
            draining = true;
        }
        continueEviction(victims);
    }

    // ------------------------------------------------------------------------------------------------
    // Probes, reads and removes
    // ------------------------------------------------------------------------------------------------

    /**
     * What the index knows of a key's file, for a directory only this tier changes. A write still in
     * flight is not a file yet, and neither is one chosen for eviction.
     *
     * @param keyHigh       the key's high half
     * @param keyLow        the key's low half
     * @param expectedBytes the object size
     * @return OK for a file of that size or of its compact form ({@link TrailerBlock#isCompact}), CORRUPT for one of
     *         another size, NOT_FOUND, or {@code null} when the index overflowed and does not hold the key (only the
     *         filesystem can tell)
     */
    public TierStatus exists(final long keyHigh, final long keyLow, final long expectedBytes)
    {
        final int id = find(keyHigh, keyLow);
        if (id == KeyIds.NONE || (entryState[id] & FILE) == 0)
        {
            return id == KeyIds.NONE && overflowed ? null : TierStatus.NOT_FOUND;
        }
        final long bytes = entryBytes[id];
        return bytes == expectedBytes || TrailerBlock.isCompact(bytes, expectedBytes) ? TierStatus.OK : TierStatus.CORRUPT;
    }

    /**
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return the commit number of the key's file (not 0), or 0 when the index holds no file for it
     */
    public int commitOf(final long keyHigh, final long keyLow)
    {
        final int id = find(keyHigh, keyLow);
        return id == KeyIds.NONE || (entryState[id] & FILE) == 0 ? 0 : entryCommit[id];
    }

    /**
     * Drops a key's file that turned out to be gone (deleted behind the tier's back, or by another
     * node), unless it was written again since. Call it with the key's stripe lock held.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @param commit  what {@link #commitOf} said before the file was found missing
     * @return whether the entry was dropped
     */
    public boolean forget(final long keyHigh, final long keyLow, final int commit)
    {
        final int id = find(keyHigh, keyLow);
        // An entry being evicted is the eviction's to finish.
        if (commit == 0 || id == KeyIds.NONE || entryState[id] != FILE || entryCommit[id] != commit)
        {
            return false;
        }
        dropFile(id);
        freeIfUnused(id);
        return true;
    }

    /**
     * Marks a key's file as just used, after a read.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     */
    public void touch(final long keyHigh, final long keyLow)
    {
        final int id = find(keyHigh, keyLow);
        if (id != KeyIds.NONE && entryState[id] == FILE)
        {
            lru.touch(id);
        }
    }

    /**
     * Forgets a key's file after the engine removed it. Call it with the key's stripe lock held.
     *
     * @param keyHigh  the key's high half
     * @param keyLow   the key's low half
     * @param unlinked whether the unlink removed a file
     * @param bytes    the object size, to uncount an untracked file
     */
    public void removed(final long keyHigh, final long keyLow, final boolean unlinked, final long bytes)
    {
        final int id = find(keyHigh, keyLow);
        if (id == KeyIds.NONE)
        {
            if (unlinked && untrackedBytes > 0)
            {
                untrackedBytes = Math.max(0, untrackedBytes - bytes);
            }
            return;
        }
        if ((entryState[id] & EVICTING) != 0)
        {
            return;
        }
        if ((entryState[id] & FILE) != 0)
        {
            dropFile(id);
        }
        freeIfUnused(id);
    }

    // ------------------------------------------------------------------------------------------------
    // Eviction
    // ------------------------------------------------------------------------------------------------

    /**
     * Chooses more files to evict if an eviction round (from above the high water level down to the
     * low one) is still under way.
     *
     * @param victims receives the files
     */
    public void continueEviction(final Victims victims)
    {
        if (draining)
        {
            chooseVictims(lowWaterBytes, victims);
            // A buffer with room left means the low level was reached or nothing else may be evicted now.
            draining = victims.isFull();
        }
    }

    /** @return whether the used bytes are above the high water level (an eviction round should start) */
    public boolean aboveHighWater()
    {
        return bounded && usedBytes > highWaterBytes;
    }

    /** Starts an eviction round, for the start-up scan; {@link #continueEviction} does the choosing. */
    public void startEvictionIfAboveHighWater()
    {
        if (aboveHighWater())
        {
            draining = true;
        }
    }

    private void chooseVictims(final long targetUsedBytes, final Victims victims)
    {
        int id = lru.first();
        while (id != Recency.NONE && usedBytes > targetUsedBytes && !victims.isFull())
        {
            final int next = lru.next(id);
            if (entryWriters[id] == 0)
            {
                markEvicting(id, victims);
            }
            id = next;
        }
    }

    private void markEvicting(final int id, final Victims victims)
    {
        dropFile(id);
        entryState[id] = EVICTING;
        victims.add(id, entryHigh[id], entryLow[id]);
    }

    /**
     * Chooses the least recently used file, whatever the water level, to make room in a full index.
     *
     * @param victims receives it
     * @return whether one was chosen
     */
    public boolean chooseOneVictim(final Victims victims)
    {
        for (int id = lru.first(); id != Recency.NONE && !victims.isFull(); id = lru.next(id))
        {
            if (entryWriters[id] == 0)
            {
                markEvicting(id, victims);
                return true;
            }
        }
        return false;
    }

    /**
     * Called with the victim's stripe lock held, before unlinking it.
     *
     * @param id a victim's entry id
     * @return whether to unlink: false when a write committed the key again since it was chosen
     */
    public boolean beginEviction(final int id)
    {
        if ((entryState[id] & FILE) != 0)
        {
            entryState[id] &= ~EVICTING;
            lru.touch(id);
            return false;
        }
        return true;
    }

    /**
     * Called with the victim's stripe lock held, after unlinking it.
     *
     * @param id a victim's entry id
     */
    public void endEviction(final int id)
    {
        entryState[id] &= ~EVICTING;
        freeIfUnused(id);
    }

    // ------------------------------------------------------------------------------------------------
    // Start-up
    // ------------------------------------------------------------------------------------------------

    /**
     * Records a file found at start; call in LRU order, oldest first.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @param bytes   the file's size
     * @return false when the index is full (a bounded tier must evict first)
     */
    public boolean adopt(final long keyHigh, final long keyLow, final long bytes)
    {
        final int id = findOrInsert(keyHigh, keyLow);
        if (id == KeyIds.NONE)
        {
            if (bounded)
            {
                return false;
            }
            overflowed = true;
            untrackedBytes += bytes;
            return true;
        }
        if ((entryState[id] & FILE) != 0)
        {
            usedBytes -= entryBytes[id];
            objects--;
        }
        entryState[id] = FILE;
        entryBytes[id] = bytes;
        entryCommit[id] = nextCommit();
        usedBytes += bytes;
        objects++;
        lru.touch(id);
        return true;
    }

    // ------------------------------------------------------------------------------------------------
    // Entries
    // ------------------------------------------------------------------------------------------------

    private int find(final long keyHigh, final long keyLow)
    {
        return table.find(keyHigh, keyLow);
    }

    private int findOrInsert(final long keyHigh, final long keyLow)
    {
        if (freeCount == 0)
        {
            return table.find(keyHigh, keyLow);
        }
        final int candidate = freeIds[freeCount - 1];
        final int id = table.putIfAbsent(keyHigh, keyLow, candidate);
        if (id != candidate)
        {
            return id;
        }
        freeCount--;
        entryHigh[id] = keyHigh;
        entryLow[id] = keyLow;
        entryBytes[id] = 0;
        entryWriters[id] = 0;
        entryState[id] = 0;
        return id;
    }

    private int nextCommit()
    {
        // Wraps after 2^32 publications; 0 stays reserved for "no file".
        commits = commits == -1 ? 1 : commits + 1;
        return commits;
    }

    private void dropFile(final int id)
    {
        usedBytes -= entryBytes[id];
        objects--;
        entryBytes[id] = 0;
        entryState[id] &= ~FILE;
        lru.remove(id);
    }

    private void freeIfUnused(final int id)
    {
        if (entryState[id] == 0 && entryWriters[id] == 0)
        {
            table.remove(entryHigh[id], entryLow[id]);
            freeIds[freeCount++] = id;
        }
    }

    /** Removes one file the index chose, if nothing wrote its key again since: what {@link #evictChosen} calls per victim. */
    @FunctionalInterface
    public interface Eviction
    {
        /**
         * @param id      the victim's entry
         * @param keyHigh its key's high half
         * @param keyLow  its key's low half
         * @return whether the file was evicted
         */
        boolean evict(int id, long keyHigh, long keyLow);
    }

    /**
     * Evicts the files the index chose, and keeps going while the eviction round needs more.
     *
     * @param index    the index
     * @param lock     what guards it
     * @param victims  the chosen files, emptied
     * @param eviction removes one
     * @return how many were evicted
     */
    public static int evictChosen(final FileIndex index, final Object lock, final Victims victims, final Eviction eviction)
    {
        int evicted = 0;
        while (victims.count() > 0)
        {
            for (int v = 0; v < victims.count(); v++)
            {
                if (eviction.evict(victims.id(v), victims.keyHigh(v), victims.keyLow(v)))
                {
                    evicted++;
                }
            }
            victims.clear();
            synchronized (lock)
            {
                index.continueEviction(victims);
            }
        }
        return evicted;
    }

    /** A caller-owned buffer of files chosen for eviction, reused so choosing allocates nothing. */
    public static final class Victims
    {
        private final int[] ids;
        private final long[] high;
        private final long[] low;
        private int count;

        /**
         * @param capacity the most files chosen per call
         */
        public Victims(final int capacity)
        {
            ids = new int[capacity];
            high = new long[capacity];
            low = new long[capacity];
        }

        void add(final int id, final long keyHigh, final long keyLow)
        {
            ids[count] = id;
            high[count] = keyHigh;
            low[count] = keyLow;
            count++;
        }

        public int count()
        {
            return count;
        }

        public boolean isFull()
        {
            return count == ids.length;
        }

        public int id(final int index)
        {
            return ids[index];
        }

        public long keyHigh(final int index)
        {
            return high[index];
        }

        public long keyLow(final int index)
        {
            return low[index];
        }

        public void clear()
        {
            count = 0;
        }
    }
}

package io.kvtier.tier.posix;

import io.kvtier.spi.TierStatus;

import java.lang.foreign.MemorySegment;

/**
 * One worker's file operations on page files. An instance belongs to one thread at a time (it keeps
 * path buffers and the temp files of the writes in progress); errors are logged, rate-limited, with
 * the path and the system's reason, and returned as a {@link TierStatus}.
 *
 * <p>A write is three steps so the tier can order the rename with evictions of the same key:
 * {@link #writeTemp} (the slow part, no lock held), then {@link #publishTemp} under the key's
 * stripe lock, or {@link #discardTemp} when the write is abandoned. A store with several write
 * slots keeps that many temp files pending, so {@link #writeTemps} can write them together before
 * the tier renames each under its own lock.
 */
interface FileStore
{
    /**
     * Looks the page file up with a {@code stat}, never an {@code open}.
     *
     * @param keyHigh      the key's high half
     * @param keyLow       the key's low half
     * @param expectedSize the object size
     * @return OK when the page file exists with that size, CORRUPT when its size differs, NOT_FOUND, or an error
     */
    TierStatus exists(long keyHigh, long keyLow, long expectedSize);

    /**
     * Reads a page whole: a file whose size differs from the segment's is CORRUPT and is not read.
     *
     * @param keyHigh     the key's high half
     * @param keyLow      the key's low half
     * @param destination the pool slice to fill
     * @return OK, NOT_FOUND, CORRUPT or an error
     */
    TierStatus read(long keyHigh, long keyLow, MemorySegment destination);

    /** @return how many pages {@link #readPages} reads at once; 1, the default, means one at a time */
    default int readBatchSize()
    {
        return 1;
    }

    /**
     * Reads several pages, each as {@link #read} would; a store that can overlap them (one io_uring
     * submission for all) overrides it.
     *
     * @param keyHigh      the keys' high halves
     * @param keyLow       the keys' low halves
     * @param destinations the pool slices to fill
     * @param count        how many, at most {@link #readBatchSize()}
     * @param statuses     receives each page's status
     */
    default void readPages(final long[] keyHigh, final long[] keyLow, final MemorySegment[] destinations, final int count,
                           final TierStatus[] statuses)
    {
        for (int k = 0; k < count; k++)
        {
            statuses[k] = read(keyHigh[k], keyLow[k], destinations[k]);
        }
    }

    /** @return how many temp files may be pending at once (write slots), and so how many pages {@link #writeTemps} writes at once */
    default int writeBatchSize()
    {
        return 1;
    }

    /**
     * Hands the store what the engine says of the next page written in a slot: the CRC32C of its first bytes
     * ({@link io.kvtier.spi.TierBatch#knownCrc32cBytes}), and whether its trailer block past the trailer is padding
     * ({@link io.kvtier.spi.TierBatch#trailerBlockIsPadding}). A store that checksums what it writes and keeps engine
     * frames compactly (the slab) then reads only the rest of the page for its checksum, and trims a padded frame
     * without reading the padding; the others ignore it, the default. Holds for the slot's next {@link #writeTemp} or
     * {@link #writeTemps} only.
     *
     * @param slot       the write slot the page goes in
     * @param knownBytes how many of the page's first bytes {@code knownCrc} covers; 0 when none
     * @param knownCrc   their CRC32C
     * @param padding    whether the page's trailer block past its trailer is padding
     */
    default void nextWrite(final int slot, final long knownBytes, final int knownCrc, final boolean padding)
    {
    }

    /**
     * Writes the segment to a new temp file next to the page's final name, flushed when configured.
     * The temp file is the slot's until {@link #publishTemp} or {@link #discardTemp} of the same slot.
     *
     * @param slot    which write slot holds the temp file, below {@link #writeBatchSize()}
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @param source  the pool slice to store
     * @return OK when the temp file is complete and closed, or an error (the temp file is then gone)
     */
    TierStatus writeTemp(int slot, long keyHigh, long keyLow, MemorySegment source);

    /**
     * Writes several pages' temp files, page {@code k} in slot {@code k}, each as {@link #writeTemp}
     * would; a store that can overlap them (one io_uring submission for all) overrides it.
     *
     * @param keyHigh  the keys' high halves
     * @param keyLow   the keys' low halves
     * @param sources  the pool slices to store
     * @param count    how many, at most {@link #writeBatchSize()}
     * @param statuses receives each page's status, as {@link #writeTemp} gives it
     */
    default void writeTemps(final long[] keyHigh, final long[] keyLow, final MemorySegment[] sources, final int count,
                            final TierStatus[] statuses)
    {
        for (int k = 0; k < count; k++)
        {
            statuses[k] = writeTemp(k, keyHigh[k], keyLow[k], sources[k]);
        }
    }

    /**
     * Renames the slot's temp file over the page's final name, atomically.
     *
     * @param slot the slot of a successful {@link #writeTemp}
     * @return OK, or an error (the temp file is then gone)
     */
    TierStatus publishTemp(int slot);

    /**
     * Deletes the slot's temp file, if it is still there.
     *
     * @param slot a write slot
     */
    void discardTemp(int slot);

    /**
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return OK when a page file was removed, NOT_FOUND when there was none, or an error
     */
    TierStatus unlink(long keyHigh, long keyLow);

    /**
     * Unlinks a page the index chose to evict. A store may put off what frees its space until
     * {@link #flushEvictions}, which the worker calls at the end of every eviction round, on the same thread; the
     * page is gone for every reader at once either way. The default unlinks at once.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return as {@link #unlink}
     */
    default TierStatus unlinkEvicted(final long keyHigh, final long keyLow)
    {
        return unlink(keyHigh, keyLow);
    }

    /** Ends what {@link #unlinkEvicted} put off. The default has nothing to do. */
    default void flushEvictions()
    {
    }

    /** @return how many times a write found its directory missing and made it; read by tests once writes are complete */
    long directoriesMade();

    /** Releases what the store holds beyond its path buffers (a ring); called once its worker has stopped. */
    default void close()
    {
    }
}

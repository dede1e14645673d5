package io.kvtier.tier.posix;

import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierContext;
import io.kvtier.spi.TierStatus;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;
import io.kvtier.tier.support.TierWorkers;

import java.lang.foreign.MemorySegment;

/**
 * One I/O thread's work: its own file store, path buffers and eviction buffer, and what the tier does
 * with a claim of keys ({@link TierWorkers} claims them and calls {@link #serve}). Reads and writes
 * go in claims of the store's batch sizes with the index bookkeeping around each key; probes and
 * removes one key at a time. Namespace changes of a key (the rename of a write, the unlink of a remove
 * or eviction) and their index update happen under the key's stripe lock, index updates under the
 * index lock, in that order (see {@link PosixTier}).
 */
final class PosixWorker implements TierWorkers.Handler
{
    private static final int VICTIMS_PER_ROUND = 64;
    private static final int MAX_RESERVE_ATTEMPTS = 16;

    private final String name;
    private final PosixSettings settings;
    private final PathLayout layout;
    private final long objectSize;
    private final TierContext context;
    private final System.Logger logger;
    private final IoErrorLog errors;
    private final PosixPages pages;
    private final FileIndex index;
    private final Object indexLock;
    private TierWorkers.Claim claim;
    final FileStore store;
    private final FileIndex.Victims victims = new FileIndex.Victims(VICTIMS_PER_ROUND);
    private final FileIndex.Eviction eviction = this::evict;
    private final int readBatch;
    private final long[] readHigh;
    private final long[] readLow;
    private final MemorySegment[] readDestinations;
    private final int[] readCommits;
    private final TierStatus[] readStatuses;
    private final int writeBatch;
    private final long[] writeHigh;
    private final long[] writeLow;
    private final MemorySegment[] writeSources;
    private final int[] writeTickets;
    private final int[] writeKeys;
    private final int[] writeDeferred;
    private final TierStatus[] writeStatuses;

    /**
     * @param pages the tier's index, locks and settings, shared by its workers
     * @param store this worker's file store
     */
    PosixWorker(final PosixPages pages, final FileStore store)
    {
        this.pages = pages;
        this.name = pages.name;
        this.settings = pages.settings;
        this.layout = pages.layout;
        this.objectSize = pages.objectSize;
        this.context = pages.context;
        this.logger = pages.logger;
        this.errors = pages.errors;
        this.index = pages.index;
        this.indexLock = pages.indexLock;
        this.store = store;
        readBatch = Math.max(1, store.readBatchSize());
        readHigh = new long[readBatch];
        readLow = new long[readBatch];
        readDestinations = new MemorySegment[readBatch];
        readCommits = new int[readBatch];
        readStatuses = new TierStatus[readBatch];
        writeBatch = Math.max(1, store.writeBatchSize());
        writeHigh = new long[writeBatch];
        writeLow = new long[writeBatch];
        writeSources = new MemorySegment[writeBatch];
        writeTickets = new int[writeBatch];
        writeKeys = new int[writeBatch];
        writeDeferred = new int[writeBatch];
        writeStatuses = new TierStatus[writeBatch];
    }

    /** @return the worker's buffer of eviction victims, for the start-up seeding the tier does with it */
    FileIndex.Victims victims()
    {
        return victims;
    }

    /** Read and write keys go in claims of the store's batch sizes (one io_uring submission for all); others one by one. */
    @Override
    public int claimSize(final int operation)
    {
        return operation == TierWorkers.READ ? readBatch : operation == TierWorkers.WRITE ? writeBatch : 1;
    }

    /**
     * A batch smaller than every sharing worker's claim is split evenly among them rather than taken whole
     * by the first: each worker checksums and copies its share on a core of its own, while a deep batch
     * still goes in claims of the store's size, each keeping that many transfers in flight on one ring.
     */
    @Override
    public int claimSize(final int operation, final int jobSize, final int sharers)
    {
        final int most = claimSize(operation);
        if (most == 1 || sharers <= 1)
        {
            return most;
        }
        return Math.max(1, Math.min(most, (jobSize + sharers - 1) / sharers));
    }

    @Override
    public void serve(final TierWorkers.Claim claim)
    {
        this.claim = claim;
        final int operation = claim.operation();
        final TierBatch batch = claim.batch();
        if (claimSize(operation) == 1)
        {
            for (int i = claim.from(); i < claim.to(); i++)
            {
                process(operation, batch, i);
            }
        }
        else if (operation == TierWorkers.READ)
        {
            readClaimed(batch, claim.from(), claim.to());
        }
        else
        {
            writeClaimed(batch, claim.from(), claim.to());
        }
    }

    private void complete(final TierBatch batch, final int index, final TierStatus status)
    {
        claim.complete(index, status);
    }

    private Object stripe(final long keyHigh, final long keyLow)
    {
        return pages.stripe(keyHigh, keyLow);
    }

    private void reportOverflow()
    {
        pages.reportOverflow();
    }

    private void process(final int operation, final TierBatch batch, final int i)
    {
        TierStatus status;
        try
        {
            status = claim.closing() ? TierStatus.CLOSED : switch (operation)
            {
                case TierWorkers.EXISTS -> probe(batch.keyHigh(i), batch.keyLow(i));
                case TierWorkers.READ -> read(batch.keyHigh(i), batch.keyLow(i), batch.segment(i));
                case TierWorkers.WRITE -> write(batch.keyHigh(i), batch.keyLow(i), batch.segment(i), batch.knownCrc32cBytes(i), batch.knownCrc32c(i),
                    batch.trailerBlockIsPadding(i));
                default -> remove(batch.keyHigh(i), batch.keyLow(i));
            };
        }
        catch (final RuntimeException ex)
        {
            status = TierStatus.IO_ERROR;
            if (errors.shouldLog())
            {
                logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": unexpected failure on key " + i + " -> IO_ERROR", ex);
            }
        }
        complete(batch, i, status);
    }

    /**
     * Reads the keys {@code [from, to)} of a batch through {@link FileStore#readPages}, with the index
     * bookkeeping of {@link #read} around each, and completes them.
     */
    private void readClaimed(final TierBatch batch, final int from, final int to)
    {
        final int count = to - from;
        try
        {
            if (claim.closing())
            {
                for (int k = 0; k < count; k++)
                {
                    complete(batch, from + k, TierStatus.CLOSED);
                }
                return;
            }
            for (int k = 0; k < count; k++)
            {
                readHigh[k] = batch.keyHigh(from + k);
                readLow[k] = batch.keyLow(from + k);
                readDestinations[k] = batch.segment(from + k);
            }
            synchronized (indexLock)
            {
                for (int k = 0; k < count; k++)
                {
                    readCommits[k] = index.commitOf(readHigh[k], readLow[k]);
                }
            }
            store.readPages(readHigh, readLow, readDestinations, count, readStatuses);
        }
        catch (final RuntimeException ex)
        {
            for (int k = 0; k < count; k++)
            {
                readStatuses[k] = readStatuses[k] == null ? TierStatus.IO_ERROR : readStatuses[k];
            }
            if (errors.shouldLog())
            {
                logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": unexpected failure reading keys " + from + " to "
                    + (to - 1) + " -> IO_ERROR", ex);
            }
        }
        for (int k = 0; k < count; k++)
        {
            final TierStatus status = readStatuses[k] == null ? TierStatus.IO_ERROR : readStatuses[k];
            if (status == TierStatus.OK)
            {
                synchronized (indexLock)
                {
                    index.touch(readHigh[k], readLow[k]);
                }
            }
            else if (status == TierStatus.NOT_FOUND && readCommits[k] != 0)
            {
                forget(readHigh[k], readLow[k], readCommits[k]);
            }
            readStatuses[k] = null;
            readDestinations[k] = null;
            complete(batch, from + k, status);
        }
    }

    /** A shared directory's probe (or one the overflowed index cannot answer): a stat of the file. */
    private TierStatus probe(final long keyHigh, final long keyLow)
    {
        final int commit;
        synchronized (indexLock)
        {
            if (!settings.shared)
            {
                final TierStatus known = index.exists(keyHigh, keyLow, objectSize);
                if (known != null)
                {
                    return known;
                }
            }
            commit = index.commitOf(keyHigh, keyLow);
        }
        final TierStatus status = store.exists(keyHigh, keyLow, objectSize);
        if (status == TierStatus.NOT_FOUND && commit != 0)
        {
            forget(keyHigh, keyLow, commit);
        }
        return status;
    }

    private TierStatus read(final long keyHigh, final long keyLow, final MemorySegment destination)
    {
        final int commit;
        synchronized (indexLock)
        {
            commit = index.commitOf(keyHigh, keyLow);
        }
        final TierStatus status = store.read(keyHigh, keyLow, destination);
        if (status == TierStatus.OK)
        {
            synchronized (indexLock)
            {
                index.touch(keyHigh, keyLow);
            }
        }
        else if (status == TierStatus.NOT_FOUND && commit != 0)
        {
            forget(keyHigh, keyLow, commit);
        }
        return status;
    }

    /** The index held a file the filesystem does not: drop it, so probes stop answering OK for it. */
    private void forget(final long keyHigh, final long keyLow, final int commit)
    {
        final boolean forgotten;
        synchronized (stripe(keyHigh, keyLow))
        {
            synchronized (indexLock)
            {
                forgotten = index.forget(keyHigh, keyLow, commit);
            }
        }
        // The slab's store logs its own reason (a torn frame from before the start) for the frames it drops.
        if (forgotten && !settings.shared && settings.layout == PageLayout.FILES && errors.shouldLog())
        {
            errors.log(System.Logger.Level.WARNING, "posix tier " + name + ": page file " + layout.pagePath(keyHigh, keyLow)
                + " was deleted by something other than this tier, though tier." + name + "." + PosixSettings.SHARED
                + "=false says only it changes " + settings.dir + "; forgotten (probes answer from the index)");
        }
    }

    private TierStatus write(final long keyHigh, final long keyLow, final MemorySegment source, final long knownBytes, final int knownCrc,
                             final boolean padding)
    {
        final long bytes = source.byteSize();
        final int ticket = reserveWrite(keyHigh, keyLow, bytes);
        if (ticket == FileIndex.RETRY || ticket == FileIndex.NO_SPACE)
        {
            return TierStatus.NO_SPACE;
        }
        TierStatus status = TierStatus.IO_ERROR;
        try
        {
            store.nextWrite(0, knownBytes, knownCrc, padding);
            status = store.writeTemp(0, keyHigh, keyLow, source);
        }
        finally
        {
            status = publishWrite(0, keyHigh, keyLow, bytes, ticket, status);
        }
        return status;
    }

    /**
     * Admits a write in the index, evicting what it chose to make room.
     *
     * @return a ticket for {@link #publishWrite}, or {@link FileIndex#NO_SPACE} or {@link FileIndex#RETRY} when it does not fit
     */
    private int reserveWrite(final long keyHigh, final long keyLow, final long bytes)
    {
        int ticket = FileIndex.RETRY;
        for (int attempt = 0; ticket == FileIndex.RETRY && attempt < MAX_RESERVE_ATTEMPTS; attempt++)
        {
            synchronized (indexLock)
            {
                ticket = index.reserveWrite(keyHigh, keyLow, bytes, victims);
            }
            evictChosen();
        }
        if (ticket == FileIndex.UNTRACKED)
        {
            reportOverflow();
        }
        return ticket;
    }

    /**
     * Ends a reserved write: renames the slot's temp file into place under the key's stripe lock when
     * it was written, and commits the outcome to the index either way; a temp file not renamed is
     * deleted. Then evicts what the commit chose.
     *
     * @param written the status of the slot's temp file
     * @return the write's status
     */
    private TierStatus publishWrite(final int slot, final long keyHigh, final long keyLow, final long bytes, final int ticket,
                                    final TierStatus written)
    {
        TierStatus status = written;
        boolean committed = false;
        try
        {
            if (status == TierStatus.OK)
            {
                synchronized (stripe(keyHigh, keyLow))
                {
                    status = store.publishTemp(slot);
                    synchronized (indexLock)
                    {
                        index.commitWrite(ticket, bytes, status == TierStatus.OK, victims);
                        committed = true;
                    }
                }
            }
        }
        finally
        {
            if (!committed)
            {
                store.discardTemp(slot);
                synchronized (indexLock)
                {
                    index.commitWrite(ticket, bytes, false, victims);
                }
            }
        }
        evictChosen();
        return status;
    }

    /**
     * Writes the keys {@code [from, to)} of a batch through {@link FileStore#writeTemps}, one temp
     * file per write slot, then publishes each as {@link #write} does, and completes them. A key the
     * index cannot admit while the others hold their reservations is written alone afterwards, when
     * they no longer count against the capacity, so it gets the answer a single write would.
     */
    private void writeClaimed(final TierBatch batch, final int from, final int to)
    {
        if (claim.closing())
        {
            for (int i = from; i < to; i++)
            {
                complete(batch, i, TierStatus.CLOSED);
            }
            return;
        }
        int staged = 0;
        int deferred = 0;
        for (int i = from; i < to; i++)
        {
            final long keyHigh = batch.keyHigh(i);
            final long keyLow = batch.keyLow(i);
            final MemorySegment source = batch.segment(i);
            final int ticket;
            try
            {
                ticket = reserveWrite(keyHigh, keyLow, source.byteSize());
            }
            catch (final RuntimeException ex)
            {
                unexpected(ex, i);
                complete(batch, i, TierStatus.IO_ERROR);
                continue;
            }
            if (ticket == FileIndex.RETRY || ticket == FileIndex.NO_SPACE)
            {
                writeDeferred[deferred++] = i;
                continue;
            }
            store.nextWrite(staged, batch.knownCrc32cBytes(i), batch.knownCrc32c(i), batch.trailerBlockIsPadding(i));
            writeHigh[staged] = keyHigh;
            writeLow[staged] = keyLow;
            writeSources[staged] = source;
            writeTickets[staged] = ticket;
            writeKeys[staged] = i;
            staged++;
        }
        try
        {
            store.writeTemps(writeHigh, writeLow, writeSources, staged, writeStatuses);
        }
        catch (final RuntimeException ex)
        {
            // Temp files it left are not trusted: publishWrite deletes each.
            for (int s = 0; s < staged; s++)
            {
                writeStatuses[s] = TierStatus.IO_ERROR;
            }
            unexpected(ex, from);
        }
        for (int s = 0; s < staged; s++)
        {
            TierStatus status = writeStatuses[s] == null ? TierStatus.IO_ERROR : writeStatuses[s];
            try
            {
                status = publishWrite(s, writeHigh[s], writeLow[s], writeSources[s].byteSize(), writeTickets[s], status);
            }
            catch (final RuntimeException ex)
            {
                status = TierStatus.IO_ERROR;
                unexpected(ex, writeKeys[s]);
            }
            writeStatuses[s] = null;
            writeSources[s] = null;
            complete(batch, writeKeys[s], status);
        }
        for (int d = 0; d < deferred; d++)
        {
            process(TierWorkers.WRITE, batch, writeDeferred[d]);
        }
    }

    private void unexpected(final RuntimeException ex, final int key)
    {
        if (errors.shouldLog())
        {
            logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": unexpected failure on key " + key + " -> IO_ERROR", ex);
        }
    }

    private TierStatus remove(final long keyHigh, final long keyLow)
    {
        synchronized (stripe(keyHigh, keyLow))
        {
            final TierStatus status = store.unlink(keyHigh, keyLow);
            if (status == TierStatus.OK || status == TierStatus.NOT_FOUND)
            {
                synchronized (indexLock)
                {
                    index.removed(keyHigh, keyLow, status == TierStatus.OK, objectSize);
                }
            }
            return status;
        }
    }

    /**
     * Unlinks the files the index chose, reports each to the engine, and keeps going while an
     * eviction round needs more.
     *
     * @return how many files were evicted
     */
    int evictChosen()
    {
        try
        {
            return FileIndex.evictChosen(index, indexLock, victims, eviction);
        }
        finally
        {
            store.flushEvictions();
        }
    }

    private boolean evict(final int id, final long keyHigh, final long keyLow)
    {
        synchronized (stripe(keyHigh, keyLow))
        {
            synchronized (indexLock)
            {
                if (!index.beginEviction(id))
                {
                    return false;
                }
            }
            // NOT_FOUND is fine (another node removed it); other errors are logged by the store.
            store.unlinkEvicted(keyHigh, keyLow);
            synchronized (indexLock)
            {
                index.endEviction(id);
            }
        }
        try
        {
            context.objectRemoved(keyHigh, keyLow);
        }
        catch (final RuntimeException ex)
        {
            if (errors.shouldLog())
            {
                logger.log(System.Logger.Level.ERROR, "posix tier " + name + ": objectRemoved callback failed", ex);
            }
        }
        return true;
    }
}

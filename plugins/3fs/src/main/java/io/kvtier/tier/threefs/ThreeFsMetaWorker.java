package io.kvtier.tier.threefs;

import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.PathLayout;
import io.kvtier.tier.support.TierWorkers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/** Probes and removes: a stat or an unlink on the mount per key. */
final class ThreeFsMetaWorker implements TierWorkers.Handler
{
    private final ThreeFsFiles files;
    private final PathLayout layout;
    private final FileIndex index;
    private final long objectSize;

    /**
     * @param files what the tier's threads share
     */
    ThreeFsMetaWorker(final ThreeFsFiles files)
    {
        this.files = files;
        this.layout = files.layout;
        this.index = files.index;
        this.objectSize = files.objectSize;
    }

    /** A whole batch at a time, key by key, as its one thread always did. */
    @Override
    public int claimSize(final int operation)
    {
        return Integer.MAX_VALUE;
    }

    @Override
    public void serve(final TierWorkers.Claim claim)
    {
        final TierBatch batch = claim.batch();
        for (int i = claim.from(); i < claim.to(); i++)
        {
            TierStatus status;
            try
            {
                status = claim.closing() ? TierStatus.CLOSED
                    : claim.operation() == TierWorkers.EXISTS ? probe(batch.keyHigh(i), batch.keyLow(i)) : remove(batch.keyHigh(i), batch.keyLow(i));
            }
            catch (final RuntimeException ex)
            {
                status = files.failed(TierStatus.IO_ERROR, "unexpected failure: " + ex);
            }
            claim.complete(i, status);
        }
    }

    private TierStatus probe(final long keyHigh, final long keyLow)
    {
        final Path page = layout.pagePath(keyHigh, keyLow);
        final int commit = files.commitOf(keyHigh, keyLow);
        try
        {
            final long size = Files.readAttributes(page, BasicFileAttributes.class).size();
            return size == objectSize || TrailerBlock.isCompact(size, objectSize) ? TierStatus.OK : TierStatus.CORRUPT;
        }
        catch (final NoSuchFileException ex)
        {
            files.forgetIfHeld(keyHigh, keyLow, commit);
            return TierStatus.NOT_FOUND;
        }
        catch (final IOException ex)
        {
            return files.failed(TierStatus.IO_ERROR, "stat " + page + ": " + ex);
        }
    }

    private TierStatus remove(final long keyHigh, final long keyLow)
    {
        final Path page = layout.pagePath(keyHigh, keyLow);
        synchronized (files.stripe(keyHigh, keyLow))
        {
            try
            {
                final boolean deleted = Files.deleteIfExists(page);
                synchronized (index)
                {
                    index.removed(keyHigh, keyLow, deleted, objectSize);
                }
                return deleted ? TierStatus.OK : TierStatus.NOT_FOUND;
            }
            catch (final IOException ex)
            {
                return files.failed(TierStatus.IO_ERROR, "unlink " + page + ": " + ex);
            }
        }
    }
}


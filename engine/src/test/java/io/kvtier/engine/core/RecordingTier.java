package io.kvtier.engine.core;

import io.kvtier.spi.PageKey;
import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TierUsage;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A tier for the parts' unit tests that does nothing until the test says: it keeps every batch it is
 * handed, and answers one when the test calls {@link #answer} (faithfully: reads copy what a write
 * stored) or {@link #complete} (with a status of the test's choosing). Everything runs on the test's
 * thread, so a batch's last completion reaches the sink right there.
 */
final class RecordingTier implements StorageTier
{
    final String name;
    final List<TierBatch> reads = new ArrayList<>();
    final List<TierBatch> writes = new ArrayList<>();
    final List<TierBatch> exists = new ArrayList<>();
    final List<TierBatch> removes = new ArrayList<>();
    final Map<PageKey, byte[]> objects = new HashMap<>();
    /** When set, every submission throws, as a broken plugin would. */
    boolean throwOnSubmit;

    RecordingTier(final String name)
    {
        this.name = name;
    }

    @Override
    public String name()
    {
        return name;
    }

    private void submitted(final List<TierBatch> list, final TierBatch batch)
    {
        if (throwOnSubmit)
        {
            throw new IllegalStateException("scripted plugin failure");
        }
        list.add(batch);
    }

    @Override
    public void exists(final TierBatch batch)
    {
        submitted(exists, batch);
    }

    @Override
    public void read(final TierBatch batch)
    {
        submitted(reads, batch);
    }

    @Override
    public void write(final TierBatch batch)
    {
        submitted(writes, batch);
    }

    @Override
    public void remove(final TierBatch batch)
    {
        submitted(removes, batch);
    }

    /** @return every batch handed over so far, of any operation */
    int batches()
    {
        return reads.size() + writes.size() + exists.size() + removes.size();
    }

    /** Answers key {@code i} of a batch as a working tier would, from and into {@link #objects}. */
    void answer(final TierBatch batch, final int i)
    {
        final PageKey key = batch.key(i);
        switch (((TierIoBatch)batch).op)
        {
            case TierIoBatch.WRITE ->
            {
                objects.put(key, batch.segment(i).toArray(ValueLayout.JAVA_BYTE));
                batch.complete(i, TierStatus.OK);
            }
            case TierIoBatch.READ ->
            {
                final byte[] bytes = objects.get(key);
                if (bytes == null)
                {
                    batch.complete(i, TierStatus.NOT_FOUND);
                    return;
                }
                MemorySegment.copy(bytes, 0, batch.segment(i), ValueLayout.JAVA_BYTE, 0, bytes.length);
                batch.complete(i, TierStatus.OK);
            }
            case TierIoBatch.EXISTS -> batch.complete(i, objects.containsKey(key) ? TierStatus.OK : TierStatus.NOT_FOUND);
            default -> batch.complete(i, objects.remove(key) != null ? TierStatus.OK : TierStatus.NOT_FOUND);
        }
    }

    /** Answers every key of a batch as a working tier would. */
    void answer(final TierBatch batch)
    {
        for (int i = 0, n = batch.size(); i < n; i++)
        {
            answer(batch, i);
        }
    }

    /** Completes every key of a batch with {@code status}. */
    static void complete(final TierBatch batch, final TierStatus status)
    {
        for (int i = 0, n = batch.size(); i < n; i++)
        {
            batch.complete(i, status);
        }
    }

    @Override
    public TierUsage usage()
    {
        return new TierUsage(0, TierUsage.UNBOUNDED, objects.size());
    }

    @Override
    public void close()
    {
    }
}

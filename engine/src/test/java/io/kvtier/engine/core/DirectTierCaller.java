package io.kvtier.engine.core;

import io.kvtier.spi.StorageTier;

/**
 * Calls a tier on the submitting thread, as the engine did before it had call threads: for the parts'
 * tests, where the test's own thread is the engine thread and a {@link RecordingTier} only records
 * what it is handed. A test can pretend a call is in progress ({@link #callStarted}).
 */
final class DirectTierCaller implements TierCaller
{
    private final StorageTier tier;
    private final String tierName;
    /** What {@link #callStartedNanos()} answers: 0, or a time set by the test to stand for a call that has not returned. */
    long callStarted;
    /** When set, batches are kept queued, never called, as behind a call that does not return. */
    boolean stalled;
    /** Batches kept while {@link #stalled}. */
    final java.util.List<TierIoBatch> queued = new java.util.ArrayList<>();

    DirectTierCaller(final StorageTier tier, final String tierName)
    {
        this.tier = tier;
        this.tierName = tierName;
    }

    @Override
    public boolean hand(final TierIoBatch batch)
    {
        if (stalled)
        {
            queued.add(batch);
            return true;
        }
        if (batch.compareAndSetCallState(TierIoBatch.CALL_CALLING))
        {
            TierCallThread.call(tier, tierName, batch);
        }
        return true;
    }

    @Override
    public long callStartedNanos()
    {
        return callStarted;
    }

    @Override
    public boolean isIdle()
    {
        return callStarted == 0 && queued.stream().noneMatch(b -> b.callStateAcquire() == TierIoBatch.CALL_QUEUED);
    }
}

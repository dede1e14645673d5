package io.kvtier.engine.core;

/**
 * How a batch reaches its tier's {@code read}, {@code write}, {@code exists} or {@code remove}: never
 * on the engine thread, which must not wait on a plugin that blocks. In the engine a
 * {@link TierCallThread} per tier makes the calls; the parts' tests call on their own thread.
 */
interface TierCaller
{
    /**
     * Hands a batch, already {@link TierIoBatch#CALL_QUEUED}, to be called. Engine thread; never blocks.
     *
     * @param batch the batch
     * @return false when it cannot take the batch (its queue is full): the engine refuses the batch
     */
    boolean hand(TierIoBatch batch);

    /**
     * @return when the call in progress started, on the engine's clock, read with acquire semantics;
     *         0 when no call is in progress
     */
    long callStartedNanos();

    /** @return whether no call is in progress and no batch waits for one */
    boolean isIdle();
}

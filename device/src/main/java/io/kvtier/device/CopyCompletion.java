package io.kvtier.device;

/**
 * The completion of a submitted plan: polled by the engine thread, or waited for.
 */
public interface CopyCompletion extends AutoCloseable
{
    /** @return whether every copy of the plan has finished */
    boolean isDone();

    /** Waits until every copy of the plan has finished. */
    void await();

    /**
     * Releases what tracks the completion (a CUDA event); waits first if the copies are still running.
     * The executor may hand the same object out again for a later submission: use none after closing.
     */
    @Override
    void close();
}

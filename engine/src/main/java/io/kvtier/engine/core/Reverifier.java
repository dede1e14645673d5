package io.kvtier.engine.core;

/** Re-verification of pages loaded from L3 ({@link Reverifications}, its owner). Engine thread only. */
interface Reverifier
{
    /**
     * Maybe checks a just-pinned page's bytes again off the engine thread before the request answers.
     *
     * @param r          the request
     * @param key        the key's index in its chain
     * @param page       the pinned page
     * @param generation the page's generation when pinned
     * @param pinnedAs   how the key's slot reads
     * @return whether the request waits for the check
     */
    boolean start(ClientRecord r, int key, int page, int generation, int pinnedAs);
}

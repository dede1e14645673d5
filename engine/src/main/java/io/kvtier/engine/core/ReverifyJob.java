package io.kvtier.engine.core;

/**
 * One pinned page to verify again: which page (and its generation when pinned), for which key of which
 * client's request, pinned as what, loaded from which tier, and the answer. Preallocated and reused by
 * {@link Reverifications}; the engine thread fills it, the {@link ReverifyThread} answers it, and the
 * ring hands it back, each hand-off ordering the fields written before it.
 */
final class ReverifyJob
{
    int page;
    int generation;
    int client;
    int key;
    int seq;
    byte pinnedAs;
    int tier;
    long keyHigh;
    long keyLow;
    /** The answer: whether the page's payload still matches the CRC32C recorded when its load was verified. */
    boolean intact;
}

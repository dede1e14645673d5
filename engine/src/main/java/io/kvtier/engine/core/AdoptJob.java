package io.kvtier.engine.core;

/**
 * One page of the new pool lent to the {@link AdoptThread} to adopt a dead engine's page into, and what
 * came of it. Preallocated and reused by {@link Adoptions}: the engine thread fills in the page, the
 * adopter the rest, and the ring hands it back, each hand-off ordering the fields written before it.
 */
final class AdoptJob
{
    /** The new pool's page, WRITING, owned by the engine and bound to no key while the adopter has it. */
    int page;
    /** Whether a verified frame is in {@link #page} now, for {@link #keyHigh}/{@link #keyLow}. */
    boolean adopted;
    /** Whether the old pool has no more committed pages to offer: {@link #page} is unused unless {@link #adopted}. */
    boolean last;
    long keyHigh;
    long keyLow;
    /** Committed pages of the old pool the adopter has found, all told. */
    int candidates;
    /** Old pages that failed verification since the last hand-off. */
    int corrupt;
    /** Old pages that changed while they were copied since the last hand-off. */
    int changed;
}

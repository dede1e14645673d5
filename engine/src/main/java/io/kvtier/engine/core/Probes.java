package io.kvtier.engine.core;

/**
 * What the parts ask of the probes of L3 ({@link Lookups}, their owner). Engine thread only.
 */
interface Probes
{
    /**
     * Probes L3 for the keys in {@code [start, end)} the index knows nothing of.
     *
     * @param r     the request
     * @param start first key
     * @param end   past the last key
     * @return whether it waits for probes (it goes on when they end)
     */
    boolean probeRound(ClientRecord r, int start, int end);

    /**
     * A key is now in L3 under this name: an answer "not found" remembered for it is stale.
     *
     * @param nameHigh the name's high half
     * @param nameLow  its low half
     */
    void copiedToL3(long nameHigh, long nameLow);
}

package io.kvtier.engine.core;

import io.kvtier.client.PageKeyChain;
import io.kvtier.client.protocol.ErrorCode;
import io.kvtier.client.protocol.PageEntryStatus;

/**
 * The engine's view of one client, whatever process it runs in: where a request's keys and payload
 * lengths come from, and where its per-key results and its outcome go. The in-process
 * {@code Session} implements it over its own arrays; a shared-memory client's adapter implements it
 * over arrays it fills from, and drains into, that client's rings.
 *
 * <p>The arrays are shared, not copied. While a request is in flight the engine thread reads the
 * keys and lengths and writes the statuses, page ids and generations in place; the client touches
 * none of them until {@link #complete} has been called, which publishes them (a release store the
 * client pairs with an acquire).
 */
public interface ClientPort
{
    /** @return the id the engine gave this client when it opened, 0 before */
    int clientId();

    /**
     * Called by the engine when the client opens.
     *
     * @param id its id, unique among open clients
     */
    void clientId(int id);

    /** @return whether the engine took this client's lease back; its later requests fail */
    boolean isExpired();

    /** Called by the engine when it takes the client's lease back for silence. */
    void expired();

    /** @return the key chain requests refer to by index */
    PageKeyChain keys();

    /** @return payload lengths of reserved pages, written by the client before a commit */
    int[] lengths();

    /** @return per-key outcomes ({@link PageEntryStatus} codes), written by the engine */
    byte[] statuses();

    /** @return per-key pool page ids the client holds, written by the engine */
    int[] pageIds();

    /** @return per-key page generations the client holds, written by the engine */
    int[] generations();

    /**
     * Ends the request in flight: publishes the per-key results and wakes the client.
     *
     * @param status         the request's outcome
     * @param resultCount    the request's count (pages pinned, reserved, committed, ...)
     * @param l2Pages        a lookup's leading pool pages
     * @param l3Pages        a lookup's L3 pages after them
     * @param fromPool       an acquire's pages that were in the pool
     * @param fromL3         an acquire's pages loaded from L3 and verified
     */
    void complete(ErrorCode status, int resultCount, int l2Pages, int l3Pages, int fromPool, int fromL3);

    /**
     * @return whether this port reads {@link #engineTimes} once its answer is complete, so that they must be given
     *         before it; a port that does not is answered first and its latency timed after
     */
    default boolean wantsEngineTimes()
    {
        return false;
    }

    /**
     * When the engine thread took the request in flight and when it answered it ({@link System#nanoTime()}), told just
     * before {@link #complete}: a port in the engine's process (a {@code Session}) sets them beside its own publish and
     * wake-up, to split a round trip into its legs; one over IPC has nothing to do with them.
     *
     * @param takenNanos    when the engine thread began the request
     * @param answeredNanos when it answered it
     */
    default void engineTimes(final long takenNanos, final long answeredNanos)
    {
    }

    /**
     * The namespace of the request in flight (docs/ipc-protocol.md section 8): pages it reserves carry
     * this tag, and it is given only pages that carry it.
     *
     * @return the tag, 0 for no namespace
     */
    default long namespaceTag()
    {
        return 0;
    }

    /**
     * A LOOKUP_AND_LOCK's Reserve Limit: how many keys after the pinned prefix the request in flight
     * reserves pages for (docs/ipc-protocol.md section 4).
     *
     * @return 0 to the request's count, or {@code RequestDescriptor.RESERVE_ALL} for every key after the prefix
     */
    default int reserveLimit()
    {
        return io.kvtier.client.protocol.RequestDescriptor.RESERVE_ALL;
    }

    /** @return whether a COMMIT_AND_RELEASE in flight asks for each page it commits to be copied to L3 */
    default boolean backupOnCommit()
    {
        return false;
    }

    /** @return whether the request in flight may be given pages of any namespace (a trusted in-process session) */
    default boolean seesAllNamespaces()
    {
        return false;
    }
}

package io.kvtier.client;

import io.kvtier.client.protocol.RequestEncoder;
import io.kvtier.client.protocol.ResponseDecoder;

import java.lang.foreign.MemorySegment;

/**
 * What {@link KvtierClient} needs of a connection: one request at a time, written in place into the
 * request ring and answered in place in the response ring, and the numbers of WELCOME that locate
 * pages in the mapped pool. {@link IpcChannel} is the real one, over {@link IpcConnection}.
 */
interface RequestChannel extends AutoCloseable
{
    /**
     * Claims a request record and writes its header, with the next request id.
     *
     * @param type           the operation
     * @param bodyLength     bytes after the 32-byte header
     * @param firstSlot      first slot
     * @param count          slots
     * @param namespaceIndex the namespace
     * @param flags          request flags
     * @return the encoder, positioned on the record, to write the body with
     */
    RequestEncoder begin(int type, int bodyLength, int firstSlot, int count, int namespaceIndex, int flags);

    /**
     * Publishes the record begun last and waits for its response.
     *
     * @return the response, in place; valid until {@link #finish()}
     * @throws KvtierException if the engine dropped the client, or stopped answering
     */
    ResponseDecoder sendAndAwait();

    /** Done with the last response: the engine may reuse its bytes. */
    void finish();

    /** @return the pool file, mapped */
    MemorySegment pool();

    /** @return payload bytes per page */
    int pageSize();

    /** @return pool file offset of page 0 */
    long dataOffset();

    /** @return distance between pages */
    long frameLength();

    /** @return slots granted */
    int maxKeys();

    /** @return the longest request record the engine accepts */
    int maxMessageLength();

    /** @return how this channel has waited for answers so far (none for a channel that never waits) */
    default io.kvtier.client.protocol.IdleStrategy.Counts waitCounts()
    {
        return new io.kvtier.client.protocol.IdleStrategy.Counts(0, 0, 0, 0, 0);
    }

    /** Ends the client (CLOSE, then the socket): the engine gives back everything it still holds. */
    @Override
    void close();
}

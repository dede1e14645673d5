package io.kvtier.client;

import io.kvtier.client.protocol.PageEntryStatus;

/**
 * Pages an ACQUIRE pinned: the longest cached prefix of the keys, whose bytes stay in place and
 * belong to their keys until {@link #close()} releases them. Use with try-with-resources:
 *
 * <pre>{@code
 * try (PinnedPages pages = client.acquire(keys)) {
 *     for (int i = 0; i < pages.count(); i++) { MemorySegment page = pages.page(i); ... }
 * }
 * }</pre>
 *
 * <p>Reused by its client after close: keep no reference past it.
 */
public final class PinnedPages extends SlotLease
{
    int pinned;
    int fromPool;
    int fromL3;

    PinnedPages(final KvtierClient client, final int maxKeys)
    {
        super(client, maxKeys);
    }

    /** @return pages pinned: keys {@code 0..count()-1} of the lease, the cached prefix */
    public int count()
    {
        return pinned;
    }

    /** @return pinned pages that were already in the pool */
    public int fromPool()
    {
        return fromPool;
    }

    /** @return pinned pages loaded from L3 and verified for this acquire */
    public int fromL3()
    {
        return fromL3;
    }

    /**
     * @param i a pinned page's position
     * @return its payload length in bytes (the frame trailer's, stable while pinned)
     */
    public int payloadLength(final int i)
    {
        if (!PageEntryStatus.isPinned(status(i)))
        {
            throw new IllegalStateException("key " + i + " is not pinned (status " + statuses[i] + ")");
        }
        return (int)trailerPayloadLength(i);
    }

    /** Releases the pins (RELEASE) and gives the slots back. */
    @Override
    public void close()
    {
        if (open)
        {
            open = false;
            client.release(this);
        }
    }
}

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

    private final int[] copyStatuses;

    PinnedPages(final KvtierClient client, final int maxKeys)
    {
        super(client, maxKeys);
        this.copyStatuses = new int[maxKeys];
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

    /**
     * DEVICE_LOAD (protocol 1.1): the engine copies pinned page {@code i} into block {@code blocks[i]}
     * of a layout this client registered ({@link KvtierClient#registerKv}), its first
     * {@code validTokens[i]} tokens; answered once the bytes are in place. The pins stay.
     *
     * @param layoutId    the Layout Id
     * @param blocks      per key, the block to fill
     * @param validTokens per key, the tokens to copy, 1..block tokens
     * @return blocks filled; {@link #copyStatus} says what happened to each key
     */
    public int loadInto(final int layoutId, final int[] blocks, final int[] validTokens)
    {
        return client.deviceCopy(this, io.kvtier.client.protocol.MessageType.DEVICE_LOAD, layoutId, blocks, validTokens, copyStatuses);
    }

    /**
     * @param i a key's position
     * @return what the last {@link #loadInto} did for it: COPIED, NONE (not pinned), INVALID or EXPIRED ({@link PageEntryStatus})
     */
    public int copyStatus(final int i)
    {
        checkIndex(i);
        return copyStatuses[i];
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

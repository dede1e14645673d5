package io.kvtier.client;

import io.kvtier.client.protocol.PageEntryStatus;

/**
 * What one LOOKUP_AND_LOCK (protocol 1.3) holds: the longest cached prefix of the keys, pinned (read
 * those pages in place), then pages reserved for keys after it (write those), in one round trip; and
 * {@link #commitAndRelease} publishes the written pages and drops the pins in one more. Use with
 * try-with-resources:
 *
 * <pre>{@code
 * try (LockedPages pages = client.lookupAndLock(keys)) {
 *     for (int i = 0; i < pages.pinnedCount(); i++) { read(pages.page(i)); }
 *     for (int i = pages.pinnedCount(); i < pages.size(); i++) if (pages.isReserved(i)) write(pages.page(i));
 *     pages.commitAndRelease(pageSize);
 * }
 * }</pre>
 *
 * <p>Closed without {@link #commitAndRelease}, it gives the reservations back unwritten (ABORT) and
 * drops the pins (RELEASE). Reused by its client after close: keep no reference past it.
 */
public final class LockedPages extends SlotLease
{
    int pinned;
    int reserved;
    int fromPool;
    int fromL3;
    int released;
    boolean committed;

    LockedPages(final KvtierClient client, final int maxKeys)
    {
        super(client, maxKeys);
    }

    /** @return pages pinned: keys {@code 0..pinnedCount()-1} of the lease, the cached prefix */
    public int pinnedCount()
    {
        return pinned;
    }

    /** @return pages reserved after the prefix (the keys for which {@link #isReserved} holds) */
    public int reservedCount()
    {
        return reserved;
    }

    /** @return pinned pages that were already in the pool */
    public int fromPool()
    {
        return fromPool;
    }

    /** @return pinned pages loaded from L3 and verified for this request */
    public int fromL3()
    {
        return fromL3;
    }

    /**
     * @param i a key's position
     * @return whether its page is pinned: part of the cached prefix, to read
     */
    public boolean isPinned(final int i)
    {
        return PageEntryStatus.isPinned(status(i));
    }

    /**
     * @param i a key's position
     * @return whether a page was reserved for it, to write
     */
    public boolean isReserved(final int i)
    {
        return status(i) == PageEntryStatus.RESERVED;
    }

    /**
     * @param i a pinned page's position
     * @return its payload length in bytes (the frame trailer's, stable while pinned)
     */
    public int payloadLength(final int i)
    {
        if (!isPinned(i))
        {
            throw new IllegalStateException("key " + i + " is not pinned (status " + statuses[i] + ")");
        }
        return (int)trailerPayloadLength(i);
    }

    /** @return whether {@link #commitAndRelease} ran */
    public boolean committed()
    {
        return committed;
    }

    /** @return pins the {@link #commitAndRelease} dropped */
    public int releasedPins()
    {
        return released;
    }

    /**
     * COMMIT_AND_RELEASE: seals and publishes every reserved page with the same payload length and drops
     * the pins, in one round trip. {@link #status} then says what happened to each key (COMMITTED,
     * EXPIRED, INVALID for a reserved one, NONE for the others).
     *
     * @param length payload bytes of each reserved page, 1..Page Size
     * @return pages committed
     */
    public int commitAndRelease(final int length)
    {
        return client.commitAndRelease(this, null, length, false);
    }

    /**
     * COMMIT_AND_RELEASE with each reserved page's own payload length, optionally copying the committed
     * pages to L3.
     *
     * @param lengths payload bytes of key {@code i}'s page at {@code lengths[i]}, 1..Page Size for each reserved key
     * @param backup  whether to copy each committed page to L3, as a BACKUP would
     * @return pages committed
     */
    public int commitAndRelease(final int[] lengths, final boolean backup)
    {
        if (lengths.length < count)
        {
            throw new IllegalArgumentException(lengths.length + " lengths for " + count + " keys");
        }
        return client.commitAndRelease(this, lengths, 0, backup);
    }

    /** Gives back what {@link #commitAndRelease} did not (ABORT, RELEASE) and the slots. */
    @Override
    public void close()
    {
        if (open)
        {
            open = false;
            client.finishLock(this);
        }
    }
}

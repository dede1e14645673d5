package io.kvtier.client;

import io.kvtier.client.protocol.PageEntryStatus;

/**
 * Pages a RESERVE set aside to be written: write each {@link PageEntryStatus#RESERVED} page in place,
 * then {@link #commit} their lengths; {@link #close()} aborts whatever was not committed, so a failed
 * write never publishes a page. Use with try-with-resources:
 *
 * <pre>{@code
 * try (ReservedPages pages = client.reserve(keys, from, n)) {
 *     for (int i = 0; i < pages.size(); i++) if (pages.isReserved(i)) write(pages.page(i));
 *     pages.commit(pageSize);
 * }
 * }</pre>
 *
 * <p>Reused by its client after close: keep no reference past it.
 */
public final class ReservedPages extends SlotLease
{
    int reserved;
    boolean committed;

    ReservedPages(final KvtierClient client, final int maxKeys)
    {
        super(client, maxKeys);
    }

    /** @return keys the engine reserved a page for */
    public int reservedCount()
    {
        return reserved;
    }

    /**
     * @param i a key's position
     * @return whether its page is reserved for this client to write
     */
    public boolean isReserved(final int i)
    {
        return status(i) == PageEntryStatus.RESERVED;
    }

    /** @return whether {@link #commit} ran */
    public boolean committed()
    {
        return committed;
    }

    /**
     * Seals and publishes every reserved page with the same payload length.
     *
     * @param length payload bytes of each page, 1..Page Size
     * @return pages committed
     */
    public int commit(final int length)
    {
        return client.commit(this, null, length);
    }

    /**
     * Seals and publishes each reserved page with its own payload length.
     *
     * @param lengths payload bytes of key {@code i}'s page at {@code lengths[i]}, 1..Page Size for each reserved key
     * @return pages committed
     */
    public int commit(final int[] lengths)
    {
        if (lengths.length < count)
        {
            throw new IllegalArgumentException(lengths.length + " lengths for " + count + " keys");
        }
        return client.commit(this, lengths, 0);
    }

    /**
     * DEVICE_SAVE (protocol 1.1): the engine copies block {@code blocks[i]} of a layout this client
     * registered ({@link KvtierClient#registerKv}) into reserved page {@code i}, its first
     * {@code validTokens[i]} tokens, then commits the pages as {@link #commit} does.
     *
     * @param layoutId    the Layout Id
     * @param blocks      per key, the block to save
     * @param validTokens per key, its valid tokens, 1..block tokens
     * @return pages committed; {@link #status} says what happened to each key (COMMITTED, EXPIRED, INVALID, NONE)
     */
    public int saveFrom(final int layoutId, final int[] blocks, final int[] validTokens)
    {
        if (committed)
        {
            throw new IllegalStateException("the reservation is already committed");
        }
        final int result = client.deviceCopy(this, io.kvtier.client.protocol.MessageType.DEVICE_SAVE, layoutId, blocks, validTokens, statuses);
        committed = true;
        return result;
    }

    /** Aborts the reservations not committed (ABORT) and gives the slots back. */
    @Override
    public void close()
    {
        if (open)
        {
            open = false;
            client.finishReservation(this);
        }
    }
}

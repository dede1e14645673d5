package io.kvtier.client;

/**
 * Hands out runs of consecutive slots of a client's {@code Max Keys}: each request writes its keys
 * into a run, and a lease keeps its run until it is closed, so pins and reservations of several leases
 * never share a slot (which the engine would refuse with SLOT_HELD). First fit over a bitmap: no
 * allocation, and a scan of at most Max Keys / 64 words.
 */
final class SlotAllocator
{
    private final long[] used;
    private final int slots;

    /**
     * @param slots the client's Max Keys
     */
    SlotAllocator(final int slots)
    {
        this.slots = slots;
        this.used = new long[(slots + 63) >>> 6];
    }

    /** @return slots in all */
    int slots()
    {
        return slots;
    }

    /**
     * Takes the first run of {@code count} free slots.
     *
     * @param count slots wanted, at least 1
     * @return the run's first slot, or -1 when no run that long is free
     */
    int allocate(final int count)
    {
        if (count < 1 || count > slots)
        {
            return -1;
        }
        int runStart = 0;
        int runLength = 0;
        for (int slot = 0; slot < slots; slot++)
        {
            if (isUsed(slot))
            {
                runLength = 0;
                runStart = slot + 1;
                continue;
            }
            if (++runLength == count)
            {
                mark(runStart, count, true);
                return runStart;
            }
        }
        return -1;
    }

    /**
     * Gives a run back.
     *
     * @param first its first slot
     * @param count its slots
     */
    void free(final int first, final int count)
    {
        mark(first, count, false);
    }

    /** @return slots in use */
    int inUse()
    {
        int total = 0;
        for (final long word : used)
        {
            total += Long.bitCount(word);
        }
        return total;
    }

    private boolean isUsed(final int slot)
    {
        return (used[slot >>> 6] & (1L << slot)) != 0;
    }

    private void mark(final int first, final int count, final boolean value)
    {
        for (int slot = first; slot < first + count; slot++)
        {
            if (value)
            {
                used[slot >>> 6] |= 1L << slot;
            }
            else
            {
                used[slot >>> 6] &= ~(1L << slot);
            }
        }
    }
}

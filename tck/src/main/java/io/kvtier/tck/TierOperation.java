package io.kvtier.tck;

import io.kvtier.spi.StorageTier;
import io.kvtier.spi.TierBatch;

/**
 * The four batch operations of a {@link StorageTier}, so the kit can hand a batch to any of them through
 * one call that it bounds with a deadline.
 */
public enum TierOperation
{
    /** {@link StorageTier#exists(TierBatch)}. */
    EXISTS("exists"),
    /** {@link StorageTier#read(TierBatch)}. */
    READ("read"),
    /** {@link StorageTier#write(TierBatch)}. */
    WRITE("write"),
    /** {@link StorageTier#remove(TierBatch)}. */
    REMOVE("remove");

    private final String label;

    TierOperation(final String label)
    {
        this.label = label;
    }

    /** @return the method's name, for messages */
    public String label()
    {
        return label;
    }

    /**
     * @param tier  the tier
     * @param batch the batch to hand it
     */
    public void submit(final StorageTier tier, final TierBatch batch)
    {
        switch (this)
        {
            case EXISTS -> tier.exists(batch);
            case READ -> tier.read(batch);
            case WRITE -> tier.write(batch);
            default -> tier.remove(batch);
        }
    }
}

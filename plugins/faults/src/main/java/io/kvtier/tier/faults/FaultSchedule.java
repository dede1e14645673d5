package io.kvtier.tier.faults;

import java.util.SplittableRandom;

/**
 * The decisions of one tier, drawn from its seed: one stream for calls ({@code block-call}), one for
 * read keys and one for write keys, each split from a {@link SplittableRandom} of the seed. Every read
 * or written key takes exactly two draws whatever is decided (which kind, and a parameter: the bit,
 * the prefix, the other key), so the same seed gives the same decisions to the same sequence of keys
 * however the engine groups them into batches, and the read and write sequences do not disturb each other.
 */
final class FaultSchedule
{
    private final SplittableRandom calls;
    private final SplittableRandom reads;
    private final SplittableRandom writes;

    /**
     * @param seed what the schedule is drawn from
     */
    FaultSchedule(final long seed)
    {
        final SplittableRandom root = new SplittableRandom(seed);
        calls = root.split();
        reads = root.split();
        writes = root.split();
    }

    /**
     * @param rates the rates in force
     * @return whether the next call blocks
     */
    synchronized boolean blockCall(final FaultRates rates)
    {
        return calls.nextDouble() < rates.rate(FaultKind.BLOCK_CALL);
    }

    /**
     * Draws the fault, if any, of each key of one read or write, in order.
     *
     * @param applies {@link FaultKind.Applies#READ} or {@link FaultKind.Applies#WRITE}
     * @param rates   the rates in force
     * @param kinds   filled with each key's fault, null for none
     * @param params  filled with each key's parameter, a random long whatever its fault
     */
    synchronized void draw(final FaultKind.Applies applies, final FaultRates rates, final FaultKind[] kinds, final long[] params)
    {
        final SplittableRandom random = applies == FaultKind.Applies.READ ? reads : writes;
        for (int i = 0; i < kinds.length; i++)
        {
            final double u = random.nextDouble();
            params[i] = random.nextLong();
            kinds[i] = pick(applies, rates, u);
        }
    }

    private static FaultKind pick(final FaultKind.Applies applies, final FaultRates rates, final double u)
    {
        double upper = 0;
        for (final FaultKind kind : FaultKind.values())
        {
            if (kind.applies == applies)
            {
                upper += rates.rate(kind);
                if (u < upper)
                {
                    return kind;
                }
            }
        }
        return null;
    }
}

package io.kvtier.tck;

/**
 * The reference in-memory tier passes the whole kit: proof that the kit's contract can be kept.
 */
class ReferenceTierContractTest extends InMemoryContract
{
    @Override
    InMemoryTier.Fault[] faults()
    {
        return new InMemoryTier.Fault[0];
    }
}

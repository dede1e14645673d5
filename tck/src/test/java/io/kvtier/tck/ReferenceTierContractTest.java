package io.kvtier.tck;

/**
 * The reference tier passes the whole kit, its second-process checks included: proof that the kit's
 * contract can be kept.
 */
class ReferenceTierContractTest extends ReferenceContract
{
    @Override
    ReferenceTier.Fault[] faults()
    {
        return new ReferenceTier.Fault[0];
    }
}

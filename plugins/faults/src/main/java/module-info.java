/**
 * The {@code faults} tier: wraps a tier of any other type and injects storage faults into it on a
 * schedule drawn from a seed, for {@code kvtier chaos}. It depends on the SPI alone; the engine
 * reaches it through its provider.
 */
module io.kvtier.tier.faults
{
    requires io.kvtier.spi;

    // The wrapped tier's provider is found by its type, as the engine finds any tier.
    uses io.kvtier.spi.StorageTierProvider;

    provides io.kvtier.spi.StorageTierProvider with io.kvtier.tier.faults.FaultsTierProvider;
}

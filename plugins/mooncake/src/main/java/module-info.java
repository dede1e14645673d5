/**
 * The Mooncake Store L3 tier: FFM bindings of store_c.h. It makes restricted FFM calls itself
 * (downcalls into libmooncake_store), so it is granted native access by name.
 */
module io.kvtier.tier.mooncake
{
    requires io.kvtier.spi;
    requires io.kvtier.tier.support;
    requires io.kvtier.nativeaccess;

    provides io.kvtier.spi.StorageTierProvider with io.kvtier.tier.mooncake.MooncakeTierProvider;

    // Its master launcher and settings: bench tier's Mooncake baseline and cli's demo --l3 mooncake.
    exports io.kvtier.tier.mooncake to io.kvtier.bench, io.kvtier.cli;
}

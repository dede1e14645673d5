/**
 * The Mooncake Store L3 tier: FFM bindings of store_c.h. It makes restricted FFM calls itself
 * (downcalls into libmooncake_store), so it is granted native access by name.
 */
module io.kvtier.tier.mooncake
{
    requires io.kvtier.spi;
    requires io.kvtier.tier.support;
    requires io.kvtier.nativeaccess;

    // Everything else is internal: the engine, bench and cli reach the tier through the SPI and its
    // settings only (bench's MooncakeMasterProcess starts a master from an install, knowing nothing of it).
    provides io.kvtier.spi.StorageTierProvider with io.kvtier.tier.mooncake.MooncakeTierProvider;
}

/**
 * The POSIX-directory L3 tier, built in: it ships on the engine's module path and may use kvtier's
 * internal modules (native, the tiers' support), which a third-party plugin may not.
 */
module io.kvtier.tier.posix
{
    requires io.kvtier.spi;
    requires io.kvtier.tier.support;
    requires io.kvtier.nativeaccess;

    provides io.kvtier.spi.StorageTierProvider with io.kvtier.tier.posix.PosixTierProvider;
}

/**
 * The POSIX-directory L3 tier, built in: it ships on the engine's module path and may use kvtier's
 * internal modules (collections, native), which a third-party plugin may not.
 */
module io.kvtier.tier.posix
{
    requires io.kvtier.spi;
    requires io.kvtier.collections;
    requires io.kvtier.nativeaccess;

    provides io.kvtier.spi.StorageTierProvider with io.kvtier.tier.posix.PosixTierProvider;

    // The 3FS tier falls back to this tier on its mount (until it has a support module of its own).
    exports io.kvtier.tier.posix to io.kvtier.tier.threefs;
}

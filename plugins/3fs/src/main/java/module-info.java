/**
 * The 3FS L3 tier: USRBIO through FFM, or the POSIX tier (looked up through the SPI) on the mount. It makes restricted FFM calls
 * itself (its USRBIO ring), so it is granted native access by name. Nothing is exported: the engine
 * reaches it through its provider alone.
 */
module io.kvtier.tier.threefs
{
    requires io.kvtier.spi;
    requires io.kvtier.nativeaccess;
    requires io.kvtier.tier.support;

    // Without USRBIO the tier runs the posix provider, found by its name.
    uses io.kvtier.spi.StorageTierProvider;

    provides io.kvtier.spi.StorageTierProvider with io.kvtier.tier.threefs.ThreeFsTierProvider;
}

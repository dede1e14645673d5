/**
 * What the L3 tiers share: the worker threads' submit/complete/close protocol, the file layout and its
 * index, errno names and typed tier settings. Its types appear in no SPI signature, so it is exported
 * only to the project's own tiers; a third-party plugin is free to copy the pattern, not bound to it.
 */
module io.kvtier.tier.support
{
    // Handlers complete TierBatch keys and settings read TierConfig: every user needs the SPI too.
    requires transitive io.kvtier.spi;
    // SlabTransport runs a UringBatch, whatever moves its bytes.
    requires transitive io.kvtier.nativeaccess;

    exports io.kvtier.tier.support to io.kvtier.tier.posix, io.kvtier.tier.mooncake, io.kvtier.tier.threefs;
}

/**
 * The storage-tier SPI: what an L3 backend implements. It depends on the JDK alone, so a third-party
 * plugin needs nothing else of kvtier to compile against it.
 */
module io.kvtier.spi
{
    // The SPI itself: implemented by every tier plugin (ours and third parties'), driven by the engine.
    exports io.kvtier.spi;
}

package io.kvtier.tier.posix;

/**
 * How the tier lays pages out in its directory, the {@code layout} setting.
 */
enum PageLayout
{
    /** One file per page, published by an atomic rename; the only layout a shared directory may use. */
    FILES,
    /** Pages as frames in the slots of large preallocated extent files; see {@link Slab} and {@link SlabDescriptor}. */
    SLAB
}

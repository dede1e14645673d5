package io.kvtier.device;

/** Which way a plan moves bytes between the engine's GPU buffers and a pool page. */
public enum CopyDirection
{
    /** Offload: a block of the layer-first device buffers to a page (device to host). */
    TO_HOST,
    /** Load: a page into a block of the layer-first device buffers (host to device). */
    TO_DEVICE
}

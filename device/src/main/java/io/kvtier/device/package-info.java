/**
 * The device tier: moving KV between an inference engine's GPU buffers and the pool's pages.
 * {@link io.kvtier.device.KvShape} describes a model's KV; {@link io.kvtier.device.LayerFirstLayout}
 * is how the engine keeps it on the GPU and {@link io.kvtier.device.KvPageDescriptor} how the pool
 * keeps one block per page; {@link io.kvtier.device.CopyPlanner} turns a block-to-page copy into
 * the fewest strided copies, and a {@link io.kvtier.device.CopyExecutor} runs them, with CUDA or as a
 * host-memory emulation where there is no device. See docs/device-tier.md.
 */
package io.kvtier.device;

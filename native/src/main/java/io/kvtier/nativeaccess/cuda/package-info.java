/**
 * The CUDA runtime front: {@link io.kvtier.nativeaccess.cuda.CudartLibrary} finds libcudart,
 * {@link io.kvtier.nativeaccess.cuda.Cuda} reports device discovery (library missing, insufficient
 * driver, no device, N devices, each with the reason and how to enable it) and wraps the calls of the
 * device tier: host registration, streams, events, asynchronous and batched copies, and IPC handles.
 * The bindings themselves are in {@code gen}.
 */
package io.kvtier.nativeaccess.cuda;

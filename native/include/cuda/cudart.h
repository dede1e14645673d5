/*
 * The subset of the CUDA runtime API that kvtier binds, and nothing else: the input of
 * native/jextract-cuda.sh, which generates io.kvtier.nativeaccess.cuda.bindings from it.
 *
 * Copied from the CUDA 13.0 toolkit headers (/usr/local/cuda-13.0/include/cuda_runtime_api.h and
 * driver_types.h), with the export macros (CUDARTAPI, __host__, __dv) dropped and only the
 * declarations, types and constants kvtier uses kept. CudaAbiTest (native/src/test) compiles these
 * function declarations after the real headers, where gcc rejects any that conflicts, checks that the
 * Java bindings have the same arities, and compares struct layouts and constants; so an edit here that
 * drifts from the toolkit fails the build wherever its headers are installed.
 *
 * cudaMemcpyBatchAsync appears twice: CUDA 12.8 and 12.9 declare it with a failIdx argument before
 * the stream, 13.0 without it. Both resolve to the same symbol; the caller picks the signature from
 * cudaRuntimeGetVersion. The 12.x form is declared here under the name cudaMemcpyBatchAsync_v12080
 * only so that jextract emits a descriptor for it; the script rebinds it to the real symbol.
 */
#ifndef KVTIER_CUDART_H
#define KVTIER_CUDART_H

#include <stddef.h>

/* driver_types.h */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorStubLibrary = 34,
    cudaErrorInsufficientDriver = 35,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNotReady = 600,
    cudaErrorHostMemoryAlreadyRegistered = 712,
    cudaErrorHostMemoryNotRegistered = 713,
    cudaErrorNotSupported = 801
} cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

#define cudaHostRegisterDefault   0x00
#define cudaHostRegisterPortable  0x01
#define cudaHostRegisterMapped    0x02
#define cudaHostRegisterIoMemory  0x04
#define cudaHostRegisterReadOnly  0x08

#define cudaStreamDefault         0x00
#define cudaStreamNonBlocking     0x01

#define cudaEventDefault          0x00
#define cudaEventBlockingSync     0x01
#define cudaEventDisableTiming    0x02
#define cudaEventInterprocess     0x04

#define cudaIpcMemLazyEnablePeerAccess 0x01
#define CUDA_IPC_HANDLE_SIZE 64

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;

typedef struct cudaIpcMemHandle_st {
    char reserved[CUDA_IPC_HANDLE_SIZE];
} cudaIpcMemHandle_t;

enum cudaMemLocationType {
    cudaMemLocationTypeInvalid = 0,
    cudaMemLocationTypeDevice = 1,
    cudaMemLocationTypeHost = 2
};

struct cudaMemLocation {
    enum cudaMemLocationType type;
    int id;
};

enum cudaMemcpySrcAccessOrder {
    cudaMemcpySrcAccessOrderInvalid = 0x0,
    cudaMemcpySrcAccessOrderStream = 0x1,
    cudaMemcpySrcAccessOrderDuringApiCall = 0x2,
    cudaMemcpySrcAccessOrderAny = 0x3
};

enum cudaMemcpyFlags {
    cudaMemcpyFlagDefault = 0x0,
    cudaMemcpyFlagPreferOverlapWithCompute = 0x1
};

struct cudaMemcpyAttributes {
    enum cudaMemcpySrcAccessOrder srcAccessOrder;
    struct cudaMemLocation srcLocHint;
    struct cudaMemLocation dstLocHint;
    unsigned int flags;
};

/* cuda_runtime_api.h */
cudaError_t cudaGetDeviceCount(int *count);
const char *cudaGetErrorString(cudaError_t error);
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
cudaError_t cudaDriverGetVersion(int *driverVersion);
cudaError_t cudaSetDevice(int device);

/* Device allocations: only tests and tools allocate; the engine copies into a client's allocations. */
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream);
/* CUDA 13.0 */
cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                 struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                 cudaStream_t stream);
/* CUDA 12.8 and 12.9: the same symbol with failIdx before the stream */
cudaError_t cudaMemcpyBatchAsync_v12080(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                        struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                        size_t *failIdx, cudaStream_t stream);

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventDestroy(cudaEvent_t event);

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr);
cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags);
cudaError_t cudaIpcCloseMemHandle(void *devPtr);

#endif

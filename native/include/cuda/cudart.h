/*
 * kvtier's own declarations of the CUDA runtime facts its FFM front relies on: the names, values,
 * function signatures and struct layouts of the part of libcudart that
 * native/src/main/java/io/kvtier/nativeaccess/cuda/bindings binds, written by the project for itself
 * and nothing more. NVIDIA documents these facts in the CUDA Runtime API reference (CUDA 13.0); the
 * names are the runtime's, so that the bindings call the library's own symbols and read alike.
 *
 * CudaAbiTest holds this file to the real thing: it compares the bindings' struct layouts and
 * constants with what gcc prints for this file and for the toolkit's own headers
 * (/usr/local/cuda/include, else the newest /usr/local/cuda-<version>/include), and compiles every
 * function declared here after the toolkit's cuda_runtime_api.h, where gcc rejects any whose type
 * differs from the toolkit's. Without a toolkit the comparisons with it skip, naming the package to
 * install (cuda-cudart-dev-13-0). It also checks that the bindings have each function's arity.
 *
 * native/jextract-cuda.sh generates the bindings from include/cuda_ffm.h, which takes these
 * declarations, or with --system-headers the toolkit's own cuda_runtime_api.h where one is installed.
 */
#ifndef KVTIER_CUDART_H
#define KVTIER_CUDART_H

#include <stddef.h>

/* ---- Results ---------------------------------------------------------------------------------- */

/* Every runtime call returns one of these (an int-sized enum); the ones kvtier tells apart: */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorStubLibrary = 34,                  /* the toolkit's stub library, not a real runtime */
    cudaErrorInsufficientDriver = 35,           /* no driver, or one older than the runtime */
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNotReady = 600,                    /* cudaEventQuery: the work is still running */
    cudaErrorHostMemoryAlreadyRegistered = 712,
    cudaErrorHostMemoryNotRegistered = 713,
    cudaErrorNotSupported = 801
} cudaError_t;

const char *cudaGetErrorString(cudaError_t error);

/* ---- The runtime and its devices -------------------------------------------------------------- */

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);   /* 1000 * major + 10 * minor */
cudaError_t cudaDriverGetVersion(int *driverVersion);     /* 0 when no driver is loaded */
cudaError_t cudaGetDeviceCount(int *count);               /* leaves *count as it was on failure */
cudaError_t cudaSetDevice(int device);

/* ---- Device memory: only tests and tools allocate; the engine copies into a client's ---------- */

cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);

/* ---- Pinning host memory the device copies from and to ---------------------------------------- */

#define cudaHostRegisterDefault   0x00
#define cudaHostRegisterPortable  0x01
#define cudaHostRegisterMapped    0x02
#define cudaHostRegisterIoMemory  0x04
#define cudaHostRegisterReadOnly  0x08

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);

/* ---- Streams: ordered queues of device work, opaque to the caller ----------------------------- */

typedef struct CUstream_st *cudaStream_t;

#define cudaStreamDefault         0x00
#define cudaStreamNonBlocking     0x01          /* no implicit ordering with the legacy default stream */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);

/* ---- Events: markers in a stream that tell when the work before them is done ------------------ */

typedef struct CUevent_st *cudaEvent_t;

#define cudaEventDefault          0x00
#define cudaEventBlockingSync     0x01
#define cudaEventDisableTiming    0x02
#define cudaEventInterprocess     0x04

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);            /* cudaSuccess, or cudaErrorNotReady */
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventDestroy(cudaEvent_t event);

/* ---- Copies ----------------------------------------------------------------------------------- */

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4                       /* the runtime infers the direction from the pointers */
};

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream);
/* height rows of width bytes, each row pitch bytes after the previous one on its side */
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream);

/* Batched copies (CUDA 12.8 and later). Each copy i uses attrs[j] for the last j with attrsIdxs[j] <= i. */

enum cudaMemLocationType {
    cudaMemLocationTypeInvalid = 0,
    cudaMemLocationTypeDevice = 1,
    cudaMemLocationTypeHost = 2
};

/* 8 bytes: where memory lives, a device by ordinal or the host */
struct cudaMemLocation {
    enum cudaMemLocationType type;
    int id;
};

/* When the source may be read: in stream order, during the call, or whenever the runtime likes */
enum cudaMemcpySrcAccessOrder {
    cudaMemcpySrcAccessOrderInvalid = 0,
    cudaMemcpySrcAccessOrderStream = 1,
    cudaMemcpySrcAccessOrderDuringApiCall = 2,
    cudaMemcpySrcAccessOrderAny = 3
};

enum cudaMemcpyFlags {
    cudaMemcpyFlagDefault = 0,
    cudaMemcpyFlagPreferOverlapWithCompute = 1
};

/* 24 bytes: the order, location hints and flags of a run of copies in a batch */
struct cudaMemcpyAttributes {
    enum cudaMemcpySrcAccessOrder srcAccessOrder;
    struct cudaMemLocation srcLocHint;
    struct cudaMemLocation dstLocHint;
    unsigned int flags;                         /* cudaMemcpyFlags */
};

/* CUDA 13.0's signature. CUDA 12.8 and 12.9 take a size_t *failIdx before the stream under the same
 * symbol; include/cuda_ffm.h declares that form for the bindings, and the caller picks one by
 * cudaRuntimeGetVersion. The batch calls refuse the legacy default stream. */
cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                 struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                 cudaStream_t stream);

/* ---- Sharing device memory between processes ------------------------------------------------- */

#define CUDA_IPC_HANDLE_SIZE 64

/* An opaque 64-byte token naming an allocation; passed BY VALUE to cudaIpcOpenMemHandle */
typedef struct cudaIpcMemHandle_st {
    char reserved[CUDA_IPC_HANDLE_SIZE];
} cudaIpcMemHandle_t;

#define cudaIpcMemLazyEnablePeerAccess 0x01

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr);
cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags);
cudaError_t cudaIpcCloseMemHandle(void *devPtr);

#endif

/*
 * What kvtier's CUDA runtime bindings (io.kvtier.nativeaccess.cuda.bindings) are generated from, by
 * native/jextract-cuda.sh: the runtime's declarations, from the project's own cuda/cudart.h next to
 * this file, or, when KVTIER_SYSTEM_HEADERS is defined (jextract-cuda.sh --system-headers), from the
 * CUDA 13 toolkit's own cuda_runtime_api.h.
 */
#ifndef KVTIER_CUDA_FFM_H
#define KVTIER_CUDA_FFM_H

#ifdef KVTIER_SYSTEM_HEADERS
#include <cuda_runtime_api.h>
#else
#include "cuda/cudart.h"
#endif

/*
 * Not a symbol of its own: cudaMemcpyBatchAsync as CUDA 12.8 and 12.9 declare it, with failIdx
 * before the stream. It is declared under this name only so that jextract emits a descriptor for
 * the older signature; jextract-cuda.sh binds that descriptor to the symbol cudaMemcpyBatchAsync, and
 * the caller uses it when cudaRuntimeGetVersion reports 12080 or 12090.
 */
cudaError_t cudaMemcpyBatchAsync_v12080(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                        struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                        size_t *failIdx, cudaStream_t stream);

#endif

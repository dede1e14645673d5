#!/bin/sh
# Regenerates the CUDA runtime bindings (src/main/java/io/kvtier/nativeaccess/cuda/bindings) with jextract from
# include/cuda_ffm.h, which takes the project's own declarations of the runtime (include/cuda/cudart.h) or, with
# --system-headers, the CUDA 13 toolkit's own cuda_runtime_api.h; then applies the rewrites the project needs:
#   - SYMBOL_LOOKUP binds the libcudart that io.kvtier.nativeaccess.cuda.CudartLibrary located (explicit
#     path, KVTIER_CUDA_LIB, CUDA install, loader search) instead of jextract's fixed --library;
#   - handles are made by NativeAccess.downcall, the project's one place for restricted linker calls;
#   - cudaMemcpyBatchAsync_v12080 (the 12.8/12.9 signature, declared under its own name only so that
#     jextract emits a descriptor for it) is bound to the real symbol cudaMemcpyBatchAsync.
#
# The committed files were written by hand in jextract 22's shape, because jextract is not installable on
# the build machines (it ships only as binaries from jdk.java.net/jextract). Real jextract output has the
# same public names and signatures, so callers compile unchanged; after running this, review the diff
# (git diff src/main/java/io/kvtier/nativeaccess/cuda/bindings) and run CudaAbiTest.
#
# Usage: native/jextract-cuda.sh [--system-headers] [path/to/jextract]   (or JEXTRACT=... ; default: jextract on PATH)
#   --system-headers   read the toolkit's headers from $CUDA_HOME/include (default /usr/local/cuda) instead of the
#                      project's declarations; they must be CUDA 13's, whose cudaMemcpyBatchAsync has no failIdx
set -eu

here=$(cd "$(dirname "$0")" && pwd)
system=
if [ "${1:-}" = "--system-headers" ]; then
    system=1
    shift
fi
jextract=${1:-${JEXTRACT:-jextract}}
if [ -n "$system" ]; then
    cuda_include="${CUDA_HOME:-/usr/local/cuda}/include"
    if ! grep -qs '#define CUDART_VERSION *13' "$cuda_include/cuda_runtime_api.h"; then
        echo "no CUDA 13 cuda_runtime_api.h under $cuda_include: install cuda-cudart-dev-13-0 (NVIDIA's repository)," >&2
        echo "set CUDA_HOME to its toolkit, or drop --system-headers to use include/cuda/cudart.h" >&2
        exit 2
    fi
    set -- -D KVTIER_SYSTEM_HEADERS -I "$cuda_include"
else
    set -- -I "$here/include"
fi
out="$here/src/main/java"
pkg=io.kvtier.nativeaccess.cuda.bindings
dir="$out/$(echo "$pkg" | tr . /)"

if ! command -v "$jextract" >/dev/null 2>&1; then
    echo "jextract not found: download it from https://jdk.java.net/jextract/ and pass its bin/jextract" >&2
    exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$jextract" --output "$tmp" --target-package "$pkg" --header-class-name cudart_h \
    --include-function cudaGetDeviceCount --include-function cudaGetErrorString \
    --include-function cudaRuntimeGetVersion --include-function cudaDriverGetVersion --include-function cudaSetDevice \
    --include-function cudaMalloc --include-function cudaFree \
    --include-function cudaHostRegister --include-function cudaHostUnregister \
    --include-function cudaStreamCreateWithFlags --include-function cudaStreamDestroy --include-function cudaStreamSynchronize \
    --include-function cudaMemcpyAsync --include-function cudaMemcpy2DAsync \
    --include-function cudaMemcpyBatchAsync --include-function cudaMemcpyBatchAsync_v12080 \
    --include-function cudaEventCreateWithFlags --include-function cudaEventRecord --include-function cudaEventQuery \
    --include-function cudaEventSynchronize --include-function cudaEventDestroy \
    --include-function cudaIpcGetMemHandle --include-function cudaIpcOpenMemHandle --include-function cudaIpcCloseMemHandle \
    --include-struct cudaIpcMemHandle_st --include-typedef cudaIpcMemHandle_t \
    --include-struct cudaMemLocation --include-struct cudaMemcpyAttributes \
    --include-constant cudaSuccess --include-constant cudaErrorInvalidValue --include-constant cudaErrorMemoryAllocation \
    --include-constant cudaErrorStubLibrary --include-constant cudaErrorInsufficientDriver --include-constant cudaErrorNoDevice \
    --include-constant cudaErrorInvalidDevice --include-constant cudaErrorNotReady \
    --include-constant cudaErrorHostMemoryAlreadyRegistered --include-constant cudaErrorHostMemoryNotRegistered \
    --include-constant cudaErrorNotSupported \
    --include-constant cudaMemcpyHostToHost --include-constant cudaMemcpyHostToDevice --include-constant cudaMemcpyDeviceToHost \
    --include-constant cudaMemcpyDeviceToDevice --include-constant cudaMemcpyDefault \
    --include-constant cudaHostRegisterDefault --include-constant cudaHostRegisterPortable --include-constant cudaHostRegisterMapped \
    --include-constant cudaHostRegisterIoMemory --include-constant cudaHostRegisterReadOnly \
    --include-constant cudaStreamDefault --include-constant cudaStreamNonBlocking \
    --include-constant cudaEventDefault --include-constant cudaEventBlockingSync --include-constant cudaEventDisableTiming \
    --include-constant cudaEventInterprocess --include-constant cudaIpcMemLazyEnablePeerAccess --include-constant CUDA_IPC_HANDLE_SIZE \
    --include-constant cudaMemLocationTypeInvalid --include-constant cudaMemLocationTypeDevice --include-constant cudaMemLocationTypeHost \
    --include-constant cudaMemcpySrcAccessOrderInvalid --include-constant cudaMemcpySrcAccessOrderStream \
    --include-constant cudaMemcpySrcAccessOrderDuringApiCall --include-constant cudaMemcpySrcAccessOrderAny \
    --include-constant cudaMemcpyFlagDefault --include-constant cudaMemcpyFlagPreferOverlapWithCompute \
    "$@" "$here/include/cuda_ffm.h"

gen="$tmp/$(echo "$pkg" | tr . /)"
# The project's lookup and handle factory instead of jextract's fixed library and direct linker calls.
sed -i \
    -e 's|static final SymbolLookup SYMBOL_LOOKUP = .*|static final SymbolLookup SYMBOL_LOOKUP = io.kvtier.nativeaccess.cuda.CudartLibrary.lookup();|' \
    -e 's|public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);|public static final MethodHandle HANDLE = io.kvtier.nativeaccess.NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);|' \
    -e 's|public static final MemorySegment ADDR = cudart_h.findOrThrow("\([A-Za-z0-9_]*\)");|static final String ADDR_NAME = "\1";\n        public static final MemorySegment ADDR = cudart_h.findOrThrow(ADDR_NAME);|' \
    -e 's|ADDR_NAME = "cudaMemcpyBatchAsync_v12080"|ADDR_NAME = "cudaMemcpyBatchAsync"|' \
    "$gen"/cudart_h*.java
# Keep the hand-written package-info.java.
find "$dir" -name '*.java' ! -name package-info.java -delete
cp "$gen"/*.java "$dir"/
echo "regenerated $dir; review with: git diff -- $dir"

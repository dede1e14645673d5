// Generated in the shape of jextract 22 from native/include/cuda_ffm.h (the project's own declarations in
// native/include/cuda/cudart.h) by native/jextract-cuda.sh; see that script before editing.
// Functions are looked up lazily, each on first use, through SYMBOL_LOOKUP.

package io.kvtier.nativeaccess.cuda.bindings;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.nativeaccess.cuda.CudartLibrary;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

public class cudart_h {

    cudart_h() {
        // Should not be called directly
    }

    public static final ValueLayout.OfBoolean C_BOOL = ValueLayout.JAVA_BOOLEAN;
    public static final ValueLayout.OfByte C_CHAR = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, ValueLayout.JAVA_BYTE));

    /**
     * The libcudart this process uses. jextract writes a libraryLookup of its --library argument here,
     * and a LINKER.downcallHandle in each holder; the script rewrites them so that the library is the one
     * {@link CudartLibrary} located (an explicit path, KVTIER_CUDA_LIB, or the CUDA install, or an empty
     * lookup when none was found) and handles are made by {@link NativeAccess#downcall}, the project's
     * one place for restricted linker calls.
     */
    static final SymbolLookup SYMBOL_LOOKUP = CudartLibrary.lookup();

    static MemorySegment findOrThrow(String symbol) {
        return SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol + " (" + CudartLibrary.location() + ")"));
    }

    private static class cudaGetDeviceCount {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaGetDeviceCount";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaGetDeviceCount
     */
    public static FunctionDescriptor cudaGetDeviceCount$descriptor() {
        return cudaGetDeviceCount.DESC;
    }

    /**
     * Downcall method handle for: cudaGetDeviceCount
     */
    public static MethodHandle cudaGetDeviceCount$handle() {
        return cudaGetDeviceCount.HANDLE;
    }

    /**
     * Address for: cudaGetDeviceCount
     */
    public static MemorySegment cudaGetDeviceCount$address() {
        return cudaGetDeviceCount.ADDR;
    }

    public static int cudaGetDeviceCount(MemorySegment count) {
        var mh$ = cudaGetDeviceCount.HANDLE;
        try {
            return (int)mh$.invokeExact(count);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaGetErrorString {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_POINTER,
            C_INT
        );

        static final String ADDR_NAME = "cudaGetErrorString";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaGetErrorString
     */
    public static FunctionDescriptor cudaGetErrorString$descriptor() {
        return cudaGetErrorString.DESC;
    }

    /**
     * Downcall method handle for: cudaGetErrorString
     */
    public static MethodHandle cudaGetErrorString$handle() {
        return cudaGetErrorString.HANDLE;
    }

    /**
     * Address for: cudaGetErrorString
     */
    public static MemorySegment cudaGetErrorString$address() {
        return cudaGetErrorString.ADDR;
    }

    public static MemorySegment cudaGetErrorString(int error) {
        var mh$ = cudaGetErrorString.HANDLE;
        try {
            return (MemorySegment)mh$.invokeExact(error);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaRuntimeGetVersion {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaRuntimeGetVersion";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaRuntimeGetVersion
     */
    public static FunctionDescriptor cudaRuntimeGetVersion$descriptor() {
        return cudaRuntimeGetVersion.DESC;
    }

    /**
     * Downcall method handle for: cudaRuntimeGetVersion
     */
    public static MethodHandle cudaRuntimeGetVersion$handle() {
        return cudaRuntimeGetVersion.HANDLE;
    }

    /**
     * Address for: cudaRuntimeGetVersion
     */
    public static MemorySegment cudaRuntimeGetVersion$address() {
        return cudaRuntimeGetVersion.ADDR;
    }

    public static int cudaRuntimeGetVersion(MemorySegment runtimeVersion) {
        var mh$ = cudaRuntimeGetVersion.HANDLE;
        try {
            return (int)mh$.invokeExact(runtimeVersion);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaDriverGetVersion {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaDriverGetVersion";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaDriverGetVersion
     */
    public static FunctionDescriptor cudaDriverGetVersion$descriptor() {
        return cudaDriverGetVersion.DESC;
    }

    /**
     * Downcall method handle for: cudaDriverGetVersion
     */
    public static MethodHandle cudaDriverGetVersion$handle() {
        return cudaDriverGetVersion.HANDLE;
    }

    /**
     * Address for: cudaDriverGetVersion
     */
    public static MemorySegment cudaDriverGetVersion$address() {
        return cudaDriverGetVersion.ADDR;
    }

    public static int cudaDriverGetVersion(MemorySegment driverVersion) {
        var mh$ = cudaDriverGetVersion.HANDLE;
        try {
            return (int)mh$.invokeExact(driverVersion);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaSetDevice {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_INT
        );

        static final String ADDR_NAME = "cudaSetDevice";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaSetDevice
     */
    public static FunctionDescriptor cudaSetDevice$descriptor() {
        return cudaSetDevice.DESC;
    }

    /**
     * Downcall method handle for: cudaSetDevice
     */
    public static MethodHandle cudaSetDevice$handle() {
        return cudaSetDevice.HANDLE;
    }

    /**
     * Address for: cudaSetDevice
     */
    public static MemorySegment cudaSetDevice$address() {
        return cudaSetDevice.ADDR;
    }

    public static int cudaSetDevice(int device) {
        var mh$ = cudaSetDevice.HANDLE;
        try {
            return (int)mh$.invokeExact(device);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMalloc {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_LONG
        );

        static final String ADDR_NAME = "cudaMalloc";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaMalloc
     */
    public static FunctionDescriptor cudaMalloc$descriptor() {
        return cudaMalloc.DESC;
    }

    /**
     * Downcall method handle for: cudaMalloc
     */
    public static MethodHandle cudaMalloc$handle() {
        return cudaMalloc.HANDLE;
    }

    /**
     * Address for: cudaMalloc
     */
    public static MemorySegment cudaMalloc$address() {
        return cudaMalloc.ADDR;
    }

    public static int cudaMalloc(MemorySegment devPtr, long size) {
        var mh$ = cudaMalloc.HANDLE;
        try {
            return (int)mh$.invokeExact(devPtr, size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaFree {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaFree";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaFree
     */
    public static FunctionDescriptor cudaFree$descriptor() {
        return cudaFree.DESC;
    }

    /**
     * Downcall method handle for: cudaFree
     */
    public static MethodHandle cudaFree$handle() {
        return cudaFree.HANDLE;
    }

    /**
     * Address for: cudaFree
     */
    public static MemorySegment cudaFree$address() {
        return cudaFree.ADDR;
    }

    public static int cudaFree(MemorySegment devPtr) {
        var mh$ = cudaFree.HANDLE;
        try {
            return (int)mh$.invokeExact(devPtr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostRegister {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_LONG,
            C_INT
        );

        static final String ADDR_NAME = "cudaHostRegister";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaHostRegister
     */
    public static FunctionDescriptor cudaHostRegister$descriptor() {
        return cudaHostRegister.DESC;
    }

    /**
     * Downcall method handle for: cudaHostRegister
     */
    public static MethodHandle cudaHostRegister$handle() {
        return cudaHostRegister.HANDLE;
    }

    /**
     * Address for: cudaHostRegister
     */
    public static MemorySegment cudaHostRegister$address() {
        return cudaHostRegister.ADDR;
    }

    public static int cudaHostRegister(MemorySegment ptr, long size, int flags) {
        var mh$ = cudaHostRegister.HANDLE;
        try {
            return (int)mh$.invokeExact(ptr, size, flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaHostUnregister {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaHostUnregister";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaHostUnregister
     */
    public static FunctionDescriptor cudaHostUnregister$descriptor() {
        return cudaHostUnregister.DESC;
    }

    /**
     * Downcall method handle for: cudaHostUnregister
     */
    public static MethodHandle cudaHostUnregister$handle() {
        return cudaHostUnregister.HANDLE;
    }

    /**
     * Address for: cudaHostUnregister
     */
    public static MemorySegment cudaHostUnregister$address() {
        return cudaHostUnregister.ADDR;
    }

    public static int cudaHostUnregister(MemorySegment ptr) {
        var mh$ = cudaHostUnregister.HANDLE;
        try {
            return (int)mh$.invokeExact(ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamCreateWithFlags {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_INT
        );

        static final String ADDR_NAME = "cudaStreamCreateWithFlags";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaStreamCreateWithFlags
     */
    public static FunctionDescriptor cudaStreamCreateWithFlags$descriptor() {
        return cudaStreamCreateWithFlags.DESC;
    }

    /**
     * Downcall method handle for: cudaStreamCreateWithFlags
     */
    public static MethodHandle cudaStreamCreateWithFlags$handle() {
        return cudaStreamCreateWithFlags.HANDLE;
    }

    /**
     * Address for: cudaStreamCreateWithFlags
     */
    public static MemorySegment cudaStreamCreateWithFlags$address() {
        return cudaStreamCreateWithFlags.ADDR;
    }

    public static int cudaStreamCreateWithFlags(MemorySegment pStream, int flags) {
        var mh$ = cudaStreamCreateWithFlags.HANDLE;
        try {
            return (int)mh$.invokeExact(pStream, flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamDestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaStreamDestroy";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaStreamDestroy
     */
    public static FunctionDescriptor cudaStreamDestroy$descriptor() {
        return cudaStreamDestroy.DESC;
    }

    /**
     * Downcall method handle for: cudaStreamDestroy
     */
    public static MethodHandle cudaStreamDestroy$handle() {
        return cudaStreamDestroy.HANDLE;
    }

    /**
     * Address for: cudaStreamDestroy
     */
    public static MemorySegment cudaStreamDestroy$address() {
        return cudaStreamDestroy.ADDR;
    }

    public static int cudaStreamDestroy(MemorySegment stream) {
        var mh$ = cudaStreamDestroy.HANDLE;
        try {
            return (int)mh$.invokeExact(stream);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaStreamSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaStreamSynchronize";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaStreamSynchronize
     */
    public static FunctionDescriptor cudaStreamSynchronize$descriptor() {
        return cudaStreamSynchronize.DESC;
    }

    /**
     * Downcall method handle for: cudaStreamSynchronize
     */
    public static MethodHandle cudaStreamSynchronize$handle() {
        return cudaStreamSynchronize.HANDLE;
    }

    /**
     * Address for: cudaStreamSynchronize
     */
    public static MemorySegment cudaStreamSynchronize$address() {
        return cudaStreamSynchronize.ADDR;
    }

    public static int cudaStreamSynchronize(MemorySegment stream) {
        var mh$ = cudaStreamSynchronize.HANDLE;
        try {
            return (int)mh$.invokeExact(stream);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyAsync {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaMemcpyAsync";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaMemcpyAsync
     */
    public static FunctionDescriptor cudaMemcpyAsync$descriptor() {
        return cudaMemcpyAsync.DESC;
    }

    /**
     * Downcall method handle for: cudaMemcpyAsync
     */
    public static MethodHandle cudaMemcpyAsync$handle() {
        return cudaMemcpyAsync.HANDLE;
    }

    /**
     * Address for: cudaMemcpyAsync
     */
    public static MemorySegment cudaMemcpyAsync$address() {
        return cudaMemcpyAsync.ADDR;
    }

    public static int cudaMemcpyAsync(MemorySegment dst, MemorySegment src, long count, int kind, MemorySegment stream) {
        var mh$ = cudaMemcpyAsync.HANDLE;
        try {
            return (int)mh$.invokeExact(dst, src, count, kind, stream);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpy2DAsync {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_LONG,
            C_POINTER,
            C_LONG,
            C_LONG,
            C_LONG,
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaMemcpy2DAsync";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaMemcpy2DAsync
     */
    public static FunctionDescriptor cudaMemcpy2DAsync$descriptor() {
        return cudaMemcpy2DAsync.DESC;
    }

    /**
     * Downcall method handle for: cudaMemcpy2DAsync
     */
    public static MethodHandle cudaMemcpy2DAsync$handle() {
        return cudaMemcpy2DAsync.HANDLE;
    }

    /**
     * Address for: cudaMemcpy2DAsync
     */
    public static MemorySegment cudaMemcpy2DAsync$address() {
        return cudaMemcpy2DAsync.ADDR;
    }

    public static int cudaMemcpy2DAsync(MemorySegment dst, long dpitch, MemorySegment src, long spitch, long width, long height, int kind, MemorySegment stream) {
        var mh$ = cudaMemcpy2DAsync.HANDLE;
        try {
            return (int)mh$.invokeExact(dst, dpitch, src, spitch, width, height, kind, stream);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyBatchAsync {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaMemcpyBatchAsync";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaMemcpyBatchAsync
     */
    public static FunctionDescriptor cudaMemcpyBatchAsync$descriptor() {
        return cudaMemcpyBatchAsync.DESC;
    }

    /**
     * Downcall method handle for: cudaMemcpyBatchAsync
     */
    public static MethodHandle cudaMemcpyBatchAsync$handle() {
        return cudaMemcpyBatchAsync.HANDLE;
    }

    /**
     * Address for: cudaMemcpyBatchAsync
     */
    public static MemorySegment cudaMemcpyBatchAsync$address() {
        return cudaMemcpyBatchAsync.ADDR;
    }

    public static int cudaMemcpyBatchAsync(MemorySegment dsts, MemorySegment srcs, MemorySegment sizes, long count, MemorySegment attrs, MemorySegment attrsIdxs, long numAttrs, MemorySegment stream) {
        var mh$ = cudaMemcpyBatchAsync.HANDLE;
        try {
            return (int)mh$.invokeExact(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaMemcpyBatchAsync_v12080 {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER,
            C_POINTER,
            C_LONG,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaMemcpyBatchAsync";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaMemcpyBatchAsync_v12080
     */
    public static FunctionDescriptor cudaMemcpyBatchAsync_v12080$descriptor() {
        return cudaMemcpyBatchAsync_v12080.DESC;
    }

    /**
     * Downcall method handle for: cudaMemcpyBatchAsync_v12080
     */
    public static MethodHandle cudaMemcpyBatchAsync_v12080$handle() {
        return cudaMemcpyBatchAsync_v12080.HANDLE;
    }

    /**
     * Address for: cudaMemcpyBatchAsync_v12080
     */
    public static MemorySegment cudaMemcpyBatchAsync_v12080$address() {
        return cudaMemcpyBatchAsync_v12080.ADDR;
    }

    public static int cudaMemcpyBatchAsync_v12080(MemorySegment dsts, MemorySegment srcs, MemorySegment sizes, long count, MemorySegment attrs, MemorySegment attrsIdxs, long numAttrs, MemorySegment failIdx, MemorySegment stream) {
        var mh$ = cudaMemcpyBatchAsync_v12080.HANDLE;
        try {
            return (int)mh$.invokeExact(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, stream);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventCreateWithFlags {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_INT
        );

        static final String ADDR_NAME = "cudaEventCreateWithFlags";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaEventCreateWithFlags
     */
    public static FunctionDescriptor cudaEventCreateWithFlags$descriptor() {
        return cudaEventCreateWithFlags.DESC;
    }

    /**
     * Downcall method handle for: cudaEventCreateWithFlags
     */
    public static MethodHandle cudaEventCreateWithFlags$handle() {
        return cudaEventCreateWithFlags.HANDLE;
    }

    /**
     * Address for: cudaEventCreateWithFlags
     */
    public static MemorySegment cudaEventCreateWithFlags$address() {
        return cudaEventCreateWithFlags.ADDR;
    }

    public static int cudaEventCreateWithFlags(MemorySegment event, int flags) {
        var mh$ = cudaEventCreateWithFlags.HANDLE;
        try {
            return (int)mh$.invokeExact(event, flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventRecord {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaEventRecord";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaEventRecord
     */
    public static FunctionDescriptor cudaEventRecord$descriptor() {
        return cudaEventRecord.DESC;
    }

    /**
     * Downcall method handle for: cudaEventRecord
     */
    public static MethodHandle cudaEventRecord$handle() {
        return cudaEventRecord.HANDLE;
    }

    /**
     * Address for: cudaEventRecord
     */
    public static MemorySegment cudaEventRecord$address() {
        return cudaEventRecord.ADDR;
    }

    public static int cudaEventRecord(MemorySegment event, MemorySegment stream) {
        var mh$ = cudaEventRecord.HANDLE;
        try {
            return (int)mh$.invokeExact(event, stream);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventQuery {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaEventQuery";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaEventQuery
     */
    public static FunctionDescriptor cudaEventQuery$descriptor() {
        return cudaEventQuery.DESC;
    }

    /**
     * Downcall method handle for: cudaEventQuery
     */
    public static MethodHandle cudaEventQuery$handle() {
        return cudaEventQuery.HANDLE;
    }

    /**
     * Address for: cudaEventQuery
     */
    public static MemorySegment cudaEventQuery$address() {
        return cudaEventQuery.ADDR;
    }

    public static int cudaEventQuery(MemorySegment event) {
        var mh$ = cudaEventQuery.HANDLE;
        try {
            return (int)mh$.invokeExact(event);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventSynchronize {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaEventSynchronize";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaEventSynchronize
     */
    public static FunctionDescriptor cudaEventSynchronize$descriptor() {
        return cudaEventSynchronize.DESC;
    }

    /**
     * Downcall method handle for: cudaEventSynchronize
     */
    public static MethodHandle cudaEventSynchronize$handle() {
        return cudaEventSynchronize.HANDLE;
    }

    /**
     * Address for: cudaEventSynchronize
     */
    public static MemorySegment cudaEventSynchronize$address() {
        return cudaEventSynchronize.ADDR;
    }

    public static int cudaEventSynchronize(MemorySegment event) {
        var mh$ = cudaEventSynchronize.HANDLE;
        try {
            return (int)mh$.invokeExact(event);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaEventDestroy {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaEventDestroy";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaEventDestroy
     */
    public static FunctionDescriptor cudaEventDestroy$descriptor() {
        return cudaEventDestroy.DESC;
    }

    /**
     * Downcall method handle for: cudaEventDestroy
     */
    public static MethodHandle cudaEventDestroy$handle() {
        return cudaEventDestroy.HANDLE;
    }

    /**
     * Address for: cudaEventDestroy
     */
    public static MemorySegment cudaEventDestroy$address() {
        return cudaEventDestroy.ADDR;
    }

    public static int cudaEventDestroy(MemorySegment event) {
        var mh$ = cudaEventDestroy.HANDLE;
        try {
            return (int)mh$.invokeExact(event);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaIpcGetMemHandle {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaIpcGetMemHandle";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaIpcGetMemHandle
     */
    public static FunctionDescriptor cudaIpcGetMemHandle$descriptor() {
        return cudaIpcGetMemHandle.DESC;
    }

    /**
     * Downcall method handle for: cudaIpcGetMemHandle
     */
    public static MethodHandle cudaIpcGetMemHandle$handle() {
        return cudaIpcGetMemHandle.HANDLE;
    }

    /**
     * Address for: cudaIpcGetMemHandle
     */
    public static MemorySegment cudaIpcGetMemHandle$address() {
        return cudaIpcGetMemHandle.ADDR;
    }

    public static int cudaIpcGetMemHandle(MemorySegment handle, MemorySegment devPtr) {
        var mh$ = cudaIpcGetMemHandle.HANDLE;
        try {
            return (int)mh$.invokeExact(handle, devPtr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaIpcOpenMemHandle {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER,
            cudaIpcMemHandle_t.layout(),
            C_INT
        );

        static final String ADDR_NAME = "cudaIpcOpenMemHandle";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaIpcOpenMemHandle
     */
    public static FunctionDescriptor cudaIpcOpenMemHandle$descriptor() {
        return cudaIpcOpenMemHandle.DESC;
    }

    /**
     * Downcall method handle for: cudaIpcOpenMemHandle
     */
    public static MethodHandle cudaIpcOpenMemHandle$handle() {
        return cudaIpcOpenMemHandle.HANDLE;
    }

    /**
     * Address for: cudaIpcOpenMemHandle
     */
    public static MemorySegment cudaIpcOpenMemHandle$address() {
        return cudaIpcOpenMemHandle.ADDR;
    }

    public static int cudaIpcOpenMemHandle(MemorySegment devPtr, MemorySegment handle, int flags) {
        var mh$ = cudaIpcOpenMemHandle.HANDLE;
        try {
            return (int)mh$.invokeExact(devPtr, handle, flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class cudaIpcCloseMemHandle {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            C_INT,
            C_POINTER
        );

        static final String ADDR_NAME = "cudaIpcCloseMemHandle";

        public static final MemorySegment ADDR = findOrThrow(ADDR_NAME);

        public static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, ADDR_NAME, DESC);
    }

    /**
     * Function descriptor for: cudaIpcCloseMemHandle
     */
    public static FunctionDescriptor cudaIpcCloseMemHandle$descriptor() {
        return cudaIpcCloseMemHandle.DESC;
    }

    /**
     * Downcall method handle for: cudaIpcCloseMemHandle
     */
    public static MethodHandle cudaIpcCloseMemHandle$handle() {
        return cudaIpcCloseMemHandle.HANDLE;
    }

    /**
     * Address for: cudaIpcCloseMemHandle
     */
    public static MemorySegment cudaIpcCloseMemHandle$address() {
        return cudaIpcCloseMemHandle.ADDR;
    }

    public static int cudaIpcCloseMemHandle(MemorySegment devPtr) {
        var mh$ = cudaIpcCloseMemHandle.HANDLE;
        try {
            return (int)mh$.invokeExact(devPtr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static final int cudaSuccess = (int)0L;

    /**
     * {@snippet lang=c : cudaSuccess = 0}
     */
    public static int cudaSuccess() {
        return cudaSuccess;
    }

    private static final int cudaErrorInvalidValue = (int)1L;

    /**
     * {@snippet lang=c : cudaErrorInvalidValue = 1}
     */
    public static int cudaErrorInvalidValue() {
        return cudaErrorInvalidValue;
    }

    private static final int cudaErrorMemoryAllocation = (int)2L;

    /**
     * {@snippet lang=c : cudaErrorMemoryAllocation = 2}
     */
    public static int cudaErrorMemoryAllocation() {
        return cudaErrorMemoryAllocation;
    }

    private static final int cudaErrorStubLibrary = (int)34L;

    /**
     * {@snippet lang=c : cudaErrorStubLibrary = 34}
     */
    public static int cudaErrorStubLibrary() {
        return cudaErrorStubLibrary;
    }

    private static final int cudaErrorInsufficientDriver = (int)35L;

    /**
     * {@snippet lang=c : cudaErrorInsufficientDriver = 35}
     */
    public static int cudaErrorInsufficientDriver() {
        return cudaErrorInsufficientDriver;
    }

    private static final int cudaErrorNoDevice = (int)100L;

    /**
     * {@snippet lang=c : cudaErrorNoDevice = 100}
     */
    public static int cudaErrorNoDevice() {
        return cudaErrorNoDevice;
    }

    private static final int cudaErrorInvalidDevice = (int)101L;

    /**
     * {@snippet lang=c : cudaErrorInvalidDevice = 101}
     */
    public static int cudaErrorInvalidDevice() {
        return cudaErrorInvalidDevice;
    }

    private static final int cudaErrorNotReady = (int)600L;

    /**
     * {@snippet lang=c : cudaErrorNotReady = 600}
     */
    public static int cudaErrorNotReady() {
        return cudaErrorNotReady;
    }

    private static final int cudaErrorHostMemoryAlreadyRegistered = (int)712L;

    /**
     * {@snippet lang=c : cudaErrorHostMemoryAlreadyRegistered = 712}
     */
    public static int cudaErrorHostMemoryAlreadyRegistered() {
        return cudaErrorHostMemoryAlreadyRegistered;
    }

    private static final int cudaErrorHostMemoryNotRegistered = (int)713L;

    /**
     * {@snippet lang=c : cudaErrorHostMemoryNotRegistered = 713}
     */
    public static int cudaErrorHostMemoryNotRegistered() {
        return cudaErrorHostMemoryNotRegistered;
    }

    private static final int cudaErrorNotSupported = (int)801L;

    /**
     * {@snippet lang=c : cudaErrorNotSupported = 801}
     */
    public static int cudaErrorNotSupported() {
        return cudaErrorNotSupported;
    }

    private static final int cudaMemcpyHostToHost = (int)0L;

    /**
     * {@snippet lang=c : cudaMemcpyHostToHost = 0}
     */
    public static int cudaMemcpyHostToHost() {
        return cudaMemcpyHostToHost;
    }

    private static final int cudaMemcpyHostToDevice = (int)1L;

    /**
     * {@snippet lang=c : cudaMemcpyHostToDevice = 1}
     */
    public static int cudaMemcpyHostToDevice() {
        return cudaMemcpyHostToDevice;
    }

    private static final int cudaMemcpyDeviceToHost = (int)2L;

    /**
     * {@snippet lang=c : cudaMemcpyDeviceToHost = 2}
     */
    public static int cudaMemcpyDeviceToHost() {
        return cudaMemcpyDeviceToHost;
    }

    private static final int cudaMemcpyDeviceToDevice = (int)3L;

    /**
     * {@snippet lang=c : cudaMemcpyDeviceToDevice = 3}
     */
    public static int cudaMemcpyDeviceToDevice() {
        return cudaMemcpyDeviceToDevice;
    }

    private static final int cudaMemcpyDefault = (int)4L;

    /**
     * {@snippet lang=c : cudaMemcpyDefault = 4}
     */
    public static int cudaMemcpyDefault() {
        return cudaMemcpyDefault;
    }

    private static final int cudaHostRegisterDefault = (int)0L;

    /**
     * {@snippet lang=c : cudaHostRegisterDefault = 0}
     */
    public static int cudaHostRegisterDefault() {
        return cudaHostRegisterDefault;
    }

    private static final int cudaHostRegisterPortable = (int)1L;

    /**
     * {@snippet lang=c : cudaHostRegisterPortable = 1}
     */
    public static int cudaHostRegisterPortable() {
        return cudaHostRegisterPortable;
    }

    private static final int cudaHostRegisterMapped = (int)2L;

    /**
     * {@snippet lang=c : cudaHostRegisterMapped = 2}
     */
    public static int cudaHostRegisterMapped() {
        return cudaHostRegisterMapped;
    }

    private static final int cudaHostRegisterIoMemory = (int)4L;

    /**
     * {@snippet lang=c : cudaHostRegisterIoMemory = 4}
     */
    public static int cudaHostRegisterIoMemory() {
        return cudaHostRegisterIoMemory;
    }

    private static final int cudaHostRegisterReadOnly = (int)8L;

    /**
     * {@snippet lang=c : cudaHostRegisterReadOnly = 8}
     */
    public static int cudaHostRegisterReadOnly() {
        return cudaHostRegisterReadOnly;
    }

    private static final int cudaStreamDefault = (int)0L;

    /**
     * {@snippet lang=c : cudaStreamDefault = 0}
     */
    public static int cudaStreamDefault() {
        return cudaStreamDefault;
    }

    private static final int cudaStreamNonBlocking = (int)1L;

    /**
     * {@snippet lang=c : cudaStreamNonBlocking = 1}
     */
    public static int cudaStreamNonBlocking() {
        return cudaStreamNonBlocking;
    }

    private static final int cudaEventDefault = (int)0L;

    /**
     * {@snippet lang=c : cudaEventDefault = 0}
     */
    public static int cudaEventDefault() {
        return cudaEventDefault;
    }

    private static final int cudaEventBlockingSync = (int)1L;

    /**
     * {@snippet lang=c : cudaEventBlockingSync = 1}
     */
    public static int cudaEventBlockingSync() {
        return cudaEventBlockingSync;
    }

    private static final int cudaEventDisableTiming = (int)2L;

    /**
     * {@snippet lang=c : cudaEventDisableTiming = 2}
     */
    public static int cudaEventDisableTiming() {
        return cudaEventDisableTiming;
    }

    private static final int cudaEventInterprocess = (int)4L;

    /**
     * {@snippet lang=c : cudaEventInterprocess = 4}
     */
    public static int cudaEventInterprocess() {
        return cudaEventInterprocess;
    }

    private static final int cudaIpcMemLazyEnablePeerAccess = (int)1L;

    /**
     * {@snippet lang=c : cudaIpcMemLazyEnablePeerAccess = 1}
     */
    public static int cudaIpcMemLazyEnablePeerAccess() {
        return cudaIpcMemLazyEnablePeerAccess;
    }

    private static final int CUDA_IPC_HANDLE_SIZE = (int)64L;

    /**
     * {@snippet lang=c : CUDA_IPC_HANDLE_SIZE = 64}
     */
    public static int CUDA_IPC_HANDLE_SIZE() {
        return CUDA_IPC_HANDLE_SIZE;
    }

    private static final int cudaMemLocationTypeInvalid = (int)0L;

    /**
     * {@snippet lang=c : cudaMemLocationTypeInvalid = 0}
     */
    public static int cudaMemLocationTypeInvalid() {
        return cudaMemLocationTypeInvalid;
    }

    private static final int cudaMemLocationTypeDevice = (int)1L;

    /**
     * {@snippet lang=c : cudaMemLocationTypeDevice = 1}
     */
    public static int cudaMemLocationTypeDevice() {
        return cudaMemLocationTypeDevice;
    }

    private static final int cudaMemLocationTypeHost = (int)2L;

    /**
     * {@snippet lang=c : cudaMemLocationTypeHost = 2}
     */
    public static int cudaMemLocationTypeHost() {
        return cudaMemLocationTypeHost;
    }

    private static final int cudaMemcpySrcAccessOrderInvalid = (int)0L;

    /**
     * {@snippet lang=c : cudaMemcpySrcAccessOrderInvalid = 0}
     */
    public static int cudaMemcpySrcAccessOrderInvalid() {
        return cudaMemcpySrcAccessOrderInvalid;
    }

    private static final int cudaMemcpySrcAccessOrderStream = (int)1L;

    /**
     * {@snippet lang=c : cudaMemcpySrcAccessOrderStream = 1}
     */
    public static int cudaMemcpySrcAccessOrderStream() {
        return cudaMemcpySrcAccessOrderStream;
    }

    private static final int cudaMemcpySrcAccessOrderDuringApiCall = (int)2L;

    /**
     * {@snippet lang=c : cudaMemcpySrcAccessOrderDuringApiCall = 2}
     */
    public static int cudaMemcpySrcAccessOrderDuringApiCall() {
        return cudaMemcpySrcAccessOrderDuringApiCall;
    }

    private static final int cudaMemcpySrcAccessOrderAny = (int)3L;

    /**
     * {@snippet lang=c : cudaMemcpySrcAccessOrderAny = 3}
     */
    public static int cudaMemcpySrcAccessOrderAny() {
        return cudaMemcpySrcAccessOrderAny;
    }

    private static final int cudaMemcpyFlagDefault = (int)0L;

    /**
     * {@snippet lang=c : cudaMemcpyFlagDefault = 0}
     */
    public static int cudaMemcpyFlagDefault() {
        return cudaMemcpyFlagDefault;
    }

    private static final int cudaMemcpyFlagPreferOverlapWithCompute = (int)1L;

    /**
     * {@snippet lang=c : cudaMemcpyFlagPreferOverlapWithCompute = 1}
     */
    public static int cudaMemcpyFlagPreferOverlapWithCompute() {
        return cudaMemcpyFlagPreferOverlapWithCompute;
    }
}

package io.kvtier.nativeaccess.cuda;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.nativeaccess.cuda.bindings.cudaIpcMemHandle_t;
import io.kvtier.nativeaccess.cuda.bindings.cudaMemcpyAttributes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.*;

/**
 * The CUDA runtime front: finds libcudart ({@link CudartLibrary}), reports honestly whether there is a
 * device to use ({@link #discovery()}), and wraps the calls the device tier makes, turning their error
 * codes into {@link CudaException}s.
 *
 * <p>{@link #instance()} is present only when at least one device answers. Otherwise the discovery
 * says which of these it is, with the reason logged once and what would enable it:
 * <ul>
 *   <li>{@link Availability#NATIVE_ACCESS_DENIED}: the JVM was started without native access;</li>
 *   <li>{@link Availability#LIBRARY_MISSING}: no libcudart was found or it could not be loaded;</li>
 *   <li>{@link Availability#INSUFFICIENT_DRIVER}: the runtime is there but the NVIDIA driver is missing
 *       or older than the runtime ({@code cudaErrorInsufficientDriver}, 35: a machine with the toolkit
 *       and no GPU driver);</li>
 *   <li>{@link Availability#STUB_LIBRARY}: the libcuda found is the toolkit's link stub (34);</li>
 *   <li>{@link Availability#NO_DEVICE}: the driver is there and sees no device (100, or a count of 0);</li>
 *   <li>{@link Availability#ERROR}: anything else, with the runtime's error text.</li>
 * </ul>
 */
public final class Cuda
{
    /** The runtime version from which {@code cudaMemcpyBatchAsync} has no {@code failIdx} argument. */
    public static final int BATCH_WITHOUT_FAIL_INDEX_VERSION = 13000;
    /** The first runtime version with {@code cudaMemcpyBatchAsync}. */
    public static final int BATCH_FIRST_VERSION = 12080;

    private static final long BATCH_ATTRS_IDX_OFFSET = 32;
    private static final long BATCH_FAIL_IDX_OFFSET = 40;
    private static final long BATCH_ARGS_LENGTH = 48;

    /** The functions the front needs before it reports a device; the batch copy is optional. */
    static final List<String> REQUIRED_SYMBOLS = List.of("cudaGetDeviceCount", "cudaGetErrorString", "cudaRuntimeGetVersion",
        "cudaDriverGetVersion", "cudaSetDevice", "cudaMalloc", "cudaFree", "cudaHostRegister", "cudaHostUnregister", "cudaStreamCreateWithFlags",
        "cudaStreamDestroy", "cudaStreamSynchronize", "cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaEventCreateWithFlags",
        "cudaEventRecord", "cudaEventQuery", "cudaEventSynchronize", "cudaEventDestroy", "cudaIpcGetMemHandle",
        "cudaIpcOpenMemHandle", "cudaIpcCloseMemHandle");

    /** Which {@code cudaMemcpyBatchAsync} a runtime version has. */
    public enum BatchCopy
    {
        /** None: before CUDA 12.8. */
        NONE,
        /** CUDA 12.8 and 12.9: nine arguments, a {@code size_t *failIdx} before the stream. */
        WITH_FAIL_INDEX,
        /** CUDA 13.0 and later: eight arguments. */
        WITHOUT_FAIL_INDEX;

        /**
         * @param runtimeVersion {@code cudaRuntimeGetVersion}, e.g. 12080
         * @return the signature that version exports
         */
        public static BatchCopy forRuntime(final int runtimeVersion)
        {
            if (runtimeVersion >= BATCH_WITHOUT_FAIL_INDEX_VERSION)
            {
                return WITHOUT_FAIL_INDEX;
            }
            return runtimeVersion >= BATCH_FIRST_VERSION ? WITH_FAIL_INDEX : NONE;
        }
    }

    /** Whether devices are usable, and if not, why. */
    public enum Availability
    {
        /** The JVM has no native access. */
        NATIVE_ACCESS_DENIED,
        /** No libcudart. */
        LIBRARY_MISSING,
        /** The runtime is there, the driver is not (or is too old). */
        INSUFFICIENT_DRIVER,
        /** The driver library is the toolkit's stub. */
        STUB_LIBRARY,
        /** The driver sees no device. */
        NO_DEVICE,
        /** Another error. */
        ERROR,
        /** At least one device. */
        DEVICES
    }

    /**
     * The result of device discovery.
     *
     * @param availability   the outcome
     * @param deviceCount    devices found (0 unless {@link Availability#DEVICES})
     * @param error          the {@code cudaGetDeviceCount} error, 0 when it succeeded or was not called
     * @param runtimeVersion {@code cudaRuntimeGetVersion}, e.g. 13000; 0 when unknown
     * @param driverVersion  {@code cudaDriverGetVersion}; 0 when no driver is installed
     * @param library        the libcudart used, or why there is none
     * @param reason         one sentence: what was found and, when no device is usable, how to get one
     */
    public record Discovery(Availability availability, int deviceCount, int error, int runtimeVersion, int driverVersion,
                            String library, String reason)
    {
        /** @return whether CUDA copies can run here */
        public boolean hasDevices()
        {
            return availability == Availability.DEVICES;
        }

        /** @return which {@code cudaMemcpyBatchAsync} the runtime has */
        public BatchCopy batchCopy()
        {
            return BatchCopy.forRuntime(runtimeVersion);
        }
    }

    private static final class Holder
    {
        static final Discovery DISCOVERY = discover(CudartLibrary.loaded());
        static final Optional<Cuda> INSTANCE = DISCOVERY.hasDevices() ? Optional.of(new Cuda(DISCOVERY)) : Optional.empty();

        static
        {
            if (DISCOVERY.hasDevices())
            {
                NativeAccess.logChoice("Cuda", DISCOVERY.reason());
            }
            else
            {
                NativeAccess.logFallback("Cuda", DISCOVERY.reason());
            }
        }
    }

    private final Discovery discovery;
    private final boolean batchPresent;
    /** Out-parameters of one call (a pointer or an int), per thread. */
    private final ThreadLocal<MemorySegment> scratch = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(64, 8));
    /** The batch call's attribute (24 bytes), attribute index and fail index, per thread. */
    private final ThreadLocal<MemorySegment> batchArgs = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(BATCH_ARGS_LENGTH, 8));

    private Cuda(final Discovery discovery)
    {
        this.discovery = discovery;
        this.batchPresent = discovery.batchCopy() != BatchCopy.NONE && CudartLibrary.lookup().find("cudaMemcpyBatchAsync").isPresent();
    }

    /** @return this process's device discovery, run once */
    public static Discovery discovery()
    {
        return Holder.DISCOVERY;
    }

    /** @return the front when a device is usable, else empty (the reason is in {@link #discovery()}) */
    public static Optional<Cuda> instance()
    {
        return Holder.INSTANCE;
    }

    /**
     * Runs discovery. The calls go through the bindings, which use the process's library
     * ({@link CudartLibrary#loaded()}): pass that, or a missing one (as tests do) to see its report.
     */
    static Discovery discover(final CudartLibrary.Loaded loaded)
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            return new Discovery(Availability.NATIVE_ACCESS_DENIED, 0, 0, 0, 0, loaded.description(), "CUDA is unusable: " + denied.get());
        }
        if (loaded.symbols().isEmpty())
        {
            return new Discovery(Availability.LIBRARY_MISSING, 0, 0, 0, 0, loaded.description(), "no CUDA runtime: " + loaded.description());
        }
        final SymbolLookup symbols = loaded.symbols().get();
        for (final String symbol : REQUIRED_SYMBOLS)
        {
            if (symbols.find(symbol).isEmpty())
            {
                return new Discovery(Availability.LIBRARY_MISSING, 0, 0, 0, 0, loaded.description(),
                    "the CUDA runtime " + loaded.description() + " lacks " + symbol + "; install CUDA 12 or newer");
            }
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment out = arena.allocate(ValueLayout.JAVA_INT);
            out.set(ValueLayout.JAVA_INT, 0, 0);
            final int runtime = cudaRuntimeGetVersion(out) == cudaSuccess() ? out.get(ValueLayout.JAVA_INT, 0) : 0;
            out.set(ValueLayout.JAVA_INT, 0, 0);
            final int driver = cudaDriverGetVersion(out) == cudaSuccess() ? out.get(ValueLayout.JAVA_INT, 0) : 0;
            // On error cudaGetDeviceCount leaves the count untouched, so it starts at 0.
            out.set(ValueLayout.JAVA_INT, 0, 0);
            final int rc = cudaGetDeviceCount(out);
            final int count = out.get(ValueLayout.JAVA_INT, 0);
            final String runtimeText = "CUDA runtime " + version(runtime) + " at " + loaded.description();
            if (rc == cudaSuccess() && count > 0)
            {
                return new Discovery(Availability.DEVICES, count, 0, runtime, driver, loaded.description(),
                    runtimeText + ", driver " + version(driver) + ": " + count + (count == 1 ? " device" : " devices"));
            }
            if (rc == cudaSuccess() || rc == cudaErrorNoDevice())
            {
                return new Discovery(Availability.NO_DEVICE, 0, rc, runtime, driver, loaded.description(),
                    runtimeText + ", driver " + version(driver) + ", sees no CUDA device; check nvidia-smi, CUDA_VISIBLE_DEVICES "
                        + "and the container's GPU access (--gpus)");
            }
            final String text = errorString(rc);
            if (rc == cudaErrorInsufficientDriver())
            {
                return new Discovery(Availability.INSUFFICIENT_DRIVER, 0, rc, runtime, driver, loaded.description(),
                    runtimeText + " answers cudaErrorInsufficientDriver (35, \"" + text + "\"): "
                        + (driver == 0 ? "no NVIDIA driver is installed" : "the driver supports only CUDA " + version(driver))
                        + ", so there is no device; install an NVIDIA driver that supports CUDA " + version(runtime)
                        + " on a machine with a GPU");
            }
            if (rc == cudaErrorStubLibrary())
            {
                return new Discovery(Availability.STUB_LIBRARY, 0, rc, runtime, driver, loaded.description(),
                    runtimeText + " loaded the toolkit's stub libcuda (34, \"" + text + "\"); remove lib64/stubs from the "
                        + "library path so the driver's libcuda.so.1 is used");
            }
            return new Discovery(Availability.ERROR, 0, rc, runtime, driver, loaded.description(),
                runtimeText + ": cudaGetDeviceCount failed with " + rc + " (\"" + text + "\")");
        }
    }

    /**
     * @param version a CUDA version number, e.g. 12080
     * @return "12.8", or "none" for 0
     */
    public static String version(final int version)
    {
        return version == 0 ? "none" : (version / 1000) + "." + (version % 1000) / 10;
    }

    /**
     * @param error a {@code cudaError_t}
     * @return the runtime's description of it
     */
    @SuppressWarnings("restricted")
    public static String errorString(final int error)
    {
        final MemorySegment text = cudaGetErrorString(error);
        return text.equals(MemorySegment.NULL) ? "unknown error " + error : text.reinterpret(1024).getString(0, StandardCharsets.UTF_8);
    }

    void check(final String call, final int rc)
    {
        if (rc != cudaSuccess())
        {
            throw new CudaException(call, rc, errorString(rc));
        }
    }

    /** @return the discovery this front was made from */
    public Discovery info()
    {
        return discovery;
    }

    /** @return whether {@link #memcpyBatchAsync} can be called */
    public boolean hasBatchCopy()
    {
        return batchPresent;
    }

    /** @param device the device the calling thread uses from now on */
    public void setDevice(final int device)
    {
        check("cudaSetDevice", cudaSetDevice(device));
    }

    /**
     * Allocates device memory on the calling thread's device. The engine itself copies into
     * allocations its clients export ({@link #ipcOpenMemHandle}); this is for tests and tools.
     *
     * @param bytes size
     * @return the device pointer
     */
    public long malloc(final long bytes)
    {
        final MemorySegment out = scratch.get();
        check("cudaMalloc", cudaMalloc(out, bytes));
        return out.get(ValueLayout.ADDRESS, 0).address();
    }

    /** @param devicePointer a pointer from {@link #malloc} */
    public void free(final long devicePointer)
    {
        check("cudaFree", cudaFree(MemorySegment.ofAddress(devicePointer)));
    }

    /**
     * Page-locks host memory that was not allocated by CUDA (the pool's shared mapping), so that
     * asynchronous copies to and from it run as DMA without a staging buffer.
     *
     * @param host  the memory, page-aligned for best results
     * @param flags {@code cudaHostRegister*} flags
     * @return true when registered now, false when it already was (712)
     */
    public boolean hostRegister(final MemorySegment host, final int flags)
    {
        final int rc = cudaHostRegister(host, host.byteSize(), flags);
        if (rc == cudaErrorHostMemoryAlreadyRegistered())
        {
            return false;
        }
        check("cudaHostRegister", rc);
        return true;
    }

    /** @param host memory passed to {@link #hostRegister} */
    public void hostUnregister(final MemorySegment host)
    {
        final int rc = cudaHostUnregister(host);
        if (rc != cudaErrorHostMemoryNotRegistered())
        {
            check("cudaHostUnregister", rc);
        }
    }

    /**
     * @param flags {@code cudaStreamNonBlocking} for a stream that does not wait for the legacy default
     *              stream (and is accepted by the batch copy)
     * @return a new stream
     */
    public CudaStream createStream(final int flags)
    {
        final MemorySegment out = scratch.get();
        check("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(out, flags));
        return new CudaStream(this, out.get(ValueLayout.ADDRESS, 0));
    }

    /**
     * @param flags {@code cudaEventDisableTiming} for a completion-only event
     * @return a new event
     */
    public CudaEvent createEvent(final int flags)
    {
        final MemorySegment out = scratch.get();
        check("cudaEventCreateWithFlags", cudaEventCreateWithFlags(out, flags));
        return new CudaEvent(this, out.get(ValueLayout.ADDRESS, 0));
    }

    /**
     * Queues one contiguous copy.
     *
     * @param dst    destination address (device pointer or registered host memory)
     * @param src    source address
     * @param bytes  length
     * @param kind   {@code cudaMemcpyKind}
     * @param stream the stream
     */
    public void memcpyAsync(final long dst, final long src, final long bytes, final int kind, final CudaStream stream)
    {
        check("cudaMemcpyAsync", cudaMemcpyAsync(MemorySegment.ofAddress(dst), MemorySegment.ofAddress(src), bytes, kind, stream.handle()));
    }

    /**
     * Queues {@code height} copies of {@code width} bytes, the i-th from {@code src + i * srcPitch} to
     * {@code dst + i * dstPitch}: one call for a strided set that would otherwise be {@code height} calls.
     *
     * @param dst      destination address
     * @param dstPitch bytes between destination rows
     * @param src      source address
     * @param srcPitch bytes between source rows
     * @param width    bytes per row
     * @param height   rows
     * @param kind     {@code cudaMemcpyKind}
     * @param stream   the stream
     */
    public void memcpy2DAsync(final long dst, final long dstPitch, final long src, final long srcPitch, final long width,
                              final long height, final int kind, final CudaStream stream)
    {
        check("cudaMemcpy2DAsync", cudaMemcpy2DAsync(MemorySegment.ofAddress(dst), dstPitch, MemorySegment.ofAddress(src), srcPitch,
            width, height, kind, stream.handle()));
    }

    /**
     * Queues {@code count} independent copies in one call (CUDA 12.8 and later), all with one attribute:
     * sources are read in stream order. Uses the 13.0 signature, or the 12.8/12.9 one with its
     * {@code failIdx}, by the runtime version ({@link BatchCopy}).
     *
     * @param dsts   {@code count} destination addresses
     * @param srcs   {@code count} source addresses
     * @param sizes  {@code count} lengths
     * @param count  copies
     * @param stream a non-blocking stream (the batch call rejects the legacy default stream)
     */
    public void memcpyBatchAsync(final MemorySegment dsts, final MemorySegment srcs, final MemorySegment sizes, final long count,
                                 final CudaStream stream)
    {
        if (!batchPresent)
        {
            throw new UnsupportedOperationException("cudaMemcpyBatchAsync needs CUDA 12.8 or newer; this runtime is "
                + version(discovery.runtimeVersion()));
        }
        // The runtime reads the attribute and index arrays during the call only, so one per thread serves.
        final MemorySegment args = batchArgs.get();
        final MemorySegment attrs = args.asSlice(0, cudaMemcpyAttributes.sizeof());
        cudaMemcpyAttributes.srcAccessOrder(attrs, cudaMemcpySrcAccessOrderStream());
        final MemorySegment attrsIdxs = args.asSlice(BATCH_ATTRS_IDX_OFFSET, Long.BYTES);
        attrsIdxs.set(ValueLayout.JAVA_LONG, 0, 0L);
        final int rc;
        if (discovery.batchCopy() == BatchCopy.WITHOUT_FAIL_INDEX)
        {
            rc = cudaMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, 1L, stream.handle());
        }
        else
        {
            final MemorySegment failIdx = args.asSlice(BATCH_FAIL_IDX_OFFSET, Long.BYTES);
            rc = cudaMemcpyBatchAsync_v12080(dsts, srcs, sizes, count, attrs, attrsIdxs, 1L, failIdx, stream.handle());
        }
        check("cudaMemcpyBatchAsync", rc);
    }

    /**
     * Exports a device allocation for another process on this node.
     *
     * @param devicePointer the start of a {@code cudaMalloc} allocation
     * @param handle        a {@link cudaIpcMemHandle_t} to fill
     */
    public void ipcGetMemHandle(final long devicePointer, final MemorySegment handle)
    {
        check("cudaIpcGetMemHandle", cudaIpcGetMemHandle(handle, MemorySegment.ofAddress(devicePointer)));
    }

    /**
     * Maps another process's device allocation into this one: how the engine reaches a client's KV
     * buffers to copy into them.
     *
     * @param handle a {@link cudaIpcMemHandle_t} received from the exporter
     * @return the device pointer of the mapping in this process
     */
    public long ipcOpenMemHandle(final MemorySegment handle)
    {
        final MemorySegment out = scratch.get();
        check("cudaIpcOpenMemHandle", cudaIpcOpenMemHandle(out, handle.asSlice(0, cudaIpcMemHandle_t.sizeof()),
            cudaIpcMemLazyEnablePeerAccess()));
        return out.get(ValueLayout.ADDRESS, 0).address();
    }

    /** @param devicePointer a pointer from {@link #ipcOpenMemHandle} */
    public void ipcCloseMemHandle(final long devicePointer)
    {
        check("cudaIpcCloseMemHandle", cudaIpcCloseMemHandle(MemorySegment.ofAddress(devicePointer)));
    }
}

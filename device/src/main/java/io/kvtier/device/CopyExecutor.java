package io.kvtier.device;

import io.kvtier.nativeaccess.cuda.Cuda;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * Runs copy plans between device memory and host memory (the pool mapping).
 *
 * <p>Two implementations: {@link CudaCopyExecutor} queues the copies on a CUDA stream, and
 * {@link EmulatedCopyExecutor} runs the same plans with {@link MemorySegment} copies where there is
 * no device, against a host segment standing in for device memory. {@link #open} picks one and says
 * which and why.
 */
public interface CopyExecutor extends AutoCloseable
{
    /** @return what runs the copies, and for the emulation why there is no device */
    String description();

    /** @return whether copies reach a real device */
    boolean isDevice();

    /**
     * Prepares host memory for copies: for CUDA, page-locks it ({@code cudaHostRegister}) so copies
     * are asynchronous DMA; the pool registers its mapping once at start (CUDA: in chunks, in the
     * background, copies from a part not locked yet being staged by the runtime).
     *
     * @param host the host memory
     */
    void registerHost(MemorySegment host);

    /**
     * Starts a plan.
     *
     * @param plan       the copies
     * @param deviceBase the address the plan's device addresses are relative to (0 for raw pointers)
     * @param host       the host segment the plan's host offsets are relative to, registered
     * @return its completion
     */
    default CopyCompletion submit(final CopyPlan plan, final long deviceBase, final MemorySegment host)
    {
        return submit(CopyOps.of(plan), deviceBase, host);
    }

    /**
     * Starts copies held in a reusable list: the engine's way, which allocates nothing once warm.
     *
     * @param ops        the copies; the executor is done reading them when this returns
     * @param deviceBase the address the copies' device addresses are relative to (0 for raw pointers)
     * @param host       the host segment their host offsets are relative to, registered
     * @return their completion, to close before submitting more from the same thread
     */
    CopyCompletion submit(CopyOps ops, long deviceBase, MemorySegment host);

    /** Releases the stream and unregisters host memory. */
    @Override
    void close();

    /**
     * Opens the CUDA executor when a device is present, else the emulation over
     * {@code emulatedDeviceMemory}, logging which and why.
     *
     * @param device               the CUDA device to use
     * @param emulatedDeviceMemory host memory that stands in for device memory when there is no device
     * @return the executor
     */
    static CopyExecutor open(final int device, final MemorySegment emulatedDeviceMemory)
    {
        final Optional<Cuda> cuda = Cuda.instance();
        if (cuda.isPresent())
        {
            return new CudaCopyExecutor(cuda.get(), device);
        }
        return new EmulatedCopyExecutor(emulatedDeviceMemory, Cuda.discovery().reason());
    }
}

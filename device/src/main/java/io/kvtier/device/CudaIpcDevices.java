package io.kvtier.device;

import io.kvtier.nativeaccess.cuda.Cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * This process's CUDA devices as another process's KV buffers reach them: opens the CUDA IPC handles
 * a client registers ({@code cudaIpcOpenMemHandle}), each distinct handle once, and keeps one
 * {@link CudaCopyExecutor} per device for the copies between those buffers and host memory. The engine
 * reaches CUDA only through this module. Used by one thread at a time.
 */
public final class CudaIpcDevices implements AutoCloseable
{
    /** Bytes of one CUDA IPC memory handle ({@code cudaIpcMemHandle_t}). */
    public static final int HANDLE_LENGTH = 64;

    private final Optional<Cuda> cuda;
    private final String reason;
    private final Map<Integer, CopyExecutor> executors = new HashMap<>();

    private CudaIpcDevices(final Optional<Cuda> cuda, final String reason)
    {
        this.cuda = cuda;
        this.reason = reason;
    }

    /** @return the devices this process has, none when the CUDA runtime or a device is missing */
    public static CudaIpcDevices discover()
    {
        final Optional<Cuda> front = Cuda.instance();
        return new CudaIpcDevices(front, front.map(c -> c.info().reason()).orElseGet(() -> Cuda.discovery().reason()));
    }

    /** @return whether a CUDA device is usable */
    public boolean isPresent()
    {
        return cuda.isPresent();
    }

    /** @return one sentence: what was found, and when no device is usable, why and how to get one */
    public String reason()
    {
        return reason;
    }

    /** @return how many devices there are, 0 without CUDA */
    public int deviceCount()
    {
        return cuda.map(c -> c.info().deviceCount()).orElse(0);
    }

    /**
     * Opens a registration's handles on a device, each distinct handle once: a process may open a handle
     * only once, and tensors carved from one allocation share its mapping. If one fails, those opened
     * are closed again.
     *
     * @param device  the device, below {@link #deviceCount()}
     * @param handles per allocation, its {@link #HANDLE_LENGTH}-byte handle
     * @return the mappings, with each allocation's device address
     * @throws IllegalStateException without a device, or when the runtime refuses a handle (its message says why)
     */
    public CudaIpcMappings open(final int device, final byte[][] handles)
    {
        final Cuda front = cuda.orElseThrow(() -> new IllegalStateException("no CUDA device: " + reason));
        if (device < 0 || device >= front.info().deviceCount())
        {
            throw new IllegalArgumentException("device " + device + " is not one of the " + front.info().deviceCount() + " CUDA devices");
        }
        final List<byte[]> distinct = new ArrayList<>();
        final List<Long> opened = new ArrayList<>();
        final long[] bases = new long[handles.length];
        try (Arena scratch = Arena.ofConfined())
        {
            front.setDevice(device);
            final MemorySegment native64 = scratch.allocate(HANDLE_LENGTH);
            for (int i = 0; i < handles.length; i++)
            {
                int known = -1;
                for (int h = 0; h < distinct.size() && known < 0; h++)
                {
                    known = Arrays.equals(distinct.get(h), handles[i]) ? h : -1;
                }
                if (known < 0)
                {
                    MemorySegment.copy(handles[i], 0, native64, ValueLayout.JAVA_BYTE, 0, HANDLE_LENGTH);
                    opened.add(front.ipcOpenMemHandle(native64));
                    distinct.add(handles[i]);
                    known = distinct.size() - 1;
                }
                bases[i] = opened.get(known);
            }
        }
        catch (final RuntimeException ex)
        {
            for (final long pointer : opened)
            {
                front.ipcCloseMemHandle(pointer);
            }
            throw new IllegalStateException("cudaIpcOpenMemHandle failed: " + ex.getMessage(), ex);
        }
        return new CudaIpcMappings(front, device, opened.stream().mapToLong(Long::longValue).toArray(), bases);
    }

    /**
     * The copier of a device, made on first use with {@code host} registered with it.
     *
     * @param device a device {@link #open} opened handles on
     * @param host   the host memory the copies read and write
     * @return its executor
     */
    public CopyExecutor executor(final int device, final MemorySegment host)
    {
        final Cuda front = cuda.orElseThrow(() -> new IllegalStateException("no CUDA device: " + reason));
        return executors.computeIfAbsent(device, d ->
        {
            final CopyExecutor created = new CudaCopyExecutor(front, d);
            created.registerHost(host);
            return created;
        });
    }

    /** Releases the executors' streams. */
    @Override
    public void close()
    {
        for (final CopyExecutor executor : executors.values())
        {
            executor.close();
        }
        executors.clear();
    }
}

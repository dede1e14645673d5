package io.kvtier.engine.ipc;

import io.kvtier.device.CopyExecutor;
import io.kvtier.device.LayerFirstLayout;
import io.kvtier.device.CudaIpcMappings;

import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;

/**
 * The KV buffers one IPC client registered (REGISTER_KV), each as a layout whose addresses are this
 * process's mappings of the client's memory: CUDA IPC handles opened through the device module ({@code CudaIpcDevices}),
 * or host files mapped. They stay open for the client's session and are closed when it ends, after its
 * last request, so no copy runs against a closed mapping.
 *
 * <p>Used by one thread at a time: the device thread while a device request is in flight, the IPC
 * thread when the client is removed (never while a request is in flight).
 */
final class ClientKvBuffers implements AutoCloseable
{

    /**
     * One registration.
     *
     * @param layout      the blocks, at absolute addresses of this process (device pointers or host mappings)
     * @param executor    what copies for it: the device's CUDA stream, or host copies
     * @param cuda        its CUDA IPC handles, open on their device, or null for host files
     * @param mappings    the arena of its host file mappings, or null
     * @param hostFiles   how many files those mappings are, counted against the engine's limit
     */
    record Registered(LayerFirstLayout layout, CopyExecutor executor, CudaIpcMappings cuda, Arena mappings,
                      int hostFiles)
    {
    }

    /**
     * Host files mapped for all clients together. Every mapping is a kernel map area, and a process has
     * {@code vm.max_map_count} of them (65,530 by default): clients must not be able to use up the ones
     * the engine needs for its own rings and pool.
     */
    static final int MAX_HOST_FILES = 16_384;
    private static final java.util.concurrent.atomic.AtomicInteger HOST_FILES = new java.util.concurrent.atomic.AtomicInteger();

    /**
     * Counts {@code files} more host files against {@link #MAX_HOST_FILES}.
     *
     * @return whether they fit; if not, nothing is counted
     */
    static boolean reserveHostFiles(final int files)
    {
        while (true)
        {
            final int now = HOST_FILES.get();
            if (now + files > MAX_HOST_FILES)
            {
                return false;
            }
            if (HOST_FILES.compareAndSet(now, now + files))
            {
                return true;
            }
        }
    }

    /** @return host files mapped for clients now */
    static int hostFilesMapped()
    {
        return HOST_FILES.get();
    }

    /** @param files host files unmapped */
    static void releaseHostFiles(final int files)
    {
        HOST_FILES.addAndGet(-files);
    }

    private final List<Registered> layouts = new ArrayList<>();

    /** @return how many layouts the client registered */
    int size()
    {
        return layouts.size();
    }

    /**
     * @param registered a new registration
     * @return its Layout Id, 1 for the first
     */
    int add(final Registered registered)
    {
        layouts.add(registered);
        return layouts.size();
    }

    /**
     * @param layoutId a DEVICE_LOAD's or DEVICE_SAVE's Layout Id
     * @return its registration, or null for an id the client was not given
     */
    Registered get(final int layoutId)
    {
        return layoutId >= 1 && layoutId <= layouts.size() ? layouts.get(layoutId - 1) : null;
    }

    /** Closes every mapping: CUDA IPC handles on their device, host file mappings. */
    @Override
    public void close()
    {
        for (final Registered registered : layouts)
        {
            close(registered);
        }
        layouts.clear();
    }

    static void close(final Registered registered)
    {
        if (registered.cuda() != null)
        {
            registered.cuda().close();
        }
        if (registered.mappings() != null)
        {
            registered.mappings().close();
            releaseHostFiles(registered.hostFiles());
        }
    }
}

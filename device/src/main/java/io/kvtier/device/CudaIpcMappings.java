package io.kvtier.device;

import io.kvtier.nativeaccess.cuda.Cuda;

/**
 * The CUDA IPC handles of one registration, opened on one device by {@link CudaIpcDevices#open}: each
 * allocation's device address, and the closing of every handle opened.
 */
public final class CudaIpcMappings implements AutoCloseable
{
    private static final System.Logger LOG = System.getLogger(CudaIpcMappings.class.getName());

    private final Cuda cuda;
    private final int device;
    private final long[] opened;
    private final long[] bases;

    CudaIpcMappings(final Cuda cuda, final int device, final long[] opened, final long[] bases)
    {
        this.cuda = cuda;
        this.device = device;
        this.opened = opened;
        this.bases = bases;
    }

    /** @return the device the handles are open on */
    public int device()
    {
        return device;
    }

    /**
     * @param allocation an allocation's index in the registration
     * @return the device address its handle maps to in this process
     */
    public long base(final int allocation)
    {
        return bases[allocation];
    }

    /** Makes the device current for this thread, before copies that address its memory. */
    public void makeCurrent()
    {
        cuda.setDevice(device);
    }

    /** Closes every handle opened; a failure is logged, not thrown: the registration ends either way. */
    @Override
    public void close()
    {
        try
        {
            cuda.setDevice(device);
            for (final long pointer : opened)
            {
                cuda.ipcCloseMemHandle(pointer);
            }
        }
        catch (final RuntimeException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "closing a client's CUDA IPC mappings failed: " + ex.getMessage());
        }
    }
}

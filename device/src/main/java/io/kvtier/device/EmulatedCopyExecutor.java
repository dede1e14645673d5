package io.kvtier.device;

import io.kvtier.nativeaccess.libc.PageCopy;

import java.lang.foreign.MemorySegment;

/**
 * Runs copy plans in host memory where there is no CUDA device: the "device memory" is a host
 * segment, device addresses are offsets into it, and each row is a {@link MemorySegment#copy}. The
 * plans are the ones the CUDA executor runs, so the layouts and the planner are tested byte for byte
 * on any machine; what it cannot show is DMA, streams or their speed. It says so when it starts.
 */
public final class EmulatedCopyExecutor implements CopyExecutor
{
    private static final System.Logger LOG = System.getLogger(EmulatedCopyExecutor.class.getName());

    private static final CopyCompletion DONE = new CopyCompletion()
    {
        @Override
        public boolean isDone()
        {
            return true;
        }

        @Override
        public void await()
        {
        }

        @Override
        public void close()
        {
        }
    };

    private final MemorySegment deviceMemory;
    private final String description;

    /**
     * @param deviceMemory host memory standing in for device memory
     * @param reason       why there is no device, for the startup message
     */
    public EmulatedCopyExecutor(final MemorySegment deviceMemory, final String reason)
    {
        this.deviceMemory = deviceMemory;
        this.description = "host-memory emulation of device copies (no CUDA device: " + reason + ")";
        LOG.log(System.Logger.Level.INFO, "device tier: copies run as a {0}", description);
    }

    @Override
    public String description()
    {
        return description;
    }

    @Override
    public boolean isDevice()
    {
        return false;
    }

    @Override
    public void registerHost(final MemorySegment host)
    {
        // Host memory needs no pinning when nothing does DMA from it.
    }

    @Override
    public CopyCompletion submit(final CopyPlan plan, final long deviceBase, final MemorySegment host)
    {
        final boolean toHost = plan.direction() == CopyDirection.TO_HOST;
        for (final CopyOp op : plan.ops())
        {
            for (long row = 0; row < op.height(); row++)
            {
                final long device = deviceBase + op.deviceAddress() + row * op.devicePitch();
                final long hostOffset = op.hostOffset() + row * op.hostPitch();
                if (toHost)
                {
                    PageCopy.copy(deviceMemory, device, host, hostOffset, op.width());
                }
                else
                {
                    PageCopy.copy(host, hostOffset, deviceMemory, device, op.width());
                }
            }
        }
        return DONE;
    }

    @Override
    public void close()
    {
    }
}

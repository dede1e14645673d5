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
    private final boolean faultTolerant;

    /**
     * @param deviceMemory host memory standing in for device memory
     * @param reason       why there is no device, for the startup message
     */
    public EmulatedCopyExecutor(final MemorySegment deviceMemory, final String reason)
    {
        this(deviceMemory, "host-memory emulation of device copies (no CUDA device: " + reason + ")", true, false);
    }

    private EmulatedCopyExecutor(final MemorySegment deviceMemory, final String description, final boolean log, final boolean faultTolerant)
    {
        this.deviceMemory = deviceMemory;
        this.description = description;
        this.faultTolerant = faultTolerant;
        if (log)
        {
            LOG.log(System.Logger.Level.INFO, "device tier: copies run as a {0}", description);
        }
    }

    /**
     * Copies for KV buffers that live in host memory (a client's registered shared-memory files): the
     * same plans, with layouts at absolute addresses of this process, so "device memory" is the whole
     * address space and every address a layout names must be one its registration mapped and checked.
     *
     * <p>Those files belong to another process, which may shrink one under the mapping: a copy then
     * touches a page with no file behind it and the kernel raises SIGBUS. Inside the C library's
     * {@code memcpy} that kills the JVM; inside the JDK's own copy HotSpot turns it into an
     * {@link InternalError} for the copying thread. So these copies never go to {@code memcpy}, and
     * the caller catches that error and fails the one request.
     *
     * @return the executor
     */
    public static EmulatedCopyExecutor forHostBuffers()
    {
        return new EmulatedCopyExecutor(MemorySegment.NULL.reinterpret(Long.MAX_VALUE),
            "host memory copies into KV buffers mapped from clients' shared-memory files", false, true);
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
    public CopyCompletion submit(final CopyOps ops, final long deviceBase, final MemorySegment host)
    {
        final boolean toHost = ops.direction() == CopyDirection.TO_HOST;
        for (int i = 0; i < ops.size(); i++)
        {
            final long width = ops.width(i);
            for (long row = 0; row < ops.height(i); row++)
            {
                final long device = deviceBase + ops.deviceAddress(i) + row * ops.devicePitch(i);
                final long hostOffset = ops.hostOffset(i) + row * ops.hostPitch(i);
                if (faultTolerant)
                {
                    // The JDK's copy, whose faults on a shrunk mapping become an InternalError (see forHostBuffers).
                    MemorySegment.copy(toHost ? deviceMemory : host, toHost ? device : hostOffset, toHost ? host : deviceMemory,
                        toHost ? hostOffset : device, width);
                }
                else if (toHost)
                {
                    PageCopy.copy(deviceMemory, device, host, hostOffset, width);
                }
                else
                {
                    PageCopy.copy(host, hostOffset, deviceMemory, device, width);
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

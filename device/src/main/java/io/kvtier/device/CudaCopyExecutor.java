package io.kvtier.device;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.nativeaccess.cuda.Cuda;
import io.kvtier.nativeaccess.cuda.CudaEvent;
import io.kvtier.nativeaccess.cuda.CudaStream;
import io.kvtier.nativeaccess.cuda.gen.cudart_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs copy plans with the CUDA runtime on one non-blocking stream of one device: a strided copy is
 * one {@code cudaMemcpy2DAsync}; the contiguous copies of a plan go in one
 * {@code cudaMemcpyBatchAsync} where the runtime has it (12.8+), else one {@code cudaMemcpyAsync}
 * each. An event recorded after the plan's copies is its completion.
 *
 * <p>Host memory must be registered ({@link #registerHost}) so the copies are DMA from pinned pages
 * and truly asynchronous; an unregistered pageable source would make the runtime stage it
 * synchronously. Used by one thread at a time, like the stream it owns.
 */
public final class CudaCopyExecutor implements CopyExecutor
{
    private final Cuda cuda;
    private final CudaStream stream;
    private final String description;
    private final List<MemorySegment> registered = new ArrayList<>();

    /**
     * @param cuda   the front
     * @param device the device whose memory the plans address
     */
    public CudaCopyExecutor(final Cuda cuda, final int device)
    {
        this.cuda = cuda;
        cuda.setDevice(device);
        this.stream = cuda.createStream(cudart_h.cudaStreamNonBlocking());
        this.description = "CUDA device " + device + " (" + cuda.info().reason() + "), "
            + (cuda.hasBatchCopy() ? "contiguous copies batched with cudaMemcpyBatchAsync" : "one cudaMemcpyAsync per contiguous copy");
        NativeAccess.logChoice("device tier", description);
    }

    @Override
    public String description()
    {
        return description;
    }

    @Override
    public boolean isDevice()
    {
        return true;
    }

    @Override
    public void registerHost(final MemorySegment host)
    {
        if (cuda.hostRegister(host, cudart_h.cudaHostRegisterPortable()))
        {
            registered.add(host);
        }
    }

    @Override
    public CopyCompletion submit(final CopyPlan plan, final long deviceBase, final MemorySegment host)
    {
        final boolean toHost = plan.direction() == CopyDirection.TO_HOST;
        final int kind = toHost ? cudart_h.cudaMemcpyDeviceToHost() : cudart_h.cudaMemcpyHostToDevice();
        final List<CopyOp> contiguous = new ArrayList<>();
        for (final CopyOp op : plan.ops())
        {
            // The runtime gets raw addresses: check the host side against the segment here, as a
            // MemorySegment copy would.
            final long hostEnd = op.hostOffset() + (op.height() - 1) * op.hostPitch() + op.width();
            if (op.hostOffset() < 0 || hostEnd > host.byteSize())
            {
                throw new IndexOutOfBoundsException("copy " + op + " reaches past the host segment of " + host.byteSize() + " bytes");
            }
            if (op.isContiguous())
            {
                contiguous.add(op);
                continue;
            }
            final long device = deviceBase + op.deviceAddress();
            final long hostAddress = host.address() + op.hostOffset();
            if (toHost)
            {
                cuda.memcpy2DAsync(hostAddress, op.hostPitch(), device, op.devicePitch(), op.width(), op.height(), kind, stream);
            }
            else
            {
                cuda.memcpy2DAsync(device, op.devicePitch(), hostAddress, op.hostPitch(), op.width(), op.height(), kind, stream);
            }
        }
        if (contiguous.size() > 1 && cuda.hasBatchCopy())
        {
            batch(contiguous, toHost, deviceBase, host);
        }
        else
        {
            for (final CopyOp op : contiguous)
            {
                final long device = deviceBase + op.deviceAddress();
                final long hostAddress = host.address() + op.hostOffset();
                cuda.memcpyAsync(toHost ? hostAddress : device, toHost ? device : hostAddress, op.width(), kind, stream);
            }
        }
        final CudaEvent event = cuda.createEvent(cudart_h.cudaEventDisableTiming());
        event.record(stream);
        return new EventCompletion(event);
    }

    private void batch(final List<CopyOp> ops, final boolean toHost, final long deviceBase, final MemorySegment host)
    {
        // The runtime reads the arrays during the call, so they live only as long as it.
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment dsts = arena.allocate(ValueLayout.ADDRESS, ops.size());
            final MemorySegment srcs = arena.allocate(ValueLayout.ADDRESS, ops.size());
            final MemorySegment sizes = arena.allocate(ValueLayout.JAVA_LONG, ops.size());
            for (int i = 0; i < ops.size(); i++)
            {
                final CopyOp op = ops.get(i);
                final MemorySegment device = MemorySegment.ofAddress(deviceBase + op.deviceAddress());
                final MemorySegment hostAddress = MemorySegment.ofAddress(host.address() + op.hostOffset());
                dsts.setAtIndex(ValueLayout.ADDRESS, i, toHost ? hostAddress : device);
                srcs.setAtIndex(ValueLayout.ADDRESS, i, toHost ? device : hostAddress);
                sizes.setAtIndex(ValueLayout.JAVA_LONG, i, op.width());
            }
            cuda.memcpyBatchAsync(dsts, srcs, sizes, ops.size(), stream, arena);
        }
    }

    @Override
    public void close()
    {
        try
        {
            stream.synchronize();
            stream.close();
        }
        finally
        {
            for (final MemorySegment host : registered)
            {
                cuda.hostUnregister(host);
            }
            registered.clear();
        }
    }

    private static final class EventCompletion implements CopyCompletion
    {
        private final CudaEvent event;
        private boolean done;

        EventCompletion(final CudaEvent event)
        {
            this.event = event;
        }

        @Override
        public boolean isDone()
        {
            if (!done)
            {
                done = event.isComplete();
            }
            return done;
        }

        @Override
        public void await()
        {
            if (!done)
            {
                event.synchronize();
                done = true;
            }
        }

        @Override
        public void close()
        {
            await();
            event.close();
        }
    }
}

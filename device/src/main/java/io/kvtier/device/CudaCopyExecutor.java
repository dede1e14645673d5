package io.kvtier.device;

import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.nativeaccess.cuda.Cuda;
import io.kvtier.nativeaccess.cuda.CudaEvent;
import io.kvtier.nativeaccess.cuda.CudaStream;
import io.kvtier.nativeaccess.cuda.bindings.cudart_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
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
 * synchronously. Registration runs in chunks in the background ({@link ChunkedHostRegistration}), so
 * copies from a part not locked yet are staged, right but slower. Used by one thread at a time, like the stream it owns; the batch arrays and the
 * events of closed completions are reused, so a steady stream of plans allocates only the
 * completion objects.
 */
public final class CudaCopyExecutor implements CopyExecutor
{
    private final Cuda cuda;
    private final int device;
    private final CudaStream stream;
    private final String description;
    private final List<ChunkedHostRegistration> registered = new ArrayList<>();
    /** Events whose completion was closed, recorded again by later plans instead of created anew. */
    private final ArrayDeque<CudaEvent> idleEvents = new ArrayDeque<>();
    private final ArrayDeque<EventCompletion> idleCompletions = new ArrayDeque<>();
    private MemorySegment batchDsts = MemorySegment.NULL;
    private MemorySegment batchSrcs = MemorySegment.NULL;
    private MemorySegment batchSizes = MemorySegment.NULL;

    /**
     * @param cuda   the front
     * @param device the device whose memory the plans address
     */
    public CudaCopyExecutor(final Cuda cuda, final int device)
    {
        this.cuda = cuda;
        this.device = device;
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

    /** Page-locks the host memory in chunks on a thread of its own: copies are staged by the runtime until a chunk is locked. */
    @Override
    public void registerHost(final MemorySegment host)
    {
        final ChunkedHostRegistration.Registrar registrar = new ChunkedHostRegistration.Registrar()
        {
            @Override
            public boolean register(final MemorySegment chunk)
            {
                // The runtime registers on the calling thread's current device.
                cuda.setDevice(device);
                return cuda.hostRegister(chunk, cudart_h.cudaHostRegisterPortable());
            }

            @Override
            public void unregister(final MemorySegment chunk)
            {
                cuda.hostUnregister(chunk);
            }
        };
        registered.add(new ChunkedHostRegistration(host, ChunkedHostRegistration.DEFAULT_CHUNK_BYTES, registrar, "kvtier-cuda-register-" + device)
            .start());
    }

    @Override
    public CopyCompletion submit(final CopyOps ops, final long deviceBase, final MemorySegment host)
    {
        final boolean toHost = ops.direction() == CopyDirection.TO_HOST;
        final int kind = toHost ? cudart_h.cudaMemcpyDeviceToHost() : cudart_h.cudaMemcpyHostToDevice();
        int contiguous = 0;
        for (int i = 0; i < ops.size(); i++)
        {
            // The runtime gets raw addresses: check the host side against the segment here, as a
            // MemorySegment copy would.
            final long hostEnd = ops.hostOffset(i) + (ops.height(i) - 1) * ops.hostPitch(i) + ops.width(i);
            if (ops.hostOffset(i) < 0 || hostEnd > host.byteSize())
            {
                throw new IndexOutOfBoundsException("copy " + i + " (host offset " + ops.hostOffset(i) + ", " + ops.height(i) + " rows of "
                    + ops.width(i) + " bytes, pitch " + ops.hostPitch(i) + ") reaches past the host segment of " + host.byteSize() + " bytes");
            }
            contiguous += ops.height(i) == 1 ? 1 : 0;
        }
        final boolean batched = contiguous > 1 && cuda.hasBatchCopy();
        if (batched)
        {
            ensureBatchCapacity(contiguous);
        }
        int n = 0;
        for (int i = 0; i < ops.size(); i++)
        {
            final long device = deviceBase + ops.deviceAddress(i);
            final long hostAddress = host.address() + ops.hostOffset(i);
            final long dst = toHost ? hostAddress : device;
            final long src = toHost ? device : hostAddress;
            if (ops.height(i) > 1)
            {
                final long dstPitch = toHost ? ops.hostPitch(i) : ops.devicePitch(i);
                final long srcPitch = toHost ? ops.devicePitch(i) : ops.hostPitch(i);
                cuda.memcpy2DAsync(dst, dstPitch, src, srcPitch, ops.width(i), ops.height(i), kind, stream);
            }
            else if (batched)
            {
                batchDsts.setAtIndex(ValueLayout.JAVA_LONG, n, dst);
                batchSrcs.setAtIndex(ValueLayout.JAVA_LONG, n, src);
                batchSizes.setAtIndex(ValueLayout.JAVA_LONG, n, ops.width(i));
                n++;
            }
            else
            {
                cuda.memcpyAsync(dst, src, ops.width(i), kind, stream);
            }
        }
        if (batched)
        {
            cuda.memcpyBatchAsync(batchDsts, batchSrcs, batchSizes, n, stream);
        }
        final CudaEvent event = idleEvents.isEmpty() ? cuda.createEvent(cudart_h.cudaEventDisableTiming()) : idleEvents.pop();
        event.record(stream);
        final EventCompletion completion = idleCompletions.isEmpty() ? new EventCompletion(idleEvents, idleCompletions) : idleCompletions.pop();
        return completion.start(event);
    }

    /** Grows the batch call's address and size arrays, which are reused from one plan to the next. */
    private void ensureBatchCapacity(final int copies)
    {
        if (batchDsts.byteSize() < copies * (long)Long.BYTES)
        {
            final long capacity = Math.max(copies, 2 * batchDsts.byteSize() / Long.BYTES);
            final Arena arena = Arena.ofAuto();
            // Pointers are 8 bytes on every platform this runs on (x86_64, aarch64), like size_t.
            batchDsts = arena.allocate(ValueLayout.JAVA_LONG, capacity);
            batchSrcs = arena.allocate(ValueLayout.JAVA_LONG, capacity);
            batchSizes = arena.allocate(ValueLayout.JAVA_LONG, capacity);
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
            for (final ChunkedHostRegistration registration : registered)
            {
                registration.close();
            }
            registered.clear();
            while (!idleEvents.isEmpty())
            {
                idleEvents.pop().close();
            }
        }
    }

    /** A plan's completion; closed, it goes back to the executor with its event, to be reused. */
    private static final class EventCompletion implements CopyCompletion
    {
        private final ArrayDeque<CudaEvent> idleEvents;
        private final ArrayDeque<EventCompletion> idleCompletions;
        private CudaEvent event;
        private boolean done;
        private boolean closed;

        EventCompletion(final ArrayDeque<CudaEvent> idleEvents, final ArrayDeque<EventCompletion> idleCompletions)
        {
            this.idleEvents = idleEvents;
            this.idleCompletions = idleCompletions;
        }

        EventCompletion start(final CudaEvent recorded)
        {
            this.event = recorded;
            this.done = false;
            this.closed = false;
            return this;
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
            if (!closed)
            {
                await();
                closed = true;
                idleEvents.push(event);
                event = null;
                idleCompletions.push(this);
            }
        }
    }
}

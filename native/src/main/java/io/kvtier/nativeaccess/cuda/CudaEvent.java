package io.kvtier.nativeaccess.cuda;

import java.lang.foreign.MemorySegment;

import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.cudaErrorNotReady;
import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.cudaEventDestroy;
import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.cudaEventQuery;
import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.cudaEventRecord;
import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.cudaEventSynchronize;

/**
 * A CUDA event, destroyed on close: recorded after a batch of copies on a stream, it tells when
 * they are done without blocking ({@link #isComplete()}) or by waiting ({@link #synchronize()}).
 */
public final class CudaEvent implements AutoCloseable
{
    private final Cuda cuda;
    private final MemorySegment handle;
    private boolean closed;

    CudaEvent(final Cuda cuda, final MemorySegment handle)
    {
        this.cuda = cuda;
        this.handle = handle;
    }

    /** @return the {@code cudaEvent_t} */
    public MemorySegment handle()
    {
        return handle;
    }

    /**
     * Captures the stream's work queued so far: the event completes when that work has.
     *
     * @param stream the stream
     */
    public void record(final CudaStream stream)
    {
        cuda.check("cudaEventRecord", cudaEventRecord(handle, stream.handle()));
    }

    /** @return whether the recorded work has finished ({@code cudaEventQuery} answers 0, not 600) */
    public boolean isComplete()
    {
        final int rc = cudaEventQuery(handle);
        if (rc == cudaErrorNotReady())
        {
            return false;
        }
        cuda.check("cudaEventQuery", rc);
        return true;
    }

    /** Waits for the recorded work. */
    public void synchronize()
    {
        cuda.check("cudaEventSynchronize", cudaEventSynchronize(handle));
    }

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            cuda.check("cudaEventDestroy", cudaEventDestroy(handle));
        }
    }
}

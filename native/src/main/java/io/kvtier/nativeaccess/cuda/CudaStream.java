package io.kvtier.nativeaccess.cuda;

import java.lang.foreign.MemorySegment;

import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.cudaStreamDestroy;
import static io.kvtier.nativeaccess.cuda.bindings.cudart_h.cudaStreamSynchronize;

/**
 * A CUDA stream, destroyed on close. Copies queued on one stream run in order; different streams
 * may overlap.
 */
public final class CudaStream implements AutoCloseable
{
    private final Cuda cuda;
    private final MemorySegment handle;
    private boolean closed;

    CudaStream(final Cuda cuda, final MemorySegment handle)
    {
        this.cuda = cuda;
        this.handle = handle;
    }

    /** @return the {@code cudaStream_t} */
    public MemorySegment handle()
    {
        return handle;
    }

    /** Waits until every operation queued on the stream has finished. */
    public void synchronize()
    {
        cuda.check("cudaStreamSynchronize", cudaStreamSynchronize(handle));
    }

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            cuda.check("cudaStreamDestroy", cudaStreamDestroy(handle));
        }
    }
}

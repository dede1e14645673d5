package io.kvtier.nativeaccess.cuda;

/**
 * A CUDA runtime call returned an error other than the ones its caller handles.
 */
public final class CudaException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int error;

    /**
     * @param call    the function that failed
     * @param error   its {@code cudaError_t}
     * @param message the runtime's text for it
     */
    public CudaException(final String call, final int error, final String message)
    {
        super(call + " failed with cudaError " + error + ": " + message);
        this.error = error;
    }

    /** @return the {@code cudaError_t} */
    public int error()
    {
        return error;
    }
}

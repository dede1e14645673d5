package io.kvtier.engine.pool;

/**
 * The pool file belongs to another engine that is still alive.
 */
public final class PoolOwnedException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message names the file, the owner's PID and how fresh its heartbeat is
     */
    public PoolOwnedException(final String message)
    {
        super(message);
    }
}

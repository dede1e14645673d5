package io.kvtier.engine.pool;

import java.io.IOException;

/**
 * {@code pool.path} cannot be used: it is a directory, a file that is not a pool (which kvtier never
 * overwrites), or on a filesystem that cannot hold the pool. The message names {@code pool.path}.
 */
public final class PoolPathException extends IOException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message names pool.path, what is there and what to do
     */
    public PoolPathException(final String message)
    {
        super(message);
    }
}

package io.kvtier.cli;

import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.pool.PoolOwnedException;
import io.kvtier.spi.TierConfigException;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * Turns the failures a command expects into one clear line and an exit code.
 */
final class Failures
{
    private Failures()
    {
    }

    /**
     * @param ex  what went wrong
     * @param err where to say so
     * @return the exit code
     */
    static int report(final Exception ex, final PrintWriter err)
    {
        if (ex instanceof ConfigException || ex instanceof TierConfigException)
        {
            err.println("kvtier: configuration rejected: " + ex.getMessage());
            return ExitCode.CONFIG;
        }
        if (ex instanceof PoolOwnedException)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.UNAVAILABLE;
        }
        if (ex instanceof IOException)
        {
            err.println("kvtier: " + ex.getClass().getSimpleName() + ": " + ex.getMessage());
            return ExitCode.UNAVAILABLE;
        }
        if (ex instanceof InterruptedException)
        {
            Thread.currentThread().interrupt();
            err.println("kvtier: interrupted");
            return ExitCode.INTERRUPTED;
        }
        err.println("kvtier: failed: " + ex);
        ex.printStackTrace(err);
        return ExitCode.FAILURE;
    }
}

package io.kvtier.cli;

import io.kvtier.bench.workload.ClientProcessException;
import io.kvtier.engine.config.ConfigException;
import io.kvtier.engine.pool.PoolOwnedException;
import io.kvtier.spi.TierConfigException;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * What a command that throws exits with, and the one line it prints: picocli's exit-code mapper and
 * execution-exception handler for every {@code kvtier} command. Commands let failures propagate.
 */
final class Failures implements CommandLine.IExitCodeExceptionMapper, CommandLine.IExecutionExceptionHandler
{
    /**
     * How one failure ends a command.
     *
     * @param exitCode   one of {@link ExitCode}
     * @param line       what to print, one line
     * @param stackTrace whether the failure is unexpected, so its stack trace helps
     */
    record Outcome(int exitCode, String line, boolean stackTrace)
    {
    }

    /**
     * @param ex what a command threw
     * @return its exit code and message
     */
    static Outcome outcome(final Throwable ex)
    {
        return switch (ex)
        {
            case ConfigException _, TierConfigException _ -> new Outcome(ExitCode.CONFIG, "kvtier: configuration rejected: " + ex.getMessage(), false);
            case PoolOwnedException _ -> new Outcome(ExitCode.UNAVAILABLE, "kvtier: " + ex.getMessage(), false);
            // a demo client process that broke its pipe protocol: the message names it and what it did, and is all there is to say
            case ClientProcessException _ -> new Outcome(ExitCode.FAILURE, "kvtier: " + ex.getMessage(), false);
            case IOException _ -> new Outcome(ExitCode.UNAVAILABLE, "kvtier: " + ex.getClass().getSimpleName() + ": " + ex.getMessage(), false);
            case InterruptedException _ -> new Outcome(ExitCode.INTERRUPTED, "kvtier: interrupted", false);
            default -> new Outcome(ExitCode.FAILURE, "kvtier: failed: " + ex, true);
        };
    }

    @Override
    public int getExitCode(final Throwable ex)
    {
        return outcome(ex).exitCode();
    }

    @Override
    public int handleExecutionException(final Exception ex, final CommandLine commandLine, final CommandLine.ParseResult parseResult)
    {
        final Outcome outcome = outcome(ex);
        final PrintWriter err = commandLine.getErr();
        err.println(outcome.line());
        if (outcome.stackTrace())
        {
            ex.printStackTrace(err);
        }
        err.flush();
        if (ex instanceof InterruptedException)
        {
            Thread.currentThread().interrupt();
        }
        final CommandLine.IExitCodeExceptionMapper mapper = commandLine.getExitCodeExceptionMapper();
        return mapper != null ? mapper.getExitCode(ex) : outcome.exitCode();
    }
}

package io.kvtier.cli;

import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The body the bench commands that measure one plan in a directory share ({@code bench copy}, {@code bench device},
 * {@code bench requests}): the plan built from the options, the measurement run, the result printed, and each
 * failure mapped to its exit code with one line saying what it was.
 */
final class BenchRun
{
    /**
     * A benchmark's measurement.
     *
     * @param <P> its plan
     * @param <R> its result
     */
    @FunctionalInterface
    interface Measurement<P, R>
    {
        /**
         * @param directory where its files go
         * @param plan      what to measure
         * @return what it measured
         * @throws IOException if its files (a pool, a socket, buffers) cannot be made
         */
        R measure(Path directory, P plan) throws IOException;
    }

    private BenchRun()
    {
    }

    /**
     * Runs a measurement and prints its result.
     *
     * @param spec        the command, for its output streams
     * @param plan        builds the plan from the options; an {@link IllegalArgumentException} names the bad value (exit 2)
     * @param directory   where the benchmark's files go, or null for the demo's pool directory
     * @param measurement the benchmark; an {@link IllegalArgumentException} is a plan it refuses (exit 2), an
     *                    {@link IllegalStateException} a run that went wrong (exit 1)
     * @param filesFailed what an {@link IOException} means, for its line ("cannot create the benchmark's pool"; exit 4)
     * @param print       the result as text or JSON, as the command's {@code --json} says
     * @param <P>         the plan
     * @param <R>         the result
     * @return the exit code
     */
    static <P, R> int call(final CommandLine.Model.CommandSpec spec, final Supplier<P> plan, final Path directory, final Measurement<P, R> measurement,
                           final String filesFailed, final Function<R, String> print)
    {
        final PrintWriter err = spec.commandLine().getErr();
        final P checked;
        try
        {
            checked = plan.get();
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        final R result;
        try
        {
            result = measurement.measure(directory != null ? directory : DemoCommand.defaultPoolDirectory(), checked);
        }
        catch (final IOException ex)
        {
            err.println("kvtier: " + filesFailed + ": " + ex.getMessage());
            return ExitCode.UNAVAILABLE;
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.USAGE;
        }
        catch (final IllegalStateException ex)
        {
            err.println("kvtier: " + ex.getMessage());
            return ExitCode.FAILURE;
        }
        final PrintWriter out = spec.commandLine().getOut();
        out.println(print.apply(result));
        out.flush();
        return ExitCode.OK;
    }
}

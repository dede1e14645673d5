package io.kvtier.cli;

/**
 * Exit codes of every {@code kvtier} command, as documented in {@code kvtier --help} and the README.
 */
public final class ExitCode
{
    /** Success. */
    public static final int OK = 0;
    /** The command failed at run time (I/O, a tier, the engine). */
    public static final int FAILURE = 1;
    /** The command line was wrong (unknown option, bad value), or an input file it names is malformed. */
    public static final int USAGE = 2;
    /** The configuration was rejected: the message names the key, the value and what is allowed. */
    public static final int CONFIG = 3;
    /** The environment refused: the pool file belongs to a live engine, a path cannot be used. */
    public static final int UNAVAILABLE = 4;
    /** Integrity failure: a page read back did not hold the bytes written. */
    public static final int CORRUPT = 5;
    /** Interrupted by SIGINT. */
    public static final int INTERRUPTED = 130;

    /** The exit-code section of {@code --help}. */
    static final String HELP = """
        Exit codes:
          0    success (serve: also a clean stop on SIGINT or SIGTERM)
          1    run-time failure (I/O, tier, engine)
          2    invalid command line or input file (a malformed trace: FILE:LINE:COLUMN: what is wrong)
          3    invalid configuration (the message names key, value and what is allowed;
               also a pool.path that is a directory, not a pool, or too large for its filesystem)
          4    environment refused (pool file owned by a live engine, unusable path)
          5    integrity failure (a page read back did not match what was written)
          130  interrupted
        """;

    private ExitCode()
    {
    }
}

package io.kvtier.cli;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Exit codes of every {@code kvtier} command, as documented in {@code kvtier --help} (rendered from
 * {@link #list()} into every command's help by {@link Main}) and the README.
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
    /** The environment refused: the pool file belongs to a live engine, a path cannot be used, nothing answers at the admin URL. */
    public static final int UNAVAILABLE = 4;
    /** Integrity failure: a page read back did not hold the bytes written. */
    public static final int CORRUPT = 5;
    /** The admin API refused the token: none sent (401), a wrong one, or the engine has no admin.token-file (403). */
    public static final int NOT_AUTHORIZED = 6;
    /** The admin API does not know what the request names: a tier, a migration, a mark (404). */
    public static final int NOT_FOUND = 7;
    /** Interrupted by SIGINT. */
    public static final int INTERRUPTED = 130;

    /** The heading of the exit-code section of every command's help. */
    static final String LIST_HEADING = "%nExit codes:%n";

    /**
     * Once the hand-written exit-code footer of every command; {@link Main} now gives every command the
     * list from {@link #list()} and drops this line from any footer that still names it. New commands
     * must not use it.
     */
    static final String HELP = "Exit codes: see kvtier --help.";

    private static final Map<Integer, String> MEANINGS = new LinkedHashMap<>();

    static
    {
        MEANINGS.put(OK, "success (serve: also a clean stop on SIGINT or SIGTERM)");
        MEANINGS.put(FAILURE, "run-time failure (I/O, tier, engine; kvtier admin: the API answered 5xx, or health: not live or not ready)");
        MEANINGS.put(USAGE, "invalid command line or input file (a bad option value names the option and the value;"
            + " a malformed trace: FILE:LINE:COLUMN: what is wrong; kvtier admin: the API refused the request, 4xx, naming the field)");
        MEANINGS.put(CONFIG, "invalid configuration (the message names key, value and what is allowed;"
            + " also a pool.path that is a directory, not a pool, or too large for its filesystem, a config file"
            + " that is not UTF-8 text, and a tier plugin that fails at start, named with what it did)");
        MEANINGS.put(UNAVAILABLE, "environment refused (pool file owned by a live engine, unusable path; kvtier admin: nothing"
            + " answers at the admin URL)");
        MEANINGS.put(CORRUPT, "integrity failure (a page read back did not match what was written)");
        MEANINGS.put(NOT_AUTHORIZED, "kvtier admin: the API refused the token (401: none sent; 403: wrong, or the engine has no"
            + " admin.token-file)");
        MEANINGS.put(NOT_FOUND, "kvtier admin: the API does not know what the request names (404: a tier, a migration, a mark)");
        MEANINGS.put(INTERRUPTED, "interrupted");
    }

    private ExitCode()
    {
    }

    /** @return every exit code, right-aligned, with its meaning, in the form picocli's {@code exitCodeList} takes */
    static Map<String, String> list()
    {
        final Map<String, String> list = new LinkedHashMap<>();
        MEANINGS.forEach((code, meaning) -> list.put(String.format("%3d", code), meaning));
        return list;
    }
}

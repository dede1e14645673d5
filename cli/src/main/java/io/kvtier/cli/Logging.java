package io.kvtier.cli;

import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * One-line log records on stderr, so stdout stays clean for results such as {@code --json}.
 */
final class Logging
{
    private Logging()
    {
    }

    static void configure(final boolean verbose, final boolean quiet)
    {
        if (System.getProperty("java.util.logging.config.file") != null)
        {
            return;
        }
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tF %1$tT.%1$tL %4$-7s %3$s: %5$s%6$s%n");
        LogManager.getLogManager().reset();
        final Logger root = Logger.getLogger("");
        final Level level = verbose ? Level.FINE : quiet ? Level.WARNING : Level.INFO;
        final Handler handler = new ConsoleHandler();
        handler.setFormatter(new SimpleFormatter());
        handler.setLevel(level);
        root.addHandler(handler);
        root.setLevel(level);
    }

    static void atLeast(final Level level)
    {
        final Logger root = Logger.getLogger("");
        if (root.getLevel() == null || root.getLevel().intValue() < level.intValue())
        {
            root.setLevel(level);
            for (final Handler handler : root.getHandlers())
            {
                handler.setLevel(level);
            }
        }
    }
}

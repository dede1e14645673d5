package io.kvtier.tier.support;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Logs I/O errors at most once per interval and counts the rest, so a failing disk does not flood
 * the log or allocate a message per key. Callers ask {@link #shouldLog()} before building a message.
 */
public final class IoErrorLog
{
    private final System.Logger logger;
    private final long intervalNanos;
    private final AtomicLong nextNanos;
    private final AtomicLong suppressed = new AtomicLong();

    /**
     * @param logger   where messages go
     * @param interval the least time between two messages
     * @param unit     the interval's unit
     */
    public IoErrorLog(final System.Logger logger, final long interval, final TimeUnit unit)
    {
        this.logger = logger;
        this.intervalNanos = unit.toNanos(interval);
        this.nextNanos = new AtomicLong(System.nanoTime());
    }

    /** @return whether a message may be logged now; when not, it is counted as suppressed */
    public boolean shouldLog()
    {
        final long now = System.nanoTime();
        final long next = nextNanos.get();
        if (now - next >= 0 && nextNanos.compareAndSet(next, now + intervalNanos))
        {
            return true;
        }
        suppressed.incrementAndGet();
        return false;
    }

    /**
     * Logs a message allowed by {@link #shouldLog()}, with the count of those suppressed before it.
     *
     * @param level   the level
     * @param message the message
     */
    public void log(final System.Logger.Level level, final String message)
    {
        final long skipped = suppressed.getAndSet(0);
        logger.log(level, skipped == 0 ? message : message + " (" + skipped + " similar messages suppressed)");
    }

    /** @return the logger, for messages that are not rate-limited */
    public System.Logger logger()
    {
        return logger;
    }

    /**
     * @param ex a filesystem error
     * @return its kind and the reason the filesystem gave, for a log line: {@code AccessDeniedException (Permission denied)}
     */
    public static String describe(final java.io.IOException ex)
    {
        final String reason = ex instanceof java.nio.file.FileSystemException fse && fse.getReason() != null ? fse.getReason() : ex.getMessage();
        return ex.getClass().getSimpleName() + (reason == null ? "" : " (" + reason + ")");
    }
}

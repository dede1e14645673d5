package io.kvtier.tier.posix;

import io.kvtier.spi.TierContext;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a POSIX tier's workers share: the {@link FileIndex} with its lock, the stripe locks of the
 * keys' namespace changes, and the settings and logs their messages need. Each lock is a monitor on
 * a plain object (see {@link PosixTier} on why).
 */
final class PosixPages
{
    private static final int STRIPES = 64;

    final String name;
    final PosixSettings settings;
    final PathLayout layout;
    final long objectSize;
    final TierContext context;
    final System.Logger logger;
    final IoErrorLog errors;
    final FileIndex index;
    final Object indexLock = new Object();
    private final Object[] stripes = new Object[STRIPES];
    private final AtomicBoolean overflowReported = new AtomicBoolean();

    /**
     * @param name     the tier's name
     * @param settings its settings
     * @param layout   where its pages live
     * @param context  the engine's side
     * @param errors   the rate-limited error log
     * @param index    the index of its files
     */
    PosixPages(final String name, final PosixSettings settings, final PathLayout layout, final TierContext context, final IoErrorLog errors,
               final FileIndex index)
    {
        this.name = name;
        this.settings = settings;
        this.layout = layout;
        this.objectSize = context.objectSize();
        this.context = context;
        this.logger = context.logger();
        this.errors = errors;
        this.index = index;
        for (int i = 0; i < STRIPES; i++)
        {
            stripes[i] = new Object();
        }
    }

    /**
     * @param keyHigh a key's high half
     * @param keyLow  its low half
     * @return the lock around the key's namespace changes
     */
    Object stripe(final long keyHigh, final long keyLow)
    {
        // Keys are hashes: their low bits spread evenly.
        return stripes[(int)(keyLow ^ keyHigh) & (STRIPES - 1)];
    }

    /** Logs, once, that the index holds fewer entries than there are files. */
    void reportOverflow()
    {
        if (overflowReported.compareAndSet(false, true))
        {
            logger.log(System.Logger.Level.WARNING, "more page files than tier." + name + "." + PosixSettings.INDEX_ENTRIES + " ("
                + settings.indexEntries + ") can track: the rest are counted in bytes only and usage reports objects as unknown;"
                + " raise tier." + name + "." + PosixSettings.INDEX_ENTRIES);
        }
    }
}

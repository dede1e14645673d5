package io.kvtier.tier.threefs;

import io.kvtier.spi.TierContext;

import java.text.MessageFormat;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;

/** A tier context whose logger keeps every line, for tests of what the tier tells operators. */
final class RecordingContext implements TierContext
{
    private final String tierName;
    private final long objectSize;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final System.Logger logger = new System.Logger()
    {
        @Override
        public String getName()
        {
            return "recording";
        }

        @Override
        public boolean isLoggable(final Level level)
        {
            return true;
        }

        @Override
        public void log(final Level level, final ResourceBundle bundle, final String message, final Throwable thrown)
        {
            lines.add(level + " " + message);
        }

        @Override
        public void log(final Level level, final ResourceBundle bundle, final String format, final Object... params)
        {
            lines.add(level + " " + (params == null || params.length == 0 ? format : MessageFormat.format(format, params)));
        }
    };

    RecordingContext(final String tierName, final long objectSize)
    {
        this.tierName = tierName;
        this.objectSize = objectSize;
    }

    @Override
    public String tierName()
    {
        return tierName;
    }

    @Override
    public long objectSize()
    {
        return objectSize;
    }

    @Override
    public System.Logger logger()
    {
        return logger;
    }

    /** @return every line logged so far, each prefixed with its level */
    List<String> lines()
    {
        return List.copyOf(lines);
    }
}

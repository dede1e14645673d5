package io.kvtier.engine;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.security.CodeSource;

/** Where a class was read from, for the callers that must tell a jar from a class directory. */
public final class CodeSources
{
    private CodeSources()
    {
    }

    /**
     * @return the jar or directory a class was read from, or null when it came from the JDK's image, a
     *         location that is not a local file, or nowhere known
     */
    public static Path pathOf(final Class<?> type)
    {
        final CodeSource source = type.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null || !"file".equals(source.getLocation().getProtocol()))
        {
            return null;
        }
        try
        {
            return Path.of(source.getLocation().toURI());
        }
        catch (final URISyntaxException | RuntimeException ex)
        {
            return null;
        }
    }
}

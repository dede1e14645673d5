package io.kvtier.tier.threefs;

import io.kvtier.spi.PageKey;

import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a page lives on the mount: {@code <dir>/<hh>/<hh>/<32 hex key>.kvp}, one {@code /<hh>} level per
 * fan-out level taken from the key's leading hex digits, and a write first goes to
 * {@code <final name>.<24 hex>.tmp} in the same directory.
 *
 * <p>This is the POSIX tier's layout (its package-private {@code PathLayout}), kept identical on purpose: a
 * node without the USRBIO library runs the POSIX tier on the same directory, so both must name pages, and
 * recognise temp files, the same way. {@code ThreeFsLayoutInteropTest} proves it by writing through one
 * and reading through the other. Should the POSIX tier's layout become public, this class goes.
 */
final class PageLayout
{
    static final String PAGE_SUFFIX = ".kvp";
    static final String TEMP_SUFFIX = ".tmp";
    static final int PAGE_NAME_LENGTH = PageKey.HEX_LENGTH + PAGE_SUFFIX.length();

    private final Path dir;
    private final int levels;
    private final long token = ThreadLocalRandom.current().nextLong();
    private final AtomicInteger counter = new AtomicInteger();

    /**
     * @param dir    the tier's directory, absolute
     * @param levels fan-out levels, 0 to 3
     */
    PageLayout(final Path dir, final int levels)
    {
        this.dir = dir;
        this.levels = levels;
    }

    Path dir()
    {
        return dir;
    }

    int levels()
    {
        return levels;
    }

    /**
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return the page's path
     */
    Path pagePath(final long keyHigh, final long keyLow)
    {
        final String hex = new PageKey(keyHigh, keyLow).toHex();
        Path path = dir;
        for (int level = 0; level < levels; level++)
        {
            path = path.resolve(hex.substring(2 * level, 2 * level + 2));
        }
        return path.resolve(hex + PAGE_SUFFIX);
    }

    /**
     * @param pagePath a page's path
     * @return a temp path next to it that no other writer, here or on another node, uses: a random token
     *         per tier instance and a counter
     */
    Path tempPath(final Path pagePath)
    {
        return pagePath.resolveSibling(pagePath.getFileName() + "." + String.format("%016x%08x", token, counter.getAndIncrement()) + TEMP_SUFFIX);
    }

    /**
     * Recognises a page file found on disk.
     *
     * @param file a file under {@link #dir()}
     * @return its key, or {@code null} when it is not a page file in its proper place
     */
    PageKey pageKeyOf(final Path file)
    {
        final String name = file.getFileName().toString();
        if (name.length() != PAGE_NAME_LENGTH || !name.endsWith(PAGE_SUFFIX))
        {
            return null;
        }
        final PageKey key;
        try
        {
            key = PageKey.fromHex(name.substring(0, PageKey.HEX_LENGTH));
        }
        catch (final IllegalArgumentException ex)
        {
            return null;
        }
        return file.equals(pagePath(key.high(), key.low())) ? key : null;
    }
}

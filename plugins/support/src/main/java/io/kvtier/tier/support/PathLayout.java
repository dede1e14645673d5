package io.kvtier.tier.support;

import io.kvtier.spi.PageKey;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Where a page lives: {@code <dir>/<hh>/<hh>/<32 hex key>.kvp}, with one {@code /<hh>} level per
 * fan-out level taken from the key's leading hex digits (keys are hashes, so 256 directories per
 * level fill evenly). A write first goes to {@code <final name>.<24 hex>.tmp} in the same directory.
 *
 * <p>The byte form builds names into a caller's array without allocating, for the I/O path. Public
 * because the 3FS tier keeps its pages on the mount in this same layout (a node without the 3FS client
 * library runs the POSIX tier on the same directory, so both must name pages the same way).
 */
public final class PathLayout
{
    /** Suffix of a page file. */
    public static final String PAGE_SUFFIX = ".kvp";
    /** Suffix of a file being written, never read as a page. */
    public static final String TEMP_SUFFIX = ".tmp";
    /** Length of a page file's name. */
    public static final int PAGE_NAME_LENGTH = PageKey.HEX_LENGTH + PAGE_SUFFIX.length();
    /** Length of what a temp name adds to its page's name: a dot, 24 hex digits and the suffix. */
    public static final int TEMP_EXTRA_LENGTH = 1 + 24 + TEMP_SUFFIX.length();
    /** Start of the name of the marker saying every fan-out directory made at start exists; the level count follows. */
    public static final String FANOUT_MARKER_PREFIX = ".kvtier-fanout-";
    /** Name prefix of the start-up probe files, which end with {@link #TEMP_SUFFIX} too. */
    public static final String PROBE_PREFIX = ".kvtier-probe.";

    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PAGE_SUFFIX_BYTES = PAGE_SUFFIX.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TEMP_SUFFIX_BYTES = TEMP_SUFFIX.getBytes(StandardCharsets.US_ASCII);

    private final Path dir;
    private final byte[] prefix;
    private final int levels;

    /**
     * @param dir    the tier's directory, absolute
     * @param levels fan-out levels, 0 to 3
     */
    public PathLayout(final Path dir, final int levels)
    {
        this.dir = dir;
        this.prefix = dir.toString().getBytes(StandardCharsets.UTF_8);
        this.levels = levels;
    }

    /** @return the tier's directory */
    public Path dir()
    {
        return dir;
    }

    /** @return fan-out levels */
    public int levels()
    {
        return levels;
    }

    /** @return bytes a buffer needs for the longest name, temp suffix and terminating NUL included */
    public int maxPathLength()
    {
        return prefix.length + 3 * levels + 1 + PAGE_NAME_LENGTH + TEMP_EXTRA_LENGTH + 1;
    }

    /**
     * Writes a page's path, without a terminator.
     *
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @param dst     at least {@link #maxPathLength()} bytes
     * @return the path's length
     */
    public int writePagePath(final long keyHigh, final long keyLow, final byte[] dst)
    {
        System.arraycopy(prefix, 0, dst, 0, prefix.length);
        final int nameOffset = prefix.length + 3 * levels + 1;
        PageKey.writeHex(keyHigh, keyLow, dst, nameOffset);
        for (int level = 0; level < levels; level++)
        {
            final int at = prefix.length + 3 * level;
            dst[at] = '/';
            dst[at + 1] = dst[nameOffset + 2 * level];
            dst[at + 2] = dst[nameOffset + 2 * level + 1];
        }
        dst[nameOffset - 1] = '/';
        System.arraycopy(PAGE_SUFFIX_BYTES, 0, dst, nameOffset + PageKey.HEX_LENGTH, PAGE_SUFFIX_BYTES.length);
        return nameOffset + PAGE_NAME_LENGTH;
    }

    /**
     * Appends a temp suffix to a page path written by {@link #writePagePath}.
     *
     * @param dst        the buffer holding the page path
     * @param pageLength the page path's length
     * @param token      identifies the writer (process and thread)
     * @param counter    distinguishes the writer's temp files
     * @return the temp path's length
     */
    public static int appendTempSuffix(final byte[] dst, final int pageLength, final long token, final int counter)
    {
        int at = pageLength;
        dst[at++] = '.';
        at = writeHex(token, 16, dst, at);
        at = writeHex(counter, 8, dst, at);
        System.arraycopy(TEMP_SUFFIX_BYTES, 0, dst, at, TEMP_SUFFIX_BYTES.length);
        return at + TEMP_SUFFIX_BYTES.length;
    }

    private static int writeHex(final long value, final int digits, final byte[] dst, final int offset)
    {
        for (int i = 0; i < digits; i++)
        {
            dst[offset + i] = HEX[(int)(value >>> (4 * (digits - 1 - i))) & 0xF];
        }
        return offset + digits;
    }

    /**
     * The allocating form of {@link #appendTempSuffix}: a temp path next to a page that no other writer
     * uses, here or on another node sharing the directory.
     *
     * @param pagePath a page's path
     * @param token    identifies the writer (a random value per tier instance)
     * @param counter  distinguishes the writer's temp files
     * @return {@code <page name>.<16 hex token><8 hex counter>.tmp} beside the page
     */
    public static Path tempPath(final Path pagePath, final long token, final int counter)
    {
        return pagePath.resolveSibling(pagePath.getFileName() + "." + String.format("%016x%08x", token, counter) + TEMP_SUFFIX);
    }

    /**
     * @param level a fan-out level, 1 to {@link #levels()}
     * @return the length of the prefix of a page path that names that level's directory
     */
    public int directoryLength(final int level)
    {
        return prefix.length + 3 * level;
    }

    /**
     * @param keyHigh the key's high half
     * @param keyLow  the key's low half
     * @return the page's path, allocated, for the FileChannel fallback and for logs
     */
    public Path pagePath(final long keyHigh, final long keyLow)
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
     * Recognises a page file found on disk.
     *
     * @param file a file under {@link #dir()}
     * @return its key, or {@code null} when it is not a page file in its proper place
     */
    public PageKey pageKeyOf(final Path file)
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
        // Only a lowercase name in the directory its key maps to is ever read, so only that one is a page.
        return file.equals(pagePath(key.high(), key.low())) ? key : null;
    }

    /** @return the marker that says every fan-out directory made at start exists */
    public Path fanoutMarker()
    {
        return dir.resolve(FANOUT_MARKER_PREFIX + levels);
    }

    /**
     * @param fileName a file name found in the tier's directory
     * @return whether it is a fan-out marker
     */
    public static boolean isFanoutMarker(final String fileName)
    {
        return fileName.startsWith(FANOUT_MARKER_PREFIX);
    }
}

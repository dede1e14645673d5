package io.kvtier.tier.support;

import io.kvtier.spi.PageKey;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;

/**
 * The walk over a tier's directory at start: finds the page files an earlier run or another node
 * left (oldest first, to seed the LRU) and deletes temp files older than {@code tmp-max-age}, which
 * belong to writers that died. Younger temp files may be a write in progress on another node and
 * are left alone. Files that are not pages in their proper place are ignored, never deleted. Public
 * for the 3FS tier, which keeps its pages in the same layout ({@link PathLayout}).
 */
public final class StartupScan
{
    /**
     * A page file found on disk.
     *
     * @param key          its key
     * @param bytes        its size
     * @param lastModified its modification time, for LRU order
     */
    public record Page(PageKey key, long bytes, long lastModified)
    {
    }

    final List<Page> pages = new ArrayList<>();
    int deletedTemps;
    int youngTemps;
    int foreignFiles;
    int unreadable;

    /** @return the page files found, oldest first */
    public List<Page> pages()
    {
        return pages;
    }

    /** @return temp files deleted: older than tmp-max-age, their writers long gone */
    public int deletedTemps()
    {
        return deletedTemps;
    }

    /** @return temp files left alone: perhaps a write in progress on another node */
    public int youngTemps()
    {
        return youngTemps;
    }

    /** @return files that are neither pages nor temp files of the layout, left alone */
    public int foreignFiles()
    {
        return foreignFiles;
    }

    /** @return files the scan could not read */
    public int unreadable()
    {
        return unreadable;
    }

    private StartupScan()
    {
    }

    /**
     * @param layout    where pages live
     * @param tmpMaxAge how old a temp file must be to be deleted
     * @param now       the current time
     * @param logger    where trouble is reported
     * @return what was found, pages sorted oldest first
     * @throws IOException when the directory cannot be walked at all
     */
    public static StartupScan scan(final PathLayout layout, final Duration tmpMaxAge, final Instant now, final System.Logger logger) throws IOException
    {
        final StartupScan scan = new StartupScan();
        final Instant tempCutoff = now.minus(tmpMaxAge);
        Files.walkFileTree(layout.dir(), EnumSet.noneOf(java.nio.file.FileVisitOption.class), layout.levels() + 1, new SimpleFileVisitor<>()
        {
            @Override
            public FileVisitResult visitFile(final Path file, final BasicFileAttributes attributes)
            {
                if (!attributes.isRegularFile())
                {
                    return FileVisitResult.CONTINUE;
                }
                final String name = file.getFileName().toString();
                if (name.endsWith(PathLayout.TEMP_SUFFIX))
                {
                    if (attributes.lastModifiedTime().toInstant().isBefore(tempCutoff))
                    {
                        deleteTemp(scan, file, logger);
                    }
                    else
                    {
                        scan.youngTemps++;
                    }
                    return FileVisitResult.CONTINUE;
                }
                if (PathLayout.isFanoutMarker(name) && file.getParent().equals(layout.dir()))
                {
                    return FileVisitResult.CONTINUE;
                }
                final PageKey key = layout.pageKeyOf(file);
                if (key == null)
                {
                    scan.foreignFiles++;
                }
                else
                {
                    scan.pages.add(new Page(key, attributes.size(), attributes.lastModifiedTime().toMillis()));
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(final Path file, final IOException ex)
            {
                if (!(ex instanceof NoSuchFileException))
                {
                    // Another node may delete files while we walk; anything else is worth a line in the log.
                    scan.unreadable++;
                    logger.log(System.Logger.Level.WARNING, "cannot read " + file + " while scanning: " + IoErrorLog.describe(ex));
                }
                return FileVisitResult.CONTINUE;
            }
        });
        scan.pages.sort(Comparator.comparingLong(Page::lastModified));
        return scan;
    }

    private static void deleteTemp(final StartupScan scan, final Path file, final System.Logger logger)
    {
        try
        {
            if (Files.deleteIfExists(file))
            {
                scan.deletedTemps++;
            }
        }
        catch (final IOException ex)
        {
            logger.log(System.Logger.Level.WARNING, "cannot delete stale temp file " + file + ": " + IoErrorLog.describe(ex));
        }
    }
}

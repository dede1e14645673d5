package io.kvtier.engine.pool;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How many bytes a pool file may take on the filesystem holding it. A tmpfs or disk says so itself; a
 * hugetlbfs mounted without a size limit reports no blocks at all, and what bounds it is the system's
 * free huge pages of the mount's page size, less those already promised to mappings.
 */
public final class PoolFilesystem
{
    private static final Path HUGE_PAGES = Path.of("/sys/kernel/mm/hugepages");

    private PoolFilesystem()
    {
    }

    /**
     * @param directory the directory the pool file is (to be) in
     * @return the bytes a new file there may take
     * @throws IOException if the filesystem cannot be inspected
     */
    public static long usableBytes(final Path directory) throws IOException
    {
        final FileStore store = Files.getFileStore(directory);
        if (isHugetlbfs(store) && store.getTotalSpace() == 0)
        {
            final long pageSize = store.getBlockSize();
            final Path sizeDir = HUGE_PAGES.resolve("hugepages-" + pageSize / 1024 + "kB");
            final long free = readCount(sizeDir.resolve("free_hugepages"));
            final long reserved = readCount(sizeDir.resolve("resv_hugepages"));
            return Math.max(0, free - reserved) * pageSize;
        }
        return store.getUsableSpace();
    }

    /**
     * @param directory the directory the pool file is (to be) in
     * @return the word for the free space in messages: "free in huge pages" on hugetlbfs, else "free"
     * @throws IOException if the filesystem cannot be inspected
     */
    public static String freeSpaceWord(final Path directory) throws IOException
    {
        return isHugetlbfs(Files.getFileStore(directory)) ? "free in huge pages" : "free";
    }

    /**
     * @param directory a directory
     * @return whether it is on hugetlbfs
     * @throws IOException if the filesystem cannot be inspected
     */
    public static boolean isHugetlbfs(final Path directory) throws IOException
    {
        return isHugetlbfs(Files.getFileStore(directory));
    }

    private static boolean isHugetlbfs(final FileStore store)
    {
        return "hugetlbfs".equals(store.type());
    }

    private static long readCount(final Path file) throws IOException
    {
        return Files.isReadable(file) ? Long.parseLong(Files.readString(file).strip()) : 0;
    }
}

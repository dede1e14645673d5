package io.kvtier.engine.pool;

import io.kvtier.client.pool.PagePoolDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HexFormat;

/**
 * What {@link PoolFile} finds already on disk at or beside {@code pool.path} before it takes
 * ownership: an existing file's header and owner, the temporary files a dead engine left half built,
 * and whether two paths name the same inode (a rename may have replaced one under us).
 */
final class ExistingPoolFiles
{
    private static final System.Logger LOG = System.getLogger(PoolFile.class.getName());

    private ExistingPoolFiles()
    {
    }

    /** @return the header, or null when the file is too short to hold one */
    static ByteBuffer readHeader(final FileChannel channel) throws IOException
    {
        if (channel.size() < PagePoolDescriptor.HEADER_LENGTH)
        {
            return null;
        }
        final ByteBuffer header = ByteBuffer.allocate(PagePoolDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        while (header.hasRemaining())
        {
            if (channel.read(header, header.position()) < 0)
            {
                return null;
            }
        }
        return header;
    }

    static String describeStart(final FileChannel channel) throws IOException
    {
        final ByteBuffer start = ByteBuffer.allocate(8);
        channel.read(start, 0);
        if (start.position() == 0)
        {
            return "";
        }
        final byte[] bytes = new byte[start.position()];
        start.flip().get(bytes);
        return " (it starts with bytes " + HexFormat.ofDelimiter(" ").formatHex(bytes) + ")";
    }

    static String describeOwner(final Path path, final ByteBuffer header, final String note)
    {
        final long pid = header.getLong(PagePoolDescriptor.CREATOR_PID_OFFSET);
        final long beat = header.getLong(PagePoolDescriptor.HEARTBEAT_OFFSET);
        return "pool file " + path + " is owned by a live engine (pid " + pid
            + (pid == ProcessHandle.current().pid() ? ", this process" : "")
            + ", heartbeat " + Math.max(0, System.currentTimeMillis() - beat) + " ms ago" + note + ")";
    }

    static boolean processAlive(final long pid)
    {
        return pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** Removes temporary pool files that a dead engine left beside the path while it was starting. */
    static void removeStaleTemps(final Path path)
    {
        final Path directory = path.toAbsolutePath().getParent();
        final String prefix = path.getFileName() + PoolFile.TEMP_INFIX;
        if (directory == null || !Files.isDirectory(directory))
        {
            return;
        }
        try (DirectoryStream<Path> siblings = Files.newDirectoryStream(directory, entry -> entry.getFileName().toString().startsWith(prefix)))
        {
            for (final Path sibling : siblings)
            {
                final String rest = sibling.getFileName().toString().substring(prefix.length());
                final int dot = rest.indexOf('.');
                try
                {
                    final long pid = Long.parseLong(dot < 0 ? rest : rest.substring(0, dot));
                    if (!processAlive(pid))
                    {
                        Files.deleteIfExists(sibling);
                        LOG.log(System.Logger.Level.INFO, "removed " + sibling + ", a pool file engine pid " + pid + " was building when it died");
                    }
                }
                catch (final NumberFormatException ignored)
                {
                    // not one of ours
                }
            }
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.DEBUG, "could not look for stale pool files beside " + path + ": " + ex.getMessage());
        }
    }

    static BasicFileAttributes attributes(final Path path) throws IOException
    {
        try
        {
            return Files.readAttributes(path, BasicFileAttributes.class);
        }
        catch (final NoSuchFileException ex)
        {
            return null;
        }
    }

    static boolean sameFile(final Path a, final Path b)
    {
        try
        {
            final Object key = Files.readAttributes(b, BasicFileAttributes.class).fileKey();
            return sameFileKey(a, key);
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    static boolean sameFileKey(final Path path, final Object key)
    {
        try
        {
            return key != null && key.equals(Files.readAttributes(path, BasicFileAttributes.class).fileKey());
        }
        catch (final IOException ex)
        {
            return false;
        }
    }
}

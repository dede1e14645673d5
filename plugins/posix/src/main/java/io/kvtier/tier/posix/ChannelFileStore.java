package io.kvtier.tier.posix;

import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Page files through {@link FileChannel} positional I/O, for when {@link io.kvtier.nativeaccess.libc.LibC}
 * is unavailable. Same layout and crash-safety as {@link LibcFileStore}, but it allocates (paths,
 * channels) and the JDK may copy through a temporary buffer, and there is no O_DIRECT.
 */
final class ChannelFileStore implements FileStore
{
    private static final int MAX_ATTEMPTS = 8;

    private final PathLayout layout;
    private final boolean fsync;
    private final IoErrorLog errors;
    private final String token;
    private int tempCounter;
    private long directoriesMade;
    private Path pagePath;
    private Path tempPath;

    /**
     * @param layout where pages live
     * @param fsync  whether to force a temp file to disk before it is renamed
     * @param errors where failures are logged
     */
    ChannelFileStore(final PathLayout layout, final boolean fsync, final IoErrorLog errors)
    {
        this.layout = layout;
        this.fsync = fsync;
        this.errors = errors;
        this.token = String.format("%016x", ThreadLocalRandom.current().nextLong());
    }

    @Override
    public TierStatus exists(final long keyHigh, final long keyLow, final long expectedSize)
    {
        final Path page = layout.pagePath(keyHigh, keyLow);
        try
        {
            final long size = Files.size(page);
            return size == expectedSize || TrailerBlock.isCompact(size, expectedSize) ? TierStatus.OK : corrupt(page, size, expectedSize);
        }
        catch (final NoSuchFileException ex)
        {
            return TierStatus.NOT_FOUND;
        }
        catch (final IOException ex)
        {
            return failure("stat", page, ex);
        }
    }

    @Override
    public TierStatus read(final long keyHigh, final long keyLow, final MemorySegment destination)
    {
        final Path page = layout.pagePath(keyHigh, keyLow);
        try (FileChannel channel = FileChannel.open(page, StandardOpenOption.READ))
        {
            final long size = channel.size();
            if (size != destination.byteSize() && !TrailerBlock.isCompact(size, destination.byteSize()))
            {
                return corrupt(page, size, destination.byteSize());
            }
            // A compact frame (another node's 3FS tier writes them) is its first bytes; the rest are zeros, put back.
            final ByteBuffer buffer = destination.asSlice(0, size).asByteBuffer();
            while (buffer.hasRemaining())
            {
                if (channel.read(buffer, buffer.position()) < 0)
                {
                    // Shorter than the size just seen: truncated in place by someone else; never a partial OK.
                    return corrupt(page, buffer.position(), size);
                }
            }
            if (size != destination.byteSize())
            {
                TrailerBlock.restore(destination, size);
            }
            return TierStatus.OK;
        }
        catch (final NoSuchFileException ex)
        {
            return TierStatus.NOT_FOUND;
        }
        catch (final IOException ex)
        {
            return failure("read", page, ex);
        }
    }

    /** One write slot (the default {@link #writeBatchSize()}), so {@code slot} is always 0. */
    @Override
    public TierStatus writeTemp(final int slot, final long keyHigh, final long keyLow, final MemorySegment source)
    {
        tempPath = null;
        pagePath = layout.pagePath(keyHigh, keyLow);
        boolean madeDirectories = false;
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            final Path temp = pagePath.resolveSibling(pagePath.getFileName() + "." + token + String.format("%08x", tempCounter++) + PathLayout.TEMP_SUFFIX);
            final FileChannel channel;
            try
            {
                channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            }
            catch (final NoSuchFileException ex)
            {
                if (madeDirectories)
                {
                    return failure("create", temp, ex);
                }
                try
                {
                    Files.createDirectories(temp.getParent());
                }
                catch (final IOException mkdir)
                {
                    return failure("mkdir", temp.getParent(), mkdir);
                }
                madeDirectories = true;
                directoriesMade++;
                continue;
            }
            catch (final FileAlreadyExistsException ex)
            {
                continue;
            }
            catch (final IOException ex)
            {
                return failure("create", temp, ex);
            }
            try (channel)
            {
                final ByteBuffer buffer = source.asByteBuffer();
                while (buffer.hasRemaining())
                {
                    channel.write(buffer, buffer.position());
                }
                if (fsync)
                {
                    channel.force(false);
                }
            }
            catch (final IOException ex)
            {
                deleteQuietly(temp);
                return failure("write", temp, ex);
            }
            tempPath = temp;
            return TierStatus.OK;
        }
        return failure("create", pagePath, new FileAlreadyExistsException(pagePath + ".*" + PathLayout.TEMP_SUFFIX));
    }

    @Override
    public TierStatus publishTemp(final int slot)
    {
        try
        {
            // ATOMIC_MOVE is rename(2), which replaces an existing page in one step.
            Files.move(tempPath, pagePath, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            tempPath = null;
            return TierStatus.OK;
        }
        catch (final IOException ex)
        {
            final Path temp = tempPath;
            discardTemp(slot);
            return failure("rename", temp, ex);
        }
    }

    @Override
    public void discardTemp(final int slot)
    {
        if (tempPath != null)
        {
            deleteQuietly(tempPath);
            tempPath = null;
        }
    }

    @Override
    public TierStatus unlink(final long keyHigh, final long keyLow)
    {
        final Path page = layout.pagePath(keyHigh, keyLow);
        try
        {
            Files.delete(page);
            return TierStatus.OK;
        }
        catch (final NoSuchFileException ex)
        {
            return TierStatus.NOT_FOUND;
        }
        catch (final IOException ex)
        {
            return failure("unlink", page, ex);
        }
    }

    @Override
    public long directoriesMade()
    {
        return directoriesMade;
    }

    private static void deleteQuietly(final Path file)
    {
        try
        {
            Files.deleteIfExists(file);
        }
        catch (final IOException ignored)
        {
            // A temp file left behind is never read as a page, and the next start deletes it.
        }
    }

    private TierStatus failure(final String operation, final Path file, final IOException ex)
    {
        final TierStatus status = statusOf(ex);
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.WARNING, operation + " " + file + " failed: " + PosixSettings.describe(ex) + " -> " + status);
        }
        return status;
    }

    private TierStatus corrupt(final Path page, final long size, final long expected)
    {
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.WARNING, "page file " + page + " has " + size + " bytes, expected " + expected + " -> CORRUPT");
        }
        return TierStatus.CORRUPT;
    }

    /**
     * The JDK reports errno only as text: match the C library's messages for a full disk and quota.
     *
     * @param ex a failure
     * @return NO_SPACE for a full disk or quota, IO_ERROR otherwise
     */
    static TierStatus statusOf(final IOException ex)
    {
        final String reason = ex instanceof FileSystemException fse && fse.getReason() != null ? fse.getReason() : String.valueOf(ex.getMessage());
        return reason.contains("No space left on device") || reason.contains("Disk quota exceeded") ? TierStatus.NO_SPACE : TierStatus.IO_ERROR;
    }
}

package io.kvtier.tier.posix;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.DirectIoAlignment;
import io.kvtier.nativeaccess.uring.Uring;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.PathLayout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

import static io.kvtier.nativeaccess.libc.LibC.EDQUOT;
import static io.kvtier.nativeaccess.libc.LibC.EEXIST;
import static io.kvtier.nativeaccess.libc.LibC.EINVAL;
import static io.kvtier.nativeaccess.libc.LibC.ENOENT;
import static io.kvtier.nativeaccess.libc.LibC.ENOSPC;
import static io.kvtier.nativeaccess.libc.LibC.O_CLOEXEC;
import static io.kvtier.nativeaccess.libc.LibC.O_CREAT;
import static io.kvtier.nativeaccess.libc.LibC.O_DIRECT;
import static io.kvtier.nativeaccess.libc.LibC.O_EXCL;
import static io.kvtier.nativeaccess.libc.LibC.O_RDONLY;
import static io.kvtier.nativeaccess.libc.LibC.O_WRONLY;

/**
 * Page files through {@link LibC}: positional I/O straight between the pool slice and the file (no
 * copy, O_DIRECT when on), paths built in preallocated native buffers. Nothing here allocates on
 * success; failures allocate their log message, rate-limited.
 */
class LibcFileStore implements FileStore
{
    private static final int FILE_MODE = 0644;
    private static final int DIRECTORY_MODE = 0755;
    private static final int MAX_ATTEMPTS = 8;

    final LibC libc;
    private final PathLayout layout;
    final boolean fsync;
    final DirectIo direct;
    private final IoErrorLog errors;
    private final long token;
    private final byte[] path;
    /** The page path of reads, probes and removes; writes have their own per slot, pending until renamed. */
    final MemorySegment pagePath;
    final MemorySegment[] slotPagePaths;
    final MemorySegment[] slotTempPaths;
    private final boolean[] tempPending;
    private final boolean[] tempIsSpare;
    private final MemorySegment directoryPath;
    private SpareTempFiles spares;
    private int pageLength;
    private int tempCounter;
    private long directoriesMade;

    /**
     * @param libc   the libc front
     * @param layout where pages live
     * @param arena  where the path buffers come from; must outlive the store
     * @param fsync  whether to fdatasync a temp file before it is renamed
     * @param direct whether O_DIRECT is in use, shared by the tier's stores
     * @param errors where failures are logged
     */
    LibcFileStore(final LibC libc, final PathLayout layout, final Arena arena, final boolean fsync,
                  final DirectIo direct, final IoErrorLog errors)
    {
        this(libc, layout, arena, fsync, direct, errors, 1);
    }

    /**
     * @param writeSlots how many temp files may be pending at once; path buffers are made for each, once
     */
    LibcFileStore(final LibC libc, final PathLayout layout, final Arena arena, final boolean fsync,
                  final DirectIo direct, final IoErrorLog errors, final int writeSlots)
    {
        this.libc = libc;
        this.layout = layout;
        this.fsync = fsync;
        this.direct = direct;
        this.errors = errors;
        // Random per store, so temp names of stores in other processes and on other nodes never collide.
        this.token = ThreadLocalRandom.current().nextLong();
        final int length = layout.maxPathLength();
        path = new byte[length];
        pagePath = arena.allocate(length);
        slotPagePaths = new MemorySegment[writeSlots];
        slotTempPaths = new MemorySegment[writeSlots];
        for (int slot = 0; slot < writeSlots; slot++)
        {
            slotPagePaths[slot] = arena.allocate(length);
            slotTempPaths[slot] = arena.allocate(length);
        }
        tempPending = new boolean[writeSlots];
        tempIsSpare = new boolean[writeSlots];
        directoryPath = arena.allocate(length);
    }

    /**
     * Lets writes take their temp files from {@code pool} when it has one ready.
     *
     * @param pool the tier's spare temp files
     * @return whether they fit this store's path buffers (they always do unless the tier's directory
     *         is almost PATH_MAX long); if not, writes make their own
     */
    final boolean useSpares(final SpareTempFiles pool)
    {
        if (pool.pathBytes() > slotTempPaths[0].byteSize())
        {
            return false;
        }
        this.spares = pool;
        return true;
    }

    /**
     * Opens a new, empty temp file for the slot's write, its name in the slot's temp path: a spare when
     * one is ready ({@link SpareTempFiles}), else one made now beside the page path last built by
     * {@link #prepareSlotPagePath}.
     *
     * @param slot      the write slot
     * @param useDirect whether to open it O_DIRECT
     * @param trySpare  whether a spare may be taken (not on a retry, whose failure a spare could hide)
     * @return the descriptor, open for writing, or {@code -errno} of making a temp file the usual way
     */
    final int openNewTemp(final int slot, final boolean useDirect, final boolean trySpare)
    {
        final MemorySegment tempPath = slotTempPaths[slot];
        if (trySpare && spares != null && spares.take(tempPath))
        {
            // Not through a symbolic link: a spare sits in the root, and nothing but this tier should have put a file there.
            final int fd = libc.open(tempPath, O_WRONLY | O_CLOEXEC | LibC.O_NOFOLLOW | (useDirect ? O_DIRECT : 0), 0);
            if (fd >= 0)
            {
                tempIsSpare[slot] = true;
                return fd;
            }
            // Gone (ENOENT), or refused (O_DIRECT): it is no use; the usual way says what is wrong, if anything.
            libc.unlink(tempPath);
        }
        tempIsSpare[slot] = false;
        prepareTempPath(slot);
        return openTemp(tempPath, useDirect);
    }

    /**
     * Asks the kernel what O_DIRECT needs of a file in the directory ({@code statx STATX_DIOALIGN},
     * Linux 6.1+), with a probe file.
     *
     * @param libc the libc front
     * @param dir  the tier's directory
     * @return the alignments; 4096 for both when the kernel or filesystem does not say
     */
    static DirectIoAlignment directIoAlignment(final LibC libc, final Path dir)
    {
        final Path probe = dir.resolve(PathLayout.PROBE_PREFIX + Long.toHexString(ThreadLocalRandom.current().nextLong()) + PathLayout.TEMP_SUFFIX);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment name = arena.allocateFrom(probe.toString(), StandardCharsets.UTF_8);
            final int fd = libc.open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, FILE_MODE);
            if (fd < 0)
            {
                return new DirectIoAlignment(DirectIo.ALIGNMENT, DirectIo.ALIGNMENT, false);
            }
            try
            {
                return Uring.directIoAlignment(fd);
            }
            catch (final RuntimeException | LinkageError ex)
            {
                // statx could not be bound: the safe default.
                return new DirectIoAlignment(DirectIo.ALIGNMENT, DirectIo.ALIGNMENT, false);
            }
            finally
            {
                libc.close(fd);
                libc.unlink(name);
            }
        }
    }

    /**
     * Proves O_DIRECT works in a directory: an aligned write and read of a probe file.
     *
     * @param libc      the libc front
     * @param dir       the tier's directory
     * @param alignment what the kernel says O_DIRECT needs there
     * @return why O_DIRECT cannot be used, or empty when it can
     */
    static Optional<String> probeDirectIo(final LibC libc, final Path dir, final DirectIoAlignment alignment)
    {
        if (!alignment.supported())
        {
            return Optional.of("statx(STATX_DIOALIGN) says files in " + dir + " do not support O_DIRECT");
        }
        final Path probe = dir.resolve(PathLayout.PROBE_PREFIX + Long.toHexString(ThreadLocalRandom.current().nextLong()) + PathLayout.TEMP_SUFFIX);
        final long length = Math.max(DirectIo.ALIGNMENT, alignment.offset());
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment name = arena.allocateFrom(probe.toString(), StandardCharsets.UTF_8);
            final MemorySegment buffer = arena.allocate(length, Math.max(DirectIo.ALIGNMENT, alignment.memory()));
            int fd = libc.open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, FILE_MODE);
            if (fd < 0)
            {
                return Optional.of("open(O_DIRECT) of " + probe + " failed: " + libc.strerror(fd));
            }
            try
            {
                final long written = libc.pwriteFully(fd, buffer, 0);
                libc.close(fd);
                if (written < 0)
                {
                    return Optional.of("an aligned O_DIRECT write to " + probe + " failed: " + libc.strerror((int)written));
                }
                fd = libc.open(name, O_RDONLY | O_CLOEXEC | O_DIRECT, 0);
                if (fd < 0)
                {
                    return Optional.of("open(O_DIRECT) for reading " + probe + " failed: " + libc.strerror(fd));
                }
                final long read = libc.preadFully(fd, buffer, 0);
                libc.close(fd);
                if (read != length)
                {
                    return Optional.of("an aligned O_DIRECT read of " + probe + " failed: "
                        + (read < 0 ? libc.strerror((int)read) : read + " bytes"));
                }
                return Optional.empty();
            }
            finally
            {
                libc.unlink(name);
            }
        }
    }

    /**
     * A {@code stat}, never an {@code open}: on a network filesystem an open is a round trip more and
     * revalidates the file's data for close-to-open consistency. {@link LibC} has no stat call yet, so
     * this one goes through NIO and allocates the path and the attributes; the tier asks only when its
     * directory is shared (or its index overflowed), otherwise it answers from its index.
     */
    @Override
    public TierStatus exists(final long keyHigh, final long keyLow, final long expectedSize)
    {
        final Path page = layout.pagePath(keyHigh, keyLow);
        try
        {
            final long size = Files.readAttributes(page, BasicFileAttributes.class).size();
            if (size == expectedSize || TrailerBlock.isCompact(size, expectedSize))
            {
                return TierStatus.OK;
            }
            preparePagePath(keyHigh, keyLow);
            return corrupt(size, expectedSize);
        }
        catch (final NoSuchFileException ex)
        {
            return TierStatus.NOT_FOUND;
        }
        catch (final IOException ex)
        {
            final TierStatus status = ChannelFileStore.statusOf(ex);
            if (errors.shouldLog())
            {
                errors.log(System.Logger.Level.WARNING, "stat " + page + " failed: " + PosixSettings.describe(ex) + " -> " + status);
            }
            return status;
        }
    }

    @Override
    public TierStatus read(final long keyHigh, final long keyLow, final MemorySegment destination)
    {
        preparePagePath(keyHigh, keyLow);
        final TierStatus status = readPage(destination, direct.appliesTo(destination.address(), destination.byteSize()));
        // null: the filesystem refused O_DIRECT after all; DirectIo is off now, so this retry is buffered.
        return status != null ? status : readPage(destination, false);
    }

    private TierStatus readPage(final MemorySegment destination, final boolean useDirect)
    {
        final int fd = libc.open(pagePath, O_RDONLY | O_CLOEXEC | (useDirect ? O_DIRECT : 0), 0);
        if (fd < 0)
        {
            if (fd == -EINVAL && useDirect)
            {
                direct.refused("open of " + describe(pagePath));
                return null;
            }
            return fd == -ENOENT ? TierStatus.NOT_FOUND : failure("open", pagePath, fd);
        }
        try
        {
            final long size = libc.size(fd);
            if (size < 0)
            {
                return failure("lseek", pagePath, (int)size);
            }
            if (size != destination.byteSize() && !TrailerBlock.isCompact(size, destination.byteSize()))
            {
                return corrupt(size, destination.byteSize());
            }
            // A compact file (a frame without its last block's zeros, as another node's 3FS tier writes) is read into
            // the whole destination: the read stops at its end, aligned for O_DIRECT, and the zeros are put back.
            final long read = readFully(fd, destination);
            if (read == -EINVAL && useDirect)
            {
                direct.refused("read of " + describe(pagePath));
                return null;
            }
            if (read < 0)
            {
                return failure("read", pagePath, (int)read);
            }
            // Fewer bytes than the size just seen: truncated in place by someone else; never a partial OK.
            if (read != size)
            {
                return corrupt(read, size);
            }
            if (size != destination.byteSize())
            {
                TrailerBlock.restore(destination, size);
            }
            return TierStatus.OK;
        }
        finally
        {
            libc.close(fd);
        }
    }

    @Override
    public int writeBatchSize()
    {
        return tempPending.length;
    }

    @Override
    public TierStatus writeTemp(final int slot, final long keyHigh, final long keyLow, final MemorySegment source)
    {
        tempPending[slot] = false;
        prepareSlotPagePath(slot, keyHigh, keyLow);
        final MemorySegment tempPath = slotTempPaths[slot];
        boolean useDirect = direct.appliesTo(source.address(), source.byteSize());
        boolean madeDirectories = false;
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            final int fd = openNewTemp(slot, useDirect, attempt == 0);
            if (fd < 0)
            {
                if (fd == -ENOENT && !madeDirectories)
                {
                    // A level-3 leaf's first write, one the start-up thread has not reached yet, or a
                    // directory removed behind the tier's back: make it, then retry once.
                    final int rc = makeDirectories();
                    if (rc < 0)
                    {
                        return failure("mkdir", directoryPath, rc);
                    }
                    madeDirectories = true;
                    directoriesMade++;
                    continue;
                }
                if (fd == -EEXIST)
                {
                    continue;
                }
                if (fd == -EINVAL && useDirect)
                {
                    direct.refused("open of " + describe(tempPath));
                    useDirect = false;
                    continue;
                }
                return failure("open", tempPath, fd);
            }
            final long written = writeFully(fd, source);
            if (written < 0)
            {
                libc.close(fd);
                libc.unlink(tempPath);
                if (written == -EINVAL && useDirect)
                {
                    direct.refused("write of " + describe(tempPath));
                    useDirect = false;
                    continue;
                }
                return failure("write", tempPath, (int)written);
            }
            if (fsync)
            {
                final int rc = datasync(fd);
                if (rc < 0)
                {
                    libc.close(fd);
                    libc.unlink(tempPath);
                    return failure("fdatasync", tempPath, rc);
                }
            }
            final int rc = libc.close(fd);
            if (rc < 0)
            {
                // Network filesystems report write errors at close: the temp file cannot be trusted.
                libc.unlink(tempPath);
                return failure("close", tempPath, rc);
            }
            tempPending[slot] = true;
            return TierStatus.OK;
        }
        return failure("open", tempPath, -EEXIST);
    }

    /**
     * @param tempPath  a temp file's name, not there yet
     * @param useDirect whether to open it O_DIRECT
     * @return the descriptor, open for writing, or {@code -errno}
     */
    final int openTemp(final MemorySegment tempPath, final boolean useDirect)
    {
        return libc.open(tempPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | (useDirect ? O_DIRECT : 0), FILE_MODE);
    }

    /**
     * Marks the slot's temp file as complete, for a subclass that wrote it another way.
     *
     * @param slot a write slot whose temp file is written, flushed when configured, and closed
     */
    final void tempWritten(final int slot)
    {
        tempPending[slot] = true;
    }

    /**
     * Moves a page's bytes from the file; {@link UringFileStore} does it through its ring.
     *
     * @param fd          the page file, open for reading
     * @param destination the pool slice; its size is the count
     * @return bytes read (fewer only at end of file), or {@code -errno}
     */
    long readFully(final int fd, final MemorySegment destination)
    {
        return libc.preadFully(fd, destination, 0);
    }

    /**
     * Moves a page's bytes to the file; {@link UringFileStore} does it through its ring.
     *
     * @param fd     the temp file, open for writing
     * @param source the pool slice
     * @return bytes written (all of them), or {@code -errno}
     */
    long writeFully(final int fd, final MemorySegment source)
    {
        return libc.pwriteFully(fd, source, 0);
    }

    /**
     * @param fd the temp file
     * @return 0, or {@code -errno}
     */
    int datasync(final int fd)
    {
        return libc.fdatasync(fd);
    }

    @Override
    public TierStatus publishTemp(final int slot)
    {
        int rc = libc.rename(slotTempPaths[slot], slotPagePaths[slot]);
        if (rc == -ENOENT && tempIsSpare[slot])
        {
            // A spare lives in the tier's root, so nothing made the page's directory before: make it, then rename again.
            pageLength = (int)loadSlotPagePath(slot);
            final int made = makeDirectories();
            if (made == 0)
            {
                directoriesMade++;
                rc = libc.rename(slotTempPaths[slot], slotPagePaths[slot]);
            }
        }
        if (rc < 0)
        {
            discardTemp(slot);
            return failure("rename to " + describe(slotPagePaths[slot]) + " from", slotTempPaths[slot], rc);
        }
        tempPending[slot] = false;
        return TierStatus.OK;
    }

    @Override
    public void discardTemp(final int slot)
    {
        if (tempPending[slot])
        {
            tempPending[slot] = false;
            libc.unlink(slotTempPaths[slot]);
        }
    }

    @Override
    public TierStatus unlink(final long keyHigh, final long keyLow)
    {
        preparePagePath(keyHigh, keyLow);
        final int rc = libc.unlink(pagePath);
        if (rc == 0)
        {
            return TierStatus.OK;
        }
        return rc == -ENOENT ? TierStatus.NOT_FOUND : failure("unlink", pagePath, rc);
    }

    @Override
    public long directoriesMade()
    {
        return directoriesMade;
    }

    void preparePagePath(final long keyHigh, final long keyLow)
    {
        pageLength = layout.writePagePath(keyHigh, keyLow, path);
        LibC.putCString(pagePath, 0, path, pageLength);
    }

    /** Builds a write's page path in its slot; {@link #prepareTempPath} and {@link #makeDirectories} build on it. */
    final void prepareSlotPagePath(final int slot, final long keyHigh, final long keyLow)
    {
        pageLength = layout.writePagePath(keyHigh, keyLow, path);
        LibC.putCString(slotPagePaths[slot], 0, path, pageLength);
    }

    /** Copies the slot's page path back into {@link #path}, for {@link #makeDirectories}; @return its length */
    private long loadSlotPagePath(final int slot)
    {
        final MemorySegment cPath = slotPagePaths[slot];
        int length = 0;
        while (cPath.get(java.lang.foreign.ValueLayout.JAVA_BYTE, length) != 0)
        {
            path[length] = cPath.get(java.lang.foreign.ValueLayout.JAVA_BYTE, length);
            length++;
        }
        return length;
    }

    /** A fresh temp name beside the page path last built by {@link #prepareSlotPagePath}, in the same slot. */
    final void prepareTempPath(final int slot)
    {
        final int tempLength = PathLayout.appendTempSuffix(path, pageLength, token, tempCounter++);
        LibC.putCString(slotTempPaths[slot], 0, path, tempLength);
    }

    /** Makes the page's directory: the leaf alone when its parents exist (the usual case), else every level. */
    private int makeDirectories()
    {
        final int levels = layout.levels();
        LibC.putCString(directoryPath, 0, path, layout.directoryLength(levels));
        final int leaf = libc.mkdir(directoryPath, DIRECTORY_MODE);
        if (leaf != -ENOENT)
        {
            return leaf == -EEXIST ? 0 : leaf;
        }
        for (int level = 1; level <= levels; level++)
        {
            LibC.putCString(directoryPath, 0, path, layout.directoryLength(level));
            final int rc = libc.mkdir(directoryPath, DIRECTORY_MODE);
            if (rc < 0 && rc != -EEXIST)
            {
                return rc;
            }
        }
        return 0;
    }

    /** Reads the name back from its native buffer: only failures describe a path, so only they allocate the string. */
    private static String describe(final MemorySegment pathBuffer)
    {
        return pathBuffer.getString(0, StandardCharsets.UTF_8);
    }

    private TierStatus failure(final String operation, final MemorySegment pathBuffer, final int rc)
    {
        final TierStatus status = statusOf(-rc);
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.WARNING, operation + " " + describe(pathBuffer) + " failed: " + libc.strerror(rc)
                + " (errno " + -rc + ") -> " + status);
        }
        return status;
    }

    private TierStatus corrupt(final long size, final long expected)
    {
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.WARNING, "page file " + describe(pagePath) + " has " + size + " bytes, expected "
                + expected + " -> CORRUPT");
        }
        return TierStatus.CORRUPT;
    }

    /**
     * @param errno a positive error number
     * @return NO_SPACE for a full disk or quota, IO_ERROR otherwise
     */
    static TierStatus statusOf(final int errno)
    {
        return errno == ENOSPC || errno == EDQUOT ? TierStatus.NO_SPACE : TierStatus.IO_ERROR;
    }
}

package io.kvtier.engine.pool;

import io.kvtier.client.pool.PagePoolDescriptor;
import io.kvtier.nativeaccess.NativeAccess;
import io.kvtier.nativeaccess.libc.LibC;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The file an engine owns as its pool: how it becomes the owner, and how it lets go.
 *
 * <p>Ownership is an open-file-description lock ({@code F_OFD_SETLK}) on byte
 * {@link PagePoolDescriptor#ENGINE_LOCK_BYTE}, held through a descriptor that nothing else in the
 * process uses. Java's {@code FileLock} is not enough: it is a classic POSIX record lock, which the
 * process loses when it closes <em>any</em> descriptor of the file (a refused second
 * {@code Engine.start}, a {@code PagePool.attach(...).close()}), after which another process would
 * "take over" a live pool. Without native access the engine falls back to {@code FileLock} and says
 * so in its log; the heartbeat check below still applies.
 *
 * <p>What is at {@code pool.path} decides what happens:
 * <ul>
 *   <li>nothing: a new file is built under a temporary name and hard-linked into place (the link
 *       fails if another engine got there first, and the whole procedure starts again);</li>
 *   <li>a directory, or a file that does not start with the pool magic: refused, and left untouched;</li>
 *   <li>a pool whose lock is held, or whose heartbeat is fresh and whose creator is alive (whatever
 *       the lock says: an older engine may have lost its lock): refused, naming the owner;</li>
 *   <li>a pool left by a dead engine: its header is marked {@link PagePoolDescriptor#STATE_SUPERSEDED},
 *       and a new file, built under a temporary name, is renamed over it. The old inode lives on for
 *       every client that still maps it, with its bytes unchanged, and the new file's epoch is the old
 *       one plus one.</li>
 * </ul>
 * A new file is created at its full length, and the blocks of its first {@code allocateFirst} bytes
 * (header, metadata, index and a first share of the frames) are allocated before it is published
 * ({@code posix_fallocate}); {@link PoolGrowth} allocates the rest in the background, and no page is
 * handed out before its blocks are, so a filesystem that fills up later cannot fault a store into the
 * pool. A pool larger than the filesystem's free space is refused at once, naming {@code pool.path} and
 * the free space. Without native access the whole file is written with zeros before it is published.
 */
final class PoolFile
{
    private static final System.Logger LOG = System.getLogger(PoolFile.class.getName());
    static final String TEMP_INFIX = ".new.";
    private static final AtomicLong TEMP_SEQUENCE = new AtomicLong();
    private static final int ZERO_CHUNK = 1 << 20;

    private final Path path;
    private final Path temp;
    private final FileChannel channel;
    private final int lockFd;
    private final FileLock fallbackLock;
    private final Object fileKey;
    private final long epoch;
    private final boolean replacing;
    /** Bytes from the file's start whose blocks are allocated. */
    private final long allocatedLength;
    private Previous previous;
    private boolean published;
    /** The geometry of the pool being built, when the dead engine's pages are to be adopted; else null. */
    private final PagePoolDescriptor.Layout adoptInto;
    /** The dead engine's pool state as found, before it was marked superseded. */
    private final int previousState;
    private PreviousPool adoptable;
    private String adoptRefusal;

    /** The dead engine's file, kept locked until the new one is in place. */
    private record Previous(FileChannel channel, int lockFd, FileLock fallbackLock)
    {
    }

    private PoolFile(final Path path, final Path temp, final FileChannel channel, final int lockFd, final FileLock fallbackLock,
                     final Object fileKey, final long epoch, final Previous previous, final int previousState, final PagePoolDescriptor.Layout adoptInto,
                     final long allocatedLength)
    {
        this.allocatedLength = allocatedLength;
        this.previousState = previousState;
        this.adoptInto = adoptInto;
        this.path = path;
        this.temp = temp;
        this.channel = channel;
        this.lockFd = lockFd;
        this.fallbackLock = fallbackLock;
        this.fileKey = fileKey;
        this.epoch = epoch;
        this.previous = previous;
        this.replacing = previous != null;
    }

    /**
     * Becomes the owner of a new pool file as {@link #prepare(Path, long, PagePoolDescriptor.Layout)} does,
     * letting a dead engine's pool go at once.
     *
     * @param path       the pool file
     * @param fileLength its length
     * @return the new, locked and allocated file
     * @throws IOException as the other form says
     */
    static PoolFile prepare(final Path path, final long fileLength) throws IOException
    {
        return prepare(path, fileLength, null, fileLength);
    }

    /**
     * Becomes the owner of a new pool file for {@code path}, not yet visible there: the caller maps and
     * formats it, then {@link #publish}es it.
     *
     * @param path       the pool file
     * @param fileLength its length
     * @param adoptInto  the new pool's layout when a dead engine's pool found at the path is to be kept
     *                   mapped for a warm restart ({@link #takeAdoptable}); null to let it go at once
     * @param allocateFirst bytes from the start of the file whose blocks are allocated now (at most
     *                   {@code fileLength}); the rest are left to {@link PoolGrowth}
     * @return the new, locked file, of its full length, with its first {@link #allocatedLength()} bytes allocated
     * @throws PoolPathException  if {@code path} is a directory or a file that is not a pool, or the
     *                            filesystem cannot hold the pool
     * @throws PoolOwnedException if a live engine owns the pool at {@code path}
     * @throws IOException        if the file cannot be created
     */
    static PoolFile prepare(final Path path, final long fileLength, final PagePoolDescriptor.Layout adoptInto, final long allocateFirst)
        throws IOException
    {
        return prepare(path, fileLength, adoptInto, allocateFirst, LibC.instance());
    }

    /**
     * As {@link #prepare(Path, long, PagePoolDescriptor.Layout, long)}, with the libc front given: empty acts as a JVM without
     * native access, for tests.
     */
    static PoolFile prepare(final Path path, final long fileLength, final PagePoolDescriptor.Layout adoptInto, final long allocateFirst,
                            final Optional<LibC> libc) throws IOException
    {
        ExistingPoolFiles.removeStaleTemps(path);
        for (int attempt = 0; ; attempt++)
        {
            final BasicFileAttributes attributes = ExistingPoolFiles.attributes(path);
            Previous previous = null;
            long previousEpoch = 0;
            int previousState = 0;
            if (attributes != null)
            {
                if (attributes.isDirectory())
                {
                    throw new PoolPathException("pool.path = \"" + path + "\" is a directory; it must name a file (for example "
                        + path.resolve("kvtier-pool") + ")");
                }
                if (!attributes.isRegularFile())
                {
                    throw new PoolPathException("pool.path = \"" + path + "\" exists and is not a regular file; kvtier leaves it alone: choose another pool.path");
                }
                final Claim claim = claimExisting(path, libc);
                if (claim == null)
                {
                    if (attempt > 8)
                    {
                        throw new IOException("pool.path = \"" + path + "\" kept changing while this engine tried to take it over; is another engine starting on it?");
                    }
                    continue; // replaced between open and lock: look again
                }
                previous = claim.previous();
                previousEpoch = claim.epoch();
                previousState = claim.state();
            }
            try
            {
                return create(path, fileLength, libc, previousEpoch + 1, previous, previousState, adoptInto,
                    Math.max(0, Math.min(fileLength, allocateFirst)));
            }
            catch (final IOException | RuntimeException ex)
            {
                release(previous);
                throw ex;
            }
        }
    }

    private record Claim(Previous previous, long epoch, int state)
    {
    }

    /** @return the locked dead pool, or null when the file at the path changed under us */
    private static Claim claimExisting(final Path path, final Optional<LibC> libc) throws IOException
    {
        final FileChannel channel;
        int fd = -1;
        if (libc.isPresent())
        {
            try (Arena arena = Arena.ofConfined())
            {
                fd = libc.get().open(cString(arena, path), LibC.O_RDWR | LibC.O_CLOEXEC, 0);
            }
            if (fd == -LibC.ENOENT)
            {
                return null;
            }
            if (fd < 0)
            {
                throw new IOException("cannot open pool.path = \"" + path + "\": " + libc.get().strerror(fd));
            }
            // The same inode as the descriptor that will hold the lock, even if the path is replaced meanwhile.
            channel = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        else
        {
            try
            {
                channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            }
            catch (final NoSuchFileException ex)
            {
                return null;
            }
        }
        FileLock fallbackLock = null;
        boolean keep = false;
        try
        {
            final ByteBuffer header = ExistingPoolFiles.readHeader(channel);
            if (header == null || header.getLong(PagePoolDescriptor.MAGIC_OFFSET) != PagePoolDescriptor.MAGIC)
            {
                throw new PoolPathException("pool.path = \"" + path + "\" is an existing file of " + channel.size() + " bytes that is not a kvtier pool"
                    + ExistingPoolFiles.describeStart(channel) + "; kvtier never overwrites such a file: remove it yourself or choose another pool.path");
            }
            if (libc.isPresent())
            {
                final int rc = libc.get().ofdLock(fd, LibC.F_WRLCK, PagePoolDescriptor.ENGINE_LOCK_BYTE, 1);
                if (rc == -LibC.EAGAIN || rc == -LibC.EACCES)
                {
                    throw new PoolOwnedException(ExistingPoolFiles.describeOwner(path, header, "") + "; stop that engine or set pool.path to another file");
                }
                if (rc != 0)
                {
                    throw new IOException("cannot lock pool.path = \"" + path + "\": " + libc.get().strerror(rc));
                }
                if (!ExistingPoolFiles.sameFile(path, Path.of("/proc/self/fd/" + fd)))
                {
                    return null;
                }
            }
            else
            {
                fallbackLock = tryFallbackLock(channel);
                if (fallbackLock == null)
                {
                    throw new PoolOwnedException(ExistingPoolFiles.describeOwner(path, header, "") + "; stop that engine or set pool.path to another file");
                }
            }
            final ByteBuffer locked = ExistingPoolFiles.readHeader(channel);
            final int state = locked.getInt(PagePoolDescriptor.POOL_STATE_OFFSET);
            final long pid = locked.getLong(PagePoolDescriptor.CREATOR_PID_OFFSET);
            final long beatAge = System.currentTimeMillis() - locked.getLong(PagePoolDescriptor.HEARTBEAT_OFFSET);
            if (state == PagePoolDescriptor.STATE_OPEN && beatAge < PagePoolDescriptor.HEARTBEAT_STALE_MS && ExistingPoolFiles.processAlive(pid))
            {
                throw new PoolOwnedException(ExistingPoolFiles.describeOwner(path, locked, ", although its lock is free (an engine of an older kvtier, or one"
                    + " that lost its lock)") + "; stop that engine, or wait until its heartbeat is "
                    + PagePoolDescriptor.HEARTBEAT_STALE_MS + " ms old, or set pool.path to another file");
            }
            final long epoch = locked.getInt(PagePoolDescriptor.LAYOUT_VERSION_OFFSET) >= 2 ? locked.getLong(PagePoolDescriptor.EPOCH_OFFSET) : 0;
            LOG.log(System.Logger.Level.INFO, "taking over pool file " + path + " left by engine pid " + pid + " ("
                + (state == PagePoolDescriptor.STATE_CLOSED ? "closed cleanly" : "not running any more, heartbeat " + beatAge + " ms old")
                + "); clients still mapping it see it superseded");
            final ByteBuffer superseded = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            superseded.putInt(0, PagePoolDescriptor.STATE_SUPERSEDED);
            channel.write(superseded, PagePoolDescriptor.POOL_STATE_OFFSET);
            keep = true;
            return new Claim(new Previous(channel, fd, fallbackLock), epoch, state);
        }
        finally
        {
            if (!keep)
            {
                release(new Previous(channel, fd, fallbackLock));
            }
        }
    }

    private static PoolFile create(final Path path, final long fileLength, final Optional<LibC> libc, final long epoch, final Previous previous,
                                   final int previousState, final PagePoolDescriptor.Layout adoptInto, final long allocateFirst) throws IOException
    {
        if (libc.isEmpty() && PoolFilesystem.isHugetlbfs(path.toAbsolutePath().getParent()))
        {
            // Without LibC the file would be zero-filled with write(2), which hugetlbfs refuses (EINVAL): say why, not "no space".
            throw new PoolPathException("pool.path = \"" + path + "\" is on hugetlbfs, whose files can be allocated and mapped but not"
                + " written with write(2); allocating one needs native access (posix_fallocate through LibC), which this JVM lacks: "
                + NativeAccess.unavailableReason().orElse("LibC could not be bound, see its log line") + ". Start the JVM with"
                + " --enable-native-access=io.kvtier.nativeaccess (ALL-UNNAMED on the class path), as the kvtier launcher does, or put"
                + " pool.path on tmpfs (/dev/shm)");
        }
        // Refuse a file that cannot fit before allocating any of it: on tmpfs the blocks are memory, and
        // allocating up to the filesystem's limit first would push the whole machine into its OOM killer.
        final long usable = PoolFilesystem.usableBytes(path.toAbsolutePath().getParent());
        final long replaced = Files.isRegularFile(path) ? Files.size(path) : 0;
        if (fileLength > usable + replaced)
        {
            throw noSpace(path, fileLength, "it is larger than the free space");
        }
        final Path temp = path.resolveSibling(path.getFileName() + TEMP_INFIX + ProcessHandle.current().pid() + "." + TEMP_SEQUENCE.incrementAndGet());
        int fd = -1;
        FileChannel channel = null;
        FileLock fallbackLock = null;
        long allocatedLength;
        boolean done = false;
        try
        {
            if (libc.isPresent())
            {
                try (Arena arena = Arena.ofConfined())
                {
                    fd = libc.get().open(cString(arena, temp), LibC.O_RDWR | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC, 0600);
                }
                if (fd < 0)
                {
                    throw new PoolPathException("cannot create the pool file for pool.path = \"" + path + "\" (as " + temp + "): " + libc.get().strerror(fd));
                }
                final int locked = libc.get().ofdLock(fd, LibC.F_WRLCK, PagePoolDescriptor.ENGINE_LOCK_BYTE, 1);
                if (locked != 0)
                {
                    throw new IOException("cannot lock the new pool file " + temp + ": " + libc.get().strerror(locked));
                }
                // The full length first, as a hole past the share allocated now: clients map the whole file at once.
                final int sized = libc.get().ftruncate(fd, fileLength);
                if (sized != 0)
                {
                    throw noSpace(path, fileLength, libc.get().strerror(sized));
                }
                final int allocated = libc.get().posixFallocate(fd, 0, allocateFirst);
                if (allocated != 0)
                {
                    throw noSpace(path, fileLength, libc.get().strerror(allocated));
                }
                allocatedLength = allocateFirst;
                channel = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ, StandardOpenOption.WRITE);
            }
            else
            {
                channel = FileChannel.open(temp, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                fallbackLock = tryFallbackLock(channel);
                if (fallbackLock == null)
                {
                    throw new IOException("cannot lock the new pool file " + temp);
                }
                zeroFill(path, channel, fileLength);
                allocatedLength = fileLength;
            }
            final Object key = Files.readAttributes(temp, BasicFileAttributes.class).fileKey();
            final PoolFile file = new PoolFile(path, temp, channel, fd, fallbackLock, key, epoch, previous, previousState, adoptInto, allocatedLength);
            done = true;
            return file;
        }
        finally
        {
            if (!done)
            {
                release(new Previous(channel, fd, fallbackLock));
                Files.deleteIfExists(temp);
            }
        }
    }

    private static PoolPathException noSpace(final Path path, final long fileLength, final String reason)
    {
        long free = -1;
        try
        {
            free = PoolFilesystem.usableBytes(path.toAbsolutePath().getParent());
        }
        catch (final IOException ignored)
        {
            // the message says the free space is unknown
        }
        return new PoolPathException("cannot allocate the " + human(fileLength) + " pool file at pool.path = \"" + path + "\": " + reason
            + "; its filesystem has " + (free < 0 ? "an unknown amount" : human(free)) + " free. Lower pool.size or move pool.path to a larger filesystem");
    }

    private static void zeroFill(final Path path, final FileChannel channel, final long fileLength) throws IOException
    {
        final ByteBuffer zeros = ByteBuffer.allocateDirect(ZERO_CHUNK);
        long position = 0;
        try
        {
            while (position < fileLength)
            {
                zeros.clear().limit((int)Math.min(ZERO_CHUNK, fileLength - position));
                position += channel.write(zeros, position);
            }
        }
        catch (final IOException ex)
        {
            throw noSpace(path, fileLength, String.valueOf(ex.getMessage()));
        }
    }

    /**
     * Makes the prepared file the pool at its path: renamed over a dead engine's file, or linked where
     * there was none.
     *
     * @return false if another engine created a pool at the path meanwhile (nothing was changed: abandon
     *         this file and prepare again)
     * @throws IOException if the file cannot be moved into place
     */
    boolean publish() throws IOException
    {
        if (replacing)
        {
            try
            {
                Files.move(temp, path, StandardCopyOption.ATOMIC_MOVE);
            }
            catch (final AtomicMoveNotSupportedException ex)
            {
                throw new IOException("cannot rename the new pool file over pool.path = \"" + path + "\": " + ex.getMessage(), ex);
            }
            keepAdoptable();
            release(previous);
            previous = null;
        }
        else
        {
            try
            {
                // A link fails if another engine created the pool meanwhile, where a rename would replace it.
                Files.createLink(path, temp);
                Files.deleteIfExists(temp);
            }
            catch (final FileAlreadyExistsException ex)
            {
                return false;
            }
            catch (final UnsupportedOperationException | java.nio.file.FileSystemException ex)
            {
                if (ex instanceof FileAlreadyExistsException)
                {
                    return false;
                }
                // A filesystem without hard links: a move that refuses an existing target, checked just before.
                LOG.log(System.Logger.Level.DEBUG, "no hard link on the filesystem of " + path + " (" + ex.getMessage() + "); moving instead");
                try
                {
                    Files.move(temp, path);
                }
                catch (final FileAlreadyExistsException raced)
                {
                    return false;
                }
            }
        }
        published = true;
        return true;
    }

    /**
     * Maps the dead engine's file read-only before letting go of it, when its pages are to be adopted: the
     * mapping keeps its inode and bytes, now that the new file has its path. A pool that cannot be adopted
     * is let go, and why is kept for the log ({@link #adoptRefusal}).
     */
    private void keepAdoptable()
    {
        if (adoptInto == null || previous == null || previous.channel() == null)
        {
            return;
        }
        try
        {
            adoptable = PreviousPool.open(previous.channel(), path, previousState, adoptInto.pageSize(), adoptInto.frameLength());
        }
        catch (final PreviousPool.Refused ex)
        {
            adoptRefusal = ex.getMessage();
        }
        catch (final IOException | RuntimeException ex)
        {
            adoptRefusal = "it could not be mapped: " + ex;
        }
    }

    /**
     * Hands over the dead engine's pool, mapped for adoption; the caller closes it.
     *
     * @return the pool, or null when there was none, adoption was not asked for, or it was refused
     */
    PreviousPool takeAdoptable()
    {
        final PreviousPool taken = adoptable;
        adoptable = null;
        return taken;
    }

    /** @return why the dead engine's pool found at the path was not kept for adoption, or null */
    String adoptRefusal()
    {
        return adoptRefusal;
    }

    /** Gives up a file that was never published: unlocks and removes it. */
    void abandon()
    {
        release(previous);
        previous = null;
        release(new Previous(channel, lockFd, fallbackLock));
        try
        {
            Files.deleteIfExists(temp);
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "could not remove the unpublished pool file " + temp + ": " + ex.getMessage());
        }
    }

    /** @return the channel that maps the file */
    FileChannel channel()
    {
        return channel;
    }

    /** @return bytes from the start of the file whose blocks were allocated when it was created */
    long allocatedLength()
    {
        return allocatedLength;
    }

    /** @return the epoch the new header carries */
    long epoch()
    {
        return epoch;
    }

    /** @return the descriptor that holds the lock, or -1 without native access */
    int lockFd()
    {
        return lockFd;
    }

    /**
     * Lets go of the file: removes it from the path if it is still this file there, then unlocks.
     *
     * @param delete whether to remove it
     */
    void close(final boolean delete)
    {
        try
        {
            if (delete && published && ExistingPoolFiles.sameFileKey(path, fileKey))
            {
                Files.deleteIfExists(path);
            }
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "could not delete pool file " + path + ": " + ex.getMessage());
        }
        finally
        {
            if (adoptable != null)
            {
                adoptable.close();
                adoptable = null;
            }
            release(previous);
            release(new Previous(channel, lockFd, fallbackLock));
        }
    }

    private static void release(final Previous held)
    {
        if (held == null)
        {
            return;
        }
        try
        {
            if (held.fallbackLock() != null && held.fallbackLock().isValid())
            {
                held.fallbackLock().release();
            }
            if (held.channel() != null)
            {
                held.channel().close();
            }
        }
        catch (final IOException ex)
        {
            LOG.log(System.Logger.Level.WARNING, "could not close a pool file channel: " + ex.getMessage());
        }
        if (held.lockFd() >= 0)
        {
            LibC.instance().ifPresent(libc -> libc.close(held.lockFd()));
        }
    }

    private static FileLock tryFallbackLock(final FileChannel channel) throws IOException
    {
        LOG.log(System.Logger.Level.WARNING, "native access is off, so the pool is locked with a per-process FileLock, which any other"
            + " close of the pool file in this process drops; enable native access (--enable-native-access=ALL-UNNAMED) for a lock of the engine's own");
        try
        {
            return channel.tryLock(PagePoolDescriptor.ENGINE_LOCK_BYTE, 1, false);
        }
        catch (final OverlappingFileLockException ex)
        {
            return null;
        }
    }

    private static MemorySegment cString(final Arena arena, final Path path)
    {
        final byte[] bytes = path.toString().getBytes(StandardCharsets.UTF_8);
        final MemorySegment text = arena.allocate(bytes.length + 1L);
        LibC.putCString(text, 0, bytes, bytes.length);
        return text;
    }

    private static String human(final long bytes)
    {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (double)(1L << 20));
    }
}

package io.kvtier.nativeaccess.libc;

import io.kvtier.nativeaccess.NativeAccess;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The file-descriptor front: what a process needs to work on a file it holds open rather than on a
 * name, so that no check is ever made on one file and the work done on another. Opening a path with
 * no symbolic link anywhere on it ({@code openat2} with {@code RESOLVE_NO_SYMLINKS}, or component by
 * component with {@code O_NOFOLLOW} where the kernel lacks it), the owner, type, mode and size of an
 * open file ({@code statx} on the descriptor), mapping a descriptor ({@code mmap}), anonymous memory
 * files that can be sealed against resizing ({@code memfd_create}, {@code F_ADD_SEALS}), and the
 * access mode a descriptor was opened with.
 *
 * <p>Calls return their C result or {@code -errno}. Use {@link #instance()}: empty, with the reason
 * logged once, when native access is off or the architecture has no {@link LinuxAbi} row.
 */
public final class FileDescriptors
{
    /** {@code O_PATH}: a descriptor that names a file without opening it for I/O (same on every supported architecture). */
    public static final int O_PATH = 0x200000;
    /** {@code O_NONBLOCK}: opening never waits (a FIFO, a device). */
    public static final int O_NONBLOCK = 0x800;
    /** {@code O_NOCTTY}. */
    public static final int O_NOCTTY = 0x100;
    /** {@code O_ACCMODE}. */
    public static final int O_ACCMODE = 3;

    /** {@code S_IFMT}. */
    public static final int S_IFMT = 0170000;
    /** {@code S_IFREG}. */
    public static final int S_IFREG = 0100000;
    /** {@code S_ISUID}. */
    public static final int S_ISUID = 04000;
    /** {@code S_ISGID}. */
    public static final int S_ISGID = 02000;

    /** {@code F_SEAL_SEAL}: no more seals. */
    public static final int F_SEAL_SEAL = 1;
    /** {@code F_SEAL_SHRINK}: the file cannot get smaller. */
    public static final int F_SEAL_SHRINK = 2;
    /** {@code F_SEAL_GROW}: the file cannot get larger. */
    public static final int F_SEAL_GROW = 4;

    static final int AT_FDCWD = -100;
    static final int AT_EMPTY_PATH = 0x1000;
    static final int STATX_BASIC_STATS = 0x7ff;
    static final int RESOLVE_NO_MAGICLINKS = 0x02;
    static final int RESOLVE_NO_SYMLINKS = 0x04;
    static final int MFD_CLOEXEC = 1;
    static final int MFD_ALLOW_SEALING = 2;
    static final int F_GETFL = 3;
    static final int F_ADD_SEALS = 1033;
    static final int PROT_READ = 1;
    static final int PROT_WRITE = 2;
    static final int MAP_SHARED = 1;
    /** {@code SYS_openat2}: 437 on every architecture (the numbers were unified from 424 on). */
    static final long SYS_OPENAT2 = 437;
    static final int ENOSYS = 38;

    /** {@code struct open_how}: flags, mode, resolve, each u64. */
    static final StructLayout OPEN_HOW_LAYOUT = MemoryLayout.structLayout(
        JAVA_LONG.withName("flags"), JAVA_LONG.withName("mode"), JAVA_LONG.withName("resolve"));
    /** The fields of {@code struct statx} read here; the struct is 256 bytes. */
    static final long STATX_LENGTH = 256;
    static final long STX_UID_OFFSET = 20;
    static final long STX_GID_OFFSET = 24;
    static final long STX_MODE_OFFSET = 28;
    static final long STX_INO_OFFSET = 32;
    static final long STX_SIZE_OFFSET = 40;
    static final long STX_DEV_MAJOR_OFFSET = 136;
    static final long STX_DEV_MINOR_OFFSET = 140;

    /**
     * What {@code statx} says of an open file.
     *
     * @param uid   its owner
     * @param gid   its group
     * @param mode  type and permission bits
     * @param size  bytes
     * @param inode its inode number
     * @param device its device, major and minor packed as {@code major << 32 | minor}
     */
    public record Status(int uid, int gid, int mode, long size, long inode, long device)
    {
        /** @return whether it is a regular file */
        public boolean isRegularFile()
        {
            return (mode & S_IFMT) == S_IFREG;
        }

        /** @return whether it is the same file as {@code other} */
        public boolean sameFile(final Status other)
        {
            return inode == other.inode && device == other.device;
        }
    }

    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO$vh = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final Optional<FileDescriptors> INSTANCE = load();

    private final LinuxAbi abi;
    private final MethodHandle syscall$mh;
    private final MethodHandle openat$mh;
    private final MethodHandle statx$mh;
    private final MethodHandle fcntl$mh;
    private final MethodHandle fchown$mh;
    private final MethodHandle fchmod$mh;
    private final MethodHandle memfd_create$mh;
    private final MethodHandle mmap$mh;
    private final MethodHandle munmap$mh;
    private final MethodHandle close$mh;
    private final MethodHandle posix_fallocate$mh;
    private final MethodHandle ftruncate$mh;
    private volatile boolean openat2Missing;

    private FileDescriptors(final SymbolLookup libc, final LinuxAbi abi)
    {
        this.abi = abi;
        syscall$mh = NativeAccess.downcall(libc, "syscall", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(1));
        openat$mh = NativeAccess.downcall(libc, "openat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(3));
        statx$mh = NativeAccess.downcall(libc, "statx", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS), CAPTURE_ERRNO);
        fcntl$mh = NativeAccess.downcall(libc, "fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
        fchown$mh = NativeAccess.downcall(libc, "fchown", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        fchmod$mh = NativeAccess.downcall(libc, "fchmod", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        memfd_create$mh = NativeAccess.downcall(libc, "memfd_create", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        mmap$mh = NativeAccess.downcall(libc, "mmap", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG),
            CAPTURE_ERRNO);
        munmap$mh = NativeAccess.downcall(libc, "munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG), CAPTURE_ERRNO);
        close$mh = NativeAccess.downcall(libc, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        // posix_fallocate returns its error number instead of setting errno.
        posix_fallocate$mh = NativeAccess.downcall(libc, "posix_fallocate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
        ftruncate$mh = NativeAccess.downcall(libc, "ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), CAPTURE_ERRNO);
    }

    private static Optional<FileDescriptors> load()
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            NativeAccess.logFallback("FileDescriptors", denied.get());
            return Optional.empty();
        }
        final Optional<LinuxAbi> abi = LinuxAbi.current();
        if (abi.isEmpty())
        {
            NativeAccess.logFallback("FileDescriptors", LinuxAbi.unsupportedReason(System.getProperty("os.arch")));
            return Optional.empty();
        }
        try
        {
            final FileDescriptors front = new FileDescriptors(Linker.nativeLinker().defaultLookup(), abi.get());
            NativeAccess.logChoice("FileDescriptors", "FFM downcalls into the process's libc");
            return Optional.of(front);
        }
        catch (final UnsupportedOperationException | IllegalCallerException | IllegalArgumentException ex)
        {
            NativeAccess.logFallback("FileDescriptors", String.valueOf(ex.getMessage()));
            return Optional.empty();
        }
    }

    /** @return the front, or empty (reason logged) when it cannot be reached */
    public static Optional<FileDescriptors> instance()
    {
        return INSTANCE;
    }

    private static int errno(final MemorySegment state)
    {
        return (int)ERRNO$vh.get(state, 0L);
    }

    /**
     * Opens {@code path} only if no component of it is a symbolic link ("magic" links of /proc
     * included), so that what is opened is what the path names in the directory tree as it stands.
     * With {@code openat2} where the kernel has it (5.6 and later), else walking from the root one
     * component at a time with {@code O_NOFOLLOW}, each directory opened relative to the one before.
     *
     * @param path  an absolute path
     * @param flags {@code O_*} flags for the last component (close-on-exec is added)
     * @return a descriptor, or {@code -errno}: {@code -ELOOP} when a component is a symbolic link
     *         (the component walk says {@code -ENOTDIR} for a directory component that is one),
     *         {@code -EINVAL} for a path that is not absolute
     */
    public int openWithoutSymlinks(final String path, final int flags)
    {
        if (!path.startsWith("/") || path.indexOf('\0') >= 0)
        {
            return -LibC.EINVAL;
        }
        if (!openat2Missing)
        {
            final int fd = openat2(path, flags | LibC.O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
            if (fd != -ENOSYS)
            {
                return fd;
            }
            openat2Missing = true;
        }
        return openByComponents(path, flags);
    }

    /**
     * The component walk {@link #openWithoutSymlinks} falls back to; public so that tests run it
     * on kernels that have {@code openat2}.
     *
     * @param path  an absolute path
     * @param flags {@code O_*} flags for the last component
     * @return a descriptor, or {@code -errno}
     */
    public int openByComponents(final String path, final int flags)
    {
        if (!path.startsWith("/"))
        {
            return -LibC.EINVAL;
        }
        final String[] parts = path.substring(1).split("/");
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            int dir = (int)openat$mh.invokeExact(state, AT_FDCWD, arena.allocateFrom("/"), O_PATH | abi.oDirectory() | LibC.O_CLOEXEC, 0);
            if (dir < 0)
            {
                return -errno(state);
            }
            int last = -1;
            for (int i = 0; i < parts.length; i++)
            {
                final String part = parts[i];
                if (part.isEmpty() || part.equals("."))
                {
                    continue;
                }
                final boolean isLast = lastNonEmpty(parts) == i;
                final int componentFlags = isLast ? flags | LibC.O_NOFOLLOW | LibC.O_CLOEXEC : O_PATH | abi.oDirectory() | LibC.O_NOFOLLOW | LibC.O_CLOEXEC;
                final int next = (int)openat$mh.invokeExact(state, dir, arena.allocateFrom(part), componentFlags, 0);
                final int error = next < 0 ? errno(state) : 0;
                final int ignored = (int)close$mh.invokeExact(state, dir);
                if (next < 0)
                {
                    // A directory component that is a link gives ENOTDIR here (O_PATH|O_DIRECTORY|O_NOFOLLOW), the last one ELOOP.
                    return -error;
                }
                dir = next;
                if (isLast)
                {
                    last = next;
                }
            }
            if (last < 0)
            {
                final int ignored = (int)close$mh.invokeExact(state, dir);
                return -LibC.EINVAL; // the root itself
            }
            return last;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private static int lastNonEmpty(final String[] parts)
    {
        for (int i = parts.length - 1; i >= 0; i--)
        {
            if (!parts[i].isEmpty() && !parts[i].equals("."))
            {
                return i;
            }
        }
        return -1;
    }

    private int openat2(final String path, final int flags, final int resolve)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final MemorySegment how = arena.allocate(OPEN_HOW_LAYOUT);
            how.set(JAVA_LONG, 0, flags & 0xFFFFFFFFL);
            how.set(JAVA_LONG, 8, 0L);
            how.set(JAVA_LONG, 16, resolve);
            long fd;
            do
            {
                fd = (long)syscall$mh.invokeExact(state, SYS_OPENAT2, (long)AT_FDCWD, arena.allocateFrom(path).address(), how.address(),
                    OPEN_HOW_LAYOUT.byteSize());
            }
            while (fd < 0 && errno(state) == LibC.EINTR);
            return fd >= 0 ? (int)fd : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * {@code statx} of an open descriptor.
     *
     * @param fd a descriptor (an {@code O_PATH} one will do)
     * @return its status
     * @throws IOException naming the errno when the call fails
     */
    public Status status(final int fd) throws IOException
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final MemorySegment buffer = arena.allocate(STATX_LENGTH, 8);
            final int rc = (int)statx$mh.invokeExact(state, fd, arena.allocateFrom(""), AT_EMPTY_PATH, STATX_BASIC_STATS, buffer);
            if (rc != 0)
            {
                throw new IOException("statx of descriptor " + fd + " failed: errno " + errno(state));
            }
            return new Status(buffer.get(JAVA_INT, STX_UID_OFFSET), buffer.get(JAVA_INT, STX_GID_OFFSET),
                Short.toUnsignedInt(buffer.get(ValueLayout.JAVA_SHORT, STX_MODE_OFFSET)), buffer.get(JAVA_LONG, STX_SIZE_OFFSET),
                buffer.get(JAVA_LONG, STX_INO_OFFSET),
                ((long)buffer.get(JAVA_INT, STX_DEV_MAJOR_OFFSET) << 32) | Integer.toUnsignedLong(buffer.get(JAVA_INT, STX_DEV_MINOR_OFFSET)));
        }
        catch (final IOException ex)
        {
            throw ex;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd a descriptor
     * @return the access mode it was opened with ({@code O_RDONLY}, {@code O_WRONLY}, {@code O_RDWR}), or {@code -errno}
     */
    public int accessMode(final int fd)
    {
        final int flags = fcntl(fd, F_GETFL, 0);
        return flags < 0 ? flags : flags & O_ACCMODE;
    }

    /**
     * Seals a memory file against the changes named ({@code F_SEAL_*}).
     *
     * @param fd    a descriptor from {@link #memoryFile}
     * @param seals the seals
     * @return 0, or {@code -errno}
     */
    public int addSeals(final int fd, final int seals)
    {
        final int rc = fcntl(fd, F_ADD_SEALS, seals);
        return rc < 0 ? rc : 0;
    }

    private int fcntl(final int fd, final int command, final int argument)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final int rc = (int)fcntl$mh.invokeExact(state, fd, command, argument);
            return rc >= 0 ? rc : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd  a descriptor
     * @param uid new owner, -1 to keep
     * @param gid new group, -1 to keep
     * @return 0, or {@code -errno}
     */
    public int changeOwner(final int fd, final int uid, final int gid)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final int rc = (int)fchown$mh.invokeExact(state, fd, uid, gid);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd   a descriptor
     * @param mode permission bits
     * @return 0, or {@code -errno}
     */
    public int changeMode(final int fd, final int mode)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final int rc = (int)fchmod$mh.invokeExact(state, fd, mode);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Creates an anonymous memory file (no name in any directory), close-on-exec, that may be sealed.
     *
     * @param name   a name for {@code /proc/<pid>/fd} listings only
     * @param length its size, every block allocated at once, so that a full memory limit refuses it
     *               here rather than faulting a later store
     * @return a descriptor, or {@code -errno}
     */
    public int memoryFile(final String name, final long length)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final int fd = (int)memfd_create$mh.invokeExact(state, arena.allocateFrom(name), MFD_CLOEXEC | MFD_ALLOW_SEALING);
            if (fd < 0)
            {
                return -errno(state);
            }
            int rc = (int)ftruncate$mh.invokeExact(state, fd, length);
            if (rc != 0)
            {
                rc = -errno(state);
            }
            else
            {
                final int allocated = (int)posix_fallocate$mh.invokeExact(fd, 0L, length);
                rc = -allocated;
            }
            if (rc != 0)
            {
                final int ignored = (int)close$mh.invokeExact(state, fd);
                return rc;
            }
            return fd;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Allocates every block of {@code [0, length)} of a file now.
     *
     * @param fd     a descriptor open for writing
     * @param length bytes
     * @return 0, or {@code -errno} ({@code -ENOSPC} when the filesystem is full)
     */
    public int allocate(final int fd, final long length)
    {
        try
        {
            return -(int)posix_fallocate$mh.invokeExact(fd, 0L, length);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Maps {@code length} bytes of a descriptor shared and read-write. The mapping lives until
     * {@code arena} closes, and does not need the descriptor after this call.
     *
     * @param fd     a descriptor open read-write
     * @param length bytes from offset 0
     * @param arena  owns the mapping: closing it unmaps
     * @return the mapping
     * @throws IOException naming the errno when {@code mmap} fails (EACCES for a descriptor not open read-write)
     */
    @SuppressWarnings("restricted")
    public MemorySegment map(final int fd, final long length, final Arena arena) throws IOException
    {
        final long address;
        final int error;
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment state = scratch.allocate(CAPTURE_LAYOUT);
            final MemorySegment mapped = (MemorySegment)mmap$mh.invokeExact(state, MemorySegment.NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                0L);
            address = mapped.address();
            error = address == -1L ? errno(state) : 0;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
        if (address == -1L)
        {
            throw new IOException("mmap of " + length + " bytes of descriptor " + fd + " failed: errno " + error);
        }
        return MemorySegment.ofAddress(address).reinterpret(length, arena, segment -> unmap(address, length));
    }

    private void unmap(final long address, final long length)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final int ignored = (int)munmap$mh.invokeExact(state, MemorySegment.ofAddress(address), length);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd a descriptor
     * @return 0, or {@code -errno}
     */
    public int close(final int fd)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final int rc = (int)close$mh.invokeExact(state, fd);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(final Throwable t)
    {
        if (t instanceof RuntimeException re)
        {
            return re;
        }
        if (t instanceof Error e)
        {
            throw e;
        }
        return new IllegalStateException(t);
    }
}

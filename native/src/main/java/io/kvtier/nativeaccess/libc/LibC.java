package io.kvtier.nativeaccess.libc;

import io.kvtier.nativeaccess.NativeAccess;

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
import java.nio.charset.StandardCharsets;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The libc front: positional file I/O and path calls on native pointers.
 *
 * <p>Every call returns the C result when it succeeds and {@code -errno} when it fails, the kernel's
 * own convention, so callers need no separate errno read. errno is captured by the linker
 * ({@code captureCallState}) into a per-thread buffer, never read after the fact.
 *
 * <p>Use {@link #instance()}: it is empty, with the reason logged once, when native access is off or
 * a symbol is missing, and callers then fall back to {@link java.nio.channels.FileChannel}.
 */
public final class LibC
{
    /** {@code O_RDONLY}. */
    public static final int O_RDONLY = 0;
    /** {@code O_WRONLY}. */
    public static final int O_WRONLY = 1;
    /** {@code O_RDWR}. */
    public static final int O_RDWR = 2;
    /** {@code O_CREAT}. */
    public static final int O_CREAT = 0x40;
    /** {@code O_EXCL}. */
    public static final int O_EXCL = 0x80;
    /** {@code O_TRUNC}. */
    public static final int O_TRUNC = 0x200;
    /**
     * {@code O_DIRECT} of this JVM's architecture (x86_64 0x4000, aarch64 0x10000: see
     * {@link LinuxAbi}); 0 on an architecture without a row, where {@link #instance()} is empty.
     */
    public static final int O_DIRECT = LinuxAbi.current().map(LinuxAbi::oDirect).orElse(0);
    /** {@code O_CLOEXEC}. */
    public static final int O_CLOEXEC = 0x80000;
    /** {@code O_NOFOLLOW}: fail (ELOOP) rather than open through a symbolic link; per architecture, 0 where unknown. */
    public static final int O_NOFOLLOW = LinuxAbi.current().map(LinuxAbi::oNofollow).orElse(0);

    /** {@code ENOENT}. */
    public static final int ENOENT = 2;
    /** {@code EINTR}. */
    public static final int EINTR = 4;
    /** {@code EIO}. */
    public static final int EIO = 5;
    /** {@code EAGAIN}. */
    public static final int EAGAIN = 11;
    /** {@code EACCES}. */
    public static final int EACCES = 13;
    /** {@code EEXIST}. */
    public static final int EEXIST = 17;
    /** {@code EINVAL}. */
    public static final int EINVAL = 22;
    /** {@code ENOSPC}. */
    public static final int ENOSPC = 28;
    /** {@code EROFS}. */
    public static final int EROFS = 30;
    /** {@code EDQUOT}. */
    public static final int EDQUOT = 122;
    /** {@code MADV_HUGEPAGE}: back the range with transparent huge pages where the kernel allows it. */
    public static final int MADV_HUGEPAGE = 14;

    /** {@code ESRCH}. */
    public static final int ESRCH = 3;
    /** {@code EPERM}. */
    public static final int EPERM = 1;

    /** {@code SEEK_SET}. */
    public static final int SEEK_SET = 0;
    /** {@code SEEK_END}. */
    public static final int SEEK_END = 2;

    /** {@code F_OFD_GETLK}: which open file description lock, if any, would block this one. */
    public static final int F_OFD_GETLK = 36;
    /** {@code F_OFD_SETLK}: take or drop a lock owned by the open file description, without waiting. */
    public static final int F_OFD_SETLK = 37;
    /** {@code F_RDLCK}. */
    public static final short F_RDLCK = 0;
    /** {@code F_WRLCK}. */
    public static final short F_WRLCK = 1;
    /** {@code F_UNLCK}. */
    public static final short F_UNLCK = 2;

    /**
     * {@code struct flock} on 64-bit Linux (x86_64, aarch64, riscv64, ppc64le alike): l_type,
     * l_whence, 4 bytes of padding, l_start, l_len, l_pid, 4 bytes of padding; 32 bytes.
     */
    public static final StructLayout FLOCK_LAYOUT = MemoryLayout.structLayout(
        ValueLayout.JAVA_SHORT.withName("l_type"),
        ValueLayout.JAVA_SHORT.withName("l_whence"),
        MemoryLayout.paddingLayout(4),
        JAVA_LONG.withName("l_start"),
        JAVA_LONG.withName("l_len"),
        JAVA_INT.withName("l_pid"),
        MemoryLayout.paddingLayout(4));
    private static final long L_TYPE_OFFSET = FLOCK_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("l_type"));
    private static final long L_WHENCE_OFFSET = FLOCK_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("l_whence"));
    private static final long L_START_OFFSET = FLOCK_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("l_start"));
    private static final long L_LEN_OFFSET = FLOCK_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("l_len"));
    private static final long L_PID_OFFSET = FLOCK_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("l_pid"));

    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO$vh = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final Optional<LibC> INSTANCE = load();

    private final MethodHandle open$mh;
    private final MethodHandle close$mh;
    private final MethodHandle pread$mh;
    private final MethodHandle pwrite$mh;
    /** pread and pwrite taking the buffer as a plain address, for a part of a segment without a slice object per call. */
    private final MethodHandle preadAt$mh;
    private final MethodHandle pwriteAt$mh;
    private final MethodHandle fsync$mh;
    private final MethodHandle fdatasync$mh;
    private final MethodHandle lseek$mh;
    private final MethodHandle rename$mh;
    private final MethodHandle unlink$mh;
    private final MethodHandle mkdir$mh;
    private final MethodHandle strerror$mh;
    private final MethodHandle fcntl$mh;
    private final MethodHandle posix_fallocate$mh;
    private final MethodHandle ftruncate$mh;
    private final MethodHandle madvise$mh;
    private final MethodHandle kill$mh;
    private final MethodHandle memcpy$mh;

    private final ThreadLocal<MemorySegment> captureState = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE_LAYOUT));
    private final ThreadLocal<MemorySegment> flock = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(FLOCK_LAYOUT));

    private LibC(final SymbolLookup libc)
    {
        open$mh = NativeAccess.downcall(libc, "open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
        close$mh = NativeAccess.downcall(libc, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        pread$mh = NativeAccess.downcall(libc, "pread", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
        pwrite$mh = NativeAccess.downcall(libc, "pwrite", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
        // The same functions: on x86-64 and AArch64 a pointer argument is passed as a 64-bit integer is.
        preadAt$mh = NativeAccess.downcall(libc, "pread", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
        pwriteAt$mh = NativeAccess.downcall(libc, "pwrite", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
        fsync$mh = NativeAccess.downcall(libc, "fsync", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        fdatasync$mh = NativeAccess.downcall(libc, "fdatasync", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        lseek$mh = NativeAccess.downcall(libc, "lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
        rename$mh = NativeAccess.downcall(libc, "rename", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), CAPTURE_ERRNO);
        unlink$mh = NativeAccess.downcall(libc, "unlink", FunctionDescriptor.of(JAVA_INT, ADDRESS), CAPTURE_ERRNO);
        mkdir$mh = NativeAccess.downcall(libc, "mkdir", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        strerror$mh = NativeAccess.downcall(libc, "strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        fcntl$mh = NativeAccess.downcall(libc, "fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
        // posix_fallocate returns its error number instead of setting errno.
        posix_fallocate$mh = NativeAccess.downcall(libc, "posix_fallocate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
        ftruncate$mh = NativeAccess.downcall(libc, "ftruncate", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), CAPTURE_ERRNO);
        madvise$mh = NativeAccess.downcall(libc, "madvise", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
        kill$mh = NativeAccess.downcall(libc, "kill", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        // memcpy cannot fail and sets no errno: a plain downcall, its returned pointer (dst) ignored.
        memcpy$mh = NativeAccess.downcall(libc, "memcpy", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    }

    private static Optional<LibC> load()
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            NativeAccess.logFallback("LibC", denied.get());
            return Optional.empty();
        }
        if (LinuxAbi.current().isEmpty())
        {
            NativeAccess.logFallback("LibC", LinuxAbi.unsupportedReason(System.getProperty("os.arch")));
            return Optional.empty();
        }
        try
        {
            final LibC libc = new LibC(Linker.nativeLinker().defaultLookup());
            NativeAccess.logChoice("LibC", "FFM downcalls into the process's libc");
            return Optional.of(libc);
        }
        catch (final UnsupportedOperationException | IllegalCallerException | IllegalArgumentException ex)
        {
            NativeAccess.logFallback("LibC", String.valueOf(ex.getMessage()));
            return Optional.empty();
        }
    }

    /** @return the front, or empty (reason logged) when libc cannot be reached */
    public static Optional<LibC> instance()
    {
        return INSTANCE;
    }

    private int errno(final MemorySegment state)
    {
        return (int)ERRNO$vh.get(state, 0L);
    }

    /**
     * @param path  a NUL-terminated path
     * @param flags {@code O_*} flags
     * @param mode  permission bits for a created file
     * @return a file descriptor, or {@code -errno}
     */
    public int open(final MemorySegment path, final int flags, final int mode)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int fd = (int)open$mh.invokeExact(state, path, flags, mode);
            return fd >= 0 ? fd : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd a file descriptor
     * @return 0, or {@code -errno}
     */
    public int close(final int fd)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)close$mh.invokeExact(state, fd);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Reads until {@code buffer} is full or end of file, retrying short reads and {@code EINTR}.
     *
     * @param fd     a file descriptor
     * @param buffer where the bytes go; its size is the count
     * @param offset file position of the first byte
     * @return bytes read (less than the buffer only at end of file), or {@code -errno}
     */
    public long preadFully(final int fd, final MemorySegment buffer, final long offset)
    {
        final MemorySegment state = captureState.get();
        final long size = buffer.byteSize();
        long done = 0;
        try
        {
            while (done < size)
            {
                // A conditional expression would reach invokeExact typed as Object: give it its own local.
                final MemorySegment rest = done == 0 ? buffer : buffer.asSlice(done);
                final long moved = outcome((long)pread$mh.invokeExact(state, fd, rest, size - done, offset + done), false, state);
                if (moved > 0)
                {
                    done += moved;
                }
                else if (moved != RETRY)
                {
                    return moved == END ? done : moved;
                }
            }
            return done;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Reads until {@code length} bytes from {@code from} in {@code buffer} are filled or end of file, as
     * {@link #preadFully(int, MemorySegment, long)} does for a slice, without making one.
     *
     * @param fd     a file descriptor
     * @param buffer a native segment holding the bytes' place
     * @param from   where in it they go
     * @param length how many
     * @param offset file position of the first byte
     * @return bytes read (less than {@code length} only at end of file), or {@code -errno}
     */
    public long preadFully(final int fd, final MemorySegment buffer, final long from, final long length, final long offset)
    {
        return transferAt(preadAt$mh, fd, buffer, from, length, offset, false);
    }

    /**
     * Writes {@code length} bytes from {@code from} in {@code buffer}, as {@link #pwriteFully(int, MemorySegment, long)}
     * does for a slice, without making one.
     *
     * @param fd     a file descriptor
     * @param buffer a native segment holding the bytes
     * @param from   where in it they start
     * @param length how many
     * @param offset file position of the first byte
     * @return bytes written ({@code length} on success), or {@code -errno}
     */
    public long pwriteFully(final int fd, final MemorySegment buffer, final long from, final long length, final long offset)
    {
        return transferAt(pwriteAt$mh, fd, buffer, from, length, offset, true);
    }

    private long transferAt(final MethodHandle call, final int fd, final MemorySegment buffer, final long from, final long length,
                            final long offset, final boolean write)
    {
        java.util.Objects.checkFromIndexSize(from, length, buffer.byteSize());
        if (!buffer.isNative())
        {
            throw new IllegalArgumentException("a heap segment has no address to pass: " + buffer);
        }
        final MemorySegment state = captureState.get();
        final long address = buffer.address() + from;
        long done = 0;
        try
        {
            while (done < length)
            {
                final long moved = outcome((long)call.invokeExact(state, fd, address + done, length - done, offset + done), write, state);
                if (moved > 0)
                {
                    done += moved;
                }
                else if (moved != RETRY)
                {
                    return moved == END ? done : moved;
                }
            }
            return done;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
        finally
        {
            // The call reaches the bytes by a plain address: an automatic arena must not free them before it returns.
            java.lang.ref.Reference.reachabilityFence(buffer);
        }
    }

    /** {@link #outcome}: end of file, the bytes so far are all there are. */
    private static final long END = 0;
    /** {@link #outcome}: interrupted by a signal, call again. */
    private static final long RETRY = Long.MIN_VALUE;

    /**
     * @param n     what one pread or pwrite returned
     * @param write whether it was a write, for which 0 bytes moved is an error (EIO), not the end of a file
     * @param state the captured errno
     * @return the bytes it moved (more than 0), {@link #END}, {@link #RETRY}, or {@code -errno}
     */
    private long outcome(final long n, final boolean write, final MemorySegment state)
    {
        if (n > 0)
        {
            return n;
        }
        if (n == 0 && !write)
        {
            return END;
        }
        final int errno = n == 0 ? EIO : errno(state);
        return errno == EINTR ? RETRY : -errno;
    }

    /**
     * Writes the whole buffer, retrying short writes and {@code EINTR}.
     *
     * @param fd     a file descriptor
     * @param buffer the bytes to write
     * @param offset file position of the first byte
     * @return bytes written (always the buffer's size on success), or {@code -errno}
     */
    public long pwriteFully(final int fd, final MemorySegment buffer, final long offset)
    {
        final MemorySegment state = captureState.get();
        final long size = buffer.byteSize();
        long done = 0;
        try
        {
            while (done < size)
            {
                // A conditional expression would reach invokeExact typed as Object: give it its own local.
                final MemorySegment rest = done == 0 ? buffer : buffer.asSlice(done);
                final long moved = outcome((long)pwrite$mh.invokeExact(state, fd, rest, size - done, offset + done), true, state);
                if (moved > 0)
                {
                    done += moved;
                }
                else if (moved != RETRY)
                {
                    return moved;
                }
            }
            return done;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd a file descriptor
     * @return 0, or {@code -errno}
     */
    public int fsync(final int fd)
    {
        return intCall(fsync$mh, fd);
    }

    /**
     * @param fd a file descriptor
     * @return 0, or {@code -errno}
     */
    public int fdatasync(final int fd)
    {
        return intCall(fdatasync$mh, fd);
    }

    /**
     * @param fd a file descriptor
     * @return the file's size (by seeking to its end), or {@code -errno}
     */
    public long size(final int fd)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final long rc = (long)lseek$mh.invokeExact(state, fd, 0L, SEEK_END);
            return rc >= 0 ? rc : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param from a NUL-terminated path
     * @param to   a NUL-terminated path, atomically replaced if it exists
     * @return 0, or {@code -errno}
     */
    public int rename(final MemorySegment from, final MemorySegment to)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)rename$mh.invokeExact(state, from, to);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param path a NUL-terminated path
     * @return 0, or {@code -errno}
     */
    public int unlink(final MemorySegment path)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)unlink$mh.invokeExact(state, path);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param path a NUL-terminated path
     * @param mode permission bits
     * @return 0, or {@code -errno} ({@code -EEXIST} when it is already there)
     */
    public int mkdir(final MemorySegment path, final int mode)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)mkdir$mh.invokeExact(state, path, mode);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Takes or drops a lock that belongs to the open file description of {@code fd}
     * ({@code F_OFD_SETLK}), without waiting. Unlike a classic POSIX record lock (and Java's
     * {@code FileLock}, which is one), closing another descriptor of the same file in the same
     * process does not drop it; it goes only when this description's last descriptor closes, which
     * the kernel also does when the process dies.
     *
     * @param fd     a file descriptor open for writing (for {@link #F_WRLCK})
     * @param type   {@link #F_WRLCK}, {@link #F_RDLCK} or {@link #F_UNLCK}
     * @param start  first byte of the range
     * @param length bytes in the range; 0 means to the end of the file and beyond
     * @return 0, or {@code -errno} ({@code -EAGAIN} or {@code -EACCES} when another description holds
     *         a conflicting lock)
     */
    public int ofdLock(final int fd, final short type, final long start, final long length)
    {
        final MemorySegment lock = flockFor(type, start, length);
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)fcntl$mh.invokeExact(state, fd, F_OFD_SETLK, lock);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Asks which lock would block a write lock on the range ({@code F_OFD_GETLK}). Locks held
     * through {@code fd}'s own open file description never conflict with it.
     *
     * @param fd     a file descriptor of the file
     * @param start  first byte of the range
     * @param length bytes in the range
     * @return {@link #F_UNLCK} when nothing would block, the blocking lock's type otherwise, or
     *         {@code -errno}
     */
    public int ofdLockHolder(final int fd, final long start, final long length)
    {
        final MemorySegment lock = flockFor(F_WRLCK, start, length);
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)fcntl$mh.invokeExact(state, fd, F_OFD_GETLK, lock);
            return rc == 0 ? lock.get(ValueLayout.JAVA_SHORT, L_TYPE_OFFSET) : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private MemorySegment flockFor(final short type, final long start, final long length)
    {
        final MemorySegment lock = flock.get();
        lock.fill((byte)0);
        lock.set(ValueLayout.JAVA_SHORT, L_TYPE_OFFSET, type);
        lock.set(ValueLayout.JAVA_SHORT, L_WHENCE_OFFSET, (short)SEEK_SET);
        lock.set(JAVA_LONG, L_START_OFFSET, start);
        lock.set(JAVA_LONG, L_LEN_OFFSET, length);
        // OFD locks require l_pid = 0; the kernel reports -1 there for an OFD holder.
        lock.set(JAVA_INT, L_PID_OFFSET, 0);
        return lock;
    }

    /**
     * Allocates the file's blocks for {@code [offset, offset + length)}, growing it if needed, so
     * that later stores through a mapping cannot fault for want of space.
     *
     * @param fd     a file descriptor open for writing
     * @param offset first byte
     * @param length bytes
     * @return 0, or {@code -errno} ({@code -ENOSPC} when the filesystem is too full)
     */
    public int posixFallocate(final int fd, final long offset, final long length)
    {
        try
        {
            final int rc = (int)posix_fallocate$mh.invokeExact(fd, offset, length);
            return rc == 0 ? 0 : -rc;
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param fd     a file descriptor open for writing
     * @param length the new size
     * @return 0, or {@code -errno}
     */
    public int ftruncate(final int fd, final long length)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)ftruncate$mh.invokeExact(state, fd, length);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Advises the kernel about a range of a mapping ({@code madvise(2)}).
     *
     * @param address the range's start, page aligned
     * @param length  its bytes
     * @param advice  {@link #MADV_HUGEPAGE}, say
     * @return 0, or {@code -errno} ({@code -EINVAL} when the kernel has no such advice, transparent huge pages
     *         compiled out for {@link #MADV_HUGEPAGE})
     */
    public int madvise(final MemorySegment address, final long length, final int advice)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)madvise$mh.invokeExact(state, address, length, advice);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Sends a signal; with signal 0, only checks that the process exists, allocating nothing (unlike
     * {@link ProcessHandle#of}).
     *
     * @param pid    a process id
     * @param signal a signal number, or 0
     * @return 0, or {@code -errno} ({@code -ESRCH} when no such process exists, {@code -EPERM} when it
     *         exists but belongs to another user)
     */
    public int kill(final int pid, final int signal)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)kill$mh.invokeExact(state, pid, signal);
            return rc == 0 ? 0 : -errno(state);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * Copies bytes with the C library's {@code memcpy}; the baseline that {@code kvtier bench copy}
     * holds the engine's own copies ({@link MemorySegment#copy}) against.
     *
     * @param dst    native memory to copy into
     * @param src    native memory to copy from, not overlapping {@code dst}
     * @param length bytes to copy
     * @throws IndexOutOfBoundsException if {@code length} is negative or exceeds either segment
     * @throws IllegalArgumentException  if either segment is on the Java heap
     */
    public void memcpy(final MemorySegment dst, final MemorySegment src, final long length)
    {
        if (length < 0 || length > dst.byteSize() || length > src.byteSize())
        {
            throw new IndexOutOfBoundsException("memcpy of " + length + " bytes from a segment of " + src.byteSize()
                + " into one of " + dst.byteSize());
        }
        try
        {
            final MemorySegment ignored = (MemorySegment)memcpy$mh.invokeExact(dst, src, length);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    /**
     * @param errno an error number (either sign)
     * @return the C library's description, e.g. "No such file or directory"
     */
    @SuppressWarnings("restricted")
    public String strerror(final int errno)
    {
        try
        {
            final MemorySegment text = (MemorySegment)strerror$mh.invokeExact(Math.abs(errno));
            return text.reinterpret(1024).getString(0, StandardCharsets.UTF_8);
        }
        catch (final Throwable t)
        {
            throw rethrow(t);
        }
    }

    private int intCall(final MethodHandle handle, final int fd)
    {
        final MemorySegment state = captureState.get();
        try
        {
            final int rc = (int)handle.invokeExact(state, fd);
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

    /**
     * Writes {@code text} as a NUL-terminated string into {@code dst}, for building paths without
     * allocating.
     *
     * @param dst    a native buffer
     * @param offset where the first byte goes
     * @param text   ASCII bytes
     * @param length how many of them
     * @return the offset just past the terminating NUL
     */
    public static long putCString(final MemorySegment dst, final long offset, final byte[] text, final int length)
    {
        MemorySegment.copy(text, 0, dst, ValueLayout.JAVA_BYTE, offset, length);
        dst.set(ValueLayout.JAVA_BYTE, offset + length, (byte)0);
        return offset + length + 1;
    }
}

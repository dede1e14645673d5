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
    /** {@code O_DIRECT} (x86_64 and aarch64 differ; this is x86_64). */
    public static final int O_DIRECT = 0x4000;
    /** {@code O_CLOEXEC}. */
    public static final int O_CLOEXEC = 0x80000;

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

    /** {@code SEEK_END}. */
    public static final int SEEK_END = 2;

    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO$vh = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final Optional<LibC> INSTANCE = load();

    private final MethodHandle open$mh;
    private final MethodHandle close$mh;
    private final MethodHandle pread$mh;
    private final MethodHandle pwrite$mh;
    private final MethodHandle fsync$mh;
    private final MethodHandle fdatasync$mh;
    private final MethodHandle lseek$mh;
    private final MethodHandle rename$mh;
    private final MethodHandle unlink$mh;
    private final MethodHandle mkdir$mh;
    private final MethodHandle strerror$mh;

    private final ThreadLocal<MemorySegment> captureState = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE_LAYOUT));

    private LibC(final SymbolLookup libc)
    {
        open$mh = NativeAccess.downcall(libc, "open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
        close$mh = NativeAccess.downcall(libc, "close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        pread$mh = NativeAccess.downcall(libc, "pread", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
        pwrite$mh = NativeAccess.downcall(libc, "pwrite", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
        fsync$mh = NativeAccess.downcall(libc, "fsync", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        fdatasync$mh = NativeAccess.downcall(libc, "fdatasync", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
        lseek$mh = NativeAccess.downcall(libc, "lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
        rename$mh = NativeAccess.downcall(libc, "rename", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), CAPTURE_ERRNO);
        unlink$mh = NativeAccess.downcall(libc, "unlink", FunctionDescriptor.of(JAVA_INT, ADDRESS), CAPTURE_ERRNO);
        mkdir$mh = NativeAccess.downcall(libc, "mkdir", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), CAPTURE_ERRNO);
        strerror$mh = NativeAccess.downcall(libc, "strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }

    private static Optional<LibC> load()
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            NativeAccess.logFallback("LibC", denied.get());
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
                final long n = (long)pread$mh.invokeExact(state, fd, rest, size - done, offset + done);
                if (n > 0)
                {
                    done += n;
                }
                else if (n == 0)
                {
                    break;
                }
                else
                {
                    final int errno = errno(state);
                    if (errno != EINTR)
                    {
                        return -errno;
                    }
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
                final long n = (long)pwrite$mh.invokeExact(state, fd, rest, size - done, offset + done);
                if (n > 0)
                {
                    done += n;
                }
                else
                {
                    final int errno = n == 0 ? EIO : errno(state);
                    if (errno != EINTR)
                    {
                        return -errno;
                    }
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

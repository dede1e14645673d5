package io.kvtier.nativeaccess.uring.bindings;

import io.kvtier.nativeaccess.NativeAccess;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Constants and functions of {@code native/include/io_uring_ffm.h} (the project's own declarations
 * of the io_uring ABI plus the libc calls around it), in the shape jextract generates for a header
 * class: canonical C layouts, one {@code static} getter per macro or enum constant, and for each
 * function a private holder class whose {@code DESC} and {@code HANDLE} are created on first use,
 * with {@code name(..)}, {@code name$descriptor()} and {@code name$handle()} accessors.
 *
 * <p>Values are those of x86_64 (jextract output is per platform, and the syscall numbers differ on
 * other architectures); {@code Uring} refuses other architectures. Two things jextract cannot emit
 * are written by hand here, each marked {@code kvtier:}: io_uring has no libc wrappers, so
 * {@code io_uring_setup}, {@code io_uring_enter} and {@code io_uring_register} are the variadic
 * {@code syscall} specialised to each call's arguments; and every call that can fail captures errno
 * through {@link Linker.Option#captureCallState}, so the caller passes a segment of
 * {@link #errno$layout()} first and reads {@link #errno(MemorySegment)} from it, instead of a racy
 * read of errno afterwards. {@code native/jextract.sh} regenerates the rest for comparison.
 */
public final class io_uring_h
{
    private io_uring_h()
    {
    }

    /** {@code char}. */
    public static final ValueLayout.OfByte C_CHAR = (ValueLayout.OfByte)Linker.nativeLinker().canonicalLayouts().get("char");
    /** {@code short}. */
    public static final ValueLayout.OfShort C_SHORT = (ValueLayout.OfShort)Linker.nativeLinker().canonicalLayouts().get("short");
    /** {@code int}. */
    public static final ValueLayout.OfInt C_INT = (ValueLayout.OfInt)Linker.nativeLinker().canonicalLayouts().get("int");
    /** {@code long long}. */
    public static final ValueLayout.OfLong C_LONG_LONG = (ValueLayout.OfLong)Linker.nativeLinker().canonicalLayouts().get("long long");
    /** {@code long} (64 bits on the LP64 platforms these bindings are for). */
    public static final ValueLayout.OfLong C_LONG = (ValueLayout.OfLong)Linker.nativeLinker().canonicalLayouts().get("long");
    /** {@code void*}. */
    public static final AddressLayout C_POINTER = ((AddressLayout)Linker.nativeLinker().canonicalLayouts().get("void*"))
        .withTargetLayout(MemoryLayout.sequenceLayout(Long.MAX_VALUE, C_CHAR));

    static final SymbolLookup SYMBOL_LOOKUP = Linker.nativeLinker().defaultLookup();

    // ---------------------------------------------------------------------------------------------
    // <sys/syscall.h> (x86_64)

    private static final long __NR_io_uring_setup = 425L;
    /** @return {@code __NR_io_uring_setup} */
    public static long __NR_io_uring_setup()
    {
        return __NR_io_uring_setup;
    }

    private static final long __NR_io_uring_enter = 426L;
    /** @return {@code __NR_io_uring_enter} */
    public static long __NR_io_uring_enter()
    {
        return __NR_io_uring_enter;
    }

    private static final long __NR_io_uring_register = 427L;
    /** @return {@code __NR_io_uring_register} */
    public static long __NR_io_uring_register()
    {
        return __NR_io_uring_register;
    }

    // ---------------------------------------------------------------------------------------------
    // <errno.h>: the values io_uring and the front tell apart

    private static final int EPERM = 1;
    /** @return {@code EPERM}: the io_uring_disabled sysctl (or a seccomp filter) refused setup */
    public static int EPERM()
    {
        return EPERM;
    }

    private static final int EINTR = 4;
    /** @return {@code EINTR} */
    public static int EINTR()
    {
        return EINTR;
    }

    private static final int EIO = 5;
    /** @return {@code EIO} */
    public static int EIO()
    {
        return EIO;
    }

    private static final int EBADF = 9;
    /** @return {@code EBADF} */
    public static int EBADF()
    {
        return EBADF;
    }

    private static final int EAGAIN = 11;
    /** @return {@code EAGAIN} */
    public static int EAGAIN()
    {
        return EAGAIN;
    }

    private static final int ENOMEM = 12;
    /** @return {@code ENOMEM}: also what registering buffers beyond RLIMIT_MEMLOCK returns */
    public static int ENOMEM()
    {
        return ENOMEM;
    }

    private static final int EFAULT = 14;
    /** @return {@code EFAULT} */
    public static int EFAULT()
    {
        return EFAULT;
    }

    private static final int EBUSY = 16;
    /** @return {@code EBUSY}: the CQ ring is full and the kernel holds overflowed completions */
    public static int EBUSY()
    {
        return EBUSY;
    }

    private static final int EINVAL = 22;
    /** @return {@code EINVAL} */
    public static int EINVAL()
    {
        return EINVAL;
    }

    private static final int ENOSPC = 28;
    /** @return {@code ENOSPC} */
    public static int ENOSPC()
    {
        return ENOSPC;
    }

    private static final int ENOSYS = 38;
    /** @return {@code ENOSYS}: a kernel built without io_uring (or older than 5.1) */
    public static int ENOSYS()
    {
        return ENOSYS;
    }

    // ---------------------------------------------------------------------------------------------
    // <sys/mman.h>, <fcntl.h>, <linux/stat.h>

    private static final int PROT_READ = 0x1;
    /** @return {@code PROT_READ} */
    public static int PROT_READ()
    {
        return PROT_READ;
    }

    private static final int PROT_WRITE = 0x2;
    /** @return {@code PROT_WRITE} */
    public static int PROT_WRITE()
    {
        return PROT_WRITE;
    }

    private static final int MAP_SHARED = 0x1;
    /** @return {@code MAP_SHARED} */
    public static int MAP_SHARED()
    {
        return MAP_SHARED;
    }

    private static final int MAP_POPULATE = 0x8000;
    /** @return {@code MAP_POPULATE} */
    public static int MAP_POPULATE()
    {
        return MAP_POPULATE;
    }

    private static final int AT_FDCWD = -100;
    /** @return {@code AT_FDCWD} */
    public static int AT_FDCWD()
    {
        return AT_FDCWD;
    }

    private static final int AT_EMPTY_PATH = 0x1000;
    /** @return {@code AT_EMPTY_PATH}: statx of the descriptor itself when the path is "" */
    public static int AT_EMPTY_PATH()
    {
        return AT_EMPTY_PATH;
    }

    private static final int STATX_SIZE = 0x200;
    /** @return {@code STATX_SIZE} */
    public static int STATX_SIZE()
    {
        return STATX_SIZE;
    }

    private static final int STATX_DIOALIGN = 0x2000;
    /** @return {@code STATX_DIOALIGN} (Linux 6.1+: {@code stx_dio_mem_align}, {@code stx_dio_offset_align}) */
    public static int STATX_DIOALIGN()
    {
        return STATX_DIOALIGN;
    }

    // ---------------------------------------------------------------------------------------------
    // <linux/io_uring.h>: sqe->flags

    private static final int IOSQE_FIXED_FILE = 1 << 0;
    /** @return {@code IOSQE_FIXED_FILE}: {@code sqe->fd} is an index into the registered files */
    public static int IOSQE_FIXED_FILE()
    {
        return IOSQE_FIXED_FILE;
    }

    private static final int IOSQE_IO_DRAIN = 1 << 1;
    /** @return {@code IOSQE_IO_DRAIN} */
    public static int IOSQE_IO_DRAIN()
    {
        return IOSQE_IO_DRAIN;
    }

    private static final int IOSQE_IO_LINK = 1 << 2;
    /** @return {@code IOSQE_IO_LINK}: the next sqe starts only after this one succeeded */
    public static int IOSQE_IO_LINK()
    {
        return IOSQE_IO_LINK;
    }

    private static final int IOSQE_IO_HARDLINK = 1 << 3;
    /** @return {@code IOSQE_IO_HARDLINK} */
    public static int IOSQE_IO_HARDLINK()
    {
        return IOSQE_IO_HARDLINK;
    }

    private static final int IOSQE_ASYNC = 1 << 4;
    /** @return {@code IOSQE_ASYNC} */
    public static int IOSQE_ASYNC()
    {
        return IOSQE_ASYNC;
    }

    // io_uring_setup() flags

    private static final int IORING_SETUP_IOPOLL = 1 << 0;
    /** @return {@code IORING_SETUP_IOPOLL} */
    public static int IORING_SETUP_IOPOLL()
    {
        return IORING_SETUP_IOPOLL;
    }

    private static final int IORING_SETUP_SQPOLL = 1 << 1;
    /** @return {@code IORING_SETUP_SQPOLL} */
    public static int IORING_SETUP_SQPOLL()
    {
        return IORING_SETUP_SQPOLL;
    }

    private static final int IORING_SETUP_CQSIZE = 1 << 3;
    /** @return {@code IORING_SETUP_CQSIZE} */
    public static int IORING_SETUP_CQSIZE()
    {
        return IORING_SETUP_CQSIZE;
    }

    private static final int IORING_SETUP_CLAMP = 1 << 4;
    /** @return {@code IORING_SETUP_CLAMP} */
    public static int IORING_SETUP_CLAMP()
    {
        return IORING_SETUP_CLAMP;
    }

    private static final int IORING_SETUP_SUBMIT_ALL = 1 << 7;
    /** @return {@code IORING_SETUP_SUBMIT_ALL} */
    public static int IORING_SETUP_SUBMIT_ALL()
    {
        return IORING_SETUP_SUBMIT_ALL;
    }

    private static final int IORING_SETUP_COOP_TASKRUN = 1 << 8;
    /** @return {@code IORING_SETUP_COOP_TASKRUN} */
    public static int IORING_SETUP_COOP_TASKRUN()
    {
        return IORING_SETUP_COOP_TASKRUN;
    }

    private static final int IORING_SETUP_SINGLE_ISSUER = 1 << 12;
    /** @return {@code IORING_SETUP_SINGLE_ISSUER} */
    public static int IORING_SETUP_SINGLE_ISSUER()
    {
        return IORING_SETUP_SINGLE_ISSUER;
    }

    // enum io_uring_op

    private static final int IORING_OP_NOP = 0;
    /** @return {@code IORING_OP_NOP} */
    public static int IORING_OP_NOP()
    {
        return IORING_OP_NOP;
    }

    private static final int IORING_OP_READV = 1;
    /** @return {@code IORING_OP_READV} */
    public static int IORING_OP_READV()
    {
        return IORING_OP_READV;
    }

    private static final int IORING_OP_WRITEV = 2;
    /** @return {@code IORING_OP_WRITEV} */
    public static int IORING_OP_WRITEV()
    {
        return IORING_OP_WRITEV;
    }

    private static final int IORING_OP_FSYNC = 3;
    /** @return {@code IORING_OP_FSYNC} */
    public static int IORING_OP_FSYNC()
    {
        return IORING_OP_FSYNC;
    }

    private static final int IORING_OP_READ_FIXED = 4;
    /** @return {@code IORING_OP_READ_FIXED} */
    public static int IORING_OP_READ_FIXED()
    {
        return IORING_OP_READ_FIXED;
    }

    private static final int IORING_OP_WRITE_FIXED = 5;
    /** @return {@code IORING_OP_WRITE_FIXED} */
    public static int IORING_OP_WRITE_FIXED()
    {
        return IORING_OP_WRITE_FIXED;
    }

    private static final int IORING_OP_OPENAT = 18;
    /** @return {@code IORING_OP_OPENAT} */
    public static int IORING_OP_OPENAT()
    {
        return IORING_OP_OPENAT;
    }

    private static final int IORING_OP_CLOSE = 19;
    /** @return {@code IORING_OP_CLOSE} */
    public static int IORING_OP_CLOSE()
    {
        return IORING_OP_CLOSE;
    }

    private static final int IORING_OP_STATX = 21;
    /** @return {@code IORING_OP_STATX} */
    public static int IORING_OP_STATX()
    {
        return IORING_OP_STATX;
    }

    private static final int IORING_OP_READ = 22;
    /** @return {@code IORING_OP_READ} */
    public static int IORING_OP_READ()
    {
        return IORING_OP_READ;
    }

    private static final int IORING_OP_WRITE = 23;
    /** @return {@code IORING_OP_WRITE} */
    public static int IORING_OP_WRITE()
    {
        return IORING_OP_WRITE;
    }

    private static final int IORING_FSYNC_DATASYNC = 1 << 0;
    /** @return {@code IORING_FSYNC_DATASYNC} */
    public static int IORING_FSYNC_DATASYNC()
    {
        return IORING_FSYNC_DATASYNC;
    }

    // mmap offsets

    private static final long IORING_OFF_SQ_RING = 0L;
    /** @return {@code IORING_OFF_SQ_RING} */
    public static long IORING_OFF_SQ_RING()
    {
        return IORING_OFF_SQ_RING;
    }

    private static final long IORING_OFF_CQ_RING = 0x8000000L;
    /** @return {@code IORING_OFF_CQ_RING} */
    public static long IORING_OFF_CQ_RING()
    {
        return IORING_OFF_CQ_RING;
    }

    private static final long IORING_OFF_SQES = 0x10000000L;
    /** @return {@code IORING_OFF_SQES} */
    public static long IORING_OFF_SQES()
    {
        return IORING_OFF_SQES;
    }

    // sq_ring->flags

    private static final int IORING_SQ_NEED_WAKEUP = 1 << 0;
    /** @return {@code IORING_SQ_NEED_WAKEUP} */
    public static int IORING_SQ_NEED_WAKEUP()
    {
        return IORING_SQ_NEED_WAKEUP;
    }

    private static final int IORING_SQ_CQ_OVERFLOW = 1 << 1;
    /** @return {@code IORING_SQ_CQ_OVERFLOW}: completions wait in the kernel for room in the CQ ring */
    public static int IORING_SQ_CQ_OVERFLOW()
    {
        return IORING_SQ_CQ_OVERFLOW;
    }

    private static final int IORING_SQ_TASKRUN = 1 << 2;
    /** @return {@code IORING_SQ_TASKRUN} */
    public static int IORING_SQ_TASKRUN()
    {
        return IORING_SQ_TASKRUN;
    }

    // io_uring_enter(2) flags

    private static final int IORING_ENTER_GETEVENTS = 1 << 0;
    /** @return {@code IORING_ENTER_GETEVENTS} */
    public static int IORING_ENTER_GETEVENTS()
    {
        return IORING_ENTER_GETEVENTS;
    }

    private static final int IORING_ENTER_SQ_WAKEUP = 1 << 1;
    /** @return {@code IORING_ENTER_SQ_WAKEUP} */
    public static int IORING_ENTER_SQ_WAKEUP()
    {
        return IORING_ENTER_SQ_WAKEUP;
    }

    // io_uring_params->features

    private static final int IORING_FEAT_SINGLE_MMAP = 1 << 0;
    /** @return {@code IORING_FEAT_SINGLE_MMAP}: SQ and CQ rings share one mapping */
    public static int IORING_FEAT_SINGLE_MMAP()
    {
        return IORING_FEAT_SINGLE_MMAP;
    }

    private static final int IORING_FEAT_NODROP = 1 << 1;
    /** @return {@code IORING_FEAT_NODROP}: the kernel keeps completions that do not fit instead of dropping them */
    public static int IORING_FEAT_NODROP()
    {
        return IORING_FEAT_NODROP;
    }

    private static final int IORING_FEAT_SUBMIT_STABLE = 1 << 2;
    /** @return {@code IORING_FEAT_SUBMIT_STABLE} */
    public static int IORING_FEAT_SUBMIT_STABLE()
    {
        return IORING_FEAT_SUBMIT_STABLE;
    }

    private static final int IORING_FEAT_RW_CUR_POS = 1 << 3;
    /** @return {@code IORING_FEAT_RW_CUR_POS}: Linux 5.6, the release that added {@code IORING_OP_READ} and {@code IORING_OP_WRITE} */
    public static int IORING_FEAT_RW_CUR_POS()
    {
        return IORING_FEAT_RW_CUR_POS;
    }

    // io_uring_register(2) opcodes

    private static final int IORING_REGISTER_BUFFERS = 0;
    /** @return {@code IORING_REGISTER_BUFFERS} */
    public static int IORING_REGISTER_BUFFERS()
    {
        return IORING_REGISTER_BUFFERS;
    }

    private static final int IORING_UNREGISTER_BUFFERS = 1;
    /** @return {@code IORING_UNREGISTER_BUFFERS} */
    public static int IORING_UNREGISTER_BUFFERS()
    {
        return IORING_UNREGISTER_BUFFERS;
    }

    private static final int IORING_REGISTER_FILES = 2;
    /** @return {@code IORING_REGISTER_FILES} */
    public static int IORING_REGISTER_FILES()
    {
        return IORING_REGISTER_FILES;
    }

    private static final int IORING_UNREGISTER_FILES = 3;
    /** @return {@code IORING_UNREGISTER_FILES} */
    public static int IORING_UNREGISTER_FILES()
    {
        return IORING_UNREGISTER_FILES;
    }

    // ---------------------------------------------------------------------------------------------
    // kvtier: errno capture (jextract emits no captureCallState)

    private static final StructLayout CAPTURE_STATE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle errno$VH = CAPTURE_STATE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    /** @return the layout of the segment every errno-capturing call takes first */
    public static StructLayout errno$layout()
    {
        return CAPTURE_STATE_LAYOUT;
    }

    /**
     * @param capturedState a segment of {@link #errno$layout()} a call has just filled
     * @return the errno the call left
     */
    public static int errno(final MemorySegment capturedState)
    {
        return (int)errno$VH.get(capturedState, 0L);
    }

    // ---------------------------------------------------------------------------------------------
    // kvtier: long syscall(long number, ...) specialised per system call, variadic from argument 1.
    // Variadic arguments are passed as long or pointer, the widths syscall(2) reads them with.

    private static final class io_uring_setup
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_LONG, C_LONG, C_POINTER);
        static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, "syscall", DESC,
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(1));
    }

    /** @return {@code syscall}'s descriptor as {@code io_uring_setup} calls it */
    public static FunctionDescriptor io_uring_setup$descriptor()
    {
        return io_uring_setup.DESC;
    }

    /** @return the handle: {@code (capturedState, __NR_io_uring_setup, entries, params) -> long} */
    public static MethodHandle io_uring_setup$handle()
    {
        return io_uring_setup.HANDLE;
    }

    /**
     * {@code int io_uring_setup(u32 entries, struct io_uring_params *p)}.
     *
     * @param capturedState a segment of {@link #errno$layout()}
     * @param entries       SQ entries wanted
     * @param params        an {@link io_uring_params} the kernel fills in
     * @return the ring's file descriptor, or -1 with errno in {@code capturedState}
     */
    public static long io_uring_setup(final MemorySegment capturedState, final long entries, final MemorySegment params)
    {
        try
        {
            return (long)io_uring_setup.HANDLE.invokeExact(capturedState, __NR_io_uring_setup, entries, params);
        }
        catch (final Throwable ex)
        {
            throw new AssertionError("should not reach here", ex);
        }
    }

    private static final class io_uring_enter
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_LONG, C_LONG, C_LONG, C_LONG, C_LONG, C_POINTER, C_LONG);
        static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, "syscall", DESC,
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(1));
    }

    /** @return {@code syscall}'s descriptor as {@code io_uring_enter} calls it */
    public static FunctionDescriptor io_uring_enter$descriptor()
    {
        return io_uring_enter.DESC;
    }

    /** @return the handle: {@code (capturedState, __NR_io_uring_enter, fd, toSubmit, minComplete, flags, arg, argsz) -> long} */
    public static MethodHandle io_uring_enter$handle()
    {
        return io_uring_enter.HANDLE;
    }

    /**
     * {@code int io_uring_enter(unsigned fd, unsigned to_submit, unsigned min_complete, unsigned flags, const void *arg, size_t argsz)}.
     *
     * @param capturedState a segment of {@link #errno$layout()}
     * @param fd            the ring
     * @param toSubmit      SQEs to consume from the SQ ring
     * @param minComplete   completions to wait for (with {@code IORING_ENTER_GETEVENTS})
     * @param flags         {@code IORING_ENTER_*}
     * @param arg           a signal set or extended argument, usually {@link MemorySegment#NULL}
     * @param argsz         its size
     * @return SQEs consumed, or -1 with errno in {@code capturedState}
     */
    public static long io_uring_enter(final MemorySegment capturedState, final long fd, final long toSubmit, final long minComplete,
                                      final long flags, final MemorySegment arg, final long argsz)
    {
        try
        {
            return (long)io_uring_enter.HANDLE.invokeExact(capturedState, __NR_io_uring_enter, fd, toSubmit, minComplete, flags, arg, argsz);
        }
        catch (final Throwable ex)
        {
            throw new AssertionError("should not reach here", ex);
        }
    }

    private static final class io_uring_register
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_LONG, C_LONG, C_LONG, C_LONG, C_POINTER, C_LONG);
        static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, "syscall", DESC,
            CAPTURE_ERRNO, Linker.Option.firstVariadicArg(1));
    }

    /** @return {@code syscall}'s descriptor as {@code io_uring_register} calls it */
    public static FunctionDescriptor io_uring_register$descriptor()
    {
        return io_uring_register.DESC;
    }

    /** @return the handle: {@code (capturedState, __NR_io_uring_register, fd, opcode, arg, nrArgs) -> long} */
    public static MethodHandle io_uring_register$handle()
    {
        return io_uring_register.HANDLE;
    }

    /**
     * {@code int io_uring_register(unsigned fd, unsigned opcode, void *arg, unsigned nr_args)}.
     *
     * @param capturedState a segment of {@link #errno$layout()}
     * @param fd            the ring
     * @param opcode        {@code IORING_REGISTER_*}
     * @param arg           the opcode's argument (an {@link iovec} array, an {@code int} array)
     * @param nrArgs        its element count
     * @return 0 or a count, or -1 with errno in {@code capturedState}
     */
    public static long io_uring_register(final MemorySegment capturedState, final long fd, final long opcode, final MemorySegment arg,
                                         final long nrArgs)
    {
        try
        {
            return (long)io_uring_register.HANDLE.invokeExact(capturedState, __NR_io_uring_register, fd, opcode, arg, nrArgs);
        }
        catch (final Throwable ex)
        {
            throw new AssertionError("should not reach here", ex);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // libc

    private static final class mmap
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_POINTER, C_POINTER, C_LONG, C_INT, C_INT, C_INT, C_LONG);
        static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, "mmap", DESC, CAPTURE_ERRNO);
    }

    /** @return {@code mmap}'s descriptor */
    public static FunctionDescriptor mmap$descriptor()
    {
        return mmap.DESC;
    }

    /** @return {@code mmap}'s handle, errno-capturing */
    public static MethodHandle mmap$handle()
    {
        return mmap.HANDLE;
    }

    /**
     * {@code void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)}.
     *
     * @param capturedState a segment of {@link #errno$layout()}
     * @param addr          a hint, usually {@link MemorySegment#NULL}
     * @param length        bytes
     * @param prot          {@code PROT_*}
     * @param flags         {@code MAP_*}
     * @param fd            the file (here: the ring)
     * @param offset        where in it ({@code IORING_OFF_*})
     * @return the mapping (a zero-length segment), or {@code MAP_FAILED} (address -1) with errno in {@code capturedState}
     */
    public static MemorySegment mmap(final MemorySegment capturedState, final MemorySegment addr, final long length, final int prot,
                                     final int flags, final int fd, final long offset)
    {
        try
        {
            return (MemorySegment)mmap.HANDLE.invokeExact(capturedState, addr, length, prot, flags, fd, offset);
        }
        catch (final Throwable ex)
        {
            throw new AssertionError("should not reach here", ex);
        }
    }

    private static final class munmap
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_POINTER, C_LONG);
        static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, "munmap", DESC, CAPTURE_ERRNO);
    }

    /** @return {@code munmap}'s descriptor */
    public static FunctionDescriptor munmap$descriptor()
    {
        return munmap.DESC;
    }

    /** @return {@code munmap}'s handle, errno-capturing */
    public static MethodHandle munmap$handle()
    {
        return munmap.HANDLE;
    }

    /**
     * {@code int munmap(void *addr, size_t length)}.
     *
     * @param capturedState a segment of {@link #errno$layout()}
     * @param addr          a mapping
     * @param length        its length
     * @return 0, or -1 with errno in {@code capturedState}
     */
    public static int munmap(final MemorySegment capturedState, final MemorySegment addr, final long length)
    {
        try
        {
            return (int)munmap.HANDLE.invokeExact(capturedState, addr, length);
        }
        catch (final Throwable ex)
        {
            throw new AssertionError("should not reach here", ex);
        }
    }

    private static final class statx
    {
        static final FunctionDescriptor DESC = FunctionDescriptor.of(C_INT, C_INT, C_POINTER, C_INT, C_INT, C_POINTER);
        static final MethodHandle HANDLE = NativeAccess.downcall(SYMBOL_LOOKUP, "statx", DESC, CAPTURE_ERRNO);
    }

    /** @return {@code statx}'s descriptor */
    public static FunctionDescriptor statx$descriptor()
    {
        return statx.DESC;
    }

    /** @return {@code statx}'s handle, errno-capturing */
    public static MethodHandle statx$handle()
    {
        return statx.HANDLE;
    }

    /**
     * {@code int statx(int dirfd, const char *pathname, int flags, unsigned int mask, struct statx *statxbuf)}.
     *
     * @param capturedState a segment of {@link #errno$layout()}
     * @param dirfd         {@code AT_FDCWD} or a directory (or, with {@code AT_EMPTY_PATH}, the file itself)
     * @param pathname      a NUL-terminated path
     * @param flags         {@code AT_*}
     * @param mask          {@code STATX_*} wanted
     * @param statxbuf      a {@link io.kvtier.nativeaccess.uring.bindings.statx} to fill
     * @return 0, or -1 with errno in {@code capturedState}
     */
    public static int statx(final MemorySegment capturedState, final int dirfd, final MemorySegment pathname, final int flags,
                            final int mask, final MemorySegment statxbuf)
    {
        try
        {
            return (int)statx.HANDLE.invokeExact(capturedState, dirfd, pathname, flags, mask, statxbuf);
        }
        catch (final Throwable ex)
        {
            throw new AssertionError("should not reach here", ex);
        }
    }
}

package io.kvtier.nativeaccess.libc;

import io.kvtier.nativeaccess.NativeAccess;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The futex front: {@code syscall(SYS_futex, addr, FUTEX_WAIT | FUTEX_WAKE, val, timeout)} on a 32-bit
 * word of a shared mapping, so that a thread of one process sleeps until a thread of another wakes
 * it. The shared (not {@code _PRIVATE}) operations: the kernel keys the wait queue by the page's
 * inode and offset, so the two processes' different virtual addresses meet.
 *
 * <p>glibc has no {@code futex()} wrapper, hence {@code syscall(2)}, whose number differs by
 * architecture (x86_64 202, aarch64 98, riscv64 98, ppc64le 221). Its variadic arguments are passed
 * as {@code long}s, which is what {@code syscall} reads them as.
 *
 * <p>{@link #instance()} is empty, with the reason logged once, when native access is off, the OS
 * is not Linux or the architecture has no row; callers then poll with timed parks.
 */
public final class Futex
{
    /** {@code FUTEX_WAIT} (shared). */
    public static final int FUTEX_WAIT = 0;
    /** {@code FUTEX_WAKE} (shared). */
    public static final int FUTEX_WAKE = 1;

    /** errno: the word did not hold the expected value. */
    public static final int EAGAIN = 11;
    /** errno: a signal interrupted the wait. */
    public static final int EINTR = 4;
    /** errno: the timeout passed. */
    public static final int ETIMEDOUT = 110;

    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final java.lang.invoke.VarHandle ERRNO$vh = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final StructLayout TIMESPEC = MemoryLayout.structLayout(JAVA_LONG.withName("tv_sec"), JAVA_LONG.withName("tv_nsec"));
    private static final Optional<Futex> INSTANCE = load();

    private final long sysFutex;
    private final MethodHandle syscall$mh;
    private final ThreadLocal<MemorySegment> timespec = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(TIMESPEC));
    private final ThreadLocal<MemorySegment> captureState = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE_LAYOUT));

    private Futex(final long sysFutex)
    {
        this.sysFutex = sysFutex;
        this.syscall$mh = NativeAccess.downcall(Linker.nativeLinker().defaultLookup(), "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS), Linker.Option.captureCallState("errno"),
            Linker.Option.firstVariadicArg(1));
    }

    /**
     * @param osArch a value of {@code os.arch}
     * @return {@code SYS_futex} there, or -1 when unknown
     */
    public static long sysFutex(final String osArch)
    {
        return switch (osArch == null ? "" : osArch.toLowerCase(Locale.ROOT))
        {
            case "amd64", "x86_64" -> 202;
            case "aarch64", "arm64", "riscv64" -> 98;
            case "ppc64le", "ppc64" -> 221;
            default -> -1;
        };
    }

    private static Optional<Futex> load()
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            NativeAccess.logFallback("Futex", denied.get() + "; waiters poll with timed parks");
            return Optional.empty();
        }
        final String arch = System.getProperty("os.arch");
        final long number = sysFutex(arch);
        if (number < 0)
        {
            NativeAccess.logFallback("Futex", "no SYS_futex number known for architecture " + arch + "; waiters poll with timed parks");
            return Optional.empty();
        }
        try
        {
            final Futex futex = new Futex(number);
            NativeAccess.logChoice("Futex", "syscall(" + number + ") through FFM");
            futex.warmUp();
            return Optional.of(futex);
        }
        catch (final UnsupportedOperationException | IllegalCallerException | IllegalArgumentException ex)
        {
            NativeAccess.logFallback("Futex", ex.getMessage() + "; waiters poll with timed parks");
            return Optional.empty();
        }
    }

    /**
     * Waits and wakes that never sleep and never wake anyone ({@link NativeAccess#warmUp}): a process's threads may
     * sleep on a futex only now and then (a client between bursts, an engine whose clients are busy), too rarely for
     * the JIT to compile the call on its own, and until then each call allocates about 40 bytes.
     */
    private void warmUp()
    {
        final MemorySegment word = Arena.ofAuto().allocate(JAVA_LONG);
        NativeAccess.warmUp("kvtier-futex-warmup", () ->
        {
            waitShared(word, 1, 1);    // the word holds 0: EAGAIN at once
            wakeShared(word, 1);       // nobody sleeps on it: 0 at once
        });
    }

    /** @return the front, or empty (reason logged) when futexes cannot be reached */
    public static Optional<Futex> instance()
    {
        return INSTANCE;
    }

    /**
     * Sleeps while the word holds {@code expected}, at most {@code timeoutNanos}: returns at once if
     * it holds something else (the kernel compares and sleeps atomically, so a wake after the caller's
     * last look is never lost). May return early for no reason; callers look again.
     *
     * @param word         the 4-aligned futex word, in a shared mapping
     * @param expected     the value to sleep on
     * @param timeoutNanos the longest sleep, positive
     * @return 0 when woken, else {@code -errno}: {@link #EAGAIN} (the word differed), {@link #ETIMEDOUT},
     *         {@link #EINTR} are the ordinary ones, after which the caller looks at the word again;
     *         anything else (EFAULT, EINVAL, ENOSYS) means the futex cannot work here
     */
    public int waitShared(final MemorySegment word, final int expected, final long timeoutNanos)
    {
        final MemorySegment ts = timespec.get();
        ts.set(JAVA_LONG, 0, timeoutNanos / 1_000_000_000L);
        ts.set(JAVA_LONG, 8, timeoutNanos % 1_000_000_000L);
        return call(word, FUTEX_WAIT, expected & 0xFFFF_FFFFL, ts);
    }

    /**
     * Wakes up to {@code count} threads sleeping on the word.
     *
     * @param word  the futex word
     * @param count most waiters to wake
     * @return waiters woken, or {@code -errno}
     */
    public int wakeShared(final MemorySegment word, final int count)
    {
        return call(word, FUTEX_WAKE, count, MemorySegment.NULL);
    }

    private int call(final MemorySegment word, final int op, final long value, final MemorySegment timeout)
    {
        try
        {
            final MemorySegment state = captureState.get();
            final long result = (long)syscall$mh.invokeExact(state, sysFutex, word, (long)op, value, timeout);
            // syscall(2) returns -1 and leaves the kernel's error in errno, captured by the linker.
            return result == -1 ? -(int)ERRNO$vh.get(state, 0L) : (int)result;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("futex syscall failed to run", ex);
        }
    }
}

package io.kvtier.nativeaccess.libc;

import io.kvtier.nativeaccess.NativeAccess;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.BitSet;
import java.util.Locale;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The NUMA memory-policy front: {@code mbind(2)} on a range of a mapping and {@code set_mempolicy(2)} for the
 * calling thread, through {@code syscall(2)} (glibc has no wrappers; libnuma has, and is not needed for two calls).
 * For a shared mapping of a tmpfs file, {@code mbind} sets the policy of the file's pages themselves (the kernel's
 * shared policy), so every later allocation of those pages follows it, whichever thread or process makes it;
 * {@code set_mempolicy} covers what the calling thread allocates before a mapping exists.
 *
 * <p>The syscall numbers differ by architecture (mbind / set_mempolicy: x86_64 237 / 238, aarch64 and riscv64
 * 235 / 237, ppc64 259 / 261). A node mask is an array of {@code unsigned long}s, bit n for node n; the kernel
 * reads one bit fewer than the {@code maxnode} it is given, so the calls pass one more than the mask's bits.
 *
 * <p>{@link #instance()} is empty, with the reason logged once, when native access is off or the architecture
 * has no row. A kernel built without NUMA answers {@code -ENOSYS}, which callers report.
 */
public final class MemoryPolicy
{
    /** {@code MPOL_DEFAULT}: the thread's, or the system's, default (local node). */
    public static final int MPOL_DEFAULT = 0;
    /** {@code MPOL_PREFERRED}: the node given first, others when it has no room. */
    public static final int MPOL_PREFERRED = 1;
    /** {@code MPOL_BIND}: only the nodes given; an allocation fails rather than go elsewhere. */
    public static final int MPOL_BIND = 2;
    /** {@code MPOL_INTERLEAVE}: page by page round the nodes given. */
    public static final int MPOL_INTERLEAVE = 3;

    /** {@code MPOL_MF_MOVE}: move the range's pages already placed elsewhere (those only this process maps). */
    public static final int MPOL_MF_MOVE = 1 << 1;

    /** errno: no such system call (a kernel without NUMA). */
    public static final int ENOSYS = 38;
    /** errno: a node outside the allowed ones, or a bad mode. */
    public static final int EINVAL = 22;

    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final java.lang.invoke.VarHandle ERRNO$vh = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Optional<MemoryPolicy> INSTANCE = load();

    private final long sysMbind;
    private final long sysSetMempolicy;
    private final MethodHandle mbind$mh;
    private final MethodHandle setMempolicy$mh;

    private MemoryPolicy(final long[] numbers)
    {
        this.sysMbind = numbers[0];
        this.sysSetMempolicy = numbers[1];
        final Linker linker = Linker.nativeLinker();
        this.mbind$mh = NativeAccess.downcall(linker.defaultLookup(), "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG),
            Linker.Option.captureCallState("errno"), Linker.Option.firstVariadicArg(1));
        this.setMempolicy$mh = NativeAccess.downcall(linker.defaultLookup(), "syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG),
            Linker.Option.captureCallState("errno"), Linker.Option.firstVariadicArg(1));
    }

    /**
     * @param osArch a value of {@code os.arch}
     * @return {@code {SYS_mbind, SYS_set_mempolicy}} there, or null when unknown
     */
    public static long[] syscallNumbers(final String osArch)
    {
        return switch (osArch == null ? "" : osArch.toLowerCase(Locale.ROOT))
        {
            case "amd64", "x86_64" -> new long[] {237, 238};
            case "aarch64", "arm64", "riscv64" -> new long[] {235, 237};
            case "ppc64le", "ppc64" -> new long[] {259, 261};
            default -> null;
        };
    }

    private static Optional<MemoryPolicy> load()
    {
        final Optional<String> denied = NativeAccess.unavailableReason();
        if (denied.isPresent())
        {
            NativeAccess.logFallback("MemoryPolicy", denied.get() + "; memory is placed by the kernel's default policy");
            return Optional.empty();
        }
        final String arch = System.getProperty("os.arch");
        final long[] numbers = syscallNumbers(arch);
        if (numbers == null)
        {
            NativeAccess.logFallback("MemoryPolicy", "no mbind/set_mempolicy numbers known for architecture " + arch
                + "; memory is placed by the kernel's default policy");
            return Optional.empty();
        }
        try
        {
            final MemoryPolicy policy = new MemoryPolicy(numbers);
            NativeAccess.logChoice("MemoryPolicy", "syscall(" + numbers[0] + ", " + numbers[1] + ") through FFM");
            return Optional.of(policy);
        }
        catch (final UnsupportedOperationException | IllegalCallerException | IllegalArgumentException ex)
        {
            NativeAccess.logFallback("MemoryPolicy", ex.getMessage() + "; memory is placed by the kernel's default policy");
            return Optional.empty();
        }
    }

    /** @return the front, or empty (reason logged) when the calls cannot be reached */
    public static Optional<MemoryPolicy> instance()
    {
        return INSTANCE;
    }

    /**
     * Sets the policy of a range of a mapping ({@code mbind(2)}).
     *
     * @param address the range's start, page aligned
     * @param length  its bytes
     * @param mode    {@link #MPOL_BIND}, {@link #MPOL_PREFERRED}, {@link #MPOL_INTERLEAVE} or {@link #MPOL_DEFAULT}
     * @param nodes   the nodes (ignored, and may be empty, for {@link #MPOL_DEFAULT})
     * @param flags   0 or {@link #MPOL_MF_MOVE}
     * @return 0, or {@code -errno}
     */
    public int mbind(final MemorySegment address, final long length, final int mode, final BitSet nodes, final int flags)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final MemorySegment mask = mask(arena, nodes);
            final long result = (long)mbind$mh.invokeExact(state, sysMbind, address, length, (long)mode, mask, maskBits(mask) + 1, (long)flags);
            return result == -1 ? -(int)ERRNO$vh.get(state, 0L) : (int)result;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("mbind syscall failed to run", ex);
        }
    }

    /**
     * Sets the calling thread's policy for what it allocates from now on ({@code set_mempolicy(2)}).
     *
     * @param mode  as for {@link #mbind}; {@link #MPOL_DEFAULT} with no nodes puts the thread back on the default
     * @param nodes the nodes
     * @return 0, or {@code -errno}
     */
    public int setThreadPolicy(final int mode, final BitSet nodes)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = arena.allocate(CAPTURE_LAYOUT);
            final MemorySegment mask = mode == MPOL_DEFAULT ? MemorySegment.NULL : mask(arena, nodes);
            final long result = (long)setMempolicy$mh.invokeExact(state, sysSetMempolicy, (long)mode, mask,
                mode == MPOL_DEFAULT ? 0L : maskBits(mask) + 1);
            return result == -1 ? -(int)ERRNO$vh.get(state, 0L) : (int)result;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("set_mempolicy syscall failed to run", ex);
        }
    }

    private static MemorySegment mask(final Arena arena, final BitSet nodes)
    {
        final long[] words = nodes.toLongArray();
        final MemorySegment mask = arena.allocate(JAVA_LONG, Math.max(1, words.length));
        for (int i = 0; i < words.length; i++)
        {
            mask.setAtIndex(JAVA_LONG, i, words[i]);
        }
        return mask;
    }

    private static long maskBits(final MemorySegment mask)
    {
        return mask.byteSize() * 8;
    }
}

package io.kvtier.nativeaccess.libc;

import java.lang.foreign.MemorySegment;
import java.util.Optional;

/**
 * Copies page bytes between native segments the fastest way this machine has: the JDK's
 * {@link MemorySegment#copy} for small copies and very large ones, the C library's {@code memcpy}
 * in between. Measured here (`kvtier bench copy`): from about 16 KiB to 1 MiB glibc's {@code memcpy}
 * ({@code rep movsb}, the CPU's fast-string copy) beats the JDK's vector loop by 8-10%, while at 4 KiB
 * the JDK avoids the downcall's cost and at 4 MiB its loop is the faster one. The range is a property
 * of the CPU and the C library, so it is a setting: system properties
 * {@code kvtier.copy.memcpy-from} and {@code kvtier.copy.memcpy-below} (bytes; equal values turn
 * {@code memcpy} off). Without native access every copy is the JDK's.
 *
 * <p>Allocation-free; any thread.
 */
public final class PageCopy
{
    /** Default smallest copy handed to {@code memcpy}. */
    public static final long DEFAULT_MEMCPY_FROM = 16 * 1024;
    /** Default first size handed back to the JDK's copy. */
    public static final long DEFAULT_MEMCPY_BELOW = 2 * 1024 * 1024;

    private static final Optional<LibC> LIBC = LibC.instance();
    private static final long MEMCPY_FROM = Long.getLong("kvtier.copy.memcpy-from", DEFAULT_MEMCPY_FROM);
    private static final long MEMCPY_BELOW = Long.getLong("kvtier.copy.memcpy-below", DEFAULT_MEMCPY_BELOW);

    private PageCopy()
    {
    }

    /**
     * Copies {@code length} bytes; the ranges must not overlap.
     *
     * @param source            where from
     * @param sourceOffset      offset in {@code source}
     * @param destination       where to
     * @param destinationOffset offset in {@code destination}
     * @param length            bytes
     */
    public static void copy(final MemorySegment source, final long sourceOffset, final MemorySegment destination, final long destinationOffset,
                            final long length)
    {
        if (length >= MEMCPY_FROM && length < MEMCPY_BELOW && LIBC.isPresent() && source.isNative() && destination.isNative())
        {
            // asSlice checks the bounds as MemorySegment.copy would, and allocates nothing once inlined.
            LIBC.get().memcpy(destination.asSlice(destinationOffset, length), source.asSlice(sourceOffset, length), length);
            return;
        }
        MemorySegment.copy(source, sourceOffset, destination, destinationOffset, length);
    }

    /** @return which sizes go to {@code memcpy}, for a benchmark's report: {@code [from, below)}, or empty */
    public static String memcpyRange()
    {
        return LIBC.isPresent() && MEMCPY_FROM < MEMCPY_BELOW ? "[" + MEMCPY_FROM + ", " + MEMCPY_BELOW + ") bytes" : "none";
    }
}

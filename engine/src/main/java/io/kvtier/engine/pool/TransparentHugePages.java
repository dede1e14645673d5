package io.kvtier.engine.pool;

import io.kvtier.nativeaccess.libc.LibC;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * {@code pool.transparent-huge-pages = advise}: asks the kernel to back the pool's mapping with transparent
 * huge pages ({@code madvise(MADV_HUGEPAGE)}), which saves TLB misses on page copies across a large pool. For
 * a pool on tmpfs the kernel heeds the advice only when {@code shmem_enabled} allows it ({@code advise},
 * {@code within_size} or {@code always}); with {@code never} or {@code deny} it is accepted and ignored, so the
 * engine says once, in its log, why it has no effect. A pool on hugetlbfs has huge pages already.
 */
final class TransparentHugePages
{
    /** Where the kernel says what it does with huge pages for shared memory (tmpfs, /dev/shm). */
    static final Path SHMEM_ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/shmem_enabled");

    private TransparentHugePages()
    {
    }

    /**
     * Advises the range and says what came of it.
     *
     * @param region       the pool's mapping, or the part of it to advise (2 MiB aligned)
     * @param path         the pool file, for the message
     * @param shmemEnabled the kernel's shmem_enabled file
     * @return one line for the log: what was asked and whether the kernel will heed it
     */
    static String advise(final MemorySegment region, final Path path, final Path shmemEnabled)
    {
        final Optional<LibC> libc = LibC.instance();
        if (libc.isEmpty())
        {
            return "pool.transparent-huge-pages = advise has no effect: native access is off, so madvise(MADV_HUGEPAGE) cannot be called";
        }
        final int rc = libc.get().madvise(region, region.byteSize(), LibC.MADV_HUGEPAGE);
        if (rc != 0)
        {
            return "pool.transparent-huge-pages = advise has no effect: madvise(MADV_HUGEPAGE) on the pool " + path + " failed, "
                + libc.get().strerror(rc) + (rc == -LibC.EINVAL ? " (a kernel without transparent huge pages)" : "");
        }
        final String mode = selected(shmemEnabled);
        if (mode == null)
        {
            return "pool.transparent-huge-pages = advise: the pool " + path + " is advised (MADV_HUGEPAGE); " + shmemEnabled
                + " cannot be read, so whether a pool on tmpfs gets huge pages is unknown";
        }
        if (mode.equals("never") || mode.equals("deny"))
        {
            return "pool.transparent-huge-pages = advise has no effect for a pool on tmpfs: " + shmemEnabled + " says " + mode
                + ", so the kernel ignores the advice (echo advise > " + shmemEnabled + " as root lets it heed it, or put pool.path on hugetlbfs)";
        }
        return "pool.transparent-huge-pages = advise: the pool " + path + " is advised (MADV_HUGEPAGE), and " + shmemEnabled + " says "
            + mode + ": pages the kernel faults in from now on may be huge, and khugepaged may merge the ones allocated already";
    }

    /** @return the mode shown in brackets in the file ("always within_size advise [never] deny force"), or null */
    static String selected(final Path shmemEnabled)
    {
        try
        {
            final String text = Files.readString(shmemEnabled).strip();
            final int open = text.indexOf('[');
            final int close = text.indexOf(']', open + 1);
            return open >= 0 && close > open ? text.substring(open + 1, close) : null;
        }
        catch (final IOException | RuntimeException ex)
        {
            return null;
        }
    }
}

package io.kvtier.tier.threefs;

import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_dereg_fd;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_reg_fd;

/**
 * The extent files' descriptors a slab on 3FS has registered with USRBIO ({@code hf3fs_reg_fd}), each once for the
 * tier's life: extents stay open, so a descriptor is registered on its first transfer and deregistered when the tier
 * closes, before the slab closes it. Shared by the tier's I/O threads; a registered descriptor is found without a lock.
 */
final class RegisteredExtents
{
    /** One bit a descriptor, replaced whole when one is added, so that a reader needs no lock. */
    private volatile long[] registered = new long[1];
    private boolean closed;

    /**
     * @param fd an extent's descriptor
     * @return 0 when it is registered (now or before), else the positive errno of {@code hf3fs_reg_fd}
     */
    int register(final int fd)
    {
        if (isRegistered(registered, fd))
        {
            return 0;
        }
        return registerOnce(fd);
    }

    private synchronized int registerOnce(final int fd)
    {
        final long[] known = registered;
        if (isRegistered(known, fd))
        {
            return 0;
        }
        if (closed || fd < 0)
        {
            return Errno.EBADF;
        }
        final int rc = hf3fs_reg_fd(fd, 0L);
        if (rc > 0)
        {
            // A positive errno: EBADF for a file not on 3FS.
            return rc;
        }
        final long[] grown = java.util.Arrays.copyOf(known, Math.max(known.length, (fd >>> 6) + 1));
        grown[fd >>> 6] |= 1L << (fd & 63);
        registered = grown;
        return 0;
    }

    private static boolean isRegistered(final long[] bits, final int fd)
    {
        return fd >= 0 && (fd >>> 6) < bits.length && (bits[fd >>> 6] & 1L << (fd & 63)) != 0;
    }

    /** @return how many descriptors are registered */
    synchronized int count()
    {
        int count = 0;
        for (final long word : registered)
        {
            count += Long.bitCount(word);
        }
        return count;
    }

    /** Deregisters every descriptor; nothing may be in flight. Idempotent. */
    synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final long[] known = registered;
        for (int word = 0; word < known.length; word++)
        {
            for (long bits = known[word]; bits != 0; bits &= bits - 1)
            {
                hf3fs_dereg_fd(word * 64 + Long.numberOfTrailingZeros(bits));
            }
        }
        registered = new long[1];
    }

    /** The errno this class answers for a descriptor it will not register. */
    private static final class Errno
    {
        static final int EBADF = 9;
    }
}

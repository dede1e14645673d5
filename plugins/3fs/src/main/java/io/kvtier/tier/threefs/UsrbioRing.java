package io.kvtier.tier.threefs;

import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_cqe;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_ior;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_iov;
import io.kvtier.tier.threefs.hf3fs.bindings.timespec;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Instant;

import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iorcreate4;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iordestroy;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iovcreate;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iovdestroy;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_iovunlink;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_prep_io;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_submit_ios;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_wait_for_ios;

/**
 * One USRBIO ring (read-only or write-only, as 3FS rings are) with its completion array, its deadline and,
 * made on first need, a staging iov of one object per entry for pool memory that could not be wrapped.
 * Used by one thread at a time: {@code hf3fs_prep_io} is not thread-safe per ring.
 *
 * <p>The structs live in an arena of the ring's own. {@link #abandon} leaves them, and the ring, alive
 * forever: after an I/O outlived even the drain timeout, the 3FS client may still complete it into the
 * ring or its staging memory, so neither may be destroyed or reused.
 */
final class UsrbioRing
{
    private final MemorySegment mountPoint;
    private final int entries;
    private final boolean forRead;
    private final long slotBytes;
    private final Arena arena;
    private final MemorySegment ior;
    private final MemorySegment cqes;
    private final MemorySegment deadline;
    private MemorySegment staging;
    private MemorySegment stagingBase;
    private boolean destroyed;

    private UsrbioRing(final Arena arena, final MemorySegment mountPoint, final int entries, final boolean forRead, final long slotBytes)
    {
        this.arena = arena;
        this.mountPoint = mountPoint;
        this.entries = entries;
        this.forRead = forRead;
        this.slotBytes = slotBytes;
        this.ior = hf3fs_ior.allocate(arena);
        this.cqes = hf3fs_cqe.allocateArray(entries, arena);
        this.deadline = timespec.allocate(arena);
    }

    /**
     * @param mount     the 3FS mount point
     * @param entries   the ring's entries: the most I/Os in flight at once
     * @param forRead   a read ring, else a write ring
     * @param ioDepth   hf3fs_iorcreate4's io_depth (0: no batching by the client)
     * @param timeoutMs hf3fs_iorcreate4's timeout: how long the client waits to fill a batch of io_depth
     * @param slotBytes the staging bytes per entry: one object
     * @return the ring
     * @throws IllegalStateException with the -errno of hf3fs_iorcreate4
     */
    static UsrbioRing create(final String mount, final int entries, final boolean forRead, final int ioDepth, final int timeoutMs,
                             final long slotBytes)
    {
        final Arena arena = Arena.ofShared();
        try
        {
            final UsrbioRing ring = new UsrbioRing(arena, arena.allocateFrom(mount), entries, forRead, slotBytes);
            final int rc = hf3fs_iorcreate4(ring.ior, ring.mountPoint, entries, forRead, ioDepth, timeoutMs, -1, 0L);
            if (rc != 0)
            {
                throw new IllegalStateException("hf3fs_iorcreate4(" + mount + ", entries=" + entries + ", " + (forRead ? "read" : "write")
                    + ") failed: " + ErrnoText.describe(-rc));
            }
            return ring;
        }
        catch (final RuntimeException | Error ex)
        {
            arena.close();
            throw ex;
        }
    }

    int entries()
    {
        return entries;
    }

    /**
     * @param slot an entry, 0 to entries - 1
     * @param len  the bytes it stages, at most one object
     * @return the staging memory of that entry, inside the staging iov
     * @throws IllegalStateException with the -errno of hf3fs_iovcreate
     */
    MemorySegment stagingSlot(final int slot, final long len)
    {
        if (staging == null)
        {
            final MemorySegment iov = hf3fs_iov.allocate(arena);
            final int rc = hf3fs_iovcreate(iov, mountPoint, slotBytes * entries, 0, -1);
            if (rc != 0)
            {
                throw new IllegalStateException("hf3fs_iovcreate(" + slotBytes * entries + " bytes) failed: " + ErrnoText.describe(-rc));
            }
            staging = iov;
            stagingBase = hf3fs_iov.base(iov).reinterpret(slotBytes * entries);
        }
        return stagingBase.asSlice(slot * slotBytes, len);
    }

    /** @return the staging iov, after {@link #stagingSlot} */
    MemorySegment stagingIov()
    {
        return staging;
    }

    /**
     * @param iov  the iov holding {@code ptr}
     * @param ptr  the memory to read into or write from
     * @param fd   a registered file descriptor
     * @param len  bytes
     * @param slot the caller's slot, returned in the completion's userdata
     * @return hf3fs_prep_io's answer: the ring index, or -errno
     */
    int prepare(final MemorySegment iov, final MemorySegment ptr, final int fd, final long len, final int slot)
    {
        return hf3fs_prep_io(ior, iov, forRead, ptr, fd, 0L, len, MemorySegment.ofAddress(slot));
    }

    /**
     * @param iov      the iov holding {@code ptr}
     * @param ptr      the memory to read into or write from
     * @param fd       a registered file descriptor
     * @param offset   where in the file
     * @param len      bytes
     * @param userdata returned in the completion's userdata
     * @return hf3fs_prep_io's answer: the ring index, or -errno
     */
    int prepareAt(final MemorySegment iov, final MemorySegment ptr, final int fd, final long offset, final long len, final int userdata)
    {
        return hf3fs_prep_io(ior, iov, forRead, ptr, fd, offset, len, MemorySegment.ofAddress(userdata));
    }

    /** @return 0, or -errno */
    int submit()
    {
        return hf3fs_submit_ios(ior);
    }

    /**
     * Waits for completions until an absolute CLOCK_REALTIME deadline, as hf3fs_wait_for_ios wants it.
     *
     * @param minResults completions to wait for
     * @param until      the deadline
     * @return the number of completions in {@link #cqe}, or -errno
     */
    int waitFor(final int minResults, final Instant until)
    {
        timespec.tv_sec(deadline, until.getEpochSecond());
        timespec.tv_nsec(deadline, until.getNano());
        return hf3fs_wait_for_ios(ior, cqes, entries, minResults, deadline);
    }

    /**
     * As {@link #waitFor(int, Instant)}, with the deadline in milliseconds since the epoch, allocating nothing.
     *
     * @param minResults     completions to wait for
     * @param deadlineMillis the deadline, CLOCK_REALTIME in milliseconds
     * @return the number of completions, or -errno
     */
    int waitFor(final int minResults, final long deadlineMillis)
    {
        timespec.tv_sec(deadline, Math.floorDiv(deadlineMillis, 1000L));
        timespec.tv_nsec(deadline, Math.floorMod(deadlineMillis, 1000L) * 1_000_000L);
        return hf3fs_wait_for_ios(ior, cqes, entries, minResults, deadline);
    }

    /**
     * @param i a completion, below the last {@link #waitFor} count
     * @return its result: bytes moved, or -errno
     */
    long cqeResult(final int i)
    {
        return cqes.get(hf3fs_cqe.result$layout(), i * hf3fs_cqe.layout().byteSize() + hf3fs_cqe.result$offset());
    }

    /**
     * @param i a completion, below the last {@link #waitFor} count
     * @return its userdata, as the address it carries
     */
    long cqeUserdata(final int i)
    {
        return cqes.get(hf3fs_cqe.userdata$layout(), i * hf3fs_cqe.layout().byteSize() + hf3fs_cqe.userdata$offset()).address();
    }

    /**
     * @param i a completion, below the last {@link #waitFor} count
     * @return it
     */
    MemorySegment cqe(final int i)
    {
        return hf3fs_cqe.asSlice(cqes, i);
    }

    /** Destroys the ring and its staging iov; nothing may be in flight. Idempotent. */
    void destroy()
    {
        if (destroyed)
        {
            return;
        }
        destroyed = true;
        hf3fs_iordestroy(ior);
        if (staging != null)
        {
            hf3fs_iovdestroy(staging);
        }
        arena.close();
    }

    /**
     * Gives the ring up without destroying it: I/Os it could not drain may still complete into it. Its
     * staging iov's names go (hf3fs_iovunlink), so no shared-memory file outlives the process, while its
     * memory stays mapped for those late completions.
     */
    void abandon()
    {
        destroyed = true;
        if (staging != null)
        {
            hf3fs_iovunlink(staging);
        }
    }
}

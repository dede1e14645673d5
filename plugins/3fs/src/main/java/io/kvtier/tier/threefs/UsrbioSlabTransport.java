package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.UringBatch;
import io.kvtier.tier.support.Errno;
import io.kvtier.tier.support.IoErrorLog;
import io.kvtier.tier.support.SlabTransport;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * One slab I/O thread's USRBIO: a read ring and a write ring (3FS rings go one way), through which every page's bytes
 * move between the engine's memory and a slot of an extent file; the extents stay open and registered
 * ({@link RegisteredExtents}), so a page costs one {@code hf3fs_prep_io} and no file operation. Pages in memory the 3FS
 * client can see (the engine's pool in {@code /dev/shm}, wrapped once by {@link PoolRegions}) move with no copy; others
 * are copied through the ring's staging iov. The slab's own records (frame headers, tombstones) and fsyncs go with plain
 * calls through the mount, which is also how the slab reads its header tables at start: each region of an extent is
 * always reached the same way, slots through USRBIO and header tables through the mount.
 *
 * <p>A batch's USRBIO transfers go in rounds of at most a ring's entries, both rings at once; each round is submitted
 * and waited for until {@code timeout} after its submit. Transfers not back by then complete {@code -ETIMEDOUT}, and the
 * thread waits {@code drain-timeout} more for them; after that the ring is abandoned (never destroyed or reused, as for
 * the files layout) and a new one made. A write that comes back later lands in a slot the slab may have given to
 * another frame: the engine checks every frame it loads against its trailer's CRC32C, so that is a miss, not data.
 */
final class UsrbioSlabTransport implements SlabTransport
{
    private final UsrbioSlabTransports shared;
    private final LibC libc;
    private final IoErrorLog errors;
    private final Duration timeout;
    private final Duration drainTimeout;
    private final long timeoutMillis;
    private final int entries;
    private UsrbioRing reads;
    private UsrbioRing writes;
    /** The batch's operations each ring holds, by the ring's own count. */
    private final int[] readOps;
    private final int[] writeOps;
    /** Which of each ring's round came back: a result alone cannot say, a read at the end of a file being 0 bytes. */
    private final boolean[] readDone;
    private final boolean[] writeDone;
    private int readPending;
    private int writePending;
    /** Each ring's staging memory in use by its round, or null where the page moves with no copy. */
    private final MemorySegment[] readStaged;
    private final MemorySegment[] writeStaged;
    /** A batch of one page transfer, for {@link #transfer}. */
    private final UringBatch single = new UringBatch(1);
    private static final boolean[] ONE_PAGE = {true};
    private long usrbioTransfers;
    private long plainTransfers;

    UsrbioSlabTransport(final UsrbioSlabTransports shared, final UsrbioRing reads, final UsrbioRing writes)
    {
        this.shared = shared;
        this.libc = shared.libc;
        this.errors = shared.errors;
        this.timeout = shared.settings.timeout;
        this.drainTimeout = shared.settings.drainTimeout;
        this.timeoutMillis = timeout.toMillis();
        this.reads = reads;
        this.writes = writes;
        this.entries = Math.min(reads.entries(), writes.entries());
        readOps = new int[entries];
        writeOps = new int[entries];
        readDone = new boolean[entries];
        writeDone = new boolean[entries];
        readStaged = new MemorySegment[entries];
        writeStaged = new MemorySegment[entries];
    }

    @Override
    public void execute(final UringBatch batch, final boolean[] pageBytes)
    {
        final int size = batch.size();
        int next = 0;
        while (next < size)
        {
            readPending = 0;
            writePending = 0;
            // Fill both rings, doing what USRBIO cannot take at once, until either ring is full.
            while (next < size && readPending < entries && writePending < entries)
            {
                prepareOrRun(batch, next, pageBytes[next]);
                next++;
            }
            if (readPending + writePending > 0)
            {
                awaitRound(batch);
            }
        }
    }

    private void prepareOrRun(final UringBatch batch, final int op, final boolean page)
    {
        final byte kind = batch.operation(op);
        if (kind == UringBatch.FSYNC || kind == UringBatch.FDATASYNC)
        {
            batch.complete(op, kind == UringBatch.FSYNC ? libc.fsync(batch.fd(op)) : libc.fdatasync(batch.fd(op)));
            return;
        }
        final boolean read = kind == UringBatch.READ;
        final long length = batch.length(op);
        if (!page || length == 0 || length > shared.settings.objectSize)
        {
            final MemorySegment memory = MemorySegment.ofAddress(batch.address(op)).reinterpret(length);
            plainTransfers++;
            batch.complete(op, read ? libc.preadFully(batch.fd(op), memory, 0, length, batch.fileOffset(op))
                : libc.pwriteFully(batch.fd(op), memory, 0, length, batch.fileOffset(op)));
            return;
        }
        final int registered = shared.extents.register(batch.fd(op));
        if (registered != 0)
        {
            log("hf3fs_reg_fd of an extent", registered);
            batch.complete(op, -registered);
            return;
        }
        final UsrbioRing ring = read ? reads : writes;
        final int index = read ? readPending : writePending;
        (read ? readDone : writeDone)[index] = false;
        MemorySegment iov = shared.regions.iovOf(batch.address(op), length);
        MemorySegment target;
        MemorySegment staged = null;
        if (iov != null)
        {
            target = MemorySegment.ofAddress(batch.address(op));
        }
        else
        {
            staged = ring.stagingSlot(index, length);
            iov = ring.stagingIov();
            target = staged;
            if (!read)
            {
                MemorySegment.copy(MemorySegment.ofAddress(batch.address(op)).reinterpret(length), 0, staged, 0, length);
            }
        }
        (read ? readStaged : writeStaged)[index] = staged;
        // Userdata: the ring's own count, so a late completion of an abandoned round is never taken for this one's.
        final int rc = ring.prepareAt(iov, target, batch.fd(op), batch.fileOffset(op), length, index);
        if (rc < 0)
        {
            log("hf3fs_prep_io of " + length + " bytes at " + batch.fileOffset(op), -rc);
            batch.complete(op, rc);
            return;
        }
        usrbioTransfers++;
        if (read)
        {
            readOps[readPending++] = op;
        }
        else
        {
            writeOps[writePending++] = op;
        }
    }

    /** Submits both rings' round and waits for it: every operation in it gets a result. */
    private void awaitRound(final UringBatch batch)
    {
        final int readCount = readPending;
        final int writeCount = writePending;
        if (readCount > 0)
        {
            submit(reads);
        }
        if (writeCount > 0)
        {
            submit(writes);
        }
        final long deadline = System.currentTimeMillis() + timeoutMillis;
        if (readCount > 0 && !reap(batch, reads, readOps, readDone, readStaged, readCount, deadline))
        {
            reads = replaced(batch, reads, readOps, readDone, readCount, true);
        }
        if (writeCount > 0 && !reap(batch, writes, writeOps, writeDone, null, writeCount, deadline))
        {
            writes = replaced(batch, writes, writeOps, writeDone, writeCount, false);
        }
        readPending = 0;
        writePending = 0;
    }

    private void submit(final UsrbioRing ring)
    {
        final int rc = ring.submit();
        if (rc < 0)
        {
            // A hint only: the client's worker also polls the ring, so the I/Os may still run; they are waited for.
            log("hf3fs_submit_ios (waiting for the prepared I/Os anyway)", -rc);
        }
    }

    /**
     * Waits for a ring's round until the deadline, completing each operation with its result.
     *
     * @return whether every operation of the round came back
     */
    private boolean reap(final UringBatch batch, final UsrbioRing ring, final int[] ops, final boolean[] done, final MemorySegment[] staged,
                         final int count, final long deadline)
    {
        int left = count;
        while (left > 0)
        {
            final int got = ring.waitFor(left, deadline);
            if (got < 0)
            {
                log("hf3fs_wait_for_ios", -got);
                return false;
            }
            for (int j = 0; j < got; j++)
            {
                final int index = (int)ring.cqeUserdata(j);
                if (index < 0 || index >= count || done[index])
                {
                    continue;
                }
                done[index] = true;
                final long result = ring.cqeResult(j);
                if (staged != null && staged[index] != null && result == batch.length(ops[index]))
                {
                    // Whole reads only: a failed or short one leaves the destination as it was.
                    MemorySegment.copy(staged[index], 0, MemorySegment.ofAddress(batch.address(ops[index])).reinterpret(result), 0, result);
                }
                batch.complete(ops[index], result);
                left--;
            }
            if (left > 0 && System.currentTimeMillis() >= deadline)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * A round that did not come back in time: its stragglers complete {@code -ETIMEDOUT}, they are waited for up to
     * {@code drain-timeout} more, and a ring still not drained then is abandoned for a new one.
     *
     * @return the ring to use from now on
     */
    private UsrbioRing replaced(final UringBatch batch, final UsrbioRing ring, final int[] ops, final boolean[] done, final int count,
                                final boolean read)
    {
        int late = 0;
        for (int j = 0; j < count; j++)
        {
            if (!done[j])
            {
                done[j] = true;
                batch.complete(ops[j], -Errno.ETIMEDOUT);
                late++;
            }
        }
        if (late == 0)
        {
            return ring;
        }
        log(late + " " + (read ? "read" : "write") + "s not back within " + shared.settings.qualified(ThreeFsSettings.TIMEOUT) + "=" + timeout,
            Errno.ETIMEDOUT);
        final long until = System.currentTimeMillis() + drainTimeout.toMillis();
        while (late > 0 && System.currentTimeMillis() < until)
        {
            final int got = ring.waitFor(late, until);
            if (got < 0)
            {
                break;
            }
            late -= got;
        }
        if (late <= 0)
        {
            return ring;
        }
        shared.logger.log(System.Logger.Level.ERROR, "3fs tier " + shared.name + " (slab): " + late + " " + (read ? "read" : "write")
            + "s still not back " + drainTimeout + " after their timeout; abandoning that ring (never reused) and making a new one."
            + (read ? " If they complete, they write into pool memory the engine may have reused."
                : " If they complete, they write into slots the slab may have given to other frames, which the engine's check"
                + " of every frame it loads turns into misses."));
        ring.abandon();
        return shared.newRing(read);
    }

    @Override
    public long transfer(final boolean write, final int fd, final MemorySegment buffer, final long from, final long length, final long offset)
    {
        single.clear();
        final int op = single.add(write ? UringBatch.WRITE : UringBatch.READ, fd, false, buffer.address() + from, length, offset);
        execute(single, ONE_PAGE);
        return single.result(op);
    }

    /** @return transfers that went through USRBIO, for tests */
    long usrbioTransfers()
    {
        return usrbioTransfers;
    }

    /** @return transfers that went with pread/pwrite because USRBIO could not take them, for tests */
    long plainTransfers()
    {
        return plainTransfers;
    }

    private void log(final String what, final int errno)
    {
        if (errors.shouldLog())
        {
            errors.log(System.Logger.Level.ERROR, "3fs tier " + shared.name + " (slab): " + what + " failed: " + ErrnoText.describe(errno));
        }
    }

    @Override
    public void close()
    {
        reads.destroy();
        writes.destroy();
    }
}

package io.kvtier.tier.threefs;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.spi.TierBatch;
import io.kvtier.spi.TierStatus;
import io.kvtier.spi.TrailerBlock;
import io.kvtier.tier.support.Errno;
import io.kvtier.tier.support.FileIndex;
import io.kvtier.tier.support.PathLayout;
import io.kvtier.tier.support.TierWorkers;
import io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_cqe;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_dereg_fd;
import static io.kvtier.tier.threefs.hf3fs.bindings.hf3fs_usrbio_h.hf3fs_reg_fd;

/** One ring's thread: reads or writes, a chunk of at most {@code entries} pages at a time. */
final class ThreeFsRingWorker implements TierWorkers.Handler
{
    private static final int VICTIMS_PER_ROUND = 64;
    private static final int MAX_RESERVE_ATTEMPTS = 16;

    private final ThreeFsFiles files;
    private final ThreeFsSettings settings;
    private final PathLayout layout;
    private final FileIndex index;
    private final long objectSize;
    private final LibC libc;
    private final PoolRegions regions;
    private final String name;
    private final System.Logger logger;
    private final boolean forRead;
    private final int entries;
    private final int[] batchIndex;
    private final long[] keyHigh;
    private final long[] keyLow;
    private final MemorySegment[] segment;
    /** Bytes each page moves: its whole segment, or an engine frame without its last block's zeros. */
    private final long[] stored;
    private final MemorySegment[] staged;
    private final int[] fd;
    private final boolean[] registered;
    private final boolean[] inFlight;
    private final boolean[] reserved;
    private final TierStatus[] status;
    private final Path[] page;
    private final Path[] temp;
    private final int[] tickets;
    private final FileIndex.Victims victims = new FileIndex.Victims(VICTIMS_PER_ROUND);
    UsrbioRing ring;
    private TierWorkers.Claim claim;
    private int pending;

    /**
     * @param files   what the tier's threads share
     * @param libc    the libc front, for descriptors and renames
     * @param regions the pool's iovs
     * @param forRead a read ring's thread, else a write ring's
     */
    ThreeFsRingWorker(final ThreeFsFiles files, final LibC libc, final PoolRegions regions, final boolean forRead)
    {
        this.files = files;
        this.settings = files.settings;
        this.layout = files.layout;
        this.index = files.index;
        this.objectSize = files.objectSize;
        this.name = files.name;
        this.logger = files.logger;
        this.libc = libc;
        this.regions = regions;
        this.forRead = forRead;
        this.entries = settings.entries;
        batchIndex = new int[entries];
        keyHigh = new long[entries];
        keyLow = new long[entries];
        segment = new MemorySegment[entries];
        stored = new long[entries];
        staged = new MemorySegment[entries];
        fd = new int[entries];
        registered = new boolean[entries];
        inFlight = new boolean[entries];
        reserved = new boolean[entries];
        status = new TierStatus[entries];
        page = new Path[entries];
        temp = new Path[entries];
        tickets = new int[entries];
    }

    /** A whole batch at a time: the ring takes it in chunks of {@code entries} pages itself. */
    @Override
    public int claimSize(final int operation)
    {
        return Integer.MAX_VALUE;
    }

    @Override
    public void serve(final TierWorkers.Claim claim)
    {
        this.claim = claim;
        final TierBatch batch = claim.batch();
        final int size = claim.to();
        for (int from = claim.from(); from < size; from += entries)
        {
            if (claim.closing())
            {
                for (int i = from; i < size; i++)
                {
                    claim.complete(i, TierStatus.CLOSED);
                }
                return;
            }
            final int count = Math.min(entries, size - from);
            try (Arena arena = Arena.ofConfined())
            {
                chunk(batch, from, count, arena);
            }
        }
    }

    private void chunk(final TierBatch batch, final int from, final int count, final Arena arena)
    {
        pending = 0;
        for (int k = 0; k < count; k++)
        {
            final int i = from + k;
            batchIndex[k] = i;
            keyHigh[k] = batch.keyHigh(i);
            keyLow[k] = batch.keyLow(i);
            segment[k] = batch.segment(i);
            stored[k] = segment[k].byteSize();
            staged[k] = null;
            fd[k] = -1;
            registered[k] = false;
            inFlight[k] = false;
            reserved[k] = false;
            status[k] = null;
            page[k] = layout.pagePath(keyHigh[k], keyLow[k]);
            temp[k] = null;
            try
            {
                if (forRead)
                {
                    openForRead(k, arena);
                }
                else
                {
                    // An engine frame's last block is its trailer and padding (SPI 1.3): the file keeps the trailer alone.
                    stored[k] = TrailerBlock.storedLength(segment[k], batch.trailerBlockIsPadding(i));
                    openForWrite(k, arena);
                }
                if (status[k] == null)
                {
                    prepare(k);
                }
            }
            catch (final RuntimeException ex)
            {
                status[k] = files.failed(TierStatus.IO_ERROR, "preparing " + page[k] + ": " + ex);
            }
        }
        if (pending > 0)
        {
            final int rc = ring.submit();
            if (rc < 0)
            {
                // A hint only: the client's worker also polls the ring, so the I/Os may still run; wait for them.
                files.failed(TierStatus.IO_ERROR, "hf3fs_submit_ios: " + ErrnoText.describe(-rc) + "; waiting for the prepared I/Os anyway");
            }
            awaitCompletions();
        }
        for (int k = 0; k < count; k++)
        {
            finish(batch, k, arena);
        }
    }

    private void openForRead(final int k, final Arena arena)
    {
        final int commit = files.commitOf(keyHigh[k], keyLow[k]);
        final int f = libc.open(arena.allocateFrom(page[k].toString()), LibC.O_RDONLY | LibC.O_CLOEXEC, 0);
        if (f < 0)
        {
            status[k] = files.errnoStatus(-f, "open " + page[k]);
            if (status[k] == TierStatus.NOT_FOUND)
            {
                files.forgetIfHeld(keyHigh[k], keyLow[k], commit);
            }
            return;
        }
        fd[k] = f;
        final long size = libc.size(f);
        if (size < 0)
        {
            status[k] = files.errnoStatus((int)-size, "size of " + page[k]);
        }
        else if (size != segment[k].byteSize() && !TrailerBlock.isCompact(size, segment[k].byteSize()))
        {
            status[k] = TierStatus.CORRUPT;
        }
        else
        {
            // A compact frame is read alone and its zeros put back once it is whole.
            stored[k] = size;
        }
    }

    private void openForWrite(final int k, final Arena arena)
    {
        final long len = segment[k].byteSize();
        if (len > objectSize)
        {
            status[k] = files.failed(TierStatus.REJECTED, "a segment of " + len + " bytes, above the object size " + objectSize);
            return;
        }
        int ticket = FileIndex.RETRY;
        for (int attempt = 0; ticket == FileIndex.RETRY && attempt < MAX_RESERVE_ATTEMPTS; attempt++)
        {
            synchronized (index)
            {
                ticket = index.reserveWrite(keyHigh[k], keyLow[k], stored[k], victims);
            }
            files.evictChosen(victims);
        }
        if (ticket == FileIndex.RETRY || ticket == FileIndex.NO_SPACE)
        {
            status[k] = TierStatus.NO_SPACE;
            return;
        }
        if (ticket == FileIndex.UNTRACKED)
        {
            files.reportOverflow();
        }
        tickets[k] = ticket;
        reserved[k] = true;
        temp[k] = files.tempPath(page[k]);
        final MemorySegment path = arena.allocateFrom(temp[k].toString());
        final int flags = LibC.O_WRONLY | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC;
        int f = libc.open(path, flags, 0644);
        if (f == -Errno.ENOENT)
        {
            // The fan-out directory is made by the first write into it, here or on another node.
            try
            {
                Files.createDirectories(page[k].getParent());
            }
            catch (final IOException ex)
            {
                status[k] = files.failed(TierStatus.IO_ERROR, "mkdir " + page[k].getParent() + ": " + ex);
                return;
            }
            f = libc.open(path, flags, 0644);
        }
        if (f < 0)
        {
            status[k] = files.errnoStatus(-f, "create " + temp[k]);
            temp[k] = null;
            return;
        }
        fd[k] = f;
    }

    private void prepare(final int k)
    {
        final int rc = hf3fs_reg_fd(fd[k], 0L);
        if (rc > 0)
        {
            // A positive errno: EBADF when the file is not on 3FS.
            status[k] = files.failed(TierStatus.IO_ERROR, "hf3fs_reg_fd " + (forRead ? page[k] : temp[k]) + ": " + ErrnoText.describe(rc));
            return;
        }
        registered[k] = true;
        final long len = stored[k];
        MemorySegment iov = regions.iovOf(segment[k]);
        MemorySegment ptr = segment[k];
        if (iov == null)
        {
            if (len > objectSize)
            {
                status[k] = TierStatus.CORRUPT;
                return;
            }
            ptr = ring.stagingSlot(k, len);
            iov = ring.stagingIov();
            staged[k] = ptr;
            if (!forRead)
            {
                MemorySegment.copy(segment[k], 0, ptr, 0, len);
            }
        }
        final int index = ring.prepare(iov, ptr, fd[k], len, k);
        if (index < 0)
        {
            status[k] = files.failed(TierStatus.IO_ERROR, "hf3fs_prep_io " + (forRead ? page[k] : temp[k]) + ": " + ErrnoText.describe(-index));
            return;
        }
        inFlight[k] = true;
        pending++;
    }

    private void awaitCompletions()
    {
        final Instant deadline = Instant.now().plus(settings.timeout);
        while (pending > 0)
        {
            final int got = ring.waitFor(pending, deadline);
            if (got < 0)
            {
                markInFlight(files.failed(TierStatus.IO_ERROR, "hf3fs_wait_for_ios: " + ErrnoText.describe(-got)));
                drain();
                return;
            }
            reap(got);
            if (pending > 0 && !Instant.now().isBefore(deadline))
            {
                markInFlight(files.failed(TierStatus.TIMEOUT, pending + " I/Os not completed within " + settings.qualified(ThreeFsSettings.TIMEOUT)
                    + "=" + settings.timeout));
                drain();
                return;
            }
        }
    }

    private void markInFlight(final TierStatus outcome)
    {
        for (int k = 0; k < entries; k++)
        {
            if (inFlight[k] && status[k] == null)
            {
                status[k] = outcome;
            }
        }
    }

    /** Waits for I/Os whose outcome is already decided, so their memory is no longer the client's. */
    private void drain()
    {
        final Instant deadline = Instant.now().plus(settings.drainTimeout);
        while (pending > 0 && Instant.now().isBefore(deadline))
        {
            final int got = ring.waitFor(pending, deadline);
            if (got < 0)
            {
                break;
            }
            reap(got);
        }
        if (pending > 0)
        {
            logger.log(System.Logger.Level.ERROR, "3fs tier " + name + ": " + pending + " " + (forRead ? "read" : "write")
                + " I/Os still not back " + settings.drainTimeout + " after their timeout; abandoning that ring and its registered files"
                + " (never reused) and making a new one. " + (forRead ? "If they complete, they write into pool memory the engine has reused." : ""));
            ring.abandon();
            ring = files.newRing(forRead);
            for (int k = 0; k < entries; k++)
            {
                if (inFlight[k])
                {
                    // The client may still use the descriptor: neither deregister nor close it.
                    inFlight[k] = false;
                    registered[k] = false;
                    fd[k] = -1;
                }
            }
            pending = 0;
        }
    }

    private void reap(final int got)
    {
        for (int j = 0; j < got; j++)
        {
            final MemorySegment cqe = ring.cqe(j);
            final int k = (int)hf3fs_cqe.userdata(cqe).address();
            if (k < 0 || k >= entries || !inFlight[k])
            {
                continue;
            }
            inFlight[k] = false;
            pending--;
            if (status[k] != null)
            {
                continue;
            }
            final long result = hf3fs_cqe.result(cqe);
            final long len = stored[k];
            if (result == len)
            {
                status[k] = TierStatus.OK;
            }
            else if (result >= 0)
            {
                status[k] = files.failed(TierStatus.IO_ERROR, "short " + (forRead ? "read of " + page[k] : "write of " + temp[k]) + ": "
                    + result + " of " + len + " bytes");
            }
            else
            {
                status[k] = files.errnoStatus((int)-result, (forRead ? "read " + page[k] : "write " + temp[k]));
                if (forRead && status[k] == TierStatus.NOT_FOUND)
                {
                    status[k] = TierStatus.IO_ERROR;
                }
            }
        }
    }

    private void finish(final TierBatch batch, final int k, final Arena arena)
    {
        if (registered[k])
        {
            hf3fs_dereg_fd(fd[k]);
        }
        int closeRc = 0;
        if (fd[k] >= 0)
        {
            closeRc = libc.close(fd[k]);
        }
        TierStatus outcome = status[k] == null ? TierStatus.IO_ERROR : status[k];
        if (forRead)
        {
            if (outcome == TierStatus.OK)
            {
                if (staged[k] != null)
                {
                    MemorySegment.copy(staged[k], 0, segment[k], 0, stored[k]);
                }
                if (stored[k] != segment[k].byteSize())
                {
                    TrailerBlock.restore(segment[k], stored[k]);
                }
                synchronized (index)
                {
                    index.touch(keyHigh[k], keyLow[k]);
                }
            }
        }
        else
        {
            outcome = publish(k, outcome, closeRc, arena);
        }
        segment[k] = null;
        staged[k] = null;
        claim.complete(batchIndex[k], outcome);
    }

    /** Renames a completed write over the page's name, or cleans up after a failed one. */
    private TierStatus publish(final int k, final TierStatus written, final int closeRc, final Arena arena)
    {
        TierStatus outcome = written;
        if (outcome == TierStatus.OK && closeRc < 0)
        {
            // Network filesystems report write errors at close.
            outcome = files.errnoStatus(-closeRc, "close " + temp[k]);
        }
        final long len = stored[k];
        boolean committed = false;
        if (outcome == TierStatus.OK)
        {
            synchronized (files.stripe(keyHigh[k], keyLow[k]))
            {
                final int rc = libc.rename(arena.allocateFrom(temp[k].toString()), arena.allocateFrom(page[k].toString()));
                if (rc == 0)
                {
                    synchronized (index)
                    {
                        index.commitWrite(tickets[k], len, true, victims);
                    }
                    committed = true;
                }
                else
                {
                    outcome = files.errnoStatus(-rc, "rename " + temp[k] + " to " + page[k]);
                    if (outcome == TierStatus.NOT_FOUND)
                    {
                        outcome = TierStatus.IO_ERROR;
                    }
                }
            }
        }
        if (!committed)
        {
            if (temp[k] != null)
            {
                libc.unlink(arena.allocateFrom(temp[k].toString()));
            }
            if (reserved[k])
            {
                synchronized (index)
                {
                    index.commitWrite(tickets[k], len, false, victims);
                }
            }
        }
        files.evictChosen(victims);
        return outcome;
    }
}

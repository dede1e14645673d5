package io.kvtier.nativeaccess.uring;

import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.EAGAIN;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.EBUSY;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.EINTR;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.EIO;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_FSYNC_DATASYNC;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OP_FSYNC;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OP_READ;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OP_READ_FIXED;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OP_WRITE;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OP_WRITE_FIXED;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IOSQE_FIXED_FILE;

/**
 * Runs a {@link UringBatch} to completion on one ring: what {@link Uring#execute} does. The ring
 * offers SQEs, {@code io_uring_enter} and CQEs; this is the policy on top of them: how many
 * operations to have in flight (never more than the CQ ring holds, so completions never overflow),
 * when to wait, which operations go again (short transfers carry on from where they stopped,
 * {@code EAGAIN} and {@code EINTR} go again as they were) and what an operation's final result is.
 * Preallocated with its ring and reused, so running a batch allocates nothing.
 */
final class UringBatchRunner
{
    private final Uring ring;
    private final UringRegistrations registrations;
    private final long maxSqeBytes;
    private final BatchCompletions completions = new BatchCompletions();
    private long fixedBufferOperations;

    /**
     * @param ring          the ring the batches run on
     * @param registrations its registered buffers, which decide whether an operation goes as {@code *_FIXED}
     * @param maxSqeBytes   the most bytes one SQE asks for; a longer operation is carried on as if short
     */
    UringBatchRunner(final Uring ring, final UringRegistrations registrations, final long maxSqeBytes)
    {
        this.ring = ring;
        this.registrations = registrations;
        this.maxSqeBytes = maxSqeBytes;
    }

    /** @return SQEs sent as {@code READ_FIXED}/{@code WRITE_FIXED}, since the ring was set up */
    long fixedBufferOperations()
    {
        return fixedBufferOperations;
    }

    /**
     * Runs every operation of the batch to its final result, submitting as many at once as the rings
     * hold and entering the kernel once per round, not once per operation.
     *
     * @param batch the operations; their results are set on return
     */
    void execute(final UringBatch batch)
    {
        final Uring ring = this.ring;
        batch.resetResults();
        final int size = batch.size;
        final int cqEntries = ring.cqEntries();
        int next = 0;
        // Operations to submit again (short transfers, EAGAIN, EINTR): a ring of indexes, each at most once.
        final BatchCompletions completions = this.completions;
        completions.begin(batch);
        while (batch.finishedCount < size)
        {
            // Never more in flight than the CQ ring holds, so completions never overflow.
            while (ring.sqSpace() > 0 && ring.inFlight() + ring.unsubmitted() < cqEntries)
            {
                final int i;
                if (completions.retryCount > 0)
                {
                    i = completions.takeRetry();
                }
                else if (next < size)
                {
                    i = next++;
                }
                else
                {
                    break;
                }
                prepareOperation(batch, i);
            }
            final int unsubmitted = ring.unsubmitted();
            final boolean mustWait = unsubmitted == 0 || ring.sqSpace() == 0 || ring.inFlight() + unsubmitted >= cqEntries
                || (completions.retryCount == 0 && next >= size);
            final int rc = ring.submit(mustWait && ring.inFlight() + unsubmitted > 0 ? 1 : 0);
            if (rc < 0 && rc != -EAGAIN() && rc != -EBUSY())
            {
                failUnsubmitted(batch, rc);
                return;
            }
            ring.reap(completions);
        }
    }

    /** Writes the SQE for operation {@code i}: the rest of its transfer, or its fsync. */
    private void prepareOperation(final UringBatch batch, final int i)
    {
        final byte operation = batch.operation[i];
        final int sqeFlags = batch.fixedFile[i] ? IOSQE_FIXED_FILE() : 0;
        if (operation == UringBatch.FSYNC || operation == UringBatch.FDATASYNC)
        {
            ring.prepare(IORING_OP_FSYNC(), sqeFlags, batch.fd[i], 0, 0, 0,
                operation == UringBatch.FDATASYNC ? IORING_FSYNC_DATASYNC() : 0, 0, i);
            return;
        }
        final long done = batch.done[i];
        final long address = batch.address[i] + done;
        final int length = (int)Math.min(batch.length[i] - done, maxSqeBytes);
        final int buffer = registrations.registeredBufferIndex(address, length);
        if (buffer >= 0)
        {
            fixedBufferOperations++;
        }
        final boolean read = operation == UringBatch.READ;
        final int opcode = buffer >= 0
            ? (read ? IORING_OP_READ_FIXED() : IORING_OP_WRITE_FIXED())
            : (read ? IORING_OP_READ() : IORING_OP_WRITE());
        ring.prepare(opcode, sqeFlags, batch.fd[i], address, length, batch.fileOffset[i] + done, 0, Math.max(buffer, 0), i);
    }

    /** io_uring_enter failed outright: every operation not yet finished fails with its errno, and the ring is drained. */
    private void failUnsubmitted(final UringBatch batch, final int rc)
    {
        ring.dropUnsubmitted();
        while (ring.inFlight() > 0)
        {
            if (ring.submit(1) < 0 && ring.reap(completions) == 0)
            {
                break;
            }
            ring.reap(completions);
        }
        for (int i = 0; i < batch.size; i++)
        {
            if (!batch.finished[i])
            {
                batch.finished[i] = true;
                batch.result[i] = rc;
                batch.finishedCount++;
            }
        }
    }

    /** Applies completions to the batch being executed; preallocated, so executing allocates nothing. */
    private static final class BatchCompletions implements Uring.CompletionHandler
    {
        private UringBatch batch;
        private int[] retries = new int[0];
        private int retryHead;
        private int retryCount;

        /** Starts a batch: no retries pending, room for each of its operations to wait once. */
        void begin(final UringBatch batch)
        {
            this.batch = batch;
            if (retries.length < batch.capacity())
            {
                retries = new int[batch.capacity()];
            }
            retryHead = 0;
            retryCount = 0;
        }

        /** @return the operation that has waited longest to go again */
        int takeRetry()
        {
            final int i = retries[retryHead];
            retryHead = (retryHead + 1) % retries.length;
            retryCount--;
            return i;
        }

        /** Queues operation {@code i} to go again; it is in flight no more, so it is queued at most once. */
        private void retry(final int i)
        {
            retries[(retryHead + retryCount) % retries.length] = i;
            retryCount++;
            batch.resubmissions++;
        }

        /** Finishes, carries on or requeues the operation the completion names; a stale or foreign tag is ignored. */
        @Override
        public void onCompletion(final long userData, final int res, final int flags)
        {
            final int i = (int)userData;
            final UringBatch b = batch;
            if (b == null || i < 0 || i >= b.size || b.finished[i])
            {
                return;
            }
            if (res == -EAGAIN() || res == -EINTR())
            {
                retry(i);
                return;
            }
            final byte operation = b.operation[i];
            if (res < 0 || operation == UringBatch.FSYNC || operation == UringBatch.FDATASYNC)
            {
                finish(b, i, res);
                return;
            }
            if (res == 0 && b.length[i] > b.done[i])
            {
                // A read: end of file, the bytes so far are the result. A write that wrote nothing would loop: an error.
                finish(b, i, operation == UringBatch.READ ? b.done[i] : -EIO());
                return;
            }
            b.done[i] += res;
            if (b.done[i] < b.length[i])
            {
                retry(i);
            }
            else
            {
                finish(b, i, b.done[i]);
            }
        }

        /** Sets operation {@code i}'s final result. */
        private static void finish(final UringBatch b, final int i, final long result)
        {
            b.result[i] = result;
            b.finished[i] = true;
            b.finishedCount++;
        }
    }
}

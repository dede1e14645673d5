package io.kvtier.nativeaccess.uring;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import static io.kvtier.nativeaccess.uring.UringDescriptor.CQE_FLAGS_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.CQE_LENGTH;
import static io.kvtier.nativeaccess.uring.UringDescriptor.CQE_RES_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.CQE_USER_DATA_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_ADDR3_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_ADDR_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_BUF_INDEX_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_FD_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_FILE_INDEX_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_FLAGS_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_IOPRIO_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_LENGTH;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_LEN_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_OFF_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_OPCODE_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_PERSONALITY_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_RW_FLAGS_OFFSET;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_USER_DATA_OFFSET;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.*;

/**
 * The io_uring front: one ring, its submission and completion queues driven from Java over the
 * kernel's shared mappings, with no liburing (Debian 12's has no FFI-callable helpers) and no JNI.
 *
 * <p>Check {@link #availability()} first: it is unavailable, with the reason and what would enable
 * it (logged once), when native access is off, the kernel has no io_uring ({@code ENOSYS}), the
 * {@code kernel.io_uring_disabled} sysctl or a seccomp filter refuses it ({@code EPERM}), or the
 * kernel predates the features used here (Linux 5.6). Callers then fall back to plain system calls.
 *
 * <h2>Ordering</h2>
 * Single producer, single consumer on each ring, the kernel being the other side: SQEs are written
 * with plain stores, then the SQ tail is published with {@code putIntRelease} so the kernel sees the
 * entries before the tail that covers them; the kernel's SQ head and CQ tail are read with
 * {@code getIntAcquire} so the CQEs read after the tail are the kernel's, and the CQ head is
 * published with {@code putIntRelease} only after the CQEs are read, so the kernel never overwrites
 * one still being read. No SQPOLL thread is used, so {@code io_uring_enter} is the kernel's only
 * reader of the SQ tail and no full fence is needed before it.
 *
 * <h2>Overflow</h2>
 * {@link #execute} never has more operations in flight than the CQ ring holds. A caller of the
 * lower-level {@link #submit} can; the kernel ({@code IORING_FEAT_NODROP}, required here) then keeps
 * the excess, sets {@code IORING_SQ_CQ_OVERFLOW} and answers {@code EBUSY} to new submissions;
 * {@link #reap} sees the flag and enters with {@code GETEVENTS} to move them into the ring.
 *
 * <h2>Parts</h2>
 * This class drives the ring's two queues ({@link #prepare}, {@link #submit}, {@link #reap}), kept
 * together because both read the same mapping and counters on every operation. Setting the ring up,
 * mapping it and tearing it down is {@link UringMapping}'s. Running a {@link UringBatch} to completion is {@link UringBatchRunner}'s, the registered buffers and
 * files are {@link UringRegistrations}', whether io_uring can be used at all is {@link UringProbe}'s,
 * and the O_DIRECT alignment is {@link DirectIoAlignment}'s; the methods here that name them only
 * delegate, so callers keep one front.
 *
 * <p>A ring belongs to one thread at a time. Steady-state submission and completion allocate
 * nothing.
 */
public final class Uring implements AutoCloseable
{
    /** Receives completions from {@link #reap}. */
    @FunctionalInterface
    public interface CompletionHandler
    {
        /**
         * @param userData the submission's tag
         * @param res      its result: a count, or {@code -errno}
         * @param flags    the CQE's flags
         */
        void onCompletion(long userData, int res, int flags);
    }

    /** The largest transfer one SQE asks for; a longer operation is carried on as if short. */
    static final long MAX_SQE_BYTES = 1L << 30;

    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final UringMapping mapping;
    // Copies of the mapping's segments and offsets, read on every operation: fields of this object, as
    // before the mapping had its own class, so the per-operation path gains no indirection.
    private final MemorySegment capturedState;
    private final int ringFd;
    private final MemorySegment sqRing;
    private final MemorySegment cqRing;
    private final MemorySegment sqes;
    private final int sqEntries;
    private final int sqMask;
    private final int cqEntries;
    private final int cqMask;
    private final long sqHeadOffset;
    private final long sqTailOffset;
    private final long sqFlagsOffset;
    private final long cqHeadOffset;
    private final long cqTailOffset;
    private final long cqesOffset;
    private final UringRegistrations registrations;
    private final UringBatchRunner batchRunner;

    private int sqTail;
    private int sqSubmitted;
    private int inFlight;
    private long enterCalls;
    private int largestSubmission;
    private boolean closed;

    /**
     * Sets up and maps the ring ({@link UringMapping}), and starts its queues where the kernel has them.
     *
     * @param entries     SQ entries wanted
     * @param maxSqeBytes the most bytes one SQE of {@link #execute} transfers
     * @throws UringException when setup or mapping fails; nothing is left open then
     */
    private Uring(final int entries, final long maxSqeBytes)
    {
        mapping = new UringMapping(entries);
        capturedState = mapping.capturedState;
        ringFd = mapping.ringFd;
        sqRing = mapping.sqRing;
        cqRing = mapping.cqRing;
        sqes = mapping.sqes;
        sqEntries = mapping.sqEntries;
        sqMask = mapping.sqMask;
        cqEntries = mapping.cqEntries;
        cqMask = mapping.cqMask;
        sqHeadOffset = mapping.sqHeadOffset;
        sqTailOffset = mapping.sqTailOffset;
        sqFlagsOffset = mapping.sqFlagsOffset;
        cqHeadOffset = mapping.cqHeadOffset;
        cqTailOffset = mapping.cqTailOffset;
        cqesOffset = mapping.cqesOffset;
        sqTail = getIntAcquire(sqRing, sqTailOffset);
        sqSubmitted = sqTail;
        registrations = new UringRegistrations(capturedState, ringFd);
        batchRunner = new UringBatchRunner(this, registrations, maxSqeBytes);
    }

    /**
     * Sets up a ring. Check {@link #availability()} first.
     *
     * @param entries SQ entries wanted (the kernel rounds up to a power of two and clamps); the CQ ring gets twice as many
     * @return the ring, owned by the caller
     * @throws UringException when setup or mapping fails
     */
    public static Uring open(final int entries)
    {
        return new Uring(entries, MAX_SQE_BYTES);
    }

    /**
     * As {@link #open(int)}, asking each SQE for at most {@code maxSqeBytes}, so that tests see
     * operations carried on over several completions as a short transfer is.
     *
     * @param entries     SQ entries wanted
     * @param maxSqeBytes the most bytes one SQE transfers
     * @return the ring
     */
    static Uring open(final int entries, final long maxSqeBytes)
    {
        return new Uring(entries, maxSqeBytes);
    }

    // ---------------------------------------------------------------------------------------------
    // Availability

    /**
     * @return whether io_uring can be used here, probed once by setting up and closing a small ring;
     *         when it cannot, the reason is logged once
     */
    public static UringAvailability availability()
    {
        return UringProbe.availability();
    }

    // ---------------------------------------------------------------------------------------------
    // Ring facts

    /** @return SQ entries, as the kernel sized them */
    public int sqEntries()
    {
        return sqEntries;
    }

    /** @return CQ entries, as the kernel sized them */
    public int cqEntries()
    {
        return cqEntries;
    }

    /** @return {@code io_uring_params.features} */
    public int features()
    {
        return mapping.features;
    }

    /** @return whether the SQ and CQ rings share one mapping ({@code IORING_FEAT_SINGLE_MMAP}) */
    public boolean singleMmap()
    {
        return mapping.singleMmap;
    }

    /** @return whether the kernel has completions it could not fit in the CQ ring ({@code IORING_SQ_CQ_OVERFLOW}) */
    public boolean cqOverflowed()
    {
        return (getIntAcquire(sqRing, sqFlagsOffset) & IORING_SQ_CQ_OVERFLOW()) != 0;
    }

    /** @return free SQ slots */
    public int sqSpace()
    {
        return sqEntries - (sqTail - getIntAcquire(sqRing, sqHeadOffset));
    }

    // ---------------------------------------------------------------------------------------------
    // Submission

    /**
     * Writes one SQE and makes it pending; {@link #submit} hands it to the kernel.
     *
     * @param opcode     {@code IORING_OP_*}
     * @param sqeFlags   {@code IOSQE_*}
     * @param fd         a file descriptor, or a registered file's index with {@code IOSQE_FIXED_FILE}
     * @param address    the buffer's address
     * @param length     bytes
     * @param fileOffset where in the file
     * @param opFlags    {@code rw_flags} / {@code fsync_flags}
     * @param bufIndex   the registered buffer's index, for {@code READ_FIXED}/{@code WRITE_FIXED}
     * @param userData   the tag the completion carries back
     * @return false, with nothing written, when the SQ ring is full
     */
    public boolean prepare(final int opcode, final int sqeFlags, final int fd, final long address, final int length, final long fileOffset,
                           final int opFlags, final int bufIndex, final long userData)
    {
        ensureOpen();
        if (sqSpace() == 0)
        {
            return false;
        }
        final long sqe = (long)(sqTail & sqMask) * SQE_LENGTH;
        sqes.set(ValueLayout.JAVA_BYTE, sqe + SQE_OPCODE_OFFSET, (byte)opcode);
        sqes.set(ValueLayout.JAVA_BYTE, sqe + SQE_FLAGS_OFFSET, (byte)sqeFlags);
        sqes.set(ValueLayout.JAVA_SHORT, sqe + SQE_IOPRIO_OFFSET, (short)0);
        sqes.set(ValueLayout.JAVA_INT, sqe + SQE_FD_OFFSET, fd);
        sqes.set(ValueLayout.JAVA_LONG, sqe + SQE_OFF_OFFSET, fileOffset);
        sqes.set(ValueLayout.JAVA_LONG, sqe + SQE_ADDR_OFFSET, address);
        sqes.set(ValueLayout.JAVA_INT, sqe + SQE_LEN_OFFSET, length);
        sqes.set(ValueLayout.JAVA_INT, sqe + SQE_RW_FLAGS_OFFSET, opFlags);
        sqes.set(ValueLayout.JAVA_LONG, sqe + SQE_USER_DATA_OFFSET, userData);
        sqes.set(ValueLayout.JAVA_SHORT, sqe + SQE_BUF_INDEX_OFFSET, (short)bufIndex);
        sqes.set(ValueLayout.JAVA_SHORT, sqe + SQE_PERSONALITY_OFFSET, (short)0);
        sqes.set(ValueLayout.JAVA_INT, sqe + SQE_FILE_INDEX_OFFSET, 0);
        sqes.set(ValueLayout.JAVA_LONG, sqe + SQE_ADDR3_OFFSET, 0L);
        sqes.set(ValueLayout.JAVA_LONG, sqe + SQE_ADDR3_OFFSET + Long.BYTES, 0L);
        sqTail++;
        return true;
    }

    /**
     * @param userData the tag
     * @return false when the SQ ring is full
     */
    public boolean prepareNop(final long userData)
    {
        return prepare(IORING_OP_NOP(), 0, -1, 0, 0, 0, 0, 0, userData);
    }

    /**
     * Hands the pending SQEs to the kernel and, with {@code minComplete > 0}, waits until that many
     * completions are in the CQ ring. {@code EINTR} is retried here.
     *
     * @param minComplete completions to wait for
     * @return SQEs the kernel consumed, or {@code -EAGAIN}/{@code -EBUSY} when it has no room for
     *         more now (reap, then submit again), or another {@code -errno}
     */
    public int submit(final int minComplete)
    {
        ensureOpen();
        // Publish the SQEs written by prepare before the tail that covers them.
        putIntRelease(sqRing, sqTailOffset, sqTail);
        final int toSubmit = sqTail - sqSubmitted;
        final int flags = minComplete > 0 || cqOverflowed() ? IORING_ENTER_GETEVENTS() : 0;
        while (true)
        {
            final long rc = io_uring_enter(capturedState, ringFd, toSubmit, minComplete, flags, MemorySegment.NULL, 0);
            enterCalls++;
            if (rc >= 0)
            {
                largestSubmission = Math.max(largestSubmission, (int)rc);
                sqSubmitted += (int)rc;
                inFlight += (int)rc;
                return (int)rc;
            }
            final int errno = errno(capturedState);
            if (errno != EINTR())
            {
                return -errno;
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Completion

    /**
     * Hands every completion in the CQ ring to {@code handler}, and those the kernel kept aside on
     * overflow too.
     *
     * @param handler receives each completion, in order
     * @return how many completions were handled
     */
    public int reap(final CompletionHandler handler)
    {
        ensureOpen();
        int reaped = 0;
        while (true)
        {
            int head = (int)INT.get(cqRing, cqHeadOffset);
            // Acquire: the CQEs up to this tail are the kernel's, complete.
            final int tail = getIntAcquire(cqRing, cqTailOffset);
            while (head != tail)
            {
                final long cqe = cqesOffset + (long)(head & cqMask) * CQE_LENGTH;
                final long userData = cqRing.get(ValueLayout.JAVA_LONG, cqe + CQE_USER_DATA_OFFSET);
                final int res = cqRing.get(ValueLayout.JAVA_INT, cqe + CQE_RES_OFFSET);
                final int flags = cqRing.get(ValueLayout.JAVA_INT, cqe + CQE_FLAGS_OFFSET);
                head++;
                // Release after the reads: the kernel may reuse the slot as soon as it sees the head.
                putIntRelease(cqRing, cqHeadOffset, head);
                inFlight--;
                reaped++;
                handler.onCompletion(userData, res, flags);
            }
            if (!cqOverflowed())
            {
                return reaped;
            }
            // The kernel holds completions that did not fit: entering with GETEVENTS moves them into the ring.
            flushOverflow();
        }
    }

    /** Enters with {@code GETEVENTS} and nothing to submit, so the kernel moves the completions it held aside into the CQ ring. */
    private void flushOverflow()
    {
        while (true)
        {
            final long rc = io_uring_enter(capturedState, ringFd, 0, 0, IORING_ENTER_GETEVENTS(), MemorySegment.NULL, 0);
            if (rc >= 0 || errno(capturedState) != EINTR())
            {
                return;
            }
        }
    }

    /** @return SQEs {@link #execute} sent as {@code READ_FIXED}/{@code WRITE_FIXED}, since the ring was set up */
    public long fixedBufferOperations()
    {
        return batchRunner.fixedBufferOperations();
    }

    /** @return {@code io_uring_enter} calls made by {@link #submit}, since the ring was set up */
    public long enterCalls()
    {
        return enterCalls;
    }

    /** @return the most SQEs one {@link #submit} handed to the kernel, since the ring was set up */
    public int largestSubmission()
    {
        return largestSubmission;
    }

    /** @return submitted operations whose completion has not been reaped */
    public int inFlight()
    {
        return inFlight;
    }

    /** @return SQEs written by {@link #prepare} that {@link #submit} has not yet handed to the kernel */
    int unsubmitted()
    {
        return sqTail - sqSubmitted;
    }

    /**
     * Forgets the SQEs the kernel did not take, by rewinding the tail to what it consumed: after
     * {@code io_uring_enter} failed outright their operations are answered with its errno instead,
     * and must not be handed over by a later submit.
     */
    void dropUnsubmitted()
    {
        sqTail = sqSubmitted;
        putIntRelease(sqRing, sqTailOffset, sqTail);
    }

    // ---------------------------------------------------------------------------------------------
    // Batches

    /**
     * Runs every operation of the batch to its final result (see {@link UringBatch}), submitting
     * as many at once as the rings hold and entering the kernel once per round, not once per
     * operation. Buffers inside a registered buffer go as {@code READ_FIXED}/{@code WRITE_FIXED}.
     *
     * @param batch the operations; their results are set on return
     */
    public void execute(final UringBatch batch)
    {
        ensureOpen();
        batchRunner.execute(batch);
    }

    // ---------------------------------------------------------------------------------------------
    // Registration

    /**
     * Registers buffers for {@code READ_FIXED}/{@code WRITE_FIXED}: the kernel pins their pages once
     * instead of per operation. {@link #execute} then uses the fixed opcodes for any operation whose
     * buffer lies inside one of them. Replaces any earlier registration.
     *
     * @param buffers native segments, each at most 1 GiB, at most 16384 of them
     * @return 0, or {@code -errno} ({@code -ENOMEM} when the pinned pages exceed RLIMIT_MEMLOCK); on error nothing is registered
     */
    public int registerBuffers(final MemorySegment... buffers)
    {
        ensureOpen();
        return registrations.registerBuffers(buffers);
    }

    /** @return 0, or {@code -errno} */
    public int unregisterBuffers()
    {
        ensureOpen();
        return registrations.unregisterBuffers();
    }

    /**
     * @param address a buffer's address
     * @param length  its length
     * @return the index of the registered buffer that holds it whole, or -1
     */
    public int registeredBufferIndex(final long address, final long length)
    {
        return registrations.registeredBufferIndex(address, length);
    }

    /**
     * Registers files: an operation then names one by its index with {@code IOSQE_FIXED_FILE}, which
     * saves the kernel a file-table lookup and reference per operation. Worth it for files used for
     * many operations; replaces any earlier registration.
     *
     * @param fds open file descriptors
     * @return 0, or {@code -errno}
     */
    public int registerFiles(final int... fds)
    {
        ensureOpen();
        return registrations.registerFiles(fds);
    }

    /** @return 0, or {@code -errno} */
    public int unregisterFiles()
    {
        ensureOpen();
        return registrations.unregisterFiles();
    }

    // ---------------------------------------------------------------------------------------------
    // O_DIRECT alignment

    /**
     * @param fd an open file
     * @return its O_DIRECT alignment from {@code statx(STATX_DIOALIGN)}, or 4096 for both when the
     *         kernel or filesystem does not report it
     */
    public static DirectIoAlignment directIoAlignment(final int fd)
    {
        return DirectIoAlignment.of(fd);
    }

    // ---------------------------------------------------------------------------------------------

    /** Unmaps the rings and closes the ring's descriptor; the kernel drops registrations with it. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        mapping.close();
    }

    /** @throws IllegalStateException once the ring is closed, rather than touching memory that is unmapped */
    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("ring is closed");
        }
    }

    /** Reads a word the kernel writes, acquiring what the kernel wrote before it. */
    private static int getIntAcquire(final MemorySegment segment, final long offset)
    {
        return (int)INT.getAcquire(segment, offset);
    }

    /** Publishes a word the kernel reads, releasing what was written before it. */
    private static void putIntRelease(final MemorySegment segment, final long offset, final int value)
    {
        INT.setRelease(segment, offset, value);
    }
}

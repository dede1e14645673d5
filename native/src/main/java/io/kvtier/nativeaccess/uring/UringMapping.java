package io.kvtier.nativeaccess.uring;

import io.kvtier.nativeaccess.libc.LibC;
import io.kvtier.nativeaccess.uring.bindings.io_cqring_offsets;
import io.kvtier.nativeaccess.uring.bindings.io_sqring_offsets;
import io.kvtier.nativeaccess.uring.bindings.io_uring_params;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.kvtier.nativeaccess.uring.UringDescriptor.CQE_LENGTH;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQE_LENGTH;
import static io.kvtier.nativeaccess.uring.UringDescriptor.SQ_ARRAY_SLOT_LENGTH;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.ENOSYS;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_FEAT_NODROP;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_FEAT_RW_CUR_POS;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_FEAT_SINGLE_MMAP;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_FEAT_SUBMIT_STABLE;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OFF_CQ_RING;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OFF_SQES;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_OFF_SQ_RING;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_SETUP_CLAMP;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.MAP_POPULATE;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.MAP_SHARED;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.PROT_READ;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.PROT_WRITE;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.errno;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.errno$layout;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.io_uring_setup;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.mmap;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.munmap;

/**
 * One ring as the kernel set it up: {@code io_uring_setup}, the three shared mappings (SQ ring, CQ
 * ring, SQEs; one fewer with {@code IORING_FEAT_SINGLE_MMAP}) and the field offsets the kernel reported
 * in them ({@link UringDescriptor} draws the layout), until {@link #close()} unmaps them and closes the
 * descriptor. Kept apart from {@link Uring}, which drives the queues, because setting up and tearing
 * down happen once per ring and touch none of the per-operation state; {@link Uring} copies the
 * segments and offsets into its own final fields, so its per-operation path reads them as before.
 * The fields are read-only after construction.
 */
final class UringMapping
{
    private static final int REQUIRED_FEATURES = IORING_FEAT_NODROP() | IORING_FEAT_SUBMIT_STABLE() | IORING_FEAT_RW_CUR_POS();

    private final Arena arena;
    /** Where the system calls on this ring leave their errno; confined to the ring's one thread at a time. */
    final MemorySegment capturedState;
    final int ringFd;
    /** {@code io_uring_params.features}. */
    final int features;
    /** Whether the SQ and CQ rings share one mapping. */
    final boolean singleMmap;
    final MemorySegment sqRing;
    final MemorySegment cqRing;
    final MemorySegment sqes;
    final int sqEntries;
    final int sqMask;
    final int cqEntries;
    final int cqMask;
    final long sqHeadOffset;
    final long sqTailOffset;
    final long sqFlagsOffset;
    final long cqHeadOffset;
    final long cqTailOffset;
    final long cqesOffset;
    private boolean closed;

    /**
     * Sets up the ring and maps its three areas; on any failure releases what it had taken and throws.
     *
     * @param entries SQ entries wanted (the kernel rounds up to a power of two and clamps); the CQ ring gets twice as many
     * @throws UringException when setup fails, the kernel lacks a feature used here, or a mapping fails
     */
    UringMapping(final int entries)
    {
        arena = Arena.ofShared();
        int fd = -1;
        try
        {
            capturedState = arena.allocate(errno$layout());
            final MemorySegment params = io_uring_params.allocate(arena);
            io_uring_params.flags(params, IORING_SETUP_CLAMP());
            final long rc = io_uring_setup(capturedState, entries, params);
            if (rc < 0)
            {
                final int errno = errno(capturedState);
                throw new UringException("io_uring_setup(" + entries + ") failed: " + strerror(errno) + " (errno " + errno + ")", errno);
            }
            fd = (int)rc;
            ringFd = fd;
            features = io_uring_params.features(params);
            if ((features & REQUIRED_FEATURES) != REQUIRED_FEATURES)
            {
                throw new UringException("the kernel's io_uring lacks features kvtier needs (NODROP, SUBMIT_STABLE, RW_CUR_POS of Linux 5.6):"
                    + " features=0x" + Integer.toHexString(features), ENOSYS());
            }
            sqEntries = io_uring_params.sq_entries(params);
            cqEntries = io_uring_params.cq_entries(params);
            final MemorySegment sqOff = io_uring_params.sq_off(params);
            final MemorySegment cqOff = io_uring_params.cq_off(params);
            sqHeadOffset = io_sqring_offsets.head(sqOff);
            sqTailOffset = io_sqring_offsets.tail(sqOff);
            sqFlagsOffset = io_sqring_offsets.flags(sqOff);
            cqHeadOffset = io_cqring_offsets.head(cqOff);
            cqTailOffset = io_cqring_offsets.tail(cqOff);
            cqesOffset = io_cqring_offsets.cqes(cqOff);

            final long sqRingBytes = io_sqring_offsets.array(sqOff) + (long)sqEntries * SQ_ARRAY_SLOT_LENGTH;
            final long cqRingBytes = cqesOffset + (long)cqEntries * CQE_LENGTH;
            singleMmap = (features & IORING_FEAT_SINGLE_MMAP()) != 0;
            if (singleMmap)
            {
                sqRing = map(Math.max(sqRingBytes, cqRingBytes), IORING_OFF_SQ_RING());
                cqRing = sqRing;
            }
            else
            {
                sqRing = map(sqRingBytes, IORING_OFF_SQ_RING());
                cqRing = map(cqRingBytes, IORING_OFF_CQ_RING());
            }
            sqes = map((long)sqEntries * SQE_LENGTH, IORING_OFF_SQES());
            sqMask = sqRing.get(ValueLayout.JAVA_INT, io_sqring_offsets.ring_mask(sqOff));
            cqMask = cqRing.get(ValueLayout.JAVA_INT, io_cqring_offsets.ring_mask(cqOff));
            // The indirection array, set once to the identity: slot i always names SQE i.
            final long array = io_sqring_offsets.array(sqOff);
            for (int i = 0; i < sqEntries; i++)
            {
                sqRing.set(ValueLayout.JAVA_INT, array + (long)i * SQ_ARRAY_SLOT_LENGTH, i);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            if (fd >= 0)
            {
                final int toClose = fd;
                LibC.instance().ifPresent(libc -> libc.close(toClose));
            }
            arena.close();
            throw ex;
        }
    }

    /** Unmaps the rings and closes the ring's descriptor; the kernel drops registrations with it. A second call does nothing. */
    void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        unmap(sqes);
        if (cqRing != sqRing)
        {
            unmap(cqRing);
        }
        unmap(sqRing);
        LibC.instance().ifPresent(libc -> libc.close(ringFd));
        arena.close();
    }

    /**
     * @param length bytes to map
     * @param offset which of the ring's areas ({@code IORING_OFF_*})
     * @return the area, shared with the kernel
     * @throws UringException if the kernel refuses the mapping
     */
    @SuppressWarnings("restricted")
    private MemorySegment map(final long length, final long offset)
    {
        final MemorySegment address = mmap(capturedState, MemorySegment.NULL, length, PROT_READ() | PROT_WRITE(),
            MAP_SHARED() | MAP_POPULATE(), ringFd, offset);
        if (address.address() == -1L)
        {
            final int errno = errno(capturedState);
            throw new UringException("mmap of the ring at offset 0x" + Long.toHexString(offset) + " failed: " + strerror(errno), errno);
        }
        return address.reinterpret(length);
    }

    /** Unmaps an area; a null one (never mapped) is skipped. */
    private void unmap(final MemorySegment mapping)
    {
        if (mapping != null)
        {
            munmap(capturedState, mapping, mapping.byteSize());
        }
    }

    /** @return the C library's text for {@code errno}, or the bare number when libc is not bound, for messages */
    static String strerror(final int errno)
    {
        return LibC.instance().map(libc -> libc.strerror(errno)).orElse("errno " + errno);
    }
}

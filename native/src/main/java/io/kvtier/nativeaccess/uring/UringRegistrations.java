package io.kvtier.nativeaccess.uring;

import io.kvtier.nativeaccess.uring.bindings.iovec;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_REGISTER_BUFFERS;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_REGISTER_FILES;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_UNREGISTER_BUFFERS;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.IORING_UNREGISTER_FILES;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.errno;
import static io.kvtier.nativeaccess.uring.bindings.io_uring_h.io_uring_register;

/**
 * The buffers and files registered with one ring ({@code io_uring_register}), and the Java-side copy
 * of the buffers' extents that lets {@link UringBatchRunner} pick {@code READ_FIXED}/{@code WRITE_FIXED}
 * for an operation without asking the kernel. Registration happens rarely, at a tier's start; only
 * {@link #registeredBufferIndex} is on the per-operation path, and it reads two arrays and allocates
 * nothing. Owned by its {@link Uring}, whose thread alone uses it.
 */
final class UringRegistrations
{
    private static final long[] NONE = new long[0];

    private final MemorySegment capturedState;
    private final int ringFd;
    private long[] bufferAddress = NONE;
    private long[] bufferLength = NONE;
    private int registeredFiles;

    /**
     * @param capturedState the ring's errno capture, so a refused registration reports its errno
     * @param ringFd        the ring's descriptor
     */
    UringRegistrations(final MemorySegment capturedState, final int ringFd)
    {
        this.capturedState = capturedState;
        this.ringFd = ringFd;
    }

    /**
     * Registers buffers, replacing any earlier registration (the kernel refuses a second one with
     * {@code EBUSY}, so the old one is dropped first).
     *
     * @param buffers native segments, each at most 1 GiB, at most 16384 of them
     * @return 0, or {@code -errno}; on error nothing is registered
     */
    int registerBuffers(final MemorySegment... buffers)
    {
        if (bufferAddress.length > 0)
        {
            unregisterBuffers();
        }
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment iovecs = iovec.allocateArray(buffers.length, scratch);
            for (int i = 0; i < buffers.length; i++)
            {
                final MemorySegment iov = iovec.asSlice(iovecs, i);
                iovec.iov_base(iov, buffers[i]);
                iovec.iov_len(iov, buffers[i].byteSize());
            }
            final long rc = io_uring_register(capturedState, ringFd, IORING_REGISTER_BUFFERS(), iovecs, buffers.length);
            if (rc < 0)
            {
                return -errno(capturedState);
            }
        }
        // Kept only once the kernel took them, so a refused registration never sends a FIXED opcode.
        final long[] addresses = new long[buffers.length];
        final long[] lengths = new long[buffers.length];
        for (int i = 0; i < buffers.length; i++)
        {
            addresses[i] = buffers[i].address();
            lengths[i] = buffers[i].byteSize();
        }
        bufferAddress = addresses;
        bufferLength = lengths;
        return 0;
    }

    /** @return 0, or {@code -errno} */
    int unregisterBuffers()
    {
        // Forgotten before the kernel is asked, so no FIXED opcode names a buffer that may be gone.
        bufferAddress = NONE;
        bufferLength = NONE;
        final long rc = io_uring_register(capturedState, ringFd, IORING_UNREGISTER_BUFFERS(), MemorySegment.NULL, 0);
        return rc < 0 ? -errno(capturedState) : 0;
    }

    /**
     * @param address a buffer's address
     * @param length  its length
     * @return the index of the registered buffer that holds it whole, or -1
     */
    int registeredBufferIndex(final long address, final long length)
    {
        final long[] addresses = bufferAddress;
        for (int i = 0; i < addresses.length; i++)
        {
            final long start = addresses[i];
            if (address >= start && address + length <= start + bufferLength[i])
            {
                return i;
            }
        }
        return -1;
    }

    /**
     * Registers files, replacing any earlier registration.
     *
     * @param fds open file descriptors
     * @return 0, or {@code -errno}
     */
    int registerFiles(final int... fds)
    {
        if (registeredFiles > 0)
        {
            unregisterFiles();
        }
        try (Arena scratch = Arena.ofConfined())
        {
            final MemorySegment array = scratch.allocateFrom(ValueLayout.JAVA_INT, fds);
            final long rc = io_uring_register(capturedState, ringFd, IORING_REGISTER_FILES(), array, fds.length);
            if (rc < 0)
            {
                return -errno(capturedState);
            }
        }
        registeredFiles = fds.length;
        return 0;
    }

    /** @return 0, or {@code -errno} */
    int unregisterFiles()
    {
        registeredFiles = 0;
        final long rc = io_uring_register(capturedState, ringFd, IORING_UNREGISTER_FILES(), MemorySegment.NULL, 0);
        return rc < 0 ? -errno(capturedState) : 0;
    }
}

package io.kvtier.nativeaccess.uring;

import io.kvtier.nativeaccess.uring.bindings.io_uring_cqe;
import io.kvtier.nativeaccess.uring.bindings.io_uring_sqe;

/**
 * Where things are in the three mappings of a ring. The SQ and CQ rings' field offsets are not
 * fixed: the kernel reports them in {@code io_uring_params.sq_off}/{@code cq_off} at setup, so
 * {@link Uring} keeps them per ring; the entries' layouts are fixed and are here.
 *
 * <p>The SQ ring ({@code IORING_OFF_SQ_RING}; with {@code IORING_FEAT_SINGLE_MMAP} the same mapping
 * also holds the CQ ring):
 * <pre>
 *   sq_off.head    u32  kernel writes: next SQE index it will consume   (we read: getIntAcquire)
 *   sq_off.tail    u32  we write: one past the last SQE index published  (we write: putIntRelease)
 *   sq_off.flags   u32  kernel writes: NEED_WAKEUP | CQ_OVERFLOW | TASKRUN (we read: getIntAcquire)
 *   sq_off.array   u32[sq_entries]  index of the SQE for each slot; set once to the identity
 * </pre>
 * The CQ ring ({@code IORING_OFF_CQ_RING}):
 * <pre>
 *   cq_off.head    u32  we write: one past the last CQE consumed          (we write: putIntRelease)
 *   cq_off.tail    u32  kernel writes: one past the last CQE posted      (we read: getIntAcquire)
 *   cq_off.cqes    io_uring_cqe[cq_entries]
 * </pre>
 * A submission queue entry, 64 bytes, at {@code IORING_OFF_SQES + index * 64}:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |    opcode     |     flags     |            ioprio             |  0
 *  +---------------+---------------+-------------------------------+
 *  |                  fd (or fixed file index)                     |  4
 *  +---------------------------------------------------------------+
 *  |                      off: file offset (u64)                   |  8
 *  +---------------------------------------------------------------+
 *  |                 addr: buffer address (u64)                    | 16
 *  +---------------------------------------------------------------+
 *  |                         len (u32)                             | 24
 *  +---------------------------------------------------------------+
 *  |                 rw_flags / fsync_flags (u32)                  | 28
 *  +---------------------------------------------------------------+
 *  |                     user_data (u64)                           | 32
 *  +-------------------------------+-------------------------------+
 *  |     buf_index (u16)           |       personality (u16)       | 40
 *  +-------------------------------+-------------------------------+
 *  |              splice_fd_in / file_index (u32)                  | 44
 *  +---------------------------------------------------------------+
 *  |                  addr3, pad (u64 x 2)                         | 48..63
 *  +---------------------------------------------------------------+
 * </pre>
 * A completion queue entry, 16 bytes: {@code user_data} (u64) at 0, {@code res} (s32: a byte count,
 * or {@code -errno}) at 8, {@code flags} (u32) at 12.
 */
final class UringDescriptor
{
    /** Bytes of one SQE (rings set up without {@code IORING_SETUP_SQE128}). */
    static final int SQE_LENGTH = (int)io_uring_sqe.sizeof();
    static final long SQE_OPCODE_OFFSET = io_uring_sqe.opcode$offset();
    static final long SQE_FLAGS_OFFSET = io_uring_sqe.flags$offset();
    static final long SQE_IOPRIO_OFFSET = io_uring_sqe.ioprio$offset();
    static final long SQE_FD_OFFSET = io_uring_sqe.fd$offset();
    static final long SQE_OFF_OFFSET = io_uring_sqe.off$offset();
    static final long SQE_ADDR_OFFSET = io_uring_sqe.addr$offset();
    static final long SQE_LEN_OFFSET = io_uring_sqe.len$offset();
    static final long SQE_RW_FLAGS_OFFSET = io_uring_sqe.rw_flags$offset();
    static final long SQE_USER_DATA_OFFSET = io_uring_sqe.user_data$offset();
    static final long SQE_BUF_INDEX_OFFSET = io_uring_sqe.buf_index$offset();
    static final long SQE_PERSONALITY_OFFSET = io_uring_sqe.personality$offset();
    static final long SQE_FILE_INDEX_OFFSET = io_uring_sqe.file_index$offset();
    static final long SQE_ADDR3_OFFSET = io_uring_sqe.addr3$offset();

    /** Bytes of one CQE (rings set up without {@code IORING_SETUP_CQE32}). */
    static final int CQE_LENGTH = (int)io_uring_cqe.sizeof();
    static final long CQE_USER_DATA_OFFSET = io_uring_cqe.user_data$offset();
    static final long CQE_RES_OFFSET = io_uring_cqe.res$offset();
    static final long CQE_FLAGS_OFFSET = io_uring_cqe.flags$offset();

    /** Bytes of one SQ ring array slot (a u32 SQE index). */
    static final int SQ_ARRAY_SLOT_LENGTH = Integer.BYTES;

    private UringDescriptor()
    {
    }
}

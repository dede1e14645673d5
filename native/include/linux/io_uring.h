/*
 * kvtier's own declarations of the io_uring facts its FFM front relies on, and of nothing else: the
 * names, values and struct layouts of the kernel's io_uring interface (Linux 5.6 and later, x86_64)
 * that native/src/main/java/io/kvtier/nativeaccess/uring/bindings binds, written by the project. The
 * kernel documents these facts in io_uring_setup(2), io_uring_enter(2) and io_uring_register(2); the
 * names are the kernel's, so that code written against either reads alike.
 *
 * The file sits at linux/io_uring.h so that a program compiled with -I native/include sees these
 * declarations where it would otherwise see the system's <linux/io_uring.h>, and one program can be
 * built against either. UringAbiTest does exactly that: it prints every bound size, offset and value
 * once with this file and once with the system's /usr/include/linux/io_uring.h (Debian's
 * linux-libc-dev), and both must equal the Java bindings; without linux-libc-dev the second half
 * skips, naming the package. native/jextract.sh generates the bindings from this file, or with
 * --system-headers from the system's header where one is installed.
 *
 * Types are plain C types of the same widths as the kernel's __u8/__u16/__u32/__u64 (int where the
 * kernel's field is signed), so that the file needs no other header.
 */
#ifndef KVTIER_IO_URING_H
#define KVTIER_IO_URING_H

/* ---- Creating a ring: io_uring_setup(entries, &params) ---------------------------------------- */

/* Where, inside the ring mapping, each part of the submission ring lies; the kernel fills it in. */
struct io_sqring_offsets {
    unsigned int head;
    unsigned int tail;
    unsigned int ring_mask;
    unsigned int ring_entries;
    unsigned int flags;          /* holds IORING_SQ_* */
    unsigned int dropped;
    unsigned int array;          /* the index array, one unsigned int per entry */
    unsigned int resv1;
    unsigned long long resv2;
};

/* The same for the completion ring. */
struct io_cqring_offsets {
    unsigned int head;
    unsigned int tail;
    unsigned int ring_mask;
    unsigned int ring_entries;
    unsigned int overflow;
    unsigned int cqes;           /* the io_uring_cqe array */
    unsigned int flags;
    unsigned int resv1;
    unsigned long long resv2;
};

/* In: the entry counts and IORING_SETUP_* flags asked for. Out: what the kernel granted. */
struct io_uring_params {
    unsigned int sq_entries;
    unsigned int cq_entries;
    unsigned int flags;          /* IORING_SETUP_* */
    unsigned int sq_thread_cpu;
    unsigned int sq_thread_idle;
    unsigned int features;       /* IORING_FEAT_*, set by the kernel */
    unsigned int wq_fd;
    unsigned int resv[3];        /* must be zero */
    struct io_sqring_offsets sq_off;
    struct io_cqring_offsets cq_off;
};

/* io_uring_params.flags */
#define IORING_SETUP_IOPOLL         0x0001U
#define IORING_SETUP_SQPOLL         0x0002U
#define IORING_SETUP_CQSIZE         0x0008U   /* cq_entries is the caller's */
#define IORING_SETUP_CLAMP          0x0010U
#define IORING_SETUP_SUBMIT_ALL     0x0080U
#define IORING_SETUP_COOP_TASKRUN   0x0100U
#define IORING_SETUP_SINGLE_ISSUER  0x1000U

/* io_uring_params.features */
#define IORING_FEAT_SINGLE_MMAP     0x0001U   /* one mapping serves both rings */
#define IORING_FEAT_NODROP          0x0002U
#define IORING_FEAT_SUBMIT_STABLE   0x0004U
#define IORING_FEAT_RW_CUR_POS      0x0008U

/* mmap(2) offsets on the ring's descriptor for each of its three regions */
#define IORING_OFF_SQ_RING          0x00000000ULL
#define IORING_OFF_CQ_RING          0x08000000ULL
#define IORING_OFF_SQES             0x10000000ULL

/* ---- Submitting: one 64-byte entry per operation ---------------------------------------------- */

struct io_uring_sqe {
    unsigned char opcode;        /* IORING_OP_* */
    unsigned char flags;         /* IOSQE_* */
    unsigned short ioprio;
    int fd;                      /* a descriptor, or a registered file's index with IOSQE_FIXED_FILE */
    unsigned long long off;      /* file offset */
    unsigned long long addr;     /* buffer address */
    unsigned int len;            /* buffer length in bytes */
    union {                      /* the operation's own flags: one word, named after the operation */
        unsigned int rw_flags;
        unsigned int fsync_flags;  /* IORING_FSYNC_* */
    };
    unsigned long long user_data;  /* handed back unchanged in the completion */
    unsigned short buf_index;    /* registered buffer, for READ_FIXED and WRITE_FIXED */
    unsigned short personality;
    unsigned int file_index;
    unsigned long long addr3;
    unsigned long long __pad2[1];
};

/* io_uring_sqe.flags */
#define IOSQE_FIXED_FILE            0x01U
#define IOSQE_IO_DRAIN              0x02U
#define IOSQE_IO_LINK               0x04U     /* the next entry waits for this one's success */
#define IOSQE_IO_HARDLINK           0x08U
#define IOSQE_ASYNC                 0x10U

/* io_uring_sqe.opcode: the operations kvtier submits (the kernel's list is longer) */
enum {
    IORING_OP_NOP = 0,
    IORING_OP_READV = 1,
    IORING_OP_WRITEV = 2,
    IORING_OP_FSYNC = 3,
    IORING_OP_READ_FIXED = 4,
    IORING_OP_WRITE_FIXED = 5,
    IORING_OP_OPENAT = 18,
    IORING_OP_CLOSE = 19,
    IORING_OP_STATX = 21,
    IORING_OP_READ = 22,
    IORING_OP_WRITE = 23
};

/* io_uring_sqe.fsync_flags */
#define IORING_FSYNC_DATASYNC       0x01U

/* ---- Completing: one 16-byte entry per finished operation ------------------------------------- */

struct io_uring_cqe {
    unsigned long long user_data;
    int res;                     /* the operation's result, or -errno */
    unsigned int flags;
};

/* the submission ring's flags word (at sq_off.flags), written by the kernel */
#define IORING_SQ_NEED_WAKEUP       0x01U     /* the SQPOLL thread sleeps: enter with IORING_ENTER_SQ_WAKEUP */
#define IORING_SQ_CQ_OVERFLOW       0x02U     /* completions wait in the kernel for room in the CQ ring */
#define IORING_SQ_TASKRUN           0x04U

/* ---- io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz) --------------------------- */

#define IORING_ENTER_GETEVENTS      0x01U
#define IORING_ENTER_SQ_WAKEUP      0x02U

/* ---- io_uring_register(fd, opcode, arg, nr_args) ---------------------------------------------- */

enum {
    IORING_REGISTER_BUFFERS = 0,    /* arg: struct iovec[nr_args] */
    IORING_UNREGISTER_BUFFERS = 1,
    IORING_REGISTER_FILES = 2,      /* arg: int[nr_args] */
    IORING_UNREGISTER_FILES = 3
};

#endif

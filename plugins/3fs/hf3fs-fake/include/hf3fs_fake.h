/*
 * Test controls of the fake USRBIO library (plugins/3fs/hf3fs-fake), which implements ../../include/hf3fs_usrbio.h
 * over local files. Not part of 3FS: tests bind these to inject faults into I/Os that go through the real
 * FFM binding.
 *
 * A "mount" of the fake is any directory holding a 3fs-virt/ subdirectory, as a real 3FS mount point does.
 */
#ifndef KVTIER_HF3FS_FAKE_H
#define KVTIER_HF3FS_FAKE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fault kinds. */
#define HF3FS_FAKE_EIO 1   /* the I/O completes with result -EIO and transfers nothing */
#define HF3FS_FAKE_DELAY 2 /* the I/O completes delay_ms after it was submitted */
#define HF3FS_FAKE_SHORT 3 /* the I/O transfers half its length and completes with that count */
#define HF3FS_FAKE_PREP_EAGAIN 4 /* hf3fs_prep_io refuses with -EAGAIN, as for a full ring */

/* Directions a fault applies to. */
#define HF3FS_FAKE_READ 1
#define HF3FS_FAKE_WRITE 2
#define HF3FS_FAKE_ANY 3

/* Counters for hf3fs_fake_stat. */
#define HF3FS_FAKE_STAT_COMPLETED 0  /* I/Os completed, with any result */
#define HF3FS_FAKE_STAT_REGISTERED 1 /* file descriptors registered now */
#define HF3FS_FAKE_STAT_RINGS 2      /* rings alive now */
#define HF3FS_FAKE_STAT_IOVS 3       /* iovs alive now (created or wrapped) */
#define HF3FS_FAKE_STAT_WRAPPED 4    /* hf3fs_iovwrap calls that succeeded, ever */

/*
 * The next `count` I/Os prepared in `direction` get fault `kind` (delay_ms is used by HF3FS_FAKE_DELAY).
 * Replaces any fault set before for that direction. Returns 0, or -EINVAL for a bad argument.
 */
int hf3fs_fake_inject(int kind, int direction, int count, int64_t delay_ms);

/* Clears every fault. */
void hf3fs_fake_reset(void);

/* Returns a counter (HF3FS_FAKE_STAT_*), or -1 for an unknown one. */
int64_t hf3fs_fake_stat(int which);

#ifdef __cplusplus
}
#endif

#endif

/*
 * The project's own declarations of the part of 3FS's USRBIO API that kvtier binds: the names,
 * signatures, struct layouts and return conventions the API publishes (its header is
 * src/lib/api/hf3fs_usrbio.h in https://github.com/deepseek-ai/3FS, documented in src/lib/api/UsrbIo.md),
 * stated here by kvtier in its own declarations and order. Only what kvtier uses is declared, and no
 * GPU (GDR) calls.
 *
 * Two things are built against it:
 *   - io.kvtier.tier.threefs.hf3fs.bindings (Java, jextract's shape), whose layouts Hf3fsAbiTest checks
 *     against this file with gcc;
 *   - plugins/3fs/hf3fs-fake, the project's own implementation over local files, a test fixture only.
 * The real library (libhf3fs_api_shared.so) is never bundled: a 3FS client install provides it.
 *
 * Return conventions worth knowing, because they differ from call to call:
 *   - hf3fs_extract_mount_point: mount point length + 1, or -1 when the path is not on 3FS;
 *   - hf3fs_iovcreate, hf3fs_iovwrap, hf3fs_iorcreate4, hf3fs_submit_ios: 0, or -errno;
 *   - hf3fs_reg_fd: -dupfd (<= 0) on success, a POSITIVE errno on failure;
 *   - hf3fs_prep_io: the slot index (>= 0), or -errno;
 *   - hf3fs_wait_for_ios: the number of completions (>= 0), or -errno; each cqe's result is the byte
 *     count, or -errno; abs_timeout is an absolute CLOCK_REALTIME time, NULL to wait for min_results.
 */
#ifndef KVTIER_HF3FS_USRBIO_H
#define KVTIER_HF3FS_USRBIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HF3FS_SUPER_MAGIC 0x8f3f5fff

#define HF3FS_IOR_ALLOW_READ_UNCOMMITTED 1
#define HF3FS_IOR_FORBID_READ_HOLES 2

/* Shared memory the 3FS client reads from and writes into; the caller owns the struct itself. */
struct hf3fs_iov {
    uint8_t *base;
    void *iovh;
    char id[16];
    char mount_point[256];
    size_t size;
    size_t block_size;
    int numa;
};

/* One I/O ring, either for reads or for writes; the caller owns the struct itself. */
struct hf3fs_ior {
    struct hf3fs_iov iov;
    void *iorh;
    char mount_point[256];
    bool for_read;
    int io_depth;
    int priority;
    int timeout;
    uint64_t flags;
};

/* One completion. */
struct hf3fs_cqe {
    int32_t index;
    int32_t reserved;
    int64_t result;
    const void *userdata;
};

bool hf3fs_is_hf3fs(int fd);
int hf3fs_extract_mount_point(char *hf3fs_mount_point, int size, const char *path);

int hf3fs_iovcreate(struct hf3fs_iov *iov, const char *hf3fs_mount_point, size_t size, size_t block_size, int numa);
int hf3fs_iovwrap(struct hf3fs_iov *iov, void *base, const uint8_t id[16], const char *hf3fs_mount_point, size_t size,
                  size_t block_size, int numa);
void hf3fs_iovunlink(struct hf3fs_iov *iov);
void hf3fs_iovdestroy(struct hf3fs_iov *iov);

size_t hf3fs_ior_size(int entries);
int hf3fs_iorcreate4(struct hf3fs_ior *ior, const char *hf3fs_mount_point, int entries, bool for_read, int io_depth,
                     int timeout, int numa, uint64_t flags);
void hf3fs_iordestroy(struct hf3fs_ior *ior);

int hf3fs_reg_fd(int fd, uint64_t flags);
void hf3fs_dereg_fd(int fd);

int hf3fs_io_entries(const struct hf3fs_ior *ior);
int hf3fs_prep_io(const struct hf3fs_ior *ior, const struct hf3fs_iov *iov, bool read, void *ptr, int fd, size_t off,
                  uint64_t len, const void *userdata);
int hf3fs_submit_ios(const struct hf3fs_ior *ior);
int hf3fs_wait_for_ios(const struct hf3fs_ior *ior, struct hf3fs_cqe *cqes, int cqec, int min_results,
                       const struct timespec *abs_timeout);

#ifdef __cplusplus
}
#endif

#endif

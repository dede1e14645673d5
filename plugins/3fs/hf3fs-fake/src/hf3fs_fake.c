/*
 * A fake of 3FS's USRBIO client library over local files: the functions of include/hf3fs_usrbio.h with
 * the same names, signatures, struct layouts and return conventions, so that kvtier's 3FS tier can be
 * tested through its real FFM binding on a machine without 3FS. A test fixture, never shipped as the
 * library: it is loaded only when a test or a user points kvtier.3fs lib at it.
 *
 * What it models, and what it does not:
 *   - a mount is a directory with a 3fs-virt/ subdirectory (the real check reads /proc/self/mountinfo for
 *     fuse.hf3fs; a real mount point also holds 3fs-virt/);
 *   - iovs are shared memory: hf3fs_iovcreate makes /dev/shm/hf3fs-fake-iov-<id> and links it from
 *     <mount>/3fs-virt/iovs/<id>, as the real library does; hf3fs_iovwrap accepts memory only when that
 *     link already exists (registered shared memory), and every I/O must lie inside its iov;
 *   - hf3fs_reg_fd dups the descriptor and returns -dupfd, or a positive errno (EBADF for a file not on
 *     a mount, EINVAL when already registered);
 *   - I/Os run inside hf3fs_wait_for_ios, on the waiting thread, once submitted (the real worker may start
 *     before the submit; nothing here depends on it not doing so), with pread/pwrite at the given offset;
 *   - faults come from hf3fs_fake_inject (hf3fs_fake.h).
 */
#include "hf3fs_usrbio.h"
#include "hf3fs_fake.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FDS 65536
#define WAIT_STEP_NS 1000000L

enum slot_state { FREE = 0, PREPARED, SUBMITTED, DONE };

struct slot {
    enum slot_state state;
    bool read;
    uint8_t *ptr;
    int fd;
    size_t off;
    uint64_t len;
    const void *userdata;
    int fault;
    int64_t ready_at_ns;
    int64_t delay_ms;
    int64_t result;
    uint64_t done_seq;
};

struct ring {
    pthread_mutex_t lock;
    int entries;
    struct slot *slots;
    uint64_t next_done_seq;
};

struct iov_handle {
    int shm_fd;
    char shm_path[PATH_MAX];
    char link_path[PATH_MAX];
};

struct fault {
    int kind;
    int count;
    int64_t delay_ms;
};

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static int registered[MAX_FDS]; /* original fd -> dup fd + 1, 0 when not registered */
static struct fault faults[2];  /* [0] reads, [1] writes */
static int64_t completed_ios;
static int64_t live_rings;
static int64_t live_iovs;
static int64_t wrapped_iovs;
static int64_t registered_fds;

static int64_t now_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void hex_id(const uint8_t id[16], char out[33])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[id[i] >> 4];
        out[2 * i + 1] = digits[id[i] & 0xF];
    }
    out[32] = '\0';
}

/* The mount a path is on: the nearest ancestor (or the path) holding a 3fs-virt directory. */
static int find_mount(const char *path, char *out, size_t out_size)
{
    char resolved[PATH_MAX];
    if (realpath(path, resolved) == NULL) {
        return -1;
    }
    char probe[PATH_MAX + 16];
    for (;;) {
        struct stat st;
        snprintf(probe, sizeof(probe), "%s/3fs-virt", strcmp(resolved, "/") == 0 ? "" : resolved);
        if (stat(probe, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (strlen(resolved) + 1 > out_size) {
                return -1;
            }
            strcpy(out, resolved);
            return 0;
        }
        char *slash = strrchr(resolved, '/');
        if (slash == NULL || strcmp(resolved, "/") == 0) {
            return -1;
        }
        if (slash == resolved) {
            resolved[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
}

bool hf3fs_is_hf3fs(int fd)
{
    char link[64];
    char path[PATH_MAX];
    char mount[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n < 0) {
        return false;
    }
    path[n] = '\0';
    /* A file renamed over or unlinked since it was opened reads "<path> (deleted)": its directory still tells
       the mount, as the real check (an ioctl on the descriptor) still works on such a file. */
    static const char deleted[] = " (deleted)";
    size_t len = (size_t)n;
    if (len > sizeof(deleted) - 1 && strcmp(path + len - (sizeof(deleted) - 1), deleted) == 0) {
        path[len - (sizeof(deleted) - 1)] = '\0';
    }
    if (find_mount(path, mount, sizeof(mount)) == 0) {
        return true;
    }
    char *slash = strrchr(path, '/');
    if (slash == NULL || slash == path) {
        return false;
    }
    *slash = '\0';
    return find_mount(path, mount, sizeof(mount)) == 0;
}

int hf3fs_extract_mount_point(char *hf3fs_mount_point, int size, const char *path)
{
    char mount[PATH_MAX];
    if (path == NULL || find_mount(path, mount, sizeof(mount)) != 0) {
        return -1;
    }
    int needed = (int)strlen(mount) + 1;
    if (hf3fs_mount_point != NULL && needed <= size) {
        memcpy(hf3fs_mount_point, mount, (size_t)needed);
    }
    return needed;
}

static int check_mount(const char *mount)
{
    char virt[PATH_MAX + 16];
    struct stat st;
    if (mount == NULL || strlen(mount) >= 256) {
        return -EINVAL;
    }
    snprintf(virt, sizeof(virt), "%s/3fs-virt", mount);
    if (stat(virt, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return -ENOENT;
    }
    snprintf(virt, sizeof(virt), "%s/3fs-virt/iovs", mount);
    if (mkdir(virt, 0755) != 0 && errno != EEXIST) {
        return -errno;
    }
    return 0;
}

static void fill_iov(struct hf3fs_iov *iov, uint8_t *base, void *iovh, const uint8_t id[16], const char *mount, size_t size,
                     size_t block_size, int numa)
{
    memset(iov, 0, sizeof(*iov));
    iov->base = base;
    iov->iovh = iovh;
    memcpy(iov->id, id, 16);
    strncpy(iov->mount_point, mount, sizeof(iov->mount_point) - 1);
    iov->size = size;
    iov->block_size = block_size;
    iov->numa = numa;
}

int hf3fs_iovcreate(struct hf3fs_iov *iov, const char *hf3fs_mount_point, size_t size, size_t block_size, int numa)
{
    int rc = check_mount(hf3fs_mount_point);
    if (rc != 0) {
        return rc;
    }
    if (iov == NULL || size == 0) {
        return -EINVAL;
    }
    uint8_t id[16];
    int urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (urandom < 0 || read(urandom, id, sizeof(id)) != (ssize_t)sizeof(id)) {
        rc = -errno;
        if (urandom >= 0) {
            close(urandom);
        }
        return rc != 0 ? rc : -EIO;
    }
    close(urandom);
    char hex[33];
    hex_id(id, hex);
    struct iov_handle *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        return -ENOMEM;
    }
    snprintf(h->shm_path, sizeof(h->shm_path), "/dev/shm/hf3fs-fake-iov-%s", hex);
    snprintf(h->link_path, sizeof(h->link_path), "%s/3fs-virt/iovs/%s", hf3fs_mount_point, hex);
    h->shm_fd = open(h->shm_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (h->shm_fd < 0) {
        rc = -errno;
        free(h);
        return rc;
    }
    void *base = MAP_FAILED;
    if (ftruncate(h->shm_fd, (off_t)size) != 0
        || (base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, h->shm_fd, 0)) == MAP_FAILED
        || symlink(h->shm_path, h->link_path) != 0) {
        rc = -errno;
        if (base != MAP_FAILED) {
            munmap(base, size);
        }
        close(h->shm_fd);
        unlink(h->shm_path);
        free(h);
        return rc;
    }
    fill_iov(iov, base, h, id, hf3fs_mount_point, size, block_size, numa);
    pthread_mutex_lock(&global_lock);
    live_iovs++;
    pthread_mutex_unlock(&global_lock);
    return 0;
}

int hf3fs_iovwrap(struct hf3fs_iov *iov, void *base, const uint8_t id[16], const char *hf3fs_mount_point, size_t size,
                  size_t block_size, int numa)
{
    int rc = check_mount(hf3fs_mount_point);
    if (rc != 0) {
        return rc;
    }
    if (iov == NULL || base == NULL || id == NULL || size == 0) {
        return -EINVAL;
    }
    /* Only registered shared memory can be wrapped: its link must be in 3fs-virt/iovs already. */
    char hex[33];
    char link[PATH_MAX + 64];
    struct stat st;
    hex_id(id, hex);
    snprintf(link, sizeof(link), "%s/3fs-virt/iovs/%s", hf3fs_mount_point, hex);
    if (lstat(link, &st) != 0) {
        return -errno;
    }
    fill_iov(iov, base, NULL, id, hf3fs_mount_point, size, block_size, numa);
    pthread_mutex_lock(&global_lock);
    live_iovs++;
    wrapped_iovs++;
    pthread_mutex_unlock(&global_lock);
    return 0;
}

void hf3fs_iovunlink(struct hf3fs_iov *iov)
{
    if (iov != NULL && iov->iovh != NULL) {
        struct iov_handle *h = iov->iovh;
        unlink(h->link_path);
        unlink(h->shm_path);
    }
}

void hf3fs_iovdestroy(struct hf3fs_iov *iov)
{
    if (iov == NULL) {
        return;
    }
    if (iov->iovh != NULL) {
        struct iov_handle *h = iov->iovh;
        hf3fs_iovunlink(iov);
        munmap(iov->base, iov->size);
        close(h->shm_fd);
        free(h);
        iov->iovh = NULL;
    }
    pthread_mutex_lock(&global_lock);
    live_iovs--;
    pthread_mutex_unlock(&global_lock);
}

size_t hf3fs_ior_size(int entries)
{
    return entries <= 0 ? 0 : 4096 + (size_t)entries * 64;
}

int hf3fs_iorcreate4(struct hf3fs_ior *ior, const char *hf3fs_mount_point, int entries, bool for_read, int io_depth, int timeout,
                     int numa, uint64_t flags)
{
    int rc = check_mount(hf3fs_mount_point);
    if (rc != 0) {
        return rc;
    }
    if (ior == NULL || entries <= 0 || entries > 65536) {
        return -EINVAL;
    }
    struct ring *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return -ENOMEM;
    }
    r->slots = calloc((size_t)entries, sizeof(struct slot));
    if (r->slots == NULL) {
        free(r);
        return -ENOMEM;
    }
    r->entries = entries;
    pthread_mutex_init(&r->lock, NULL);
    memset(ior, 0, sizeof(*ior));
    strncpy(ior->iov.mount_point, hf3fs_mount_point, sizeof(ior->iov.mount_point) - 1);
    ior->iov.numa = numa;
    ior->iorh = r;
    strncpy(ior->mount_point, hf3fs_mount_point, sizeof(ior->mount_point) - 1);
    ior->for_read = for_read;
    ior->io_depth = io_depth;
    ior->timeout = timeout;
    ior->flags = flags;
    pthread_mutex_lock(&global_lock);
    live_rings++;
    pthread_mutex_unlock(&global_lock);
    return 0;
}

void hf3fs_iordestroy(struct hf3fs_ior *ior)
{
    if (ior == NULL || ior->iorh == NULL) {
        return;
    }
    struct ring *r = ior->iorh;
    pthread_mutex_destroy(&r->lock);
    free(r->slots);
    free(r);
    ior->iorh = NULL;
    pthread_mutex_lock(&global_lock);
    live_rings--;
    pthread_mutex_unlock(&global_lock);
}

int hf3fs_reg_fd(int fd, uint64_t flags)
{
    (void)flags;
    if (fd < 0 || fd >= MAX_FDS || fcntl(fd, F_GETFD) < 0 || !hf3fs_is_hf3fs(fd)) {
        return EBADF;
    }
    pthread_mutex_lock(&global_lock);
    if (registered[fd] != 0) {
        pthread_mutex_unlock(&global_lock);
        return EINVAL;
    }
    int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dupfd < 0) {
        int err = errno;
        pthread_mutex_unlock(&global_lock);
        return err;
    }
    registered[fd] = dupfd + 1;
    registered_fds++;
    pthread_mutex_unlock(&global_lock);
    return -dupfd;
}

void hf3fs_dereg_fd(int fd)
{
    if (fd < 0 || fd >= MAX_FDS) {
        return;
    }
    pthread_mutex_lock(&global_lock);
    if (registered[fd] != 0) {
        close(registered[fd] - 1);
        registered[fd] = 0;
        registered_fds--;
    }
    pthread_mutex_unlock(&global_lock);
}

int hf3fs_io_entries(const struct hf3fs_ior *ior)
{
    return ior == NULL || ior->iorh == NULL ? -EINVAL : ((struct ring *)ior->iorh)->entries;
}

/* The dup'd descriptor I/O goes through: prep_io takes the original fd or reg_fd's -dupfd. */
static int resolve_fd(int fd)
{
    int io_fd = -1;
    pthread_mutex_lock(&global_lock);
    if (fd >= 0 && fd < MAX_FDS && registered[fd] != 0) {
        io_fd = registered[fd] - 1;
    } else if (fd <= 0) {
        for (int i = 0; i < MAX_FDS; i++) {
            if (registered[i] == -fd + 1) {
                io_fd = -fd;
                break;
            }
        }
    }
    pthread_mutex_unlock(&global_lock);
    return io_fd;
}

static struct fault take_fault(bool read)
{
    struct fault taken = {0, 0, 0};
    pthread_mutex_lock(&global_lock);
    struct fault *f = &faults[read ? 0 : 1];
    if (f->count > 0) {
        taken = *f;
        f->count--;
    }
    pthread_mutex_unlock(&global_lock);
    return taken;
}

int hf3fs_prep_io(const struct hf3fs_ior *ior, const struct hf3fs_iov *iov, bool read, void *ptr, int fd, size_t off, uint64_t len,
                  const void *userdata)
{
    if (ior == NULL || ior->iorh == NULL || iov == NULL || read != ior->for_read) {
        return -EINVAL;
    }
    uint8_t *p = ptr;
    if (p < iov->base || len > iov->size || p + len > iov->base + iov->size) {
        return -EINVAL;
    }
    int io_fd = resolve_fd(fd);
    if (io_fd < 0) {
        return -EBADF;
    }
    int mode = fcntl(io_fd, F_GETFL);
    if (mode < 0) {
        return -EBADF;
    }
    mode &= O_ACCMODE;
    if ((read && mode == O_WRONLY) || (!read && mode == O_RDONLY)) {
        return -EACCES;
    }
    struct fault fault = take_fault(read);
    if (fault.kind == HF3FS_FAKE_PREP_EAGAIN) {
        return -EAGAIN;
    }
    struct ring *r = ior->iorh;
    pthread_mutex_lock(&r->lock);
    int index = -1;
    for (int i = 0; i < r->entries; i++) {
        if (r->slots[i].state == FREE) {
            index = i;
            break;
        }
    }
    if (index < 0) {
        pthread_mutex_unlock(&r->lock);
        return -EAGAIN;
    }
    struct slot *s = &r->slots[index];
    memset(s, 0, sizeof(*s));
    s->state = PREPARED;
    s->read = read;
    s->ptr = p;
    s->fd = io_fd;
    s->off = off;
    s->len = len;
    s->userdata = userdata;
    s->fault = fault.kind;
    s->delay_ms = fault.delay_ms;
    pthread_mutex_unlock(&r->lock);
    return index;
}

int hf3fs_submit_ios(const struct hf3fs_ior *ior)
{
    if (ior == NULL || ior->iorh == NULL) {
        return -EINVAL;
    }
    struct ring *r = ior->iorh;
    int64_t now = now_realtime_ns();
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->entries; i++) {
        struct slot *s = &r->slots[i];
        if (s->state == PREPARED) {
            s->state = SUBMITTED;
            s->ready_at_ns = now + (s->fault == HF3FS_FAKE_DELAY ? s->delay_ms * 1000000L : 0);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return 0;
}

__attribute__((unused)) static int64_t do_io(struct slot *s)
{
    if (s->fault == HF3FS_FAKE_EIO) {
        return -EIO;
    }
    uint64_t len = s->fault == HF3FS_FAKE_SHORT ? s->len / 2 : s->len;
    uint64_t done = 0;
    while (done < len) {
        ssize_t n = s->read ? pread(s->fd, s->ptr + done, len - done, (off_t)(s->off + done))
                            : pwrite(s->fd, s->ptr + done, len - done, (off_t)(s->off + done));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return done > 0 ? (int64_t)done : -errno;
        }
        if (n == 0) {
            break;
        }
        done += (uint64_t)n;
    }
    return (int64_t)done;
}

#ifndef HF3FS_FAKE_INCOMPLETE
/* Left out of the "incomplete" build, which tests use as a library that lacks a symbol. */
int hf3fs_wait_for_ios(const struct hf3fs_ior *ior, struct hf3fs_cqe *cqes, int cqec, int min_results,
                       const struct timespec *abs_timeout)
{
    if (ior == NULL || ior->iorh == NULL || cqes == NULL || cqec <= 0 || min_results < 0) {
        return -EINVAL;
    }
    struct ring *r = ior->iorh;
    int64_t deadline = abs_timeout == NULL ? INT64_MAX : (int64_t)abs_timeout->tv_sec * 1000000000L + abs_timeout->tv_nsec;
    int reaped = 0;
    for (;;) {
        int64_t now = now_realtime_ns();
        int64_t completed = 0;
        pthread_mutex_lock(&r->lock);
        for (int i = 0; i < r->entries; i++) {
            struct slot *s = &r->slots[i];
            if (s->state == SUBMITTED && s->ready_at_ns <= now) {
                s->result = do_io(s);
                s->state = DONE;
                s->done_seq = r->next_done_seq++;
                completed++;
            }
        }
        /* Reap in completion order. */
        while (reaped < cqec) {
            int oldest = -1;
            for (int i = 0; i < r->entries; i++) {
                if (r->slots[i].state == DONE && (oldest < 0 || r->slots[i].done_seq < r->slots[oldest].done_seq)) {
                    oldest = i;
                }
            }
            if (oldest < 0) {
                break;
            }
            struct slot *s = &r->slots[oldest];
            cqes[reaped].index = oldest;
            cqes[reaped].reserved = 0;
            cqes[reaped].result = s->result;
            cqes[reaped].userdata = s->userdata;
            s->state = FREE;
            reaped++;
        }
        pthread_mutex_unlock(&r->lock);
        if (completed > 0) {
            pthread_mutex_lock(&global_lock);
            completed_ios += completed;
            pthread_mutex_unlock(&global_lock);
        }
        if (reaped >= min_results || reaped >= cqec || now >= deadline) {
            return reaped;
        }
        int64_t step = deadline - now < WAIT_STEP_NS ? deadline - now : WAIT_STEP_NS;
        struct timespec sleep_for = {0, (long)step};
        nanosleep(&sleep_for, NULL);
    }
}
#endif

int hf3fs_fake_inject(int kind, int direction, int count, int64_t delay_ms)
{
    if (kind < HF3FS_FAKE_EIO || kind > HF3FS_FAKE_PREP_EAGAIN || direction < HF3FS_FAKE_READ || direction > HF3FS_FAKE_ANY
        || count < 0 || delay_ms < 0) {
        return -EINVAL;
    }
    struct fault f = {kind, count, delay_ms};
    pthread_mutex_lock(&global_lock);
    if (direction & HF3FS_FAKE_READ) {
        faults[0] = f;
    }
    if (direction & HF3FS_FAKE_WRITE) {
        faults[1] = f;
    }
    pthread_mutex_unlock(&global_lock);
    return 0;
}

void hf3fs_fake_reset(void)
{
    pthread_mutex_lock(&global_lock);
    memset(faults, 0, sizeof(faults));
    pthread_mutex_unlock(&global_lock);
}

int64_t hf3fs_fake_stat(int which)
{
    int64_t value;
    pthread_mutex_lock(&global_lock);
    switch (which) {
    case HF3FS_FAKE_STAT_COMPLETED: value = completed_ios; break;
    case HF3FS_FAKE_STAT_REGISTERED: value = registered_fds; break;
    case HF3FS_FAKE_STAT_RINGS: value = live_rings; break;
    case HF3FS_FAKE_STAT_IOVS: value = live_iovs; break;
    case HF3FS_FAKE_STAT_WRAPPED: value = wrapped_iovs; break;
    default: value = -1; break;
    }
    pthread_mutex_unlock(&global_lock);
    return value;
}

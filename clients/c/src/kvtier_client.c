/* The kvtier C client: handshake, mappings, requests and responses (docs/ipc-protocol.md). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kvt_internal.h"

struct kvt_client {
    int sock;
    uint8_t *pool; size_t pool_len;
    uint8_t *control; size_t control_len;
    uint8_t *ring; size_t ring_len;
    kvt_ring req, resp;
    kvt_welcome w; /* its path pointers are not kept */
    char *paths[3];           /* the WELCOME's pool, control and ring paths (the ring's "" in 1.2) */
    uint16_t hello_minor;     /* what the HELLO announced */
    uint32_t session_minor;
    int descriptors_mapped;   /* the three files came with the WELCOME */
    uint8_t *counters;        /* the pool's counters region; NULL unless its layout version is 3 */
    int pool_layout_known;    /* the pool header's layout version is 3: section 11 applies */
    int32_t *slot_page, *slot_gen, *slot_status;
    uint8_t *slot_key;        /* 16 bytes a slot: the key this client last wrote into it */
    uint8_t *slot_key_known;
    uint64_t fds_sent;        /* descriptors sent so far: the next one's number */
    uint32_t fds_pending[KVT_DESCRIPTORS_PENDING_MAX]; /* numbers sent and not yet named */
    uint32_t fds_pending_n;
    uint8_t *msg; uint32_t msg_cap;
    uint64_t next_id;
    int32_t header_word;      /* what the next request carries at offset 28 (a LOOKUP_AND_LOCK's Reserve Limit), then 0 */
    uint32_t timeout_ms;
    int wait_kind;            /* KVT_WAIT_BACKOFF or KVT_WAIT_AWAKE */
    uint64_t average_wait_ns; /* KVT_WAIT_AWAKE: the waits seen, averaged; its budget is twice this */
    int dead;                 /* disconnected, engine gone or timed out: nothing more is sent */
    int last_error;
    int last_detail;          /* a REGISTER_KV answered INVALID: its Result Count */
    char message[512];
    /* the engine's heartbeat as last seen, and when (monotonic ns) it last changed */
    uint64_t engine_beat; uint64_t engine_beat_at;
    /* the STATS body of the last response, for kvt_stats() */
    int64_t *stats_out; uint32_t stats_cap; uint32_t stats_n;
    pthread_t heartbeat; int heartbeat_started; _Atomic int stop;
    pthread_mutex_t stop_lock; pthread_cond_t stop_cond;
};

/* ---- names ---- */

const char *kvt_error_name(int code) {
    switch (code) {
    case KVT_OK: return "OK";
    case KVT_LEASE_EXPIRED: return "LEASE_EXPIRED";
    case KVT_CLOSED: return "CLOSED";
    case KVT_INVALID: return "INVALID";
    case KVT_INTERNAL_ERROR: return "INTERNAL_ERROR";
    case KVT_MALFORMED: return "MALFORMED";
    case KVT_UNKNOWN_TYPE: return "UNKNOWN_TYPE";
    case KVT_STALE_REQUEST_ID: return "STALE_REQUEST_ID";
    case KVT_SLOT_RANGE: return "SLOT_RANGE";
    case KVT_SLOT_HELD: return "SLOT_HELD";
    case KVT_NAMESPACE_DENIED: return "NAMESPACE_DENIED";
    case KVT_TOO_LONG: return "TOO_LONG";
    case KVT_NOT_READING: return "NOT_READING";
    case KVT_TIMED_OUT: return "TIMED_OUT";
    case KVT_VERSION: return "VERSION";
    case KVT_NOT_ALLOWED: return "NOT_ALLOWED";
    case KVT_TOO_MANY_CLIENTS: return "TOO_MANY_CLIENTS";
    case KVT_BAD_HELLO: return "BAD_HELLO";
    case KVT_ERR_SYSTEM: return "ERR_SYSTEM";
    case KVT_ERR_PROTOCOL: return "ERR_PROTOCOL";
    case KVT_ERR_ARGUMENT: return "ERR_ARGUMENT";
    case KVT_ERR_ENGINE_GONE: return "ERR_ENGINE_GONE";
    case KVT_ERR_DISCONNECTED: return "ERR_DISCONNECTED";
    case KVT_ERR_TIMEOUT: return "ERR_TIMEOUT";
    case KVT_ERR_UNSUPPORTED: return "ERR_UNSUPPORTED";
    default: return "UNKNOWN";
    }
}

const char *kvt_page_status_name(int status) {
    static const char *names[] = {"NONE", "PINNED", "PINNED_FROM_L3", "RESERVED", "COMMITTED",
                                  "EXISTS", "BUSY", "POOL_FULL", "MISS", "EXPIRED", "INVALID"};
    if (status >= 0 && status <= 10) return names[status];
    if (status == 12) return "LOADED";
    if (status == 13) return "COPIED";
    return "UNKNOWN";
}

const char *kvt_register_detail_name(int detail) {
    static const char *names[] = {"SHAPE", "ARRANGEMENT", "HANDLE_KIND", "ALLOCATION_COUNT", "NO_DEVICE",
                                  "OPEN_FAILED", "TOO_SMALL", "TOO_MANY_LAYOUTS", "PAGE_SIZE"};
    if (detail >= 1 && detail <= 9) return names[detail - 1];
    return "UNKNOWN";
}

/* ---- small helpers ---- */

static int fail(kvt_client *c, int code, const char *fmt, ...) {
    c->last_error = code;
    c->last_detail = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->message, sizeof c->message, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Atomic uint64_t *u64_at(uint8_t *base, size_t off) { return (_Atomic uint64_t *)(void *)(base + off); }
static _Atomic uint32_t *u32_at(uint8_t *base, size_t off) { return (_Atomic uint32_t *)(void *)(base + off); }

static long futex(_Atomic uint32_t *word, int op, uint32_t value, uint64_t timeout_ns) {
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    return syscall(SYS_futex, (uint32_t *)word, op, value, op == FUTEX_WAIT ? &ts : NULL, NULL, 0);
}

/* Maps the whole of the file open at fd read-write and shared (its size is fstat's, section 2); NULL
 * with *err set when it fails or the file is shorter than min_size. The descriptor stays open. */
static void *map_fd(int fd, uint64_t min_size, size_t *len_out, int *err) {
    struct stat st;
    if (fstat(fd, &st) != 0) { *err = errno; return NULL; }
    if (st.st_size <= 0 || (uint64_t)st.st_size < min_size) { *err = ERANGE; return NULL; }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { *err = errno; return NULL; }
    *len_out = (size_t)st.st_size;
    return p;
}

static void *map_path(const char *path, uint64_t min_size, size_t *len_out, int *err) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) { *err = errno; return NULL; }
    void *p = map_fd(fd, min_size, len_out, err);
    close(fd);
    return p;
}

static void *heartbeat_main(void *arg) {
    kvt_client *c = arg;
    uint32_t period_ms = c->w.client_timeout_ms / 8;
    if (period_ms == 0) period_ms = 1;
    _Atomic uint64_t *beat = u64_at(c->ring, KVT_RH_CLIENT_HEARTBEAT);
    pthread_mutex_lock(&c->stop_lock);
    while (!atomic_load(&c->stop)) {
        atomic_fetch_add_explicit(beat, 1, memory_order_release);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)period_ms * 1000000u;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&c->stop_cond, &c->stop_lock, &until);
    }
    pthread_mutex_unlock(&c->stop_lock);
    return NULL;
}

static void free_client(kvt_client *c) {
    if (c->heartbeat_started) {
        pthread_mutex_lock(&c->stop_lock);
        atomic_store(&c->stop, 1);
        pthread_cond_signal(&c->stop_cond);
        pthread_mutex_unlock(&c->stop_lock);
        pthread_join(c->heartbeat, NULL);
    }
    pthread_mutex_destroy(&c->stop_lock);
    pthread_cond_destroy(&c->stop_cond);
    if (c->pool) munmap(c->pool, c->pool_len);
    if (c->control) munmap(c->control, c->control_len);
    if (c->ring) munmap(c->ring, c->ring_len);
    if (c->sock >= 0) close(c->sock);
    free(c->slot_page); free(c->slot_gen); free(c->slot_status); free(c->msg);
    free(c->slot_key); free(c->slot_key_known);
    free(c->paths[0]); free(c->paths[1]); free(c->paths[2]);
    free(c);
}

/* ---- connect ---- */

static char *dup_field(const char *s, uint32_t n) {
    char *p = malloc((size_t)n + 1);
    if (p) { memcpy(p, s, n); p[n] = '\0'; }
    return p;
}

/* Receives more of the WELCOME into buf + len: the bytes, and any descriptors attached to them (the
 * first byte carries the three of a 1.2 session, SCM_RIGHTS). Descriptors past the three expected are
 * closed at once. Returns the bytes read, 0 at the socket's end, -1 with errno. */
static ssize_t recv_welcome_part(int sock, uint8_t *buf, size_t room, int *fds, int *nfds, int *truncated) {
    union {
        char bytes[CMSG_SPACE(sizeof(int) * KVT_WELCOME_DESCRIPTORS)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {buf, room};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control.bytes;
    m.msg_controllen = sizeof control.bytes;
    ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    if (r < 0) return -1;
    if (m.msg_flags & MSG_CTRUNC) *truncated = 1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm != NULL; cm = CMSG_NXTHDR(&m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
        size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
            if (*nfds < KVT_WELCOME_DESCRIPTORS) fds[(*nfds)++] = fd;
            else { close(fd); (*nfds)++; }
        }
    }
    return r;
}

static int handshake(kvt_client *c, const char *socket_path, const kvt_key *namespaces, uint32_t ns_count,
                     uint32_t max_keys, int fds[3], int *nfds) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof addr.sun_path)
        return fail(c, KVT_ERR_ARGUMENT, "socket path longer than %zu bytes: %s", sizeof addr.sun_path - 1, socket_path);
    strcpy(addr.sun_path, socket_path);
    c->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->sock < 0) return fail(c, KVT_ERR_SYSTEM, "socket: %s", strerror(errno));
    if (connect(c->sock, (struct sockaddr *)&addr, sizeof addr) != 0)
        return fail(c, KVT_ERR_SYSTEM, "connect %s: %s", socket_path, strerror(errno));

    uint8_t hello[KVT_HELLO_HEADER + 16 * KVT_MAX_NAMESPACES];
    size_t n = kvt_encode_hello(hello, max_keys, namespaces, ns_count, (uint32_t)getpid());
    kvt_put_u16(hello + 6, c->hello_minor);
    for (size_t sent = 0; sent < n;) {
        ssize_t r = send(c->sock, hello + sent, n - sent, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return fail(c, KVT_ERR_SYSTEM, "sending HELLO: %s", strerror(errno));
        sent += (size_t)r;
    }

    size_t cap = 1024, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    int done, truncated = 0;
    while ((done = kvt_decode_welcome(buf, len, &c->w)) == 0) {
        if (len == cap) {
            if (cap >= 1u << 20) { free(buf); return fail(c, KVT_ERR_PROTOCOL, "WELCOME longer than 1 MiB"); }
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) { free(buf); return fail(c, KVT_ERR_SYSTEM, "out of memory"); }
            buf = bigger; cap *= 2;
        }
        ssize_t r = recv_welcome_part(c->sock, buf + len, cap - len, fds, nfds, &truncated);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) { free(buf); return fail(c, KVT_ERR_SYSTEM, "reading WELCOME: %s", strerror(errno)); }
        if (r == 0) { free(buf); return fail(c, KVT_ERR_PROTOCOL, "the engine closed the socket after %zu bytes of WELCOME", len); }
        len += (size_t)r;
    }
    if (done < 0) { free(buf); return fail(c, KVT_ERR_PROTOCOL, "WELCOME with a wrong magic"); }
    if (c->w.status != 0) {
        int code = (int)c->w.status;
        fail(c, code, "engine refused the HELLO (%s): %.*s", kvt_error_name(code), (int)c->w.message_len, c->w.message);
        free(buf);
        return -1;
    }
    c->paths[0] = dup_field(c->w.pool_path, c->w.pool_path_len);
    c->paths[1] = dup_field(c->w.control_path, c->w.control_path_len);
    c->paths[2] = dup_field(c->w.ring_path, c->w.ring_path_len);
    c->w.pool_path = c->w.control_path = c->w.ring_path = c->w.message = NULL;
    free(buf);
    if (!c->paths[0] || !c->paths[1] || !c->paths[2]) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    if (truncated || *nfds > KVT_WELCOME_DESCRIPTORS)
        return fail(c, KVT_ERR_PROTOCOL, "the WELCOME carried more descriptors than the %d expected", KVT_WELCOME_DESCRIPTORS);
    if (c->w.descriptors != 0 && c->w.descriptors != KVT_WELCOME_DESCRIPTORS)
        return fail(c, KVT_ERR_PROTOCOL, "WELCOME says Descriptors %u; only 0 or 3 are defined", c->w.descriptors);
    if ((uint32_t)*nfds != c->w.descriptors)
        return fail(c, KVT_ERR_PROTOCOL, "WELCOME says Descriptors %u but %d came with it", c->w.descriptors, *nfds);
    if (c->w.descriptors == 0 && c->hello_minor >= 2 && c->w.engine_minor >= 2)
        return fail(c, KVT_ERR_PROTOCOL, "a 1.2 engine welcomed a 1.2 HELLO without descriptors");
    /* the session's minor version (section 2): an engine before 1.2 writes 0 at offset 60 and speaks
     * at most 1.1 */
    uint32_t engine = c->w.engine_minor != 0 ? c->w.engine_minor : 1;
    c->session_minor = c->hello_minor < engine ? c->hello_minor : engine;
    c->descriptors_mapped = c->w.descriptors == KVT_WELCOME_DESCRIPTORS;
    return 0;
}

static int attach(kvt_client *c, const int fds[3]) {
    kvt_welcome *w = &c->w;
    if (w->max_keys == 0 || w->ring_capacity < 64 || (w->ring_capacity & (w->ring_capacity - 1)) != 0 ||
        w->page_size == 0 || w->frame_length < w->page_size || w->max_message_length < KVT_REQUEST_HEADER)
        return fail(c, KVT_ERR_PROTOCOL, "WELCOME with impossible values (max keys %u, ring %u, page %u, frame %llu, max message %u)",
                    w->max_keys, w->ring_capacity, w->page_size, (unsigned long long)w->frame_length, w->max_message_length);
    int err;
    const char *how = c->descriptors_mapped ? "descriptor" : "file";
    const char *names[3] = {c->paths[0], c->paths[1], c->descriptors_mapped ? "(anonymous)" : c->paths[2]};
    uint64_t need[3] = {w->data_offset + (uint64_t)w->page_count * w->frame_length, KVT_CONTROL_SIZE,
                        KVT_RING_HEADER + 2 * (uint64_t)w->ring_capacity};
    uint8_t **maps[3] = {&c->pool, &c->control, &c->ring};
    size_t *lens[3] = {&c->pool_len, &c->control_len, &c->ring_len};
    const char *what[3] = {"pool", "control", "ring"};
    for (int i = 0; i < 3; i++) {
        *maps[i] = c->descriptors_mapped ? map_fd(fds[i], need[i], lens[i], &err) : map_path(c->paths[i], need[i], lens[i], &err);
        if (!*maps[i])
            return fail(c, KVT_ERR_SYSTEM, "mapping the %s %s %s: %s", what[i], how, names[i],
                        err == ERANGE ? "shorter than the WELCOME says" : strerror(err));
    }

    if (memcmp(c->pool, KVT_POOL_MAGIC, 8) != 0) return fail(c, KVT_ERR_PROTOCOL, "the pool %s %s: no KVTPOOL1 magic", how, names[0]);
    if (memcmp(c->control, KVT_CONTROL_MAGIC, 8) != 0) return fail(c, KVT_ERR_PROTOCOL, "control %s %s: no KVTIPC01 magic", how, names[1]);
    if (kvt_get_u16(c->control + 8) != KVT_MAJOR) return fail(c, KVT_ERR_PROTOCOL, "control file major version %u", kvt_get_u16(c->control + 8));
    uint64_t control_epoch = atomic_load_explicit(u64_at(c->control, KVT_CTL_EPOCH), memory_order_acquire);
    if (control_epoch != w->epoch)
        return fail(c, KVT_ERR_ENGINE_GONE, "control file epoch %llu, WELCOME epoch %llu", (unsigned long long)control_epoch, (unsigned long long)w->epoch);
    if (memcmp(c->ring, KVT_RING_MAGIC, 8) != 0) return fail(c, KVT_ERR_PROTOCOL, "ring %s %s: no KVTRING1 magic", how, names[2]);
    if (kvt_get_u32(c->ring + KVT_RH_CLIENT_ID) != w->client_id || kvt_get_u32(c->ring + KVT_RH_CAPACITY) != w->ring_capacity ||
        kvt_get_u64(c->ring + KVT_RH_EPOCH) != w->epoch)
        return fail(c, KVT_ERR_PROTOCOL, "ring header (client %u, capacity %u) differs from WELCOME (client %u, capacity %u)",
                    kvt_get_u32(c->ring + KVT_RH_CLIENT_ID), kvt_get_u32(c->ring + KVT_RH_CAPACITY), w->client_id, w->ring_capacity);

    /* section 11: a pool of layout version 3 says where its counters are; its page geometry must be the
     * WELCOME's (a client mapping another file would read other bytes) */
    uint32_t layout = atomic_load_explicit(u32_at(c->pool, KVT_PH_LAYOUT_VERSION), memory_order_acquire);
    if (layout == KVT_POOL_LAYOUT_VERSION) {
        uint64_t page = kvt_get_u64(c->pool + KVT_PH_PAGE_SIZE), frame = kvt_get_u64(c->pool + KVT_PH_FRAME_LENGTH);
        uint64_t data = kvt_get_u64(c->pool + KVT_PH_DATA_OFFSET);
        if (page != w->page_size || frame != w->frame_length || data != w->data_offset)
            return fail(c, KVT_ERR_PROTOCOL, "the pool header (page %llu, frame %llu, data at %llu) differs from WELCOME (page %u, frame %llu, data at %llu)",
                        (unsigned long long)page, (unsigned long long)frame, (unsigned long long)data, w->page_size,
                        (unsigned long long)w->frame_length, (unsigned long long)w->data_offset);
        uint64_t at = kvt_get_u64(c->pool + KVT_PH_COUNTERS_OFFSET), len = kvt_get_u64(c->pool + KVT_PH_COUNTERS_LENGTH);
        if (len >= KVT_COUNTERS_SIZE && at <= c->pool_len && len <= c->pool_len - at && (at & 7) == 0) c->counters = c->pool + at;
        c->pool_layout_known = w->frame_length - w->page_size >= KVT_TRAILER_SIZE;
    }

    c->req = (kvt_ring){c->ring + KVT_RING_HEADER, w->ring_capacity, u64_at(c->ring, KVT_RH_REQ_TAIL), u64_at(c->ring, KVT_RH_REQ_HEAD)};
    c->resp = (kvt_ring){c->ring + KVT_RING_HEADER + w->ring_capacity, w->ring_capacity, u64_at(c->ring, KVT_RH_RESP_TAIL),
                         u64_at(c->ring, KVT_RH_RESP_HEAD)};
    c->slot_page = malloc(sizeof(int32_t) * w->max_keys);
    c->slot_gen = calloc(w->max_keys, sizeof(int32_t));
    c->slot_status = calloc(w->max_keys, sizeof(int32_t));
    c->slot_key = calloc(w->max_keys, 16);
    c->slot_key_known = calloc(w->max_keys, 1);
    c->msg_cap = w->max_message_length;
    c->msg = malloc(c->msg_cap);
    if (!c->slot_page || !c->slot_gen || !c->slot_status || !c->slot_key || !c->slot_key_known || !c->msg)
        return fail(c, KVT_ERR_SYSTEM, "out of memory");
    for (uint32_t i = 0; i < w->max_keys; i++) c->slot_page[i] = -1;
    c->engine_beat = atomic_load_explicit(u64_at(c->control, KVT_CTL_HEARTBEAT), memory_order_acquire);
    c->engine_beat_at = now_ns();
    if (pthread_create(&c->heartbeat, NULL, heartbeat_main, c) != 0)
        return fail(c, KVT_ERR_SYSTEM, "starting the heartbeat thread");
    c->heartbeat_started = 1;
    return 0;
}

kvt_client *kvt_connect_minor(const char *socket_path, const kvt_key *namespaces, uint32_t ns_count,
                              uint32_t max_keys, uint16_t minor_version, int *error_out, char *message_out,
                              size_t message_len) {
    kvt_client *c = calloc(1, sizeof *c);
    if (!c) {
        if (error_out) *error_out = KVT_ERR_SYSTEM;
        if (message_out && message_len) snprintf(message_out, message_len, "out of memory");
        return NULL;
    }
    c->sock = -1;
    c->next_id = 1; /* the engine starts from 0: the first id is at least 1 (section 4) */
    c->timeout_ms = 0; /* wait as long as the engine lives */
    c->hello_minor = minor_version;
    pthread_mutex_init(&c->stop_lock, NULL);
    pthread_cond_init(&c->stop_cond, NULL);
    int fds[KVT_WELCOME_DESCRIPTORS] = {-1, -1, -1};
    int nfds = 0;
    int rc;
    if (socket_path == NULL || (ns_count > 0 && namespaces == NULL))
        rc = fail(c, KVT_ERR_ARGUMENT, "socket path and namespaces must not be NULL");
    else if (ns_count > KVT_MAX_NAMESPACES)
        rc = fail(c, KVT_ERR_ARGUMENT, "%u namespaces; at most %d", ns_count, KVT_MAX_NAMESPACES);
    else if (max_keys < 1 || max_keys > KVT_MAX_KEYS_LIMIT)
        rc = fail(c, KVT_ERR_ARGUMENT, "max keys %u outside 1..%d", max_keys, KVT_MAX_KEYS_LIMIT);
    else if (minor_version > KVT_MINOR)
        rc = fail(c, KVT_ERR_ARGUMENT, "minor version %u: this client speaks 1.0 to 1.%d", minor_version, KVT_MINOR);
    else {
        rc = handshake(c, socket_path, namespaces, ns_count, max_keys, fds, &nfds);
        if (rc == 0) rc = attach(c, fds);
    }
    /* mapped or not, the descriptors are not needed any more: the mappings live on */
    for (int i = 0; i < nfds && i < KVT_WELCOME_DESCRIPTORS; i++) close(fds[i]);
    if (rc != 0) {
        if (error_out) *error_out = c->last_error;
        if (message_out && message_len) snprintf(message_out, message_len, "%s", c->message);
        free_client(c);
        return NULL;
    }
    if (error_out) *error_out = KVT_OK;
    if (message_out && message_len) message_out[0] = '\0';
    return c;
}

kvt_client *kvt_connect(const char *socket_path, const kvt_key *namespaces, uint32_t ns_count,
                        uint32_t max_keys, int *error_out, char *message_out, size_t message_len) {
    return kvt_connect_minor(socket_path, namespaces, ns_count, max_keys, KVT_MINOR, error_out, message_out, message_len);
}

/* ---- liveness ---- */

/* 0 while the engine and this client's connection live; else fails with the reason. */
static int check_alive(kvt_client *c) {
    uint32_t reason = atomic_load_explicit(u32_at(c->ring, KVT_RH_DISCONNECT), memory_order_acquire);
    if (reason != 0) {
        c->dead = 1;
        return fail(c, (int)reason, "the engine disconnected this client: %s", kvt_error_name((int)reason));
    }
    uint32_t state = atomic_load_explicit(u32_at(c->control, KVT_CTL_STATE), memory_order_acquire);
    if (state == KVT_STATE_CLOSED) {
        c->dead = 1;
        return fail(c, KVT_ERR_ENGINE_GONE, "the engine is closed (control file State CLOSED)");
    }
    uint64_t beat = atomic_load_explicit(u64_at(c->control, KVT_CTL_HEARTBEAT), memory_order_acquire);
    uint64_t now = now_ns();
    if (beat != c->engine_beat) {
        c->engine_beat = beat;
        c->engine_beat_at = now;
    } else if (c->w.client_timeout_ms > 0 && now - c->engine_beat_at > (uint64_t)c->w.client_timeout_ms * 1000000u) {
        c->dead = 1;
        return fail(c, KVT_ERR_ENGINE_GONE, "the engine's heartbeat has not moved for %u ms", c->w.client_timeout_ms);
    }
    return 0;
}

/* 0 while the engine's end of the socket is open. The engine closes it only after writing a
 * Disconnect Reason (read first, by check_alive) or when its process ends. */
static int check_socket(kvt_client *c) {
    struct pollfd p = {c->sock, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) <= 0) return 0;
    char byte;
    if ((p.revents & (POLLHUP | POLLRDHUP | POLLERR)) != 0 ||
        ((p.revents & POLLIN) != 0 && recv(c->sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0)) {
        if (check_alive(c) != 0) return -1; /* a Disconnect Reason written before the close */
        c->dead = 1;
        return fail(c, KVT_ERR_ENGINE_GONE, "the engine closed the socket (its process ended?)");
    }
    return 0;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#define KVT_AWAKE_MIN_SPIN_NS 20000u
#define KVT_AWAKE_MAX_SPIN_NS 500000u
#define KVT_AWAKE_LOOK_EVERY 8u
/* A request of this many slots or more waits with the back-off: the engine's work for it takes tens of
 * microseconds and more, and spinning through it would hold a core the engine may need. */
#define KVT_AWAKE_LARGE_REQUEST_KEYS 64

/* KVT_WAIT_AWAKE: how long it spins for the engine, awake, before it sleeps: twice the average wait. */
static uint64_t awake_budget_ns(const kvt_client *c) {
    uint64_t budget = 2 * c->average_wait_ns;
    if (budget < KVT_AWAKE_MIN_SPIN_NS) return KVT_AWAKE_MIN_SPIN_NS;
    return budget > KVT_AWAKE_MAX_SPIN_NS ? KVT_AWAKE_MAX_SPIN_NS : budget;
}

/* KVT_WAIT_AWAKE, round 0, 1, 2, ... of a wait begun at `start`: 1 to spin on, 0 to sleep. It looks at the
 * engine's Doorbell every few rounds; the engine seen asleep at two looks in a row (not the moment
 * between its announcement and its last look for work) means the answer waits on something else than
 * a core. */
static int awake_spin(kvt_client *c, uint64_t start, unsigned round, int *asleep_seen) {
    if (round % KVT_AWAKE_LOOK_EVERY != 0) {
        cpu_relax();
        return 1;
    }
    uint32_t doorbell = atomic_load_explicit(u32_at(c->control, KVT_CTL_DOORBELL), memory_order_acquire);
    if (doorbell == 1) {
        if (*asleep_seen) return 0;
        *asleep_seen = 1;
        cpu_relax();
        return 1;
    }
    *asleep_seen = 0;
    if (now_ns() - start >= awake_budget_ns(c)) return 0;
    cpu_relax();
    return 1;
}

int kvt_set_wait(kvt_client *c, int kind) {
    if (!c) return -1;
    if (kind != KVT_WAIT_BACKOFF && kind != KVT_WAIT_AWAKE)
        return fail(c, KVT_ERR_ARGUMENT, "wait kind %d is neither KVT_WAIT_BACKOFF (0) nor KVT_WAIT_AWAKE (1)", kind);
    c->wait_kind = kind;
    return 0;
}

/* Spins, yields, then sleeps: round 0, 1, 2, ... of a wait. */
static void back_off(unsigned round) {
    if (round < 200) return;
    if (round < 400) { sched_yield(); return; }
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

static void ring_doorbell(kvt_client *c) {
    atomic_thread_fence(memory_order_seq_cst);
    _Atomic uint32_t *doorbell = u32_at(c->control, KVT_CTL_DOORBELL);
    if (atomic_load_explicit(doorbell, memory_order_relaxed) == 1) {
        atomic_store_explicit(doorbell, 0, memory_order_relaxed);
        futex(doorbell, FUTEX_WAKE, 1, 0);
    }
}

static int deadline_passed(const kvt_client *c, uint64_t start) {
    return c->timeout_ms != 0 && now_ns() - start > (uint64_t)c->timeout_ms * 1000000u;
}

/* ---- requests ---- */

static int is_keyed(int32_t type) {
    return type == KVT_OP_LOOKUP || type == KVT_OP_ACQUIRE || type == KVT_OP_RESERVE || type == KVT_OP_PREFETCH ||
           type == KVT_OP_BACKUP || type == KVT_OP_EVICT || type == KVT_OP_LOOKUP_AND_LOCK;
}

/* The operations with a slot range, whose OK answer has an entry for every slot of it (section 4). */
static int has_slots(int32_t type) {
    return is_keyed(type) || type == KVT_OP_RELEASE || type == KVT_OP_COMMIT || type == KVT_OP_ABORT ||
           type == KVT_OP_DEVICE_LOAD || type == KVT_OP_DEVICE_SAVE || type == KVT_OP_COMMIT_AND_RELEASE;
}

/* Section 4's entries, checked on an answer from a 1.2 engine: an OK answer to a slot operation has one
 * entry per slot of the request's range, from its First Slot; any other answer has none; an entry
 * naming no page has generation 0, and one naming a page names a page of the pool. A client that went
 * on after an answer breaking these would read pages its slots do not hold. */
static int check_entries(kvt_client *c, int32_t type, int32_t first_slot, int32_t count, const kvt_response *r) {
    if (c->w.engine_minor < 2) return 0;
    int32_t first = r->result.first_slot, n = r->result.entry_count;
    if (r->result.status == 0 && has_slots(type)) {
        if (first != first_slot || n != count)
            return fail(c, KVT_ERR_PROTOCOL, "the answer to a request of type %d for slots [%d, %d+%d) has entries for [%d, %d+%d): "
                        "section 4 wants one per slot", type, first_slot, first_slot, count, first, first, n);
    } else if (n != 0) {
        return fail(c, KVT_ERR_PROTOCOL, "an answer with Status %d to a request of type %d has %d entries: section 4 wants none",
                    r->result.status, type, n);
    }
    for (int32_t i = 0; i < n; i++) {
        const uint8_t *e = r->entries + (size_t)i * KVT_ENTRY_SIZE;
        int32_t page = (int32_t)kvt_get_u32(e), gen = (int32_t)kvt_get_u32(e + 4);
        if (page < -1 || (page >= 0 && (uint32_t)page >= c->w.page_count) || (page == -1 && gen != 0))
            return fail(c, KVT_ERR_PROTOCOL, "slot %d's entry names page %d generation %d (the pool has %u pages)", first + i, page,
                        gen, c->w.page_count);
    }
    return 0;
}

/* Forgets the descriptor numbers a REGISTER_KV of HOST_FD buffers named once the engine has answered it,
 * accepted or refused (section 2: the registration takes them). Answers that refuse the record itself
 * (MALFORMED, UNKNOWN_TYPE, ...) took nothing. */
static void registration_answered(kvt_client *c, const uint8_t *body, uint32_t body_len, int32_t status) {
    if ((status != 0 && status != KVT_INVALID) || body_len < KVT_REGISTER_KV_FIXED || kvt_get_u32(body) != KVT_HANDLE_HOST_FD)
        return;
    uint32_t n = kvt_get_u32(body + 40);
    for (uint32_t i = 0; i < n && KVT_REGISTER_KV_FIXED + (uint64_t)KVT_ALLOCATION_SIZE * (i + 1) <= body_len; i++) {
        uint32_t number = kvt_get_u32(body + KVT_REGISTER_KV_FIXED + (size_t)KVT_ALLOCATION_SIZE * i + 8);
        for (uint32_t k = 0; k < c->fds_pending_n; k++)
            if (c->fds_pending[k] == number) {
                c->fds_pending[k] = c->fds_pending[--c->fds_pending_n];
                break;
            }
    }
}

static int exchange(kvt_client *c, int32_t type, uint16_t ns, uint16_t flags, int32_t first_slot, int32_t count,
                    const void *body, uint32_t body_len, kvt_result *result) {
    /* set for this request alone by kvt_lookup_and_lock: every other request carries 0 there */
    const int32_t header_word = c->header_word;
    c->header_word = 0;
    c->last_detail = 0;
    if (c->dead) return fail(c, KVT_ERR_DISCONNECTED, "this client is no longer connected (%s)", c->message);
    uint64_t length = (uint64_t)KVT_REQUEST_HEADER + body_len;
    if (length > c->msg_cap)
        return fail(c, KVT_ERR_ARGUMENT, "a request of %llu bytes is longer than the engine's Max Message Length %u (TOO_LONG)",
                    (unsigned long long)length, c->msg_cap);
    if (kvt_align8(length) > c->w.ring_capacity)
        return fail(c, KVT_ERR_ARGUMENT, "a request of %llu bytes does not fit the ring", (unsigned long long)length);
    uint64_t id = c->next_id++;
    kvt_encode_request_header(c->msg, (uint32_t)length, type, id, first_slot, count, ns, flags);
    kvt_put_u32(c->msg + KVT_RESERVE_LIMIT_AT, (uint32_t)header_word);
    if (body_len) memcpy(c->msg + KVT_REQUEST_HEADER, body, body_len);

    uint64_t start = now_ns();
    for (unsigned round = 0;; round++) {
        int r = kvt_ring_offer(&c->req, c->msg, (uint32_t)length);
        if (r == 1) break;
        if (r < 0) return fail(c, KVT_ERR_ARGUMENT, "the request can never fit the ring");
        if (check_alive(c) != 0 || (round >= 400 && check_socket(c) != 0)) return -1;
        if (deadline_passed(c, start)) {
            c->dead = 1;
            return fail(c, KVT_ERR_TIMEOUT, "the request ring stayed full for %u ms", c->timeout_ms);
        }
        back_off(round);
    }
    ring_doorbell(c);

    _Atomic uint32_t *sleeping = u32_at(c->ring, KVT_RH_CLIENT_SLEEPING);
    uint64_t wait_start = now_ns();
    int asleep_seen = 0;
    for (unsigned round = 0;; round++) {
        const uint8_t *rec;
        uint32_t len;
        int r = kvt_ring_peek(&c->resp, &rec, &len);
        if (r < 0) { c->dead = 1; return fail(c, KVT_ERR_PROTOCOL, "malformed record in the response ring"); }
        if (r == 1) {
            if (round > 0 && c->wait_kind == KVT_WAIT_AWAKE && count < KVT_AWAKE_LARGE_REQUEST_KEYS) {
                uint64_t waited = now_ns() - wait_start;
                if (waited > 1000000u) waited = 1000000u; /* a wait that long says nothing of the next */
                c->average_wait_ns += ((int64_t)waited - (int64_t)c->average_wait_ns) / 8;
            }
            kvt_response resp;
            if (kvt_decode_response(rec, len, &resp) != 0) {
                c->dead = 1;
                return fail(c, KVT_ERR_PROTOCOL, "malformed response of %u bytes", len);
            }
            if (resp.request_id != id || resp.type != type) {
                c->dead = 1;
                return fail(c, KVT_ERR_PROTOCOL, "response to request %llu type %d while waiting for %llu type %d",
                            (unsigned long long)resp.request_id, resp.type, (unsigned long long)id, type);
            }
            int32_t first = resp.result.first_slot, n = resp.result.entry_count;
            if (n > 0 && (first < 0 || (uint64_t)first + (uint64_t)n > c->w.max_keys)) {
                c->dead = 1;
                return fail(c, KVT_ERR_PROTOCOL, "response entries for slots %d..%d outside 0..%u", first, first + n, c->w.max_keys);
            }
            if (check_entries(c, type, first_slot, count, &resp) != 0) {
                c->dead = 1;
                return -1;
            }
            if (resp.result.status == 0 && c->w.engine_minor >= 2 && has_slots(type)) {
                /* section 4 (1.2): an OK response answers for every slot of the range, so what an earlier
                 * response said of these slots is gone */
                for (int32_t i = 0; i < count; i++) {
                    c->slot_page[first_slot + i] = -1;
                    c->slot_gen[first_slot + i] = 0;
                    c->slot_status[first_slot + i] = KVT_PAGE_NONE;
                }
            }
            for (int32_t i = 0; i < n; i++) {
                const uint8_t *e = resp.entries + (size_t)i * KVT_ENTRY_SIZE;
                c->slot_page[first + i] = (int32_t)kvt_get_u32(e);
                c->slot_gen[first + i] = (int32_t)kvt_get_u32(e + 4);
                c->slot_status[first + i] = (int32_t)kvt_get_u32(e + 8);
            }
            if (resp.result.status == 0 && is_keyed(type) && (flags & KVT_FLAG_KEYS_IN_SLOTS) == 0 && count > 0 &&
                body_len == 16u * (uint32_t)count && first_slot >= 0 && (uint64_t)first_slot + (uint64_t)count <= c->w.max_keys) {
                /* the keys now in the slots, so that a pinned page's trailer can be checked against its slot's */
                memcpy(c->slot_key + 16 * (size_t)first_slot, body, body_len);
                memset(c->slot_key_known + first_slot, 1, (size_t)count);
            }
            if (type == KVT_OP_REGISTER_KV) registration_answered(c, (const uint8_t *)body, body_len, resp.result.status);
            if (type == KVT_OP_DEVICE_SAVE && resp.result.status == KVT_INTERNAL_ERROR && first_slot >= 0 && count >= 0 &&
                (uint64_t)first_slot + (uint64_t)count <= c->w.max_keys) {
                /* section 10: a save whose copy faulted gives back every reservation of its range unwritten */
                for (int32_t i = 0; i < count; i++)
                    if (c->slot_status[first_slot + i] == KVT_PAGE_RESERVED) {
                        c->slot_page[first_slot + i] = -1;
                        c->slot_gen[first_slot + i] = 0;
                        c->slot_status[first_slot + i] = KVT_PAGE_NONE;
                    }
            }
            if (type == KVT_OP_STATS && resp.result.status == 0) {
                if (resp.body_len < 4 || (resp.body_len - 4) / 8 < kvt_get_u32(resp.body)) {
                    c->dead = 1;
                    return fail(c, KVT_ERR_PROTOCOL, "STATS response body too short");
                }
                c->stats_n = kvt_get_u32(resp.body);
                for (uint32_t i = 0; i < c->stats_n && i < c->stats_cap; i++)
                    c->stats_out[i] = (int64_t)kvt_get_u64(resp.body + 4 + 8 * (size_t)i);
            }
            if (result) *result = resp.result;
            kvt_ring_consume(&c->resp, len);
            if (type == KVT_OP_REGISTER_KV && resp.result.status == KVT_INVALID) {
                int detail = resp.result.result_count;
                fail(c, KVT_INVALID, "the engine refused the registration: INVALID (%s, detail %d)",
                     kvt_register_detail_name(detail), detail);
                c->last_detail = detail;
                return -1;
            }
            if (resp.result.status != 0)
                return fail(c, resp.result.status, "the engine answered %s", kvt_error_name(resp.result.status));
            c->last_error = KVT_OK;
            c->message[0] = '\0';
            return resp.result.result_count;
        }
        if (check_alive(c) != 0) return -1;
        if (deadline_passed(c, start)) {
            c->dead = 1;
            return fail(c, KVT_ERR_TIMEOUT, "no response to request %llu within %u ms", (unsigned long long)id, c->timeout_ms);
        }
        if (c->wait_kind == KVT_WAIT_AWAKE && count < KVT_AWAKE_LARGE_REQUEST_KEYS) {
            if (awake_spin(c, wait_start, round, &asleep_seen)) continue;
        } else if (round < 400) {
            back_off(round);
            continue;
        }
        if (check_socket(c) != 0) return -1;
        /* sleep on Client Sleeping (section 5): store 1, full fence, look again, wait */
        atomic_store_explicit(sleeping, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
        uint64_t tail = atomic_load_explicit(c->resp.tail, memory_order_acquire);
        uint64_t head = atomic_load_explicit(c->resp.head, memory_order_relaxed);
        if (tail == head) futex(sleeping, FUTEX_WAIT, 1, 10000000u);
        atomic_store_explicit(sleeping, 0, memory_order_relaxed);
    }
}

int kvt_request(kvt_client *c, int32_t type, uint16_t ns, uint16_t flags, int32_t first_slot, int32_t count,
                const void *body, uint32_t body_len, kvt_result *result) {
    if (!c) return -1;
    if (body_len > 0 && !body) return fail(c, KVT_ERR_ARGUMENT, "body is NULL");
    return exchange(c, type, ns, flags, first_slot, count, body, body_len, result);
}

static int check_slots(kvt_client *c, int32_t first_slot, int32_t count) {
    if (first_slot < 0 || count < 0 || (uint64_t)first_slot + (uint64_t)count > c->w.max_keys)
        return fail(c, KVT_ERR_ARGUMENT, "slots [%d, %d+%d) outside [0, %u)", first_slot, first_slot, count, c->w.max_keys);
    return 0;
}

/* A keyed request whose header carries `header_word` at offset 28 (0 but for a LOOKUP_AND_LOCK). */
static int keyed_word(kvt_client *c, int32_t type, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                      int32_t header_word, kvt_result *result) {
    if (!c) return -1;
    if (check_slots(c, first_slot, count) != 0) return -1;
    if (keys == NULL) {
        /* a slot no request of this client has written a key into holds none the client chose (the
         * engine would use an all-zero key, and RESERVE would reserve a page for it) */
        for (int32_t i = 0; i < count; i++)
            if (!c->slot_key_known[first_slot + i])
                return fail(c, KVT_ERR_ARGUMENT, "KEYS_IN_SLOTS: slot %d holds no key this client wrote", first_slot + i);
        c->header_word = header_word;
        return exchange(c, type, ns, KVT_FLAG_KEYS_IN_SLOTS, first_slot, count, NULL, 0, result);
    }
    c->header_word = header_word;
    return exchange(c, type, ns, 0, first_slot, count, keys, (uint32_t)count * 16u, result);
}

static int keyed(kvt_client *c, int32_t type, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                 kvt_result *result) {
    return keyed_word(c, type, ns, first_slot, keys, count, 0, result);
}

static int slots_only(kvt_client *c, int32_t type, int32_t first_slot, int32_t count, kvt_result *result) {
    if (!c) return -1;
    if (check_slots(c, first_slot, count) != 0) return -1;
    return exchange(c, type, 0, 0, first_slot, count, NULL, 0, result);
}

int kvt_lookup(kvt_client *c, uint16_t ns, int32_t f, const kvt_key *k, int32_t n, kvt_result *r) { return keyed(c, KVT_OP_LOOKUP, ns, f, k, n, r); }
int kvt_acquire(kvt_client *c, uint16_t ns, int32_t f, const kvt_key *k, int32_t n, kvt_result *r) { return keyed(c, KVT_OP_ACQUIRE, ns, f, k, n, r); }
int kvt_reserve(kvt_client *c, uint16_t ns, int32_t f, const kvt_key *k, int32_t n, kvt_result *r) { return keyed(c, KVT_OP_RESERVE, ns, f, k, n, r); }
int kvt_prefetch(kvt_client *c, uint16_t ns, int32_t f, const kvt_key *k, int32_t n, kvt_result *r) { return keyed(c, KVT_OP_PREFETCH, ns, f, k, n, r); }
int kvt_backup(kvt_client *c, uint16_t ns, int32_t f, const kvt_key *k, int32_t n, kvt_result *r) { return keyed(c, KVT_OP_BACKUP, ns, f, k, n, r); }
int kvt_evict(kvt_client *c, uint16_t ns, int32_t f, const kvt_key *k, int32_t n, kvt_result *r) { return keyed(c, KVT_OP_EVICT, ns, f, k, n, r); }
int kvt_release(kvt_client *c, int32_t f, int32_t n, kvt_result *r) { return slots_only(c, KVT_OP_RELEASE, f, n, r); }
int kvt_abort(kvt_client *c, int32_t f, int32_t n, kvt_result *r) { return slots_only(c, KVT_OP_ABORT, f, n, r); }

static int commit_request(kvt_client *c, int32_t type, uint16_t flags, int32_t first_slot, int32_t count, const int32_t *lengths,
                          kvt_result *result);

int kvt_lookup_and_lock(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                        int32_t reserve_limit, kvt_result *result) {
    if (!c) return -1;
    if (c->session_minor < 3)
        return fail(c, KVT_ERR_UNSUPPORTED, "LOOKUP_AND_LOCK needs a 1.3 session; this one is 1.%u", c->session_minor);
    if (reserve_limit < KVT_RESERVE_ALL || reserve_limit > count)
        return fail(c, KVT_ERR_ARGUMENT, "reserve limit %d outside -1..%d (the count)", reserve_limit, count);
    if (check_slots(c, first_slot, count) != 0) return -1;
    for (int32_t i = 0; i < count; i++)
        if (c->slot_status[first_slot + i] == KVT_PAGE_RESERVED)
            return fail(c, KVT_ERR_ARGUMENT, "slot %d holds a reservation: commit or abort it before a LOOKUP_AND_LOCK names it",
                        first_slot + i);
    return keyed_word(c, KVT_OP_LOOKUP_AND_LOCK, ns, first_slot, keys, count, reserve_limit, result);
}

int kvt_commit_and_release(kvt_client *c, int32_t first_slot, int32_t count, const int32_t *lengths, int backup,
                           kvt_result *result) {
    if (!c) return -1;
    if (c->session_minor < 3)
        return fail(c, KVT_ERR_UNSUPPORTED, "COMMIT_AND_RELEASE needs a 1.3 session; this one is 1.%u", c->session_minor);
    return commit_request(c, KVT_OP_COMMIT_AND_RELEASE, backup ? KVT_FLAG_BACKUP : 0, first_slot, count, lengths, result);
}

int kvt_commit(kvt_client *c, int32_t first_slot, int32_t count, const int32_t *lengths, kvt_result *result) {
    if (!c) return -1;
    return commit_request(c, KVT_OP_COMMIT, 0, first_slot, count, lengths, result);
}

/* COMMIT or COMMIT_AND_RELEASE: Count payload lengths after the header. */
static int commit_request(kvt_client *c, int32_t type, uint16_t flags, int32_t first_slot, int32_t count, const int32_t *lengths,
                          kvt_result *result) {
    if (check_slots(c, first_slot, count) != 0) return -1;
    if (count > 0 && !lengths) return fail(c, KVT_ERR_ARGUMENT, "lengths is NULL");
    if ((uint64_t)KVT_REQUEST_HEADER + 4u * (uint64_t)count > c->msg_cap)
        return fail(c, KVT_ERR_ARGUMENT, "%d lengths do not fit a request (Max Message Length %u)", count, c->msg_cap);
    uint8_t *body = malloc(4 * (size_t)count + 1);
    if (!body) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    for (int32_t i = 0; i < count; i++) kvt_put_u32(body + 4 * i, (uint32_t)lengths[i]);
    int rc = exchange(c, type, 0, flags, first_slot, count, body, 4u * (uint32_t)count, result);
    free(body);
    return rc;
}

/* ---- device operations (section 10) ---- */

/* The product of the factors, 0 when one is not positive or it passes INT64_MAX. */
static uint64_t product(const int32_t *factors, int n) {
    uint64_t p = 1;
    for (int i = 0; i < n; i++) {
        if (factors[i] <= 0 || p > (uint64_t)INT64_MAX / (uint64_t)factors[i]) return 0;
        p *= (uint64_t)factors[i];
    }
    return p;
}

uint64_t kvt_kv_slot_bytes(const kvt_kv_shape *s) {
    if (!s) return 0;
    const int32_t f[4] = {s->block_tokens, s->heads, s->head_dim, s->element_bytes};
    return product(f, 4);
}

uint64_t kvt_kv_block_bytes(const kvt_kv_shape *s) {
    uint64_t slot = kvt_kv_slot_bytes(s);
    if (slot == 0 || slot > (uint64_t)INT32_MAX) return 0;
    const int32_t f[3] = {s->layers, s->tensors, (int32_t)slot};
    return product(f, 3);
}

int kvt_register_kv(kvt_client *c, uint32_t handle_kind, int32_t device, uint16_t arrangement,
                    const kvt_kv_shape *shape, int32_t blocks, const kvt_kv_allocation *allocations,
                    int32_t count, kvt_result *result) {
    if (!c) return -1;
    if (!shape || (count > 0 && !allocations)) return fail(c, KVT_ERR_ARGUMENT, "shape or allocations is NULL");
    if (count < 0 || count > KVT_MAX_ALLOCATIONS)
        return fail(c, KVT_ERR_ARGUMENT, "%d allocations outside 0..%d", count, KVT_MAX_ALLOCATIONS);
    uint8_t *body = malloc(KVT_REGISTER_KV_FIXED + (size_t)KVT_ALLOCATION_SIZE * (size_t)count);
    if (!body) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    size_t n = kvt_encode_register_kv(body, handle_kind, device, arrangement, shape, blocks, allocations, count);
    int rc = exchange(c, KVT_OP_REGISTER_KV, 0, 0, 0, 0, body, (uint32_t)n, result);
    free(body);
    return rc;
}

int kvt_register_host_files(kvt_client *c, uint16_t arrangement, const kvt_kv_shape *shape, int32_t blocks,
                            const char *const *paths, const uint64_t *offsets, int32_t count, kvt_result *result) {
    if (!c) return -1;
    if (count > 0 && !paths) return fail(c, KVT_ERR_ARGUMENT, "paths is NULL");
    if (count < 0 || count > KVT_MAX_ALLOCATIONS)
        return fail(c, KVT_ERR_ARGUMENT, "%d allocations outside 0..%d", count, KVT_MAX_ALLOCATIONS);
    kvt_kv_allocation *a = calloc((size_t)count + 1, sizeof *a);
    if (!a) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    for (int32_t i = 0; i < count; i++) {
        /* the handle holds the path and its NUL */
        size_t len = paths[i] ? strlen(paths[i]) : 0;
        if (!paths[i] || len >= KVT_HANDLE_BYTES) {
            free(a);
            return fail(c, KVT_ERR_ARGUMENT, "path %d is NULL or longer than %d bytes", i, KVT_HANDLE_BYTES - 1);
        }
        memcpy(a[i].handle, paths[i], len);
        a[i].offset = offsets ? offsets[i] : 0;
    }
    int rc = kvt_register_kv(c, KVT_HANDLE_HOST_FILE, 0, arrangement, shape, blocks, a, count, result);
    free(a);
    return rc;
}

static int device_copy(kvt_client *c, int32_t type, int32_t layout_id, int32_t first_slot, const int32_t *blocks,
                       const int32_t *valid_tokens, int32_t count, kvt_result *result) {
    if (!c) return -1;
    if (check_slots(c, first_slot, count) != 0) return -1;
    if (count > 0 && (!blocks || !valid_tokens)) return fail(c, KVT_ERR_ARGUMENT, "blocks or valid_tokens is NULL");
    uint8_t *body = malloc(KVT_DEVICE_COPY_FIXED + 8 * (size_t)count);
    if (!body) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    size_t n = kvt_encode_device_copy(body, layout_id, blocks, valid_tokens, count);
    int rc = exchange(c, type, 0, 0, first_slot, count, body, (uint32_t)n, result);
    free(body);
    return rc;
}

int kvt_device_load(kvt_client *c, int32_t layout_id, int32_t first_slot, const int32_t *blocks,
                    const int32_t *valid_tokens, int32_t count, kvt_result *result) {
    return device_copy(c, KVT_OP_DEVICE_LOAD, layout_id, first_slot, blocks, valid_tokens, count, result);
}

int kvt_device_save(kvt_client *c, int32_t layout_id, int32_t first_slot, const int32_t *blocks,
                    const int32_t *valid_tokens, int32_t count, kvt_result *result) {
    return device_copy(c, KVT_OP_DEVICE_SAVE, layout_id, first_slot, blocks, valid_tokens, count, result);
}

/* ---- descriptors (sections 2 and 10, version 1.2) ---- */

int64_t kvt_send_descriptors(kvt_client *c, const int *fds, uint32_t count) {
    if (!c) return -1;
    c->last_detail = 0;
    if (c->dead) return fail(c, KVT_ERR_DISCONNECTED, "this client is no longer connected (%s)", c->message);
    if (c->session_minor < 2)
        return fail(c, KVT_ERR_UNSUPPORTED, "DESCRIPTORS needs a 1.2 session; this one is 1.%u (the engine would close them unread)",
                    c->session_minor);
    if (count < 1 || count > KVT_DESCRIPTORS_PER_MESSAGE || !fds)
        return fail(c, KVT_ERR_ARGUMENT, "%u descriptors: a DESCRIPTORS message carries 1..%d", count, KVT_DESCRIPTORS_PER_MESSAGE);
    if (c->fds_pending_n + count > KVT_DESCRIPTORS_PENDING_MAX)
        return fail(c, KVT_ERR_ARGUMENT, "%u descriptors sent and not yet named, %u more would pass the engine's %d (which ends the client)",
                    c->fds_pending_n, count, KVT_DESCRIPTORS_PENDING_MAX);
    for (uint32_t i = 0; i < count; i++)
        if (fds[i] < 0) return fail(c, KVT_ERR_ARGUMENT, "descriptor %u is %d", i, fds[i]);
    uint8_t message[KVT_DESCRIPTORS_MESSAGE];
    kvt_encode_descriptors(message, count);
    union {
        char bytes[CMSG_SPACE(sizeof(int) * KVT_DESCRIPTORS_PER_MESSAGE)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {message, sizeof message};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control.bytes;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * count);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * count);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * count);
    /* the descriptors travel with the message's first byte: the rest, if a signal cuts the send short,
     * goes without them */
    size_t sent = 0;
    while (sent < sizeof message) {
        ssize_t r = sendmsg(c->sock, &m, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            if (sent > 0) c->dead = 1; /* half a message on the socket: the engine will drop the client */
            return fail(c, e == EBADF ? KVT_ERR_ARGUMENT : KVT_ERR_SYSTEM, "sending DESCRIPTORS: %s", strerror(e));
        }
        sent += (size_t)r;
        iov.iov_base = message + sent;
        iov.iov_len = sizeof message - sent;
        m.msg_control = NULL;
        m.msg_controllen = 0;
    }
    uint64_t first = c->fds_sent;
    for (uint32_t i = 0; i < count; i++) c->fds_pending[c->fds_pending_n++] = (uint32_t)(first + i);
    c->fds_sent += count;
    c->last_error = KVT_OK;
    c->message[0] = '\0';
    return (int64_t)first;
}

uint32_t kvt_descriptors_pending(const kvt_client *c) { return c ? c->fds_pending_n : 0; }

void kvt_fd_handle(uint32_t number, uint8_t handle[KVT_HANDLE_BYTES]) {
    memset(handle, 0, KVT_HANDLE_BYTES);
    kvt_put_u32(handle, number);
}

int kvt_register_host_fds(kvt_client *c, uint16_t arrangement, const kvt_kv_shape *shape, int32_t blocks, const int *fds,
                          const uint64_t *offsets, int32_t count, kvt_result *result) {
    if (!c) return -1;
    if (c->session_minor < 2) return fail(c, KVT_ERR_UNSUPPORTED, "HOST_FD buffers need a 1.2 session; this one is 1.%u", c->session_minor);
    if (count > 0 && !fds) return fail(c, KVT_ERR_ARGUMENT, "fds is NULL");
    if (count < 0 || count > KVT_MAX_ALLOCATIONS)
        return fail(c, KVT_ERR_ARGUMENT, "%d allocations outside 0..%d", count, KVT_MAX_ALLOCATIONS);
    /* a registration that cannot be sent must not leave its descriptors sent and never named */
    uint64_t length = (uint64_t)KVT_REQUEST_HEADER + KVT_REGISTER_KV_FIXED + (uint64_t)KVT_ALLOCATION_SIZE * (uint64_t)count;
    if (length > c->msg_cap)
        return fail(c, KVT_ERR_ARGUMENT, "a REGISTER_KV of %d allocations (%llu bytes) is longer than the engine's Max Message Length %u",
                    count, (unsigned long long)length, c->msg_cap);
    /* one number per distinct descriptor: allocations naming it share the engine's mapping */
    int distinct[KVT_DESCRIPTORS_PENDING_MAX];
    uint32_t n = 0;
    int32_t *index = calloc((size_t)count + 1, sizeof *index);
    kvt_kv_allocation *a = calloc((size_t)count + 1, sizeof *a);
    if (!index || !a) { free(index); free(a); return fail(c, KVT_ERR_SYSTEM, "out of memory"); }
    int rc = 0;
    for (int32_t i = 0; i < count && rc == 0; i++) {
        uint32_t k = 0;
        while (k < n && distinct[k] != fds[i]) k++;
        if (k == n) {
            if (n == KVT_DESCRIPTORS_PENDING_MAX - c->fds_pending_n)
                rc = fail(c, KVT_ERR_ARGUMENT, "more distinct descriptors than the %d the engine holds unnamed (%u pending)",
                          KVT_DESCRIPTORS_PENDING_MAX, c->fds_pending_n);
            else distinct[n++] = fds[i];
        }
        index[i] = (int32_t)k;
    }
    int64_t numbers[KVT_DESCRIPTORS_PENDING_MAX];
    for (uint32_t k = 0; k < n && rc == 0; k += KVT_DESCRIPTORS_PER_MESSAGE) {
        uint32_t chunk = n - k < KVT_DESCRIPTORS_PER_MESSAGE ? n - k : KVT_DESCRIPTORS_PER_MESSAGE;
        int64_t first = kvt_send_descriptors(c, distinct + k, chunk);
        if (first < 0) rc = -1;
        for (uint32_t j = 0; j < chunk && rc == 0; j++) numbers[k + j] = first + j;
    }
    if (rc == 0) {
        for (int32_t i = 0; i < count; i++) {
            kvt_fd_handle((uint32_t)numbers[index[i]], a[i].handle);
            a[i].offset = offsets ? offsets[i] : 0;
        }
        rc = kvt_register_kv(c, KVT_HANDLE_HOST_FD, 0, arrangement, shape, blocks, a, count, result);
    }
    free(index);
    free(a);
    return rc;
}

int kvt_flush(kvt_client *c, kvt_result *result) {
    if (!c) return -1;
    return exchange(c, KVT_OP_FLUSH, 0, 0, 0, 0, NULL, 0, result);
}

int kvt_stats(kvt_client *c, int64_t *values, uint32_t capacity) {
    if (!c) return -1;
    if (capacity > 0 && !values) return fail(c, KVT_ERR_ARGUMENT, "values is NULL");
    c->stats_out = values;
    c->stats_cap = capacity;
    c->stats_n = 0;
    int rc = exchange(c, KVT_OP_STATS, 0, 0, 0, 0, NULL, 0, NULL);
    c->stats_out = NULL;
    c->stats_cap = 0;
    return rc < 0 ? -1 : (int)c->stats_n;
}

int kvt_close(kvt_client *c) {
    if (!c) return 0;
    int rc = 0;
    if (!c->dead) {
        if (c->timeout_ms == 0 || c->timeout_ms > 10000) c->timeout_ms = 10000;
        rc = exchange(c, KVT_OP_CLOSE, 0, 0, 0, 0, NULL, 0, NULL) < 0 ? -1 : 0;
    }
    free_client(c);
    return rc;
}

/* ---- the pool file (section 11) ---- */

int kvt_read_page_trailer(kvt_client *c, int32_t page_id, kvt_page_trailer *out) {
    if (!c) return -1;
    if (!out) return fail(c, KVT_ERR_ARGUMENT, "out is NULL");
    if (!c->pool_layout_known) return fail(c, KVT_ERR_UNSUPPORTED, "the pool's layout version is not 3: section 11 does not apply");
    if (page_id < 0 || (uint32_t)page_id >= c->w.page_count)
        return fail(c, KVT_ERR_ARGUMENT, "no page %d (the pool has %u)", page_id, c->w.page_count);
    const uint8_t *t = c->pool + c->w.data_offset + (uint64_t)page_id * c->w.frame_length + c->w.page_size;
    if (kvt_decode_trailer(t, out) != 0)
        return fail(c, KVT_ERR_PROTOCOL, "page %d's trailer is not intact (magic or Trailer CRC32C): not a committed page", page_id);
    if (out->payload_length > c->w.page_size)
        return fail(c, KVT_ERR_PROTOCOL, "page %d's trailer says %llu payload bytes, more than a page", page_id,
                    (unsigned long long)out->payload_length);
    return 0;
}

static uint64_t be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

int64_t kvt_slot_payload_length(kvt_client *c, int32_t slot) {
    if (!c) return -1;
    if (slot < 0 || (uint32_t)slot >= c->w.max_keys) return fail(c, KVT_ERR_ARGUMENT, "slot %d outside [0, %u)", slot, c->w.max_keys);
    int32_t status = c->slot_status[slot], page = c->slot_page[slot];
    if (page < 0 || (status != KVT_PAGE_PINNED && status != KVT_PAGE_PINNED_FROM_L3 && status != KVT_PAGE_COPIED))
        return fail(c, KVT_ERR_ARGUMENT, "slot %d holds no pinned page (%s)", slot, kvt_page_status_name(status));
    kvt_page_trailer t;
    if (kvt_read_page_trailer(c, page, &t) != 0) return -1;
    if (c->slot_key_known[slot]) {
        const uint8_t *key = c->slot_key + 16 * (size_t)slot;
        if (t.key_high != be64(key) || t.key_low != be64(key + 8))
            return fail(c, KVT_ERR_PROTOCOL, "page %d's trailer names key %016llx%016llx, not slot %d's", page,
                        (unsigned long long)t.key_high, (unsigned long long)t.key_low, slot);
    }
    return (int64_t)t.payload_length;
}

int kvt_page_verify_payload(kvt_client *c, int32_t page_id) {
    kvt_page_trailer t;
    if (kvt_read_page_trailer(c, page_id, &t) != 0) return -1;
    const uint8_t *page = c->pool + c->w.data_offset + (uint64_t)page_id * c->w.frame_length;
    return kvt_crc32c(page, (size_t)t.payload_length) == t.payload_crc32c ? 1 : 0;
}

int kvt_counter(kvt_client *c, int32_t id, kvt_counter_info *out) {
    if (!c) return -1;
    if (!out) return fail(c, KVT_ERR_ARGUMENT, "out is NULL");
    if (!c->counters) return fail(c, KVT_ERR_UNSUPPORTED, "the pool names no counters region (layout version not 3)");
    if (id < 0 || id >= KVT_COUNTERS_MAX) return fail(c, KVT_ERR_ARGUMENT, "counter id %d outside 0..%d", id, KVT_COUNTERS_MAX - 1);
    int r = kvt_decode_counter_record(c->counters + KVT_COUNTER_RECORDS + (size_t)KVT_COUNTER_RECORD_SIZE * (size_t)id, id, out);
    if (r < 0) return fail(c, KVT_ERR_PROTOCOL, "counter %d's record has a name or description longer than its field", id);
    return r;
}

int32_t kvt_counter_id(kvt_client *c, const char *name) {
    if (!c) return -1;
    if (!name) return fail(c, KVT_ERR_ARGUMENT, "name is NULL");
    kvt_counter_info info;
    for (int32_t id = 0; id < KVT_COUNTERS_MAX; id++) {
        int r = kvt_counter(c, id, &info);
        if (r < 0) return -1;
        if (r == 1 && strcmp(info.name, name) == 0) return id;
    }
    return fail(c, KVT_ERR_ARGUMENT, "no counter is named %s", name);
}

int64_t kvt_counter_value(const kvt_client *c, int32_t id) {
    if (!c || !c->counters || id < 0 || id >= KVT_COUNTERS_MAX) return 0;
    return (int64_t)atomic_load_explicit(u64_at(c->counters, 8 * (size_t)id), memory_order_acquire);
}

/* ---- accessors ---- */

int kvt_last_error(const kvt_client *c) { return c ? c->last_error : KVT_ERR_ARGUMENT; }
int kvt_last_detail(const kvt_client *c) { return c ? c->last_detail : 0; }
const char *kvt_last_error_message(const kvt_client *c) { return c ? c->message : "no client"; }
uint32_t kvt_client_id(const kvt_client *c) { return c->w.client_id; }
uint32_t kvt_max_keys(const kvt_client *c) { return c->w.max_keys; }
uint64_t kvt_epoch(const kvt_client *c) { return c->w.epoch; }
uint32_t kvt_page_size(const kvt_client *c) { return c->w.page_size; }
uint32_t kvt_page_count(const kvt_client *c) { return c->w.page_count; }
uint32_t kvt_ring_capacity(const kvt_client *c) { return c->w.ring_capacity; }
uint32_t kvt_client_timeout_ms(const kvt_client *c) { return c->w.client_timeout_ms; }
uint32_t kvt_max_message_length(const kvt_client *c) { return c->w.max_message_length; }
uint32_t kvt_engine_minor(const kvt_client *c) { return c->w.engine_minor; }
uint32_t kvt_session_minor(const kvt_client *c) { return c->session_minor; }
int kvt_descriptors_mapped(const kvt_client *c) { return c->descriptors_mapped; }
const char *kvt_file_path(const kvt_client *c, int which) {
    return which >= 0 && which < 3 && c->paths[which] ? c->paths[which] : "";
}
void kvt_set_response_timeout_ms(kvt_client *c, uint32_t ms) { c->timeout_ms = ms; }
uint64_t kvt_next_request_id(const kvt_client *c) { return c->next_id; }
void kvt_set_next_request_id(kvt_client *c, uint64_t id) { c->next_id = id; }

int32_t kvt_slot_page(const kvt_client *c, int32_t slot) {
    return slot >= 0 && (uint32_t)slot < c->w.max_keys ? c->slot_page[slot] : -1;
}
int32_t kvt_slot_generation(const kvt_client *c, int32_t slot) {
    return slot >= 0 && (uint32_t)slot < c->w.max_keys ? c->slot_gen[slot] : 0;
}
int32_t kvt_slot_status(const kvt_client *c, int32_t slot) {
    return slot >= 0 && (uint32_t)slot < c->w.max_keys ? c->slot_status[slot] : KVT_PAGE_NONE;
}

void *kvt_page_addr(const kvt_client *c, int32_t page_id) {
    if (page_id < 0 || (uint32_t)page_id >= c->w.page_count) return NULL;
    return c->pool + c->w.data_offset + (uint64_t)page_id * c->w.frame_length;
}

void *kvt_slot_addr(const kvt_client *c, int32_t slot) { return kvt_page_addr(c, kvt_slot_page(c, slot)); }

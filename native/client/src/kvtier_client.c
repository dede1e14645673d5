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
    int32_t *slot_page, *slot_gen, *slot_status;
    uint8_t *msg; uint32_t msg_cap;
    uint64_t next_id;
    uint32_t timeout_ms;
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

static void *map_file(const char *path, size_t min_size, size_t *len_out, int *err) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) { *err = errno; return NULL; }
    struct stat st;
    if (fstat(fd, &st) != 0) { *err = errno; close(fd); return NULL; }
    if ((uint64_t)st.st_size < min_size) { *err = ERANGE; close(fd); return NULL; }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    *err = errno;
    close(fd);
    if (p == MAP_FAILED) return NULL;
    *len_out = (size_t)st.st_size;
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
    free(c);
}

/* ---- connect ---- */

static char *dup_field(const char *s, uint32_t n) {
    char *p = malloc((size_t)n + 1);
    if (p) { memcpy(p, s, n); p[n] = '\0'; }
    return p;
}

static int handshake(kvt_client *c, const char *socket_path, const kvt_key *namespaces, uint32_t ns_count,
                     uint32_t max_keys, char **paths) {
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
    for (size_t sent = 0; sent < n;) {
        ssize_t r = send(c->sock, hello + sent, n - sent, MSG_NOSIGNAL);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return fail(c, KVT_ERR_SYSTEM, "sending HELLO: %s", strerror(errno));
        sent += (size_t)r;
    }

    size_t cap = 1024, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    int done;
    while ((done = kvt_decode_welcome(buf, len, &c->w)) == 0) {
        if (len == cap) {
            if (cap >= 1u << 20) { free(buf); return fail(c, KVT_ERR_PROTOCOL, "WELCOME longer than 1 MiB"); }
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) { free(buf); return fail(c, KVT_ERR_SYSTEM, "out of memory"); }
            buf = bigger; cap *= 2;
        }
        ssize_t r = recv(c->sock, buf + len, cap - len, 0);
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
    paths[0] = dup_field(c->w.pool_path, c->w.pool_path_len);
    paths[1] = dup_field(c->w.control_path, c->w.control_path_len);
    paths[2] = dup_field(c->w.ring_path, c->w.ring_path_len);
    c->w.pool_path = c->w.control_path = c->w.ring_path = c->w.message = NULL;
    free(buf);
    if (!paths[0] || !paths[1] || !paths[2]) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    return 0;
}

static int attach(kvt_client *c, char **paths) {
    kvt_welcome *w = &c->w;
    if (w->max_keys == 0 || w->ring_capacity < 64 || (w->ring_capacity & (w->ring_capacity - 1)) != 0 ||
        w->page_size == 0 || w->frame_length < w->page_size || w->max_message_length < KVT_REQUEST_HEADER)
        return fail(c, KVT_ERR_PROTOCOL, "WELCOME with impossible values (max keys %u, ring %u, page %u, frame %llu, max message %u)",
                    w->max_keys, w->ring_capacity, w->page_size, (unsigned long long)w->frame_length, w->max_message_length);
    int err;
    uint64_t pool_need = w->data_offset + (uint64_t)w->page_count * w->frame_length;
    c->pool = map_file(paths[0], pool_need, &c->pool_len, &err);
    if (!c->pool) return fail(c, KVT_ERR_SYSTEM, "mapping pool file %s: %s", paths[0], strerror(err));
    c->control = map_file(paths[1], KVT_CONTROL_SIZE, &c->control_len, &err);
    if (!c->control) return fail(c, KVT_ERR_SYSTEM, "mapping control file %s: %s", paths[1], strerror(err));
    c->ring = map_file(paths[2], KVT_RING_HEADER + 2 * (uint64_t)w->ring_capacity, &c->ring_len, &err);
    if (!c->ring) return fail(c, KVT_ERR_SYSTEM, "mapping ring file %s: %s", paths[2], strerror(err));

    if (memcmp(c->control, KVT_CONTROL_MAGIC, 8) != 0) return fail(c, KVT_ERR_PROTOCOL, "control file %s: no KVTIPC01 magic", paths[1]);
    if (kvt_get_u16(c->control + 8) != KVT_MAJOR) return fail(c, KVT_ERR_PROTOCOL, "control file major version %u", kvt_get_u16(c->control + 8));
    uint64_t control_epoch = atomic_load_explicit(u64_at(c->control, KVT_CTL_EPOCH), memory_order_acquire);
    if (control_epoch != w->epoch)
        return fail(c, KVT_ERR_ENGINE_GONE, "control file epoch %llu, WELCOME epoch %llu", (unsigned long long)control_epoch, (unsigned long long)w->epoch);
    if (memcmp(c->ring, KVT_RING_MAGIC, 8) != 0) return fail(c, KVT_ERR_PROTOCOL, "ring file %s: no KVTRING1 magic", paths[2]);
    if (kvt_get_u32(c->ring + KVT_RH_CLIENT_ID) != w->client_id || kvt_get_u32(c->ring + KVT_RH_CAPACITY) != w->ring_capacity ||
        kvt_get_u64(c->ring + KVT_RH_EPOCH) != w->epoch)
        return fail(c, KVT_ERR_PROTOCOL, "ring file header (client %u, capacity %u) differs from WELCOME (client %u, capacity %u)",
                    kvt_get_u32(c->ring + KVT_RH_CLIENT_ID), kvt_get_u32(c->ring + KVT_RH_CAPACITY), w->client_id, w->ring_capacity);

    c->req = (kvt_ring){c->ring + KVT_RING_HEADER, w->ring_capacity, u64_at(c->ring, KVT_RH_REQ_TAIL), u64_at(c->ring, KVT_RH_REQ_HEAD)};
    c->resp = (kvt_ring){c->ring + KVT_RING_HEADER + w->ring_capacity, w->ring_capacity, u64_at(c->ring, KVT_RH_RESP_TAIL),
                         u64_at(c->ring, KVT_RH_RESP_HEAD)};
    c->slot_page = malloc(sizeof(int32_t) * w->max_keys);
    c->slot_gen = calloc(w->max_keys, sizeof(int32_t));
    c->slot_status = calloc(w->max_keys, sizeof(int32_t));
    c->msg_cap = w->max_message_length;
    c->msg = malloc(c->msg_cap);
    if (!c->slot_page || !c->slot_gen || !c->slot_status || !c->msg) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    for (uint32_t i = 0; i < w->max_keys; i++) c->slot_page[i] = -1;
    c->engine_beat = atomic_load_explicit(u64_at(c->control, KVT_CTL_HEARTBEAT), memory_order_acquire);
    c->engine_beat_at = now_ns();
    if (pthread_create(&c->heartbeat, NULL, heartbeat_main, c) != 0)
        return fail(c, KVT_ERR_SYSTEM, "starting the heartbeat thread");
    c->heartbeat_started = 1;
    return 0;
}

kvt_client *kvt_connect(const char *socket_path, const kvt_key *namespaces, uint32_t ns_count,
                        uint32_t max_keys, int *error_out, char *message_out, size_t message_len) {
    kvt_client *c = calloc(1, sizeof *c);
    if (!c) {
        if (error_out) *error_out = KVT_ERR_SYSTEM;
        if (message_out && message_len) snprintf(message_out, message_len, "out of memory");
        return NULL;
    }
    c->sock = -1;
    c->next_id = 1;
    c->timeout_ms = 0; /* wait as long as the engine lives */
    pthread_mutex_init(&c->stop_lock, NULL);
    pthread_cond_init(&c->stop_cond, NULL);
    char *paths[3] = {NULL, NULL, NULL};
    int rc;
    if (socket_path == NULL || (ns_count > 0 && namespaces == NULL))
        rc = fail(c, KVT_ERR_ARGUMENT, "socket path and namespaces must not be NULL");
    else if (ns_count > KVT_MAX_NAMESPACES)
        rc = fail(c, KVT_ERR_ARGUMENT, "%u namespaces; at most %d", ns_count, KVT_MAX_NAMESPACES);
    else if (max_keys < 1 || max_keys > KVT_MAX_KEYS_LIMIT)
        rc = fail(c, KVT_ERR_ARGUMENT, "max keys %u outside 1..%d", max_keys, KVT_MAX_KEYS_LIMIT);
    else {
        rc = handshake(c, socket_path, namespaces, ns_count, max_keys, paths);
        if (rc == 0) rc = attach(c, paths);
    }
    free(paths[0]); free(paths[1]); free(paths[2]);
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

static int exchange(kvt_client *c, int32_t type, uint16_t ns, uint16_t flags, int32_t first_slot, int32_t count,
                    const void *body, uint32_t body_len, kvt_result *result) {
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
    for (unsigned round = 0;; round++) {
        const uint8_t *rec;
        uint32_t len;
        int r = kvt_ring_peek(&c->resp, &rec, &len);
        if (r < 0) { c->dead = 1; return fail(c, KVT_ERR_PROTOCOL, "malformed record in the response ring"); }
        if (r == 1) {
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
            for (int32_t i = 0; i < n; i++) {
                const uint8_t *e = resp.entries + (size_t)i * KVT_ENTRY_SIZE;
                c->slot_page[first + i] = (int32_t)kvt_get_u32(e);
                c->slot_gen[first + i] = (int32_t)kvt_get_u32(e + 4);
                c->slot_status[first + i] = (int32_t)kvt_get_u32(e + 8);
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
        if (round < 400) { back_off(round); continue; }
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

static int keyed(kvt_client *c, int32_t type, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                 kvt_result *result) {
    if (!c) return -1;
    if (check_slots(c, first_slot, count) != 0) return -1;
    if (keys == NULL) return exchange(c, type, ns, KVT_FLAG_KEYS_IN_SLOTS, first_slot, count, NULL, 0, result);
    return exchange(c, type, ns, 0, first_slot, count, keys, (uint32_t)count * 16u, result);
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

int kvt_commit(kvt_client *c, int32_t first_slot, int32_t count, const int32_t *lengths, kvt_result *result) {
    if (!c) return -1;
    if (check_slots(c, first_slot, count) != 0) return -1;
    if (count > 0 && !lengths) return fail(c, KVT_ERR_ARGUMENT, "lengths is NULL");
    if ((uint64_t)KVT_REQUEST_HEADER + 4u * (uint64_t)count > c->msg_cap)
        return fail(c, KVT_ERR_ARGUMENT, "%d lengths do not fit a request (Max Message Length %u)", count, c->msg_cap);
    uint8_t *body = malloc(4 * (size_t)count + 1);
    if (!body) return fail(c, KVT_ERR_SYSTEM, "out of memory");
    for (int32_t i = 0; i < count; i++) kvt_put_u32(body + 4 * i, (uint32_t)lengths[i]);
    int rc = exchange(c, KVT_OP_COMMIT, 0, 0, first_slot, count, body, 4u * (uint32_t)count, result);
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

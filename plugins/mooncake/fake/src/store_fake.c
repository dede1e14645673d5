/*
 * The double's client library (installed as lib/libmooncake_store.so): the 19 functions of the Store's C
 * ABI (mooncake_fake.h) over a loopback TCP connection to the double's master (master_fake.c), which holds
 * the objects. What it imitates is what the project observed of a real build: 0 or a byte count for
 * success, negative codes otherwise (-1 for a NULL argument), INVALID_PARAMS for a destination too small
 * or a copying put larger than the local buffer, a setup against an unreachable master that retries
 * MC_STORE_CLIENT_SETUP_RETRIES times (default 20) and returns -1. It is stricter in one place: put_from
 * and batch_put_from need memory registered with mooncake_store_register_buffer, as the Store documents
 * (a real build on TCP also copies from unregistered memory), so a tier that forgets to register fails here.
 *
 * One connection per client, one call on it at a time. Each setup attempt against an unreachable master
 * takes KVTIER_MOONCAKE_FAKE_SETUP_PAUSE_MS (default 500) milliseconds, standing in for the seconds a
 * real client waits, so that time bounds on setup are exercised without making tests slow.
 */
#define _GNU_SOURCE
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_FAULTS 16

typedef struct
{
    void *base;
    size_t size;
} region;

typedef struct
{
    pthread_mutex_t lock; /* one call on the connection at a time; also guards regions */
    int fd;               /* -1: not set up, or the connection broke */
    int set_up;
    uint64_t local_buffer_size;
    char name[256];
    region *regions;
    size_t region_count;
    mcf_buf out;
} client;

typedef struct
{
    int op;
    int kind;
    int64_t skip;
    int64_t count;
    int64_t arg;
} fault;

typedef struct
{
    int kind; /* 0: none */
    int64_t arg;
} hit;

static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static fault faults[MAX_FAULTS];
static int fault_count;
static int64_t faults_met;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* ---- Faults ---------------------------------------------------------------------------------------- */

static int arm(int op, int kind, int64_t skip, int64_t count, int64_t arg)
{
    if (op < MOONCAKE_FAKE_OP_ANY || op > MOONCAKE_FAKE_OP_UNMOUNT || kind < MOONCAKE_FAKE_FAIL || kind > MOONCAKE_FAKE_UNREACHABLE
        || skip < 0 || count < 1 || (kind == MOONCAKE_FAKE_FAIL && arg >= 0) || (kind == MOONCAKE_FAKE_DELAY && arg < 0))
    {
        return -1;
    }
    pthread_mutex_lock(&fault_lock);
    const int full = fault_count == MAX_FAULTS;
    if (!full)
    {
        faults[fault_count++] = (fault){op, kind, skip, count, arg};
    }
    pthread_mutex_unlock(&fault_lock);
    return full ? -1 : 0;
}

EXPORT int mooncake_fake_inject(int op, int kind, int64_t skip, int64_t count, int64_t arg)
{
    return arm(op, kind, skip, count, arg);
}

EXPORT void mooncake_fake_reset(void)
{
    pthread_mutex_lock(&fault_lock);
    fault_count = 0;
    faults_met = 0;
    pthread_mutex_unlock(&fault_lock);
}

EXPORT int64_t mooncake_fake_faults_met(void)
{
    pthread_mutex_lock(&fault_lock);
    const int64_t met = faults_met;
    pthread_mutex_unlock(&fault_lock);
    return met;
}

static void arm_from_environment(void)
{
    const char *spec = getenv("KVTIER_MOONCAKE_FAKE_FAULTS");
    while (spec != NULL && *spec != '\0')
    {
        int op = 0;
        int kind = 0;
        long long skip = 0;
        long long count = 0;
        long long arg = 0;
        if (sscanf(spec, "%d:%d:%lld:%lld:%lld", &op, &kind, &skip, &count, &arg) != 5 || arm(op, kind, skip, count, arg) != 0)
        {
            fprintf(stderr, "libmooncake_store (kvtier test double): KVTIER_MOONCAKE_FAKE_FAULTS entry '%s' is not a valid "
                    "op:kind:skip:count:arg (see mooncake_fake.h); ignored\n", spec);
        }
        spec = strchr(spec, ',');
        spec = spec != NULL ? spec + 1 : NULL;
    }
}

/* The fault the next operation of kind op meets, if any (consumed). */
static hit next_fault(int op)
{
    hit h = {0, 0};
    pthread_mutex_lock(&fault_lock);
    for (int i = 0; i < fault_count; i++)
    {
        fault *f = &faults[i];
        /* An unmount meets only a fault armed for it: OP_ANY means the data and setup calls. */
        if (f->op != op && (f->op != MOONCAKE_FAKE_OP_ANY || op == MOONCAKE_FAKE_OP_UNMOUNT))
        {
            continue;
        }
        if (f->skip > 0)
        {
            f->skip--;
            break;
        }
        h.kind = f->kind;
        h.arg = f->arg;
        faults_met++;
        if (--f->count == 0)
        {
            memmove(f, f + 1, (size_t)(fault_count - i - 1) * sizeof(fault));
            fault_count--;
        }
        break;
    }
    pthread_mutex_unlock(&fault_lock);
    return h;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
    {
    }
}

/* Applies a fault that acts before the call: a delay (then 0: go on), or the code the call returns instead. */
static int64_t before(hit h)
{
    if (h.kind == MOONCAKE_FAKE_DELAY)
    {
        sleep_ms(h.arg);
        return 0;
    }
    if (h.kind == MOONCAKE_FAKE_FAIL)
    {
        return h.arg;
    }
    if (h.kind == MOONCAKE_FAKE_UNREACHABLE)
    {
        return MC_RPC_FAIL;
    }
    return 0;
}

/* ---- The connection -------------------------------------------------------------------------------- */

/*
 * Sends the request in c->out and reads the reply; returns its result and, when wanted, the rest of the
 * reply (free it). Called with c->lock held. A broken connection stays broken: RPC_FAIL from then on.
 */
static int64_t call(client *c, uint8_t **rest, size_t *rest_len)
{
    if (!c->set_up)
    {
        return MC_INTERNAL_ERROR;
    }
    uint8_t *body = NULL;
    size_t len = 0;
    if (c->fd < 0 || mcf_send(c->fd, &c->out) != 0 || mcf_receive(c->fd, &body, &len) != 0 || len < 8)
    {
        free(body);
        if (c->fd >= 0)
        {
            close(c->fd);
            c->fd = -1;
        }
        return MC_RPC_FAIL;
    }
    int64_t result;
    memcpy(&result, body, 8);
    if (rest != NULL)
    {
        *rest = body;
        *rest_len = len;
    }
    else
    {
        free(body);
    }
    return result;
}

static int connect_to(const char *master)
{
    const char *colon = strrchr(master, ':');
    if (colon == NULL || colon == master)
    {
        return -1;
    }
    char host[256];
    const size_t n = (size_t)(colon - master);
    if (n >= sizeof(host))
    {
        return -1;
    }
    memcpy(host, master, n);
    host[n] = '\0';
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *found = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &found) != 0)
    {
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = found; a != NULL && fd < 0; a = a->ai_next)
    {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0)
        {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(found);
    if (fd >= 0)
    {
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

static int registered(client *c, const void *p, size_t size)
{
    const uintptr_t start = (uintptr_t)p;
    for (size_t i = 0; i < c->region_count; i++)
    {
        const uintptr_t base = (uintptr_t)c->regions[i].base;
        if (start >= base && start - base <= c->regions[i].size && size <= c->regions[i].size - (start - base))
        {
            return 1;
        }
    }
    return 0;
}

/* ---- The Store's C ABI ----------------------------------------------------------------------------- */

EXPORT mooncake_store_t mooncake_store_create(void)
{
    pthread_once(&env_once, arm_from_environment);
    client *c = calloc(1, sizeof(client));
    if (c == NULL)
    {
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->fd = -1;
    mcf_buf_init(&c->out);
    return c;
}

EXPORT void mooncake_store_destroy(mooncake_store_t store)
{
    client *c = store;
    if (c == NULL)
    {
        return;
    }
    pthread_mutex_lock(&c->lock);
    if (c->set_up && c->fd >= 0)
    {
        /* Only a delay applies: the segment stays mounted, the connection open, while it lasts. */
        const hit h = next_fault(MOONCAKE_FAKE_OP_UNMOUNT);
        if (h.kind == MOONCAKE_FAKE_DELAY)
        {
            sleep_ms(h.arg);
        }
        mcf_begin(&c->out);
        mcf_put_u8(&c->out, MCF_UNMOUNT);
        call(c, NULL, NULL);
    }
    if (c->fd >= 0)
    {
        close(c->fd);
    }
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_destroy(&c->lock);
    mcf_buf_free(&c->out);
    free(c->regions);
    free(c);
}

EXPORT int mooncake_store_setup(mooncake_store_t store, const char *local_hostname, const char *metadata_server,
                                uint64_t global_segment_size, uint64_t local_buffer_size, const char *protocol,
                                const char *device_name, const char *master_server_addr)
{
    (void)metadata_server; /* peers never exchange segments with the double: the master holds the bytes */
    (void)device_name;
    client *c = store;
    if (c == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    local_hostname = local_hostname != NULL ? local_hostname : "";
    protocol = protocol != NULL ? protocol : "tcp";
    master_server_addr = master_server_addr != NULL ? master_server_addr : "127.0.0.1:50051";
    if (strcmp(protocol, "tcp") != 0)
    {
        fprintf(stderr, "libmooncake_store (kvtier test double): protocol '%s' is not supported, only tcp\n", protocol);
        return MC_INTERNAL_ERROR;
    }
    const char *retries_env = getenv("MC_STORE_CLIENT_SETUP_RETRIES");
    const char *pause_env = getenv("KVTIER_MOONCAKE_FAKE_SETUP_PAUSE_MS");
    long retries = retries_env != NULL ? strtol(retries_env, NULL, 10) : 20;
    const long pause = pause_env != NULL ? strtol(pause_env, NULL, 10) : 500;
    retries = retries < 1 ? 1 : retries;
    pthread_mutex_lock(&c->lock);
    if (c->set_up)
    {
        pthread_mutex_unlock(&c->lock);
        return MC_INTERNAL_ERROR;
    }
    int fd = -1;
    for (long attempt = 0; attempt < retries && fd < 0; attempt++)
    {
        const hit h = next_fault(MOONCAKE_FAKE_OP_SETUP);
        if (before(h) == 0)
        {
            fd = connect_to(master_server_addr);
        }
        if (fd < 0 && pause > 0)
        {
            sleep_ms(pause);
        }
    }
    if (fd < 0)
    {
        pthread_mutex_unlock(&c->lock);
        fprintf(stderr, "libmooncake_store (kvtier test double): master %s unreachable after %ld attempt(s)\n", master_server_addr, retries);
        return MC_INTERNAL_ERROR;
    }
    c->fd = fd;
    c->set_up = 1;
    c->local_buffer_size = local_buffer_size;
    mcf_begin(&c->out);
    mcf_put_u8(&c->out, MCF_MOUNT);
    mcf_put_u64(&c->out, global_segment_size);
    mcf_put_str(&c->out, local_hostname);
    uint8_t *reply = NULL;
    size_t len = 0;
    const int64_t rc = call(c, &reply, &len);
    if (rc == 0)
    {
        mcf_cursor in = {reply, len, 8, 0};
        char *name = mcf_str(&in);
        snprintf(c->name, sizeof(c->name), "%s", name != NULL ? name : local_hostname);
        free(name);
    }
    else if (c->fd >= 0)
    {
        close(c->fd);
        c->fd = -1;
        c->set_up = 0;
    }
    free(reply);
    pthread_mutex_unlock(&c->lock);
    return rc == 0 ? 0 : rc < INT32_MIN ? MC_INTERNAL_ERROR : (int)rc;
}

EXPORT int mooncake_store_init_all(mooncake_store_t store, const char *protocol, const char *device_name, uint64_t mount_segment_size)
{
    (void)protocol;
    (void)device_name;
    (void)mount_segment_size;
    if (store != NULL)
    {
        fprintf(stderr, "libmooncake_store (kvtier test double): init_all needs an etcd at 127.0.0.1:2379, which the double has not; "
                "use mooncake_store_setup\n");
    }
    return MC_INTERNAL_ERROR;
}

EXPORT int mooncake_store_health_check(mooncake_store_t store)
{
    client *c = store;
    if (c == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    pthread_mutex_lock(&c->lock);
    mcf_begin(&c->out);
    mcf_put_u8(&c->out, MCF_PING);
    const int64_t rc = call(c, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc == 0 ? 0 : MC_INTERNAL_ERROR;
}

/* One put, the caller having checked the arguments. */
static int put_one(client *c, const char *key, const void *value, size_t size, const mooncake_replicate_config_t *config)
{
    const int64_t early = before(next_fault(MOONCAKE_FAKE_OP_PUT));
    if (early != 0)
    {
        return (int)early;
    }
    pthread_mutex_lock(&c->lock);
    mcf_begin(&c->out);
    mcf_put_u8(&c->out, MCF_PUT);
    mcf_put_str(&c->out, key);
    const size_t preferred = config != NULL && config->preferred_segments != NULL ? config->preferred_segments_count : 0;
    mcf_put_u32(&c->out, (uint32_t)preferred);
    for (size_t i = 0; i < preferred; i++)
    {
        mcf_put_str(&c->out, config->preferred_segments[i] != NULL ? config->preferred_segments[i] : "");
    }
    mcf_put_u64(&c->out, size);
    mcf_put_bytes(&c->out, value, size);
    const int64_t rc = c->out.failed ? MC_INTERNAL_ERROR : call(c, NULL, NULL);
    if (c->out.cap > (64u << 20))
    {
        mcf_buf_free(&c->out);
    }
    pthread_mutex_unlock(&c->lock);
    return (int)rc;
}

EXPORT int mooncake_store_put(mooncake_store_t store, const char *key, const void *value, size_t size,
                              const mooncake_replicate_config_t *config)
{
    client *c = store;
    if (c == NULL || key == NULL || value == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    if (c->set_up && size > c->local_buffer_size)
    {
        return MC_INVALID_PARAMS; /* a copying put stages the value in the local buffer */
    }
    return put_one(c, key, value, size, config);
}

static int put_from_checked(client *c, const char *key, void *buffer, size_t size, const mooncake_replicate_config_t *config)
{
    pthread_mutex_lock(&c->lock);
    const int ok = registered(c, buffer, size);
    pthread_mutex_unlock(&c->lock);
    if (!ok)
    {
        return MC_INVALID_PARAMS;
    }
    return put_one(c, key, buffer, size, config);
}

EXPORT int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer, size_t size,
                                   const mooncake_replicate_config_t *config)
{
    client *c = store;
    if (c == NULL || key == NULL || buffer == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    return put_from_checked(c, key, buffer, size, config);
}

EXPORT int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count,
                                         const mooncake_replicate_config_t *config, int *results_out)
{
    client *c = store;
    if (c == NULL || keys == NULL || buffers == NULL || sizes == NULL || results_out == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    for (size_t i = 0; i < count; i++)
    {
        results_out[i] = keys[i] == NULL || buffers[i] == NULL ? MC_INVALID_PARAMS : put_from_checked(c, keys[i], buffers[i], sizes[i], config);
    }
    return 0;
}

/* One get, the caller having checked the arguments. */
static int64_t get_one(client *c, const char *key, void *buffer, size_t size)
{
    const hit h = next_fault(MOONCAKE_FAKE_OP_GET);
    const int64_t early = before(h);
    if (early != 0)
    {
        return early;
    }
    pthread_mutex_lock(&c->lock);
    mcf_begin(&c->out);
    mcf_put_u8(&c->out, MCF_GET);
    mcf_put_str(&c->out, key);
    mcf_put_u64(&c->out, size);
    uint8_t *reply = NULL;
    size_t len = 0;
    int64_t rc = call(c, &reply, &len);
    pthread_mutex_unlock(&c->lock);
    if (rc >= 0)
    {
        if ((uint64_t)rc != len - 8 || (uint64_t)rc > size)
        {
            rc = MC_INTERNAL_ERROR; /* a reply the double's own master would never send */
        }
        else
        {
            const size_t n = h.kind == MOONCAKE_FAKE_SHORT ? (size_t)rc / 2 : (size_t)rc;
            memcpy(buffer, reply + 8, n);
            if (h.kind == MOONCAKE_FAKE_CORRUPT && n > 0)
            {
                ((uint8_t *)buffer)[n / 2] ^= 0x5a;
            }
            rc = (int64_t)n;
        }
    }
    free(reply);
    return rc;
}

EXPORT int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer, size_t size)
{
    client *c = store;
    if (c == NULL || key == NULL || buffer == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    return get_one(c, key, buffer, size);
}

EXPORT int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count,
                                         int64_t *results_out)
{
    client *c = store;
    if (c == NULL || keys == NULL || buffers == NULL || sizes == NULL || results_out == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    for (size_t i = 0; i < count; i++)
    {
        results_out[i] = keys[i] == NULL || buffers[i] == NULL ? MC_INVALID_PARAMS : get_one(c, keys[i], buffers[i], sizes[i]);
    }
    return 0;
}

/* A request naming one key: EXIST or SIZE. */
static int64_t ask(client *c, uint8_t op, const char *key)
{
    const int64_t early = before(next_fault(MOONCAKE_FAKE_OP_EXIST));
    if (early != 0)
    {
        return early;
    }
    pthread_mutex_lock(&c->lock);
    mcf_begin(&c->out);
    mcf_put_u8(&c->out, op);
    mcf_put_str(&c->out, key);
    const int64_t rc = call(c, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

EXPORT int mooncake_store_is_exist(mooncake_store_t store, const char *key)
{
    if (store == NULL || key == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    const int64_t rc = ask(store, MCF_EXIST, key);
    return rc == 0 || rc == 1 ? (int)rc : MC_INTERNAL_ERROR;
}

EXPORT int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count, int *results_out)
{
    if (store == NULL || keys == NULL || results_out == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    for (size_t i = 0; i < count; i++)
    {
        results_out[i] = mooncake_store_is_exist(store, keys[i]);
    }
    return 0;
}

EXPORT int64_t mooncake_store_get_size(mooncake_store_t store, const char *key)
{
    if (store == NULL || key == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    return ask(store, MCF_SIZE, key);
}

EXPORT int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len)
{
    client *c = store;
    if (c == NULL || buf_out == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    pthread_mutex_lock(&c->lock);
    const size_t n = strlen(c->name);
    const int fits = c->set_up && n < buf_len;
    if (fits)
    {
        memcpy(buf_out, c->name, n + 1);
    }
    pthread_mutex_unlock(&c->lock);
    return fits ? 0 : MC_INVALID_PARAMS;
}

/* A removal request: REMOVE (key), REGEX (pattern) or ALL (text NULL). */
static int64_t removal(client *c, uint8_t op, const char *text, int force)
{
    const int64_t early = before(next_fault(MOONCAKE_FAKE_OP_REMOVE));
    if (early != 0)
    {
        return early;
    }
    pthread_mutex_lock(&c->lock);
    mcf_begin(&c->out);
    mcf_put_u8(&c->out, op);
    if (text != NULL)
    {
        mcf_put_str(&c->out, text);
    }
    mcf_put_u32(&c->out, force != 0);
    const int64_t rc = call(c, NULL, NULL);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

EXPORT int mooncake_store_remove(mooncake_store_t store, const char *key, int force)
{
    if (store == NULL || key == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    return (int)removal(store, MCF_REMOVE, key, force);
}

EXPORT int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern, int force)
{
    if (store == NULL || pattern == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    return removal(store, MCF_REGEX, pattern, force);
}

EXPORT int64_t mooncake_store_remove_all(mooncake_store_t store, int force)
{
    if (store == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    return removal(store, MCF_ALL, NULL, force);
}

EXPORT int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size)
{
    client *c = store;
    if (c == NULL || buffer == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    if (size == 0)
    {
        return MC_INVALID_PARAMS;
    }
    pthread_mutex_lock(&c->lock);
    int rc = 0;
    const uintptr_t start = (uintptr_t)buffer;
    for (size_t i = 0; i < c->region_count && rc == 0; i++)
    {
        const uintptr_t base = (uintptr_t)c->regions[i].base;
        if (start < base + c->regions[i].size && base < start + size)
        {
            rc = MC_INVALID_PARAMS; /* overlapping registrations are refused */
        }
    }
    if (rc == 0)
    {
        region *grown = realloc(c->regions, (c->region_count + 1) * sizeof(region));
        if (grown == NULL)
        {
            rc = MC_INTERNAL_ERROR;
        }
        else
        {
            c->regions = grown;
            c->regions[c->region_count++] = (region){buffer, size};
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

EXPORT int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer)
{
    client *c = store;
    if (c == NULL || buffer == NULL)
    {
        return MC_INTERNAL_ERROR;
    }
    pthread_mutex_lock(&c->lock);
    int rc = MC_INVALID_PARAMS;
    for (size_t i = 0; i < c->region_count && rc != 0; i++)
    {
        if (c->regions[i].base == buffer)
        {
            c->regions[i] = c->regions[--c->region_count];
            rc = 0;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

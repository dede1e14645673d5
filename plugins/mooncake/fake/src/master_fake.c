/*
 * The double's master (installed as bin/mooncake_master): holds every object of the clients connected to
 * it, in the segments they mount, so that processes on one master share what they store. It answers the
 * double's library over loopback TCP (wire.h) and behaves as the project observed a real master behave:
 * a put keeps a key's first value, a read leases the object for --default_kv_lease_ttl milliseconds and a
 * removal without force is refused (OBJECT_HAS_LEASE) while that lasts, a put with no segment room left is
 * refused (NO_AVAILABLE_HANDLE), and a client's segment, with the objects in it, goes when it unmounts or
 * its connection closes. It never evicts: a full store stays full.
 *
 * Flags, in the master's "--name=value" or "--name value" form: --rpc_address, --rpc_port (or --port),
 * --default_kv_lease_ttl; accepted and ignored: --metrics_host, --metrics_port,
 * --enable_http_metadata_server (the double has no HTTP metadata server: clients use P2PHANDSHAKE),
 * --http_metadata_server_host, --http_metadata_server_port, --eviction_high_watermark_ratio,
 * --eviction_ratio, --client_ttl, --cluster_id. Any other flag is an error (exit 2).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

#define BUCKETS 16384
#define MAX_SEGMENTS 1024

typedef struct object
{
    char *key;
    uint8_t *bytes;
    uint64_t size;
    int segment;
    int64_t lease_until_ms;
    struct object *next;
} object;

typedef struct
{
    char *name; /* NULL: a free slot */
    uint64_t capacity;
    uint64_t used;
} segment;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static object *table[BUCKETS];
static segment segments[MAX_SEGMENTS];
static int64_t lease_ttl_ms = 10000;
static unsigned next_port;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t hash(const char *key)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++)
    {
        h = (h ^ *p) * 16777619u;
    }
    return h % BUCKETS;
}

static object **find(const char *key)
{
    object **at = &table[hash(key)];
    while (*at != NULL && strcmp((*at)->key, key) != 0)
    {
        at = &(*at)->next;
    }
    return at;
}

static void unlink_object(object **at)
{
    object *o = *at;
    *at = o->next;
    segments[o->segment].used -= o->size;
    free(o->key);
    free(o->bytes);
    free(o);
}

static int leased(const object *o)
{
    return o->lease_until_ms > now_ms();
}

/* A segment of that name with room for size bytes, else -1. */
static int segment_with_room(const char *name, uint64_t size)
{
    for (int i = 0; i < MAX_SEGMENTS; i++)
    {
        if (segments[i].name != NULL && (name == NULL || strcmp(segments[i].name, name) == 0)
            && segments[i].capacity - segments[i].used >= size)
        {
            return i;
        }
    }
    return -1;
}

static int64_t put(const char *key, char **preferred, uint32_t preferred_count, const uint8_t *value, uint64_t size)
{
    if (key[0] == '\0' || size == 0)
    {
        return MC_INVALID_PARAMS;
    }
    object **at = find(key);
    if (*at != NULL)
    {
        return 0; /* the first value stays: there is no overwrite */
    }
    int chosen = -1;
    for (uint32_t i = 0; i < preferred_count && chosen < 0; i++)
    {
        chosen = segment_with_room(preferred[i], size);
    }
    if (chosen < 0)
    {
        chosen = segment_with_room(NULL, size);
    }
    if (chosen < 0)
    {
        return MC_NO_AVAILABLE_HANDLE;
    }
    object *o = calloc(1, sizeof(object));
    uint8_t *bytes = malloc(size);
    char *name = strdup(key);
    if (o == NULL || bytes == NULL || name == NULL)
    {
        free(o);
        free(bytes);
        free(name);
        return MC_INTERNAL_ERROR;
    }
    memcpy(bytes, value, size);
    o->key = name;
    o->bytes = bytes;
    o->size = size;
    o->segment = chosen;
    segments[chosen].used += size;
    *at = o;
    return 0;
}

static int64_t remove_matching(const regex_t *pattern, int force)
{
    int64_t removed = 0;
    for (int b = 0; b < BUCKETS; b++)
    {
        object **at = &table[b];
        while (*at != NULL)
        {
            if ((pattern == NULL || regexec(pattern, (*at)->key, 0, NULL, 0) == 0) && (force || !leased(*at)))
            {
                unlink_object(at);
                removed++;
            }
            else
            {
                at = &(*at)->next;
            }
        }
    }
    return removed;
}

/* Drops a segment and every object placed in it. */
static void unmount(int seg)
{
    if (seg < 0 || segments[seg].name == NULL)
    {
        return;
    }
    for (int b = 0; b < BUCKETS; b++)
    {
        object **at = &table[b];
        while (*at != NULL)
        {
            if ((*at)->segment == seg)
            {
                unlink_object(at);
            }
            else
            {
                at = &(*at)->next;
            }
        }
    }
    free(segments[seg].name);
    segments[seg].name = NULL;
    segments[seg].capacity = 0;
    segments[seg].used = 0;
}

/* Mounts a client: names it (host:port, a port from 12300-14300 when none is given) and, with a size, gives it a segment. */
static int64_t mount(uint64_t size, const char *hostname, int *seg, char *name, size_t name_len)
{
    if (strchr(hostname, ':') != NULL)
    {
        snprintf(name, name_len, "%s", hostname);
    }
    else
    {
        snprintf(name, name_len, "%s:%u", hostname[0] != '\0' ? hostname : "127.0.0.1", 12300 + next_port++ % 2001);
    }
    if (size == 0)
    {
        return 0;
    }
    for (int i = 0; i < MAX_SEGMENTS; i++)
    {
        if (segments[i].name == NULL)
        {
            segments[i].name = strdup(name);
            if (segments[i].name == NULL)
            {
                return MC_INTERNAL_ERROR;
            }
            segments[i].capacity = size;
            segments[i].used = 0;
            *seg = i;
            return 0;
        }
    }
    return MC_INTERNAL_ERROR;
}

/* Answers one request into reply (which starts with the i64 result). Called with the lock held. */
static void answer(mcf_cursor *in, mcf_buf *reply, int *seg)
{
    const uint8_t op = mcf_u8(in);
    int64_t result = MC_INVALID_PARAMS;
    const size_t result_at = reply->len;
    mcf_put_u64(reply, 0);
    switch (op)
    {
        case MCF_MOUNT:
        {
            const uint64_t size = mcf_u64(in);
            char *hostname = mcf_str(in);
            char name[256];
            if (!in->bad && *seg < 0)
            {
                result = mount(size, hostname, seg, name, sizeof(name));
                if (result == 0)
                {
                    mcf_put_str(reply, name);
                }
            }
            free(hostname);
            break;
        }
        case MCF_PUT:
        {
            char *key = mcf_str(in);
            const uint32_t n = mcf_u32(in);
            char **preferred = calloc(n ? n : 1, sizeof(char *));
            for (uint32_t i = 0; preferred != NULL && i < n && !in->bad; i++)
            {
                preferred[i] = mcf_str(in);
            }
            const uint64_t size = mcf_u64(in);
            if (!in->bad && preferred != NULL && in->len - in->pos == size)
            {
                result = put(key, preferred, n, in->data + in->pos, size);
            }
            for (uint32_t i = 0; preferred != NULL && i < n; i++)
            {
                free(preferred[i]);
            }
            free(preferred);
            free(key);
            break;
        }
        case MCF_GET:
        {
            char *key = mcf_str(in);
            const uint64_t capacity = mcf_u64(in);
            if (!in->bad)
            {
                object *o = *find(key);
                if (o == NULL)
                {
                    result = MC_OBJECT_NOT_FOUND;
                }
                else if (o->size > capacity)
                {
                    result = MC_INVALID_PARAMS; /* the destination is too small */
                }
                else
                {
                    const int64_t until = now_ms() + lease_ttl_ms;
                    o->lease_until_ms = until > o->lease_until_ms ? until : o->lease_until_ms;
                    mcf_put_bytes(reply, o->bytes, o->size);
                    result = (int64_t)o->size;
                }
            }
            free(key);
            break;
        }
        case MCF_EXIST:
        case MCF_SIZE:
        {
            char *key = mcf_str(in);
            if (!in->bad)
            {
                object *o = *find(key);
                result = op == MCF_EXIST ? (o != NULL) : o != NULL ? (int64_t)o->size : MC_OBJECT_NOT_FOUND;
            }
            free(key);
            break;
        }
        case MCF_REMOVE:
        {
            char *key = mcf_str(in);
            const uint32_t force = mcf_u32(in);
            if (!in->bad)
            {
                object **at = find(key);
                result = *at == NULL ? MC_OBJECT_NOT_FOUND : !force && leased(*at) ? MC_OBJECT_HAS_LEASE : 0;
                if (result == 0)
                {
                    unlink_object(at);
                }
            }
            free(key);
            break;
        }
        case MCF_REGEX:
        {
            char *pattern = mcf_str(in);
            const uint32_t force = mcf_u32(in);
            regex_t compiled;
            if (!in->bad && regcomp(&compiled, pattern, REG_EXTENDED | REG_NOSUB) == 0)
            {
                result = remove_matching(&compiled, (int)force);
                regfree(&compiled);
            }
            free(pattern);
            break;
        }
        case MCF_ALL:
        {
            const uint32_t force = mcf_u32(in);
            if (!in->bad)
            {
                result = remove_matching(NULL, (int)force);
            }
            break;
        }
        case MCF_PING:
            result = 0;
            break;
        case MCF_UNMOUNT:
            unmount(*seg);
            *seg = -1;
            result = 0;
            break;
        default:
            break;
    }
    if (!reply->failed)
    {
        memcpy(reply->data + result_at, &result, 8);
    }
}

static void *serve(void *arg)
{
    const int fd = (int)(intptr_t)arg;
    int seg = -1;
    mcf_buf reply;
    mcf_buf_init(&reply);
    for (;;)
    {
        uint8_t *body = NULL;
        size_t len = 0;
        if (mcf_receive(fd, &body, &len) != 0)
        {
            break;
        }
        mcf_cursor in = {body, len, 0, 0};
        mcf_begin(&reply);
        pthread_mutex_lock(&lock);
        answer(&in, &reply, &seg);
        pthread_mutex_unlock(&lock);
        free(body);
        if (mcf_send(fd, &reply) != 0)
        {
            break;
        }
        if (reply.cap > (64u << 20))
        {
            mcf_buf_free(&reply); /* do not keep a large object's copy per connection */
        }
    }
    pthread_mutex_lock(&lock);
    unmount(seg); /* a client that went away takes its segment with it */
    pthread_mutex_unlock(&lock);
    mcf_buf_free(&reply);
    close(fd);
    return NULL;
}

static int flag_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const size_t n = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, name, n) != 0)
    {
        return 0;
    }
    if (arg[2 + n] == '=')
    {
        *value = arg + 3 + n;
        return 1;
    }
    if (arg[2 + n] != '\0')
    {
        return 0;
    }
    if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0)
    {
        *value = argv[++*i];
    }
    else
    {
        *value = "true"; /* a bare boolean flag */
    }
    return 1;
}

int main(int argc, char **argv)
{
    static const char *ignored[] = {"metrics_host", "metrics_port", "enable_http_metadata_server", "http_metadata_server_host",
                                    "http_metadata_server_port", "eviction_high_watermark_ratio", "eviction_ratio", "client_ttl",
                                    "cluster_id", NULL};
    const char *address = "0.0.0.0";
    long port = 50051;
    for (int i = 1; i < argc; i++)
    {
        const char *value = NULL;
        char *end = NULL;
        if (flag_value(argc, argv, &i, "rpc_address", &value))
        {
            address = value;
        }
        else if (flag_value(argc, argv, &i, "rpc_port", &value) || flag_value(argc, argv, &i, "port", &value))
        {
            port = strtol(value, &end, 10);
            if (*end != '\0' || port < 1 || port > 65535)
            {
                fprintf(stderr, "mooncake_master (kvtier test double): --rpc_port=%s is not a port (1-65535)\n", value);
                return 2;
            }
        }
        else if (flag_value(argc, argv, &i, "default_kv_lease_ttl", &value))
        {
            lease_ttl_ms = strtoll(value, &end, 10);
            if (*end != '\0' || lease_ttl_ms < 0)
            {
                fprintf(stderr, "mooncake_master (kvtier test double): --default_kv_lease_ttl=%s is not milliseconds (>= 0)\n", value);
                return 2;
            }
        }
        else
        {
            int known = 0;
            for (int k = 0; ignored[k] != NULL && !known; k++)
            {
                known = flag_value(argc, argv, &i, ignored[k], &value);
            }
            if (!known)
            {
                fprintf(stderr, "mooncake_master (kvtier test double): unknown flag %s; known: --rpc_address --rpc_port --port "
                        "--default_kv_lease_ttl, and ignored: --metrics_host --metrics_port --enable_http_metadata_server "
                        "--http_metadata_server_host --http_metadata_server_port --eviction_high_watermark_ratio --eviction_ratio "
                        "--client_ttl --cluster_id\n", argv[i]);
                return 2;
            }
        }
    }
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, address, &sa.sin_addr) != 1)
    {
        fprintf(stderr, "mooncake_master (kvtier test double): --rpc_address=%s is not an IPv4 address\n", address);
        return 2;
    }
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (listener < 0 || bind(listener, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(listener, 64) != 0)
    {
        perror("mooncake_master (kvtier test double): cannot listen");
        return 1;
    }
    printf("mooncake_master (kvtier test double, not Mooncake) listening on %s:%ld, lease %lld ms\n", address, port, (long long)lease_ttl_ms);
    fflush(stdout);
    for (;;)
    {
        const int fd = accept(listener, NULL, NULL);
        if (fd < 0)
        {
            usleep(10000); /* out of descriptors, say: wait rather than spin */
            continue;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &attr, serve, (void *)(intptr_t)fd) != 0)
        {
            close(fd);
        }
        pthread_attr_destroy(&attr);
    }
}

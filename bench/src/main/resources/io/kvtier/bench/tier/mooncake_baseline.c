/*
 * The baseline of `kvtier bench tier --backend mooncake`: the same batched puts and gets the Mooncake
 * tier makes (mooncake_store_batch_put_from, mooncake_store_batch_get_into, from and into one
 * registered buffer), made by a C program against the same libmooncake_store.so, so that the
 * difference between the two is what kvtier adds on top of the store's own client.
 *
 * kvtier compiles it at bench time:
 *   gcc -O2 -pthread -o mooncake_baseline mooncake_baseline.c -I$HOME/include -L$HOME/lib \
 *       -Wl,-rpath,$HOME/lib -lmooncake_store
 *
 * Modes:
 *   mooncake_baseline segment MASTER SEGMENT_BYTES
 *       Holds a segment of the store and nothing else: prints "READY" once set up, then waits until its
 *       standard input closes (or it is killed). With the clients holding no segment, every page the
 *       clients move crosses TCP to and from this process (one process would take a memcpy shortcut).
 *   mooncake_baseline client MASTER OP PAGE_BYTES PAGES QUEUE_DEPTH MAX_BATCH KEY_TAG
 *       A client with no segment. OP is write (puts PAGES new keys) or read (gets them back, checks them,
 *       then removes them). Like kvtier bench tier, QUEUE_DEPTH keys are in flight in batches of at most
 *       MAX_BATCH: one thread per batch, each taking the next keys as soon as its call returns. Keys are
 *       32 hex digits, KEY_TAG (16 hex digits) then the page's index, as long as the tier's keys.
 *       Before the clock starts, one batch of up to 16 other keys is put, read and removed (warm_up).
 *       Prints one JSON line: {"op":..,"page_bytes":..,"pages":..,"queue_depth":..,"batch":..,
 *       "bytes":..,"nanos":..,"failures":..,"first_error":..}; the time runs from the first call to
 *       the last return, setup and teardown excluded, as kvtier's.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store_c.h"

#define KEY_CHARS 32
#define LOCAL_BUFFER_BYTES (16ull << 20) /* the tier's default local-buffer-size */

static mooncake_store_t store;
static const char *op;
static uint64_t page_bytes;
static long pages;
static int depth;
static int max_batch;
static uint64_t key_tag;
static char *buffer;
static atomic_long next_key;
static atomic_long failures;
static atomic_long first_error;

static mooncake_replicate_config_t replicate = {.replica_num = 1}; /* the tier's defaults: 1 replica, no pins, no preference */

struct worker
{
    pthread_t thread;
    int first_slot;
    int slots;
};

static uint64_t now_nanos(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fail(long error)
{
    long none = 0;
    atomic_fetch_add(&failures, 1);
    atomic_compare_exchange_strong(&first_error, &none, error);
}

static void *run_worker(void *arg)
{
    const struct worker *w = arg;
    char (*keys)[KEY_CHARS + 1] = calloc((size_t)w->slots, KEY_CHARS + 1);
    const char **key_ptrs = calloc((size_t)w->slots, sizeof(char *));
    void **buffers = calloc((size_t)w->slots, sizeof(void *));
    size_t *sizes = calloc((size_t)w->slots, sizeof(size_t));
    int *put_results = calloc((size_t)w->slots, sizeof(int));
    int64_t *get_results = calloc((size_t)w->slots, sizeof(int64_t));
    const int write = strcmp(op, "write") == 0;
    for (int i = 0; i < w->slots; i++)
    {
        key_ptrs[i] = keys[i];
        buffers[i] = buffer + (uint64_t)(w->first_slot + i) * page_bytes;
        sizes[i] = page_bytes;
    }
    for (;;)
    {
        const long from = atomic_fetch_add(&next_key, w->slots);
        if (from >= pages)
        {
            break;
        }
        const int count = (int)(pages - from < w->slots ? pages - from : w->slots);
        for (int i = 0; i < count; i++)
        {
            snprintf(keys[i], KEY_CHARS + 1, "%016" PRIx64 "%016lx", key_tag, (unsigned long)(from + i));
        }
        if (write)
        {
            const int rc = mooncake_store_batch_put_from(store, key_ptrs, buffers, sizes, (size_t)count, &replicate, put_results);
            for (int i = 0; i < count; i++)
            {
                if (rc != 0 || put_results[i] != 0)
                {
                    fail(rc != 0 ? rc : put_results[i]);
                }
            }
        }
        else
        {
            const int rc = mooncake_store_batch_get_into(store, key_ptrs, buffers, sizes, (size_t)count, get_results);
            for (int i = 0; i < count; i++)
            {
                if (rc != 0 || get_results[i] != (int64_t)page_bytes)
                {
                    fail(rc != 0 ? rc : get_results[i]);
                }
            }
        }
    }
    free(get_results);
    free(put_results);
    free(sizes);
    free(buffers);
    free(key_ptrs);
    free(keys);
    return NULL;
}

/* A page's bytes: the same for every page, so a read can be checked against the first slot's pattern. */
static void fill_pattern(char *page)
{
    uint64_t x = 0x5EEDull;
    for (uint64_t at = 0; at + sizeof x <= page_bytes; at += sizeof x)
    {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(page + at, &x, sizeof x);
    }
}

/*
 * Untimed, before the clock starts: one batch of up to 16 pages put, read back and removed, so that the
 * handshake with the segment's process and the TCP connections are made, as kvtier's warm-up makes
 * them for its tier. Without it this process's first call would pay them and kvtier's would not.
 */
static void warm_up(void)
{
    const int count = depth < 16 ? depth : 16;
    char keys[16][KEY_CHARS + 1];
    const char *key_ptrs[16];
    void *buffers[16];
    size_t sizes[16];
    int put_results[16];
    int64_t get_results[16];
    for (int i = 0; i < count; i++)
    {
        snprintf(keys[i], KEY_CHARS + 1, "%016" PRIx64 "%016x", ~key_tag, i);
        key_ptrs[i] = keys[i];
        buffers[i] = buffer + (uint64_t)i * page_bytes;
        sizes[i] = page_bytes;
    }
    mooncake_store_batch_put_from(store, key_ptrs, buffers, sizes, (size_t)count, &replicate, put_results);
    mooncake_store_batch_get_into(store, key_ptrs, buffers, sizes, (size_t)count, get_results);
    char pattern_re[32];
    snprintf(pattern_re, sizeof pattern_re, "^%016" PRIx64, ~key_tag);
    mooncake_store_remove_by_regex(store, pattern_re, 1);
}

static int setup(const char *master, uint64_t segment_bytes)
{
    store = mooncake_store_create();
    if (store == NULL)
    {
        fprintf(stderr, "mooncake_store_create failed\n");
        return -1;
    }
    const int rc = mooncake_store_setup(store, "127.0.0.1", "P2PHANDSHAKE", segment_bytes, LOCAL_BUFFER_BYTES, "tcp", "", master);
    if (rc != 0)
    {
        fprintf(stderr, "mooncake_store_setup(master %s, segment %" PRIu64 ") returned %d\n", master, segment_bytes, rc);
        return -1;
    }
    return 0;
}

static int hold_segment(const char *master, uint64_t segment_bytes)
{
    if (setup(master, segment_bytes) != 0)
    {
        return 1;
    }
    printf("READY\n");
    fflush(stdout);
    char sink[256];
    while (fread(sink, 1, sizeof sink, stdin) > 0)
    {
        /* kvtier closes our standard input to stop us */
    }
    mooncake_store_destroy(store);
    return 0;
}

static int client(const char *master)
{
    if (setup(master, 0) != 0)
    {
        return 1;
    }
    const uint64_t buffer_bytes = page_bytes * (uint64_t)depth;
    buffer = aligned_alloc(4096, buffer_bytes);
    char *pattern = aligned_alloc(4096, page_bytes);
    if (buffer == NULL || pattern == NULL)
    {
        fprintf(stderr, "cannot allocate %" PRIu64 " bytes\n", buffer_bytes);
        return 1;
    }
    fill_pattern(pattern);
    const int write = strcmp(op, "write") == 0;
    const int reg = mooncake_store_register_buffer(store, buffer, buffer_bytes);
    if (reg != 0)
    {
        fprintf(stderr, "mooncake_store_register_buffer returned %d\n", reg);
        return 1;
    }
    warm_up();
    for (int slot = 0; slot < depth; slot++)
    {
        if (write)
        {
            memcpy(buffer + (uint64_t)slot * page_bytes, pattern, page_bytes);
        }
        else
        {
            memset(buffer + (uint64_t)slot * page_bytes, 0, page_bytes);
        }
    }
    const int batch = depth < max_batch ? depth : max_batch;
    const int workers = (depth + batch - 1) / batch;
    struct worker *w = calloc((size_t)workers, sizeof *w);
    const uint64_t start = now_nanos();
    for (int i = 0; i < workers; i++)
    {
        w[i].first_slot = i * batch;
        w[i].slots = depth - i * batch < batch ? depth - i * batch : batch;
        pthread_create(&w[i].thread, NULL, run_worker, &w[i]);
    }
    for (int i = 0; i < workers; i++)
    {
        pthread_join(w[i].thread, NULL);
    }
    const uint64_t nanos = now_nanos() - start;
    long mismatched = 0;
    if (!write)
    {
        const long used = pages < depth ? pages : depth;
        for (long slot = 0; slot < used; slot++)
        {
            mismatched += memcmp(buffer + (uint64_t)slot * page_bytes, pattern, page_bytes) != 0;
        }
        /* The pages are read: free the segment for the next case (untimed). */
        char pattern_re[32];
        snprintf(pattern_re, sizeof pattern_re, "^%016" PRIx64, key_tag);
        mooncake_store_remove_by_regex(store, pattern_re, 1);
    }
    printf("{\"op\":\"%s\",\"page_bytes\":%" PRIu64 ",\"pages\":%ld,\"queue_depth\":%d,\"batch\":%d,\"bytes\":%" PRIu64
           ",\"nanos\":%" PRIu64 ",\"failures\":%ld,\"first_error\":%ld,\"mismatched\":%ld}\n",
        op, page_bytes, pages, depth, batch, page_bytes * (uint64_t)pages, nanos, atomic_load(&failures), atomic_load(&first_error), mismatched);
    fflush(stdout);
    mooncake_store_unregister_buffer(store, buffer);
    mooncake_store_destroy(store);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: mooncake_baseline segment MASTER SEGMENT_BYTES\n"
                    "       mooncake_baseline client MASTER write|read PAGE_BYTES PAGES QUEUE_DEPTH MAX_BATCH KEY_TAG\n");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 4 && strcmp(argv[1], "segment") == 0)
    {
        return hold_segment(argv[2], strtoull(argv[3], NULL, 10));
    }
    if (argc == 9 && strcmp(argv[1], "client") == 0)
    {
        op = argv[3];
        page_bytes = strtoull(argv[4], NULL, 10);
        pages = strtol(argv[5], NULL, 10);
        depth = atoi(argv[6]);
        max_batch = atoi(argv[7]);
        key_tag = strtoull(argv[8], NULL, 16);
        if ((strcmp(op, "write") != 0 && strcmp(op, "read") != 0) || page_bytes == 0 || pages < 1 || depth < 1 || max_batch < 1)
        {
            usage();
            return 2;
        }
        return client(argv[2]);
    }
    usage();
    return 2;
}

/*
 * kvtier bench client in C: `kvtier bench ipc`'s one-key LOOKUP round trips timed in C, with nothing
 * between the timer and the C client library. Run by bench's CRoundTrips with
 *     kvtier_bench_client socket_path warmups iterations backoff|awake [batch_keys batches]
 *
 * The one-key part is python_round_trips.py's (bench's resources) call for call, so that its figures
 * and the Python binding's are of the same operation and differ only by what Python adds: a client of
 * 4 slots with the same namespace ("kvtier-bench/ipc-python", "bench/ipc", rank 0, no salt), the same
 * key (token 7, one token a page), the page reserved and, when this run reserved it, written and
 * committed with 8 bytes, then `warmups` lookups untimed and `iterations` timed, each on the monotonic
 * clock (Python's perf_counter_ns reads the same), each checked to have found its page in the pool.
 *
 * With batch_keys and batches, the batched part is bench's Java client's (IpcBenchClient), on a second
 * client of batch_keys slots: the chain of batch_keys one-token pages of tokens 0, 1, ... in that
 * client's namespace ("kvtier-bench/ipc"), reserved and committed unless already there (the Java client
 * of the same run has written them), a tenth of the batches (at least one) untimed, then `batches`
 * LOOKUPs of the whole chain timed together, every key found in the pool.
 *
 * `backoff` is the client's default wait (KVT_WAIT_BACKOFF), `awake` KVT_WAIT_AWAKE; a lookup of 64
 * keys or more waits as the back-off whatever was chosen (kvtier_client.h).
 *
 * Stdout, on success, one line, nanoseconds:
 *     kvtier-c-bench <round trips> <p50> <p99> <p99.9> <max> <batched keys> <batched nanos>
 * (the last two 0 without a batched part). On a failure: a message on stderr naming the call that
 * failed and its error code's name, and exit code 1; 2 for arguments it cannot read.
 */
#include "kvtier_client.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ONE_KEY_MODEL "kvtier-bench/ipc-python"
#define BATCH_MODEL "kvtier-bench/ipc"
#define LAYOUT "bench/ipc"
#define ONE_KEY_TOKEN 7u
#define ONE_KEY_SLOTS 4u
#define PAGE_BYTES 8
#define MAX_BATCH_KEYS 65536L

static kvt_client *client;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void fail_call(const char *call)
{
    fprintf(stderr, "kvtier_bench_client: %s failed: %s (%s)\n", call, kvt_error_name(kvt_last_error(client)),
            kvt_last_error_message(client));
    exit(1);
}

static void fail(const char *message)
{
    fprintf(stderr, "kvtier_bench_client: %s\n", message);
    exit(1);
}

static long parse_count(const char *text, const char *name, long min, long max)
{
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
        fprintf(stderr, "kvtier_bench_client: %s=%s is not a whole number in %ld..%ld\n", name, text, min, max);
        exit(2);
    }
    return value;
}

/* Reserves keys[0..count) in slots [0, count), and writes and commits the pages this call reserved; keys
 * already in the pool (EXISTS) are left as they are. */
static void put_pages(const kvt_key *keys, int32_t count, int32_t *lengths)
{
    int reserved = kvt_reserve(client, 0, 0, keys, count, NULL);
    if (reserved < 0) {
        fail_call("kvt_reserve");
    }
    if (reserved == 0) {
        return;
    }
    for (int32_t i = 0; i < count; i++) {
        lengths[i] = PAGE_BYTES;
        if (kvt_slot_status(client, i) == KVT_PAGE_RESERVED) {
            /* The bytes do not matter, only the key's presence in the pool; these are the Python script's. */
            memset(kvt_slot_addr(client, i), 0x01, PAGE_BYTES);
        }
    }
    /* Slots not reserved (EXISTS, ...) answer NONE to the commit and keep nothing. */
    if (kvt_commit(client, 0, count, lengths, NULL) < 0) {
        fail_call("kvt_commit");
    }
}

/* Connects with the one namespace `root` and `max_keys` slots, waiting as `wait` says. */
static void attach(const char *socket_path, const kvt_key *root, uint32_t max_keys, int wait)
{
    int error = KVT_OK;
    char message[512] = "";
    client = kvt_connect(socket_path, root, 1, max_keys, &error, message, sizeof message);
    if (client == NULL) {
        fprintf(stderr, "kvtier_bench_client: kvt_connect failed: %s (%s)\n", kvt_error_name(error), message);
        exit(1);
    }
    if (kvt_set_wait(client, wait) != 0) {
        fail_call("kvt_set_wait");
    }
}

static void detach(void)
{
    const int rc = kvt_close(client);
    client = NULL;
    if (rc != 0) {
        /* The client is freed whatever kvt_close returns: there is no last error left to name. */
        fail("kvt_close failed: its CLOSE could not be exchanged with the engine");
    }
}

static int compare_samples(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The exact percentile: one of the samples (sorted ascending), not an estimate from buckets, picked by
 * python_round_trips.py's rank rule, round(p / 100 * n + 0.5) - 1 clamped to the samples, in the same
 * double arithmetic and rounding half to even as Python's round() does, so that both programs report
 * the same statistic of their samples. */
static int64_t percentile(const int64_t *sorted, size_t n, double p)
{
    double x = p / 100.0 * (double)n + 0.5;
    long long whole = (long long)x; /* x >= 0.5: truncation is the floor */
    double fraction = x - (double)whole;
    long long rank = whole + ((fraction > 0.5 || (fraction == 0.5 && (whole & 1))) ? 1 : 0);
    long long index = rank - 1;
    if (index < 0) {
        index = 0;
    }
    if (index > (long long)n - 1) {
        index = (long long)n - 1;
    }
    return sorted[index];
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 7) {
        fprintf(stderr, "usage: %s socket_path warmups iterations backoff|awake [batch_keys batches]\n", argv[0]);
        return 2;
    }
    const char *socket_path = argv[1];
    const long warmups = parse_count(argv[2], "warmups", 0, 1000000000L);
    const long iterations = parse_count(argv[3], "iterations", 1, 1000000000L);
    int wait;
    if (strcmp(argv[4], "backoff") == 0) {
        wait = KVT_WAIT_BACKOFF;
    } else if (strcmp(argv[4], "awake") == 0) {
        wait = KVT_WAIT_AWAKE;
    } else {
        fprintf(stderr, "kvtier_bench_client: wait=%s is neither backoff nor awake\n", argv[4]);
        return 2;
    }
    const long batch_keys = argc == 7 ? parse_count(argv[5], "batch_keys", 1, MAX_BATCH_KEYS) : 0;
    const long batches = argc == 7 ? parse_count(argv[6], "batches", 1, 1000000000L) : 0;

    kvt_key one_key_root, batch_root;
    kvt_namespace_root(ONE_KEY_MODEL, LAYOUT, 0, "", &one_key_root);
    kvt_namespace_root(BATCH_MODEL, LAYOUT, 0, "", &batch_root);
    const size_t page_keys_room = (size_t)(batch_keys > 1 ? batch_keys : 1);
    kvt_key *keys = malloc(sizeof(kvt_key) * page_keys_room);
    int32_t *lengths = malloc(sizeof(int32_t) * page_keys_room);
    uint32_t *tokens = malloc(sizeof(uint32_t) * page_keys_room);
    int64_t *samples = malloc(sizeof(int64_t) * (size_t)iterations);
    if (keys == NULL || lengths == NULL || tokens == NULL || samples == NULL) {
        fail("out of memory");
    }

    /* The one-key part on a client of its own, with the Python script's namespace and slot count. */
    attach(socket_path, &one_key_root, ONE_KEY_SLOTS, wait);
    kvt_key one_key;
    const uint32_t one_token = ONE_KEY_TOKEN;
    if (kvt_page_keys(&one_key_root, &one_token, 1, 1, 0, &one_key, 1) != 1) {
        fail("kvt_page_keys gave no key for the one-token page");
    }
    put_pages(&one_key, 1, lengths);
    kvt_result result;
    for (long i = 0; i < warmups + iterations; i++) {
        const int64_t start = now_ns();
        const int rc = kvt_lookup(client, 0, 0, &one_key, 1, &result);
        const int64_t elapsed = now_ns() - start;
        if (rc < 0) {
            fail_call("kvt_lookup");
        }
        if (result.pool_pages != 1) {
            char text[128];
            snprintf(text, sizeof text, "the one-key lookup found %d pages, not 1", result.pool_pages);
            fail(text);
        }
        if (i >= warmups) {
            samples[i - warmups] = elapsed;
        }
    }
    detach();
    qsort(samples, (size_t)iterations, sizeof(int64_t), compare_samples);

    /* The batched part on another, with the Java client's namespace and slot count. */
    long long batched_keys = 0;
    int64_t batched_nanos = 0;
    if (batch_keys > 0) {
        attach(socket_path, &batch_root, (uint32_t)batch_keys, wait);
        for (long i = 0; i < batch_keys; i++) {
            tokens[i] = (uint32_t)i;
        }
        if (kvt_page_keys(&batch_root, tokens, (size_t)batch_keys, 1, 0, keys, (size_t)batch_keys) != batch_keys) {
            fail("kvt_page_keys gave fewer keys than the chain has pages");
        }
        put_pages(keys, (int32_t)batch_keys, lengths);
        const long batch_warmups = batches / 10 > 1 ? batches / 10 : 1;
        for (long i = 0; i < batch_warmups; i++) {
            if (kvt_lookup(client, 0, 0, keys, (int32_t)batch_keys, &result) < 0) {
                fail_call("kvt_lookup");
            }
        }
        const int64_t start = now_ns();
        for (long i = 0; i < batches; i++) {
            if (kvt_lookup(client, 0, 0, keys, (int32_t)batch_keys, &result) < 0) {
                fail_call("kvt_lookup");
            }
            batched_keys += result.pool_pages;
        }
        batched_nanos = now_ns() - start;
        detach();
        if (batched_keys != (long long)batches * batch_keys) {
            char text[160];
            snprintf(text, sizeof text, "the batched lookups found %lld of %lld keys in the pool", batched_keys,
                     (long long)batches * batch_keys);
            fail(text);
        }
    }

    printf("kvtier-c-bench %ld %lld %lld %lld %lld %lld %lld\n", iterations, (long long)percentile(samples, (size_t)iterations, 50),
           (long long)percentile(samples, (size_t)iterations, 99), (long long)percentile(samples, (size_t)iterations, 99.9),
           (long long)samples[iterations - 1], batched_keys, (long long)batched_nanos);
    free(samples);
    free(tokens);
    free(lengths);
    free(keys);
    return 0;
}

/*
 * kvtier demo client in C: WorkloadClientProcess's pipe protocol over the C client library.
 *
 * Run by `kvtier demo --ipc --client c` (ProcessWorkloadClient.startC) with:
 *     kvtier_demo_client socket_path page_tokens model_id kv_layout
 * The C twin of bench's python_demo_client.py: it attaches to the engine, then serves the prompts its
 * parent writes on stdin (big-endian int length, then that many big-endian int tokens) in two round
 * trips, as the Java demo clients do: key the prompt, LOOKUP_AND_LOCK (the cached prefix pinned, the
 * rest reserved), check every byte of the pinned prefix against the key's pattern (bench's
 * PagePattern: SplitMix64 seeded by the key, little-endian), write the reserved pages, then
 * COMMIT_AND_RELEASE. Each answer is READY, the number of steps (8) and the request's tally,
 * big-endian, as RequestTally.writeTo writes it; the combined requests are clocked under the steps
 * acquire and commit, as the Java clients clock them. A failure is FAILED, a u16 length and the
 * message (readUTF).
 */
#include "kvtier_client.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define READY 0x4B565452u
#define FAILED 0x4641494Cu
#define MAX_KEYS 4096u
#define GOLDEN 0x9E3779B97F4A7C15ull
#define MIX1 0xBF58476D1CE4E5B9ull
#define MIX2 0x94D049BB133111EBull

/* ClientStep order */
enum { KEYS, LOOKUP, ACQUIRE, VERIFY, RELEASE, RESERVE, FILL, COMMIT, STEPS };

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* PagePattern.fill: SplitMix64 from high ^ rotl(low, 17), each word little-endian. */
static void pattern(const kvt_key *key, uint8_t *out, size_t length)
{
    uint64_t high = be64(key->bytes), low = be64(key->bytes + 8);
    uint64_t state = high ^ ((low << 17) | (low >> 47));
    size_t n = length / 8;
    for (size_t i = 0; i < n; i++) {
        state += GOLDEN;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * MIX1;
        z = (z ^ (z >> 27)) * MIX2;
        z ^= z >> 31;
        for (int b = 0; b < 8; b++) {
            out[i * 8 + b] = (uint8_t)(z >> (8 * b));
        }
    }
}

static int write_all(const void *data, size_t n)
{
    return fwrite(data, 1, n, stdout) == n ? 0 : -1;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (24 - 8 * i));
    }
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (56 - 8 * i));
    }
}

static void write_word(uint32_t word)
{
    uint8_t b[4];
    put_be32(b, word);
    write_all(b, 4);
}

static void fail(const char *message)
{
    size_t n = strlen(message);
    if (n > 20000) {
        n = 20000;
    }
    uint8_t head[6];
    put_be32(head, FAILED);
    head[4] = (uint8_t)(n >> 8);
    head[5] = (uint8_t)n;
    write_all(head, 6);
    write_all(message, n);
    fflush(stdout);
}

static void fail_call(kvt_client *c, const char *what)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s failed: %s (%s)", what, kvt_error_name(kvt_last_error(c)), kvt_last_error_message(c));
    fail(msg);
}

/* Reads exactly n bytes; 0 at a clean end of input, -1 on a short read. */
static int read_exactly(void *buf, size_t n)
{
    size_t got = fread(buf, 1, n, stdin);
    return got == n ? 1 : (got == 0 ? 0 : -1);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s socket_path page_tokens model_id kv_layout\n", argv[0]);
        return 2;
    }
    const char *socket_path = argv[1];
    uint32_t page_tokens = (uint32_t)strtoul(argv[2], NULL, 10);
    kvt_key root;
    kvt_namespace_root(argv[3], argv[4], 0, "", &root);
    int err = 0;
    char message[512] = "";
    kvt_client *c = kvt_connect(socket_path, &root, 1, MAX_KEYS, &err, message, sizeof message);
    if (c == NULL) {
        char text[1024];
        snprintf(text, sizeof text, "cannot attach to the engine: %s (%s)", kvt_error_name(err), message);
        fail(text);
        return 1;
    }
    const uint32_t page_size = kvt_page_size(c);
    uint8_t *expected = malloc(page_size);
    uint32_t *tokens = NULL;
    size_t tokens_cap = 0;
    kvt_key *keys = malloc(sizeof(kvt_key) * MAX_KEYS);
    int32_t *lengths = malloc(sizeof(int32_t) * MAX_KEYS);
    int rc = 0;
    if (expected == NULL || keys == NULL || lengths == NULL) {
        fail("out of memory");
        rc = 1;
        goto done;
    }
    write_word(READY);
    fflush(stdout);
    for (;;) {
        uint8_t head[4];
        int r = read_exactly(head, 4);
        if (r <= 0) {
            break;
        }
        uint32_t length = ((uint32_t)head[0] << 24) | ((uint32_t)head[1] << 16) | ((uint32_t)head[2] << 8) | head[3];
        if (length > tokens_cap) {
            free(tokens);
            tokens_cap = length;
            tokens = malloc(sizeof(uint32_t) * tokens_cap);
            if (tokens == NULL) {
                fail("out of memory");
                rc = 1;
                goto done;
            }
        }
        for (uint32_t i = 0; i < length; i++) {
            uint8_t t[4];
            if (read_exactly(t, 4) != 1) {
                rc = 1;
                goto done;
            }
            tokens[i] = ((uint32_t)t[0] << 24) | ((uint32_t)t[1] << 16) | ((uint32_t)t[2] << 8) | t[3];
        }
        int64_t steps[STEPS] = {0};
        int64_t hit_l2 = 0, hit_l3 = 0, written = 0, verified = 0, corrupt = 0, not_cached = 0;
        int64_t t0 = now_ns();
        int64_t n = kvt_page_keys(&root, tokens, length, page_tokens, 0, keys, MAX_KEYS);
        if (n < 0 || n > (int64_t)MAX_KEYS) {
            char text[128];
            snprintf(text, sizeof text, "a prompt of %u tokens has %lld pages (at most %u)", length, (long long)n, MAX_KEYS);
            fail(text);
            rc = 1;
            goto done;
        }
        int64_t t = now_ns(), t1;
        steps[KEYS] += t - t0;
        int32_t cached = 0;
        if (n > 0) {
            /* Two round trips a request, as the Java demo clients make them: LOOKUP_AND_LOCK pins the cached
             * prefix and reserves the rest (clocked as ACQUIRE), COMMIT_AND_RELEASE publishes what was
             * written and drops the pins (clocked as COMMIT). */
            kvt_result result;
            cached = kvt_lookup_and_lock(c, 0, 0, keys, (int32_t)n, KVT_RESERVE_ALL, &result);
            if (cached < 0) {
                fail_call(c, "LOOKUP_AND_LOCK");
                rc = 1;
                goto done;
            }
            t1 = now_ns(); steps[ACQUIRE] += t1 - t; t = t1;
            hit_l2 += result.from_pool;
            hit_l3 += result.from_l3;
            for (int32_t i = 0; i < cached; i++) {
                const void *page = kvt_slot_addr(c, i);
                pattern(&keys[i], expected, page_size);
                if (page != NULL && memcmp(page, expected, page_size) == 0) {
                    verified++;
                } else {
                    corrupt++;
                }
            }
            t1 = now_ns(); steps[VERIFY] += t1 - t; t = t1;
            for (int32_t i = 0; i < (int32_t)n; i++) {
                /* Read only for a reserved slot; any length 1..page size is valid for the others. */
                lengths[i] = (int32_t)page_size;
                if (i < cached) {
                    continue;
                }
                int32_t status = kvt_slot_status(c, i);
                if (status == KVT_PAGE_RESERVED) {
                    void *page = kvt_slot_addr(c, i);
                    if (page == NULL) {
                        fail("LOOKUP_AND_LOCK answered a reserved slot without a page");
                        rc = 1;
                        goto done;
                    }
                    pattern(&keys[i], page, page_size);
                } else if (status != KVT_PAGE_EXISTS) {
                    not_cached++;
                }
            }
            t1 = now_ns(); steps[FILL] += t1 - t; t = t1;
            if (kvt_commit_and_release(c, 0, (int32_t)n, lengths, 0, &result) < 0) {
                fail_call(c, "COMMIT_AND_RELEASE");
                rc = 1;
                goto done;
            }
            written += result.result_count;
            steps[COMMIT] += now_ns() - t;
        }
        int64_t latency = now_ns() - t0;
        uint8_t answer[8 + (8 + STEPS) * 8];
        int64_t tally[8] = {n, hit_l2, hit_l3, written, verified, corrupt, not_cached, latency};
        put_be32(answer, READY);
        put_be32(answer + 4, STEPS);
        for (int i = 0; i < 8; i++) {
            put_be64(answer + 8 + 8 * i, (uint64_t)tally[i]);
        }
        for (int i = 0; i < STEPS; i++) {
            put_be64(answer + 8 + 64 + 8 * i, (uint64_t)steps[i]);
        }
        if (write_all(answer, sizeof answer) != 0 || fflush(stdout) != 0) {
            rc = 1;
            goto done;
        }
    }
done:
    free(tokens);
    free(keys);
    free(lengths);
    free(expected);
    kvt_close(c);
    return rc;
}

/*
 * The chaos campaign's page bytes and request draws, restated in C from bench's Java
 * (io.kvtier.bench.workload.PagePattern and java.util.SplittableRandom), so that a C client checks
 * a page written by a Java or Python client, and draws the same requests from the same seed.
 * test/kvtier_client_test.c checks both against values the Java code produces (the same values
 * bench's ChaosClientVectorsTest asserts of the Java), so a drift on either side fails a test.
 */
#ifndef KVTIER_CHAOS_PAGE_PATTERN_H
#define KVTIER_CHAOS_PAGE_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define KVT_PATTERN_GAMMA 0x9E3779B97F4A7C15ull

/* A key's halves as docs/keys.md reads them: bytes 0..7 and 8..15, big-endian. */
static inline uint64_t kvt_pattern_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* SplitMix64's finaliser, as PagePattern.next. */
static inline uint64_t kvt_pattern_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* PagePattern's starting state: high ^ rotl(low, 17). */
static inline uint64_t kvt_pattern_start(uint64_t high, uint64_t low)
{
    return high ^ ((low << 17) | (low >> 47));
}

/* The word at `at` (a multiple of 8), little-endian as the Java writes it (its native order on the
 * machines the engine runs on). */
static inline void kvt_pattern_put(uint8_t *page, size_t at, uint64_t word)
{
    for (int b = 0; b < 8; b++) {
        page[at + (size_t)b] = (uint8_t)(word >> (8 * b));
    }
}

static inline uint64_t kvt_pattern_get(const uint8_t *page, size_t at)
{
    uint64_t word = 0;
    for (int b = 7; b >= 0; b--) {
        word = (word << 8) | page[at + (size_t)b];
    }
    return word;
}

/* PagePattern.fill: the key's pattern into the first `length` bytes (a multiple of 8) of `page`. */
static inline void kvt_pattern_fill(void *page, uint64_t high, uint64_t low, size_t length)
{
    uint64_t state = kvt_pattern_start(high, low);
    for (size_t at = 0; at < length; at += 8) {
        state += KVT_PATTERN_GAMMA;
        kvt_pattern_put((uint8_t *)page, at, kvt_pattern_mix(state));
    }
}

/* PagePattern.matches: 1 when every one of the first `length` bytes is the key's pattern. */
static inline int kvt_pattern_matches(const void *page, uint64_t high, uint64_t low, size_t length)
{
    uint64_t state = kvt_pattern_start(high, low);
    for (size_t at = 0; at < length; at += 8) {
        state += KVT_PATTERN_GAMMA;
        if (kvt_pattern_get((const uint8_t *)page, at) != kvt_pattern_mix(state)) {
            return 0;
        }
    }
    return 1;
}

/* java.util.SplittableRandom from one seed (its golden gamma), as far as the chaos client draws. */
typedef struct kvt_split_random {
    uint64_t seed;
} kvt_split_random;

/* SplittableRandom's mix32 of the next seed: its nextInt(). */
static inline int32_t kvt_random_next_int(kvt_split_random *r)
{
    r->seed += KVT_PATTERN_GAMMA;
    uint64_t z = r->seed;
    z = (z ^ (z >> 33)) * 0x62A9D9ED799705F5ull;
    return (int32_t)(uint32_t)(((z ^ (z >> 28)) * 0xCB24D0A5C88C35B3ull) >> 32);
}

/* nextInt(bound), bound > 0, as the JDK bounds it: a mask for a power of two, else a rejection loop
 * on the upper 31 bits. */
static inline int32_t kvt_random_next_bounded(kvt_split_random *r, int32_t bound)
{
    int32_t m = bound - 1;
    uint32_t u = (uint32_t)kvt_random_next_int(r);
    if ((bound & m) == 0) {
        return (int32_t)(u & (uint32_t)m);
    }
    for (u >>= 1;; u = (uint32_t)kvt_random_next_int(r) >> 1) {
        int32_t v = (int32_t)(u % (uint32_t)bound);
        /* Java's u + m - v < 0: the sum overflows int. */
        if ((int64_t)u + m - v <= INT32_MAX) {
            return v;
        }
    }
}

#endif

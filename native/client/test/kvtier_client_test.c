/* Tests of the kvtier C client.
 *
 *   kvtier_client_test                  codecs against docs/ipc-protocol.md's diagrams, the ring
 *                                       (wrap, padding, full), SHA-256 and docs/keys.md's vectors
 *   kvtier_client_test --socket PATH    then end to end against the engine listening on PATH:
 *                                       reserve, write, commit, acquire, bytes equal; a stale
 *                                       request id answered STALE_REQUEST_ID; stats; close
 * Exit status 0 when every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvt_internal.h"

static int failures, checks;

#define CHECK(cond, ...)                                                 \
    do {                                                                 \
        checks++;                                                        \
        if (!(cond)) {                                                   \
            failures++;                                                  \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                \
            fprintf(stderr, "\n");                                       \
        }                                                                \
    } while (0)

static void hex(const uint8_t *b, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static void from_hex(const char *s, uint8_t *out, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

/* ---- SHA-256 and keys ---- */

static void sha_vector(const char *input, size_t repeat, const char *expected) {
    kvt_sha256 s;
    uint8_t d[32];
    char h[65];
    kvt_sha256_init(&s);
    for (size_t i = 0; i < repeat; i++) kvt_sha256_update(&s, input, strlen(input));
    kvt_sha256_final(&s, d);
    hex(d, 32, h);
    CHECK(strcmp(h, expected) == 0, "SHA-256 of \"%s\" x%zu: %s, expected %s", input, repeat, h, expected);
}

static void test_sha256(void) {
    sha_vector("", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha_vector("abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha_vector("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
               "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    sha_vector("a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

struct key_vector {
    const char *name, *model, *layout, *salt;
    uint32_t rank, per_page;
    uint32_t tokens[40];
    size_t n_tokens;
    const char *root;
    const char *keys[3];
    int n_keys;
};

static void check_vector(const struct key_vector *v) {
    kvt_key root, keys[4];
    char h[33];
    kvt_namespace_root(v->model, v->layout, v->rank, v->salt, &root);
    kvt_key_hex(&root, h);
    CHECK(strcmp(h, v->root) == 0, "%s: root %s, expected %s", v->name, h, v->root);
    int64_t n = kvt_page_keys(&root, v->tokens, v->n_tokens, v->per_page, 1, keys, 4);
    CHECK(n == v->n_keys, "%s: %lld pages, expected %d", v->name, (long long)n, v->n_keys);
    for (int i = 0; i < v->n_keys && i < n; i++) {
        kvt_key_hex(&keys[i], h);
        CHECK(strcmp(h, v->keys[i]) == 0, "%s: key %d %s, expected %s", v->name, i, h, v->keys[i]);
    }
    /* without the partial last page, and through kvt_compute_keys */
    kvt_key full[4];
    int64_t m = kvt_compute_keys(v->model, v->layout, v->rank, v->salt, v->tokens, v->n_tokens, v->per_page, 0, full, 4);
    CHECK(m == (int64_t)(v->n_tokens / v->per_page), "%s: %lld full pages", v->name, (long long)m);
    for (int i = 0; i < m; i++) CHECK(memcmp(full[i].bytes, keys[i].bytes, 16) == 0, "%s: full key %d", v->name, i);
}

static void test_keys(void) {
    struct key_vector v[4] = {
        {"basic", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", "", 0, 16, {0}, 40,
         "0d8d5b6bec68e56e0fbbc9d39dcc0d8a",
         {"a306ce302f3ed8d29a2b9b308d8a004e", "de9d1e0f01328e3c5d91aee32a7a6c74", "8b6ea36129dca0a99cd04d48645f869d"}, 3},
        {"tenant salt", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", "tenant-a", 0, 16, {0}, 40,
         "02f0fbc3dbf959653fa7440cc0d3540b",
         {"111b2ca5a20b5eb5192b6a75129009f1", "2308a94ef5b62283e4b1e317eb1599ab", "3e693d53b1b9dc29970298f01a01e3d5"}, 3},
        {"tp rank 1", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp2", "", 1, 16, {0}, 40,
         "f6e18b73798c10bacc34f49cd4d8b89c",
         {"b3a2734ccb8c8046474967b920b473fa", "fdeca7856aee0e9d83b1955a665d08dc", "9bb1242cc2e1ab29b2150b676bfe5581"}, 3},
        {"large ids", "Qwen/Qwen3-8B", "fp8/page4", "", 3, 4, {0, 151643, 4294967295u, 7, 9}, 5,
         "40737e99457318b2b3f67d7364f833d5",
         {"21d0ab516d55c6518418204168398d40", "59ea6f9fca8bf76b7bf844e318fcee24", NULL}, 2},
    };
    for (int k = 0; k < 3; k++)
        for (uint32_t i = 0; i < 40; i++) v[k].tokens[i] = i;
    for (int k = 0; k < 4; k++) check_vector(&v[k]);
    /* NULL salt is the empty salt; 0 tokens per page is refused; max_keys bounds the writes */
    kvt_key a, b, few[1];
    kvt_namespace_root("m", "l", 0, NULL, &a);
    kvt_namespace_root("m", "l", 0, "", &b);
    CHECK(memcmp(a.bytes, b.bytes, 16) == 0, "NULL salt differs from \"\"");
    uint32_t t[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(kvt_page_keys(&a, t, 8, 0, 1, few, 1) == -1, "tokens per page 0");
    CHECK(kvt_page_keys(&a, t, 8, 2, 1, few, 1) == 4, "4 pages counted with room for 1");
}

/* ---- codecs ---- */

static void test_hello(void) {
    kvt_key ns[2];
    for (int i = 0; i < 16; i++) { ns[0].bytes[i] = (uint8_t)i; ns[1].bytes[i] = (uint8_t)(0xf0 + i); }
    uint8_t out[24 + 32];
    size_t n = kvt_encode_hello(out, 256, ns, 2, 0x01020304);
    CHECK(n == 56, "HELLO length %zu", n);
    /* offset 0 magic "HELL"; 4 major 1, minor 0; 8 max keys; 12 N; 16 pid; 20 reserved; 24 roots */
    const char *expected = "48454c4c" "01000000" "00010000" "02000000" "04030201" "00000000"
                           "000102030405060708090a0b0c0d0e0f" "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    char h[2 * 56 + 1];
    hex(out, n, h);
    CHECK(strcmp(h, expected) == 0, "HELLO bytes %s", h);
    CHECK(memcmp(out, "HELL", 4) == 0, "HELLO magic reads \"HELL\"");
}

static size_t put_path(uint8_t *p, const char *s) {
    kvt_put_u32(p, (uint32_t)strlen(s));
    memcpy(p + 4, s, strlen(s));
    return 4 + strlen(s);
}

static void test_welcome(void) {
    uint8_t b[256];
    memset(b, 0, sizeof b);
    /* byte by byte as the diagram draws it */
    from_hex("454c5743" "00000000" "07000000" "40000000" "0807060504030201" "00100000" "80000000"
             "0020000000000000" "4010000000000000" "00000400" "30750000" "20100000" "00000000" "0000000000000000",
             b, 72);
    size_t n = 72;
    n += put_path(b + n, "/dev/shm/p");
    n += put_path(b + n, "/dev/shm/p.ipc");
    n += put_path(b + n, "/dev/shm/p.client-7-ab");
    kvt_welcome w;
    CHECK(memcmp(b, "ELWC", 4) == 0, "WELCOME magic reads \"ELWC\"");
    for (size_t part = 0; part < n; part++)
        CHECK(kvt_decode_welcome(b, part, &w) == 0, "a WELCOME cut at %zu bytes is incomplete", part);
    CHECK(kvt_decode_welcome(b, n, &w) == 1, "complete WELCOME");
    CHECK(w.status == 0 && w.client_id == 7 && w.max_keys == 64, "status %u client %u max keys %u", w.status, w.client_id, w.max_keys);
    CHECK(w.epoch == 0x0102030405060708ull, "epoch %llx", (unsigned long long)w.epoch);
    CHECK(w.page_size == 4096 && w.page_count == 128, "page size %u count %u", w.page_size, w.page_count);
    CHECK(w.data_offset == 8192 && w.frame_length == 4160, "data offset %llu frame %llu",
          (unsigned long long)w.data_offset, (unsigned long long)w.frame_length);
    CHECK(w.ring_capacity == 262144 && w.client_timeout_ms == 30000 && w.max_message_length == 4128,
          "ring %u timeout %u max message %u", w.ring_capacity, w.client_timeout_ms, w.max_message_length);
    CHECK(w.pool_path_len == 10 && memcmp(w.pool_path, "/dev/shm/p", 10) == 0, "pool path");
    CHECK(w.control_path_len == 14 && memcmp(w.control_path, "/dev/shm/p.ipc", 14) == 0, "control path");
    CHECK(w.ring_path_len == 22 && memcmp(w.ring_path, "/dev/shm/p.client-7-ab", 22) == 0, "ring path");

    /* a refusal: status, then one path-shaped field with the message */
    uint8_t r[128];
    memset(r, 0, sizeof r);
    kvt_put_u32(r, KVT_WELCOME_MAGIC);
    kvt_put_u32(r + 4, KVT_NOT_ALLOWED);
    size_t m = 72 + put_path(r + 72, "uid 1001 not allowed");
    CHECK(kvt_decode_welcome(r, m - 1, &w) == 0, "refusal cut short");
    CHECK(kvt_decode_welcome(r, m, &w) == 1, "refusal complete");
    CHECK(w.status == 33 && w.message_len == 20 && memcmp(w.message, "uid 1001 not allowed", 20) == 0, "refusal message");
    r[0] = 'X';
    CHECK(kvt_decode_welcome(r, m, &w) == -1, "wrong magic");
}

static void test_request_header(void) {
    uint8_t out[32];
    kvt_encode_request_header(out, 32 + 48, KVT_OP_ACQUIRE, 0x1122334455667788ull, 5, 3, 2, KVT_FLAG_KEYS_IN_SLOTS);
    char h[65];
    hex(out, 32, h);
    /* Length 80; Type 3; Request Id; First Slot 5; Count 3; Namespace 2, Flags 1; Reserved */
    const char *expected = "50000000" "03000000" "8877665544332211" "05000000" "03000000" "0200" "0100" "00000000";
    CHECK(strcmp(h, expected) == 0, "request header %s", h);
}

static void test_response(void) {
    uint8_t b[48 + 24];
    memset(b, 0, sizeof b);
    int32_t header[12] = {72, KVT_OP_ACQUIRE, 9, 0, 0, 2, 4, 2, 0, 0, 1, 1};
    for (int i = 0; i < 12; i++) kvt_put_u32(b + 4 * i, (uint32_t)header[i]);
    kvt_put_u64(b + 8, 0x0a0b0c0d0e0f1011ull); /* Request Id spans offsets 8..15 */
    kvt_put_u32(b + 16, 0);                    /* Status */
    kvt_put_u32(b + 20, 2);                    /* Result Count */
    int32_t entries[6] = {17, 3, KVT_PAGE_PINNED, 42, 9, KVT_PAGE_PINNED_FROM_L3};
    for (int i = 0; i < 6; i++) kvt_put_u32(b + 48 + 4 * i, (uint32_t)entries[i]);
    kvt_response r;
    CHECK(kvt_decode_response(b, 72, &r) == 0, "response decodes");
    CHECK(r.length == 72 && r.type == KVT_OP_ACQUIRE && r.request_id == 0x0a0b0c0d0e0f1011ull, "response header");
    CHECK(r.result.status == 0 && r.result.result_count == 2 && r.result.first_slot == 4 && r.result.entry_count == 2,
          "status %d count %d first %d entries %d", r.result.status, r.result.result_count, r.result.first_slot, r.result.entry_count);
    CHECK(r.result.from_pool == 1 && r.result.from_l3 == 1 && r.result.pool_pages == 0, "from pool / L3");
    CHECK(kvt_get_u32(r.entries + 12) == 42 && kvt_get_u32(r.entries + 20) == KVT_PAGE_PINNED_FROM_L3, "second entry");
    CHECK(kvt_decode_response(b, 71, &r) == -1, "Length differs from the record");
    kvt_put_u32(b + 28, 3);
    CHECK(kvt_decode_response(b, 72, &r) == -1, "more entries than bytes");
    CHECK(kvt_decode_response(b, 40, &r) == -1, "shorter than the header");
}

/* ---- the ring ---- */

static void record(uint8_t *rec, uint32_t length, int32_t type, uint8_t fill) {
    memset(rec, fill, length);
    kvt_put_u32(rec, length);
    kvt_put_u32(rec + 4, (uint32_t)type);
}

static void test_ring(void) {
    uint8_t data[64];
    _Atomic uint64_t tail = 0, head = 0;
    kvt_ring r = {data, 64, &tail, &head};
    uint8_t rec[64];
    const uint8_t *got;
    uint32_t len;

    CHECK(kvt_ring_peek(&r, &got, &len) == 0, "empty ring");
    record(rec, 20, 5, 0xa1); /* takes align8(20) = 24 */
    CHECK(kvt_ring_offer(&r, rec, 20) == 1 && tail == 24, "first record: tail %llu", (unsigned long long)tail);
    record(rec, 24, 6, 0xa2);
    CHECK(kvt_ring_offer(&r, rec, 24) == 1 && tail == 48, "second record: tail %llu", (unsigned long long)tail);
    /* 16 bytes left in the lap, 48 in use: a 24-byte record needs 16 padding + 24 > 64 - 48: full */
    record(rec, 24, 7, 0xa3);
    CHECK(kvt_ring_offer(&r, rec, 24) == 0 && tail == 48, "full: nothing written, tail %llu", (unsigned long long)tail);
    CHECK(kvt_ring_offer(&r, rec, 72) == -1, "a record longer than the ring never fits");

    CHECK(kvt_ring_peek(&r, &got, &len) == 1 && len == 20 && got == data && got[8] == 0xa1, "consumer reads the first");
    kvt_ring_consume(&r, len);
    CHECK(head == 24, "head %llu after the first", (unsigned long long)head);
    /* 24 in use; the record needs 16 padding + 24 = 40 <= 64 - 24: padding at 48, record at 0 */
    CHECK(kvt_ring_offer(&r, rec, 24) == 1, "wrapping record written");
    CHECK(tail == 88, "tail counts the padding: %llu", (unsigned long long)tail);
    CHECK(kvt_get_u32(data + 48) == 16 && kvt_get_u32(data + 52) == 0, "padding record at 48: Length 16 Type 0");
    CHECK(kvt_get_u32(data) == 24 && kvt_get_u32(data + 4) == 7 && data[8] == 0xa3, "wrapped record at offset 0");

    CHECK(kvt_ring_peek(&r, &got, &len) == 1 && len == 24 && got == data + 24 && got[8] == 0xa2, "second record");
    kvt_ring_consume(&r, len);
    CHECK(kvt_ring_peek(&r, &got, &len) == 1 && len == 24 && got == data && got[8] == 0xa3, "padding skipped");
    CHECK(head == 64, "head moved past the padding: %llu", (unsigned long long)head);
    kvt_ring_consume(&r, len);
    CHECK(head == 88 && kvt_ring_peek(&r, &got, &len) == 0, "empty again at 88");

    /* exactly full: 64 bytes of records in a 64-byte ring; then one byte more does not fit */
    record(rec, 40, 2, 0xb1);
    CHECK(kvt_ring_offer(&r, rec, 40) == 1 && tail == 128, "40 at offset 24");
    record(rec, 24, 2, 0xb2);
    CHECK(kvt_ring_offer(&r, rec, 24) == 1 && tail == 152, "24 at offset 0, ring exactly full");
    record(rec, 8, 2, 0xb3);
    CHECK(kvt_ring_offer(&r, rec, 8) == 0, "no room for 8 more");

    /* a malformed record at head is reported, not skipped */
    _Atomic uint64_t t2 = 16, h2 = 0;
    uint8_t d2[64] = {0};
    kvt_put_u32(d2, 4);
    kvt_ring bad = {d2, 64, &t2, &h2};
    CHECK(kvt_ring_peek(&bad, &got, &len) == -1, "Length shorter than a record header");
}

static void test_names(void) {
    CHECK(strcmp(kvt_error_name(18), "STALE_REQUEST_ID") == 0, "name of 18");
    CHECK(strcmp(kvt_error_name(35), "BAD_HELLO") == 0, "name of 35");
    CHECK(strcmp(kvt_error_name(999), "UNKNOWN") == 0, "unknown code");
    CHECK(strcmp(kvt_page_status_name(12), "LOADED") == 0 && strcmp(kvt_page_status_name(11), "UNKNOWN") == 0, "page statuses");
}

/* ---- end to end ---- */

static uint8_t pattern(int page, size_t i) { return (uint8_t)(page * 31 + i * 7 + 1); }

static void test_engine(const char *socket_path) {
    /* a namespace of this run's own (pid and clock as the tenant salt): new keys even on an engine
     * that has served earlier runs */
    kvt_key root;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char salt[64];
    snprintf(salt, sizeof salt, "run-%d-%lld-%ld", (int)getpid(), (long long)now.tv_sec, now.tv_nsec);
    kvt_namespace_root("c-client-test", "bytes/page4", 0, salt, &root);
    uint32_t tokens[12];
    for (int i = 0; i < 12; i++) tokens[i] = (uint32_t)(1000 + i);
    kvt_key keys[3];
    CHECK(kvt_page_keys(&root, tokens, 12, 4, 0, keys, 3) == 3, "3 keys");

    int err;
    char msg[256];
    kvt_client *c = kvt_connect(socket_path, &root, 1, 16, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect: %s %s", kvt_error_name(err), msg);
    if (!c) return;
    uint32_t size = kvt_page_size(c);
    CHECK(kvt_max_keys(c) >= 4 && size > 0 && kvt_page_count(c) > 0, "WELCOME grants");

    kvt_result res;
    int n = kvt_lookup(c, 0, 0, keys, 3, &res);
    CHECK(n == 0 && res.pool_pages == 0, "new keys are not in the pool: %d (%s)", n, kvt_last_error_message(c));

    n = kvt_reserve(c, 0, 0, keys, 3, &res);
    CHECK(n == 3, "reserved %d: %s", n, kvt_last_error_message(c));
    int32_t lengths[3];
    for (int p = 0; p < 3; p++) {
        CHECK(kvt_slot_status(c, p) == KVT_PAGE_RESERVED, "slot %d %s", p, kvt_page_status_name(kvt_slot_status(c, p)));
        uint8_t *page = kvt_slot_addr(c, p);
        CHECK(page != NULL, "slot %d has a page", p);
        if (!page) return;
        lengths[p] = (int32_t)(p == 2 ? size / 2 : size);
        for (size_t i = 0; i < (size_t)lengths[p]; i++) page[i] = pattern(p, i);
    }
    n = kvt_commit(c, 0, 3, lengths, &res);
    CHECK(n == 3, "committed %d: %s", n, kvt_last_error_message(c));
    for (int p = 0; p < 3; p++)
        CHECK(kvt_slot_status(c, p) == KVT_PAGE_COMMITTED, "slot %d %s", p, kvt_page_status_name(kvt_slot_status(c, p)));

    n = kvt_lookup(c, 0, 4, keys, 3, &res);
    CHECK(n >= 0 && res.pool_pages == 3, "lookup finds 3 in the pool: %d %d", n, res.pool_pages);
    n = kvt_acquire(c, 0, 4, NULL, 3, &res); /* KEYS_IN_SLOTS: the lookup's keys */
    CHECK(n == 3 && res.from_pool == 3, "acquired %d (from pool %d): %s", n, res.from_pool, kvt_last_error_message(c));
    for (int p = 0; p < 3; p++) {
        CHECK(kvt_slot_status(c, 4 + p) == KVT_PAGE_PINNED, "slot %d %s", 4 + p, kvt_page_status_name(kvt_slot_status(c, 4 + p)));
        const uint8_t *page = kvt_slot_addr(c, 4 + p);
        if (!page) { CHECK(0, "pinned slot %d without a page", 4 + p); continue; }
        size_t bad = 0;
        for (size_t i = 0; i < (size_t)lengths[p]; i++) bad += page[i] != pattern(p, i);
        CHECK(bad == 0, "page %d: %zu bytes differ", p, bad);
    }
    n = kvt_release(c, 4, 3, &res);
    CHECK(n >= 0, "release: %s", kvt_last_error_message(c));

    /* a replayed request id is refused with STALE_REQUEST_ID and changes nothing */
    uint64_t next = kvt_next_request_id(c);
    kvt_set_next_request_id(c, next - 1);
    n = kvt_lookup(c, 0, 8, keys, 3, &res);
    CHECK(n == -1 && kvt_last_error(c) == KVT_STALE_REQUEST_ID && res.status == KVT_STALE_REQUEST_ID,
          "stale id: %d, %s", n, kvt_error_name(kvt_last_error(c)));
    kvt_set_next_request_id(c, next + 1);
    /* a namespace the HELLO did not name */
    n = kvt_lookup(c, 5, 8, keys, 3, &res);
    CHECK(n == -1 && kvt_last_error(c) == KVT_NAMESPACE_DENIED, "namespace 5: %s", kvt_error_name(kvt_last_error(c)));
    n = kvt_lookup(c, 0, 8, keys, 3, &res);
    CHECK(n >= 0 && res.pool_pages == 3, "the client works after refusals: %s", kvt_last_error_message(c));

    /* enough requests to take both rings round several laps, with padding records wherever a record
     * does not fit the end of the data; every answer still the right one */
    uint64_t laps = 4u * 2u * (uint64_t)kvt_ring_capacity(c) / (KVT_REQUEST_HEADER + 48) + 1;
    int wrong = 0;
    for (uint64_t i = 0; i < laps; i++) {
        n = kvt_lookup(c, 0, 8, (i % 2) ? keys : NULL, 3, &res); /* body keys, then KEYS_IN_SLOTS */
        wrong += n < 0 || res.pool_pages != 3;
    }
    CHECK(wrong == 0, "%d of %llu lookups over the rings' laps answered wrong: %s", wrong, (unsigned long long)laps,
          kvt_last_error_message(c));

    int64_t values[64];
    int count = kvt_stats(c, values, 64);
    CHECK(count > 0, "stats: %d %s", count, kvt_last_error_message(c));

    CHECK(kvt_close(c) == 0, "close");
    printf("end to end against %s: connected, reserved, committed, acquired 3 pages of %u bytes\n", socket_path, size);
}

int main(int argc, char **argv) {
    test_sha256();
    test_keys();
    test_hello();
    test_welcome();
    test_request_header();
    test_response();
    test_ring();
    test_names();
    if (argc == 3 && strcmp(argv[1], "--socket") == 0) test_engine(argv[2]);
    else if (argc != 1) { fprintf(stderr, "usage: %s [--socket PATH]\n", argv[0]); return 2; }
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}

/* Tests of the kvtier C client.
 *
 *   kvtier_client_test                  codecs against docs/ipc-protocol.md's diagrams, the ring
 *                                       (wrap, padding, full), SHA-256 and docs/keys.md's vectors
 *   kvtier_client_test --socket PATH    then end to end against the engine listening on PATH:
 *                                       reserve, write, commit, acquire, bytes equal; a stale
 *                                       request id answered STALE_REQUEST_ID; stats; close; then,
 *                                       as a second client, the device operations of section 10
 *                                       on host-file KV buffers (two arrangements), every byte
 *                                       of both buffers and of the saved pages checked
 * Exit status 0 when every check passed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
    /* offset 0 magic "HELL"; 4 major 1, minor 1; 8 max keys; 12 N; 16 pid; 20 reserved; 24 roots */
    const char *expected = "48454c4c" "01000100" "00010000" "02000000" "04030201" "00000000"
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

static void test_device_codecs(void) {
    kvt_kv_shape shape = {3, 2, 4, 2, 8, 2};
    kvt_kv_allocation a[2];
    memset(a, 0, sizeof a);
    a[0].offset = 0x0102030405060708ull;
    memcpy(a[0].handle, "/dev/shm/kv", 11);
    a[1].offset = 64;
    memset(a[1].handle, 0xee, KVT_HANDLE_BYTES);
    uint8_t body[48 + 2 * 72];
    size_t n = kvt_encode_register_kv(body, KVT_HANDLE_HOST_FILE, -1, KVT_ARRANGEMENT_INTERLEAVED, &shape, 8, a, 2);
    CHECK(n == 48 + 2 * 72, "REGISTER_KV body %zu bytes: Length is 80 + 72 x A", n);
    char h[2 * 48 + 1];
    hex(body, 48, h);
    /* record offsets 32 Handle Kind; 36 Device; 40 Arrangement, Reserved; 44..64 L, T, Block Tokens, Heads,
     * Head Dim, Element Bytes; 68 Blocks; 72 Allocation Count; 76 Reserved */
    const char *expected = "02000000" "ffffffff" "0300" "0000" "03000000" "02000000" "04000000" "02000000" "08000000"
                           "02000000" "08000000" "02000000" "00000000";
    CHECK(strcmp(h, expected) == 0, "REGISTER_KV fields %s", h);
    /* allocation i at record offset 80 + 72 x i: Offset (u64), then the 64-byte handle */
    CHECK(kvt_get_u64(body + 48) == 0x0102030405060708ull && memcmp(body + 56, "/dev/shm/kv\0", 12) == 0, "allocation 0");
    CHECK(kvt_get_u64(body + 48 + 72) == 64 && body[48 + 72 + 8] == 0xee && body[48 + 72 + 8 + 63] == 0xee, "allocation 1");

    int32_t blocks[2] = {5, 7}, tokens[2] = {4, 1};
    uint8_t copy[8 + 16];
    n = kvt_encode_device_copy(copy, 3, blocks, tokens, 2);
    char c[2 * 24 + 1];
    hex(copy, n, c);
    /* record offsets 32 Layout Id; 36 Reserved; 40 + 8i Block; 44 + 8i Valid Tokens */
    CHECK(n == 24 && strcmp(c, "03000000" "00000000" "05000000" "04000000" "07000000" "01000000") == 0,
          "DEVICE_LOAD/SAVE body %s", c);

    CHECK(kvt_kv_slot_bytes(&shape) == 128 && kvt_kv_block_bytes(&shape) == 768, "S %llu, L x T x S %llu",
          (unsigned long long)kvt_kv_slot_bytes(&shape), (unsigned long long)kvt_kv_block_bytes(&shape));
    kvt_kv_shape bad = shape;
    bad.heads = 0;
    CHECK(kvt_kv_slot_bytes(&bad) == 0 && kvt_kv_block_bytes(&bad) == 0, "a field not positive");
    kvt_kv_shape huge = {65536, 2, 65536, 65536, 65536, 2};
    CHECK(kvt_kv_block_bytes(&huge) == 0, "a product past 2^63");
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
    CHECK(strcmp(kvt_page_status_name(13), "COPIED") == 0 && strcmp(kvt_page_status_name(14), "UNKNOWN") == 0, "COPIED");
    CHECK(strcmp(kvt_register_detail_name(1), "SHAPE") == 0 && strcmp(kvt_register_detail_name(7), "TOO_SMALL") == 0 &&
          strcmp(kvt_register_detail_name(9), "PAGE_SIZE") == 0 && strcmp(kvt_register_detail_name(0), "UNKNOWN") == 0 &&
          strcmp(kvt_register_detail_name(10), "UNKNOWN") == 0, "register details");
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

/* ---- device operations end to end (section 10) ---- */

/* 3 layers of K and V, blocks of 4 tokens of 2 heads x 8 elements of 2 bytes: S = 128, pages of 768 */
static const kvt_kv_shape SHAPE = {3, 2, 4, 2, 8, 2};
#define D_SLOTS 6
#define D_BLOCKS 8
#define D_S 128
#define D_TOKEN 32

/* A new file of `size` bytes mapped MAP_SHARED, for a HOST_FILE registration: mkstemp makes it a
 * regular file of our own, mode 0600, at a path short enough for the 64-byte handle. */
static uint8_t *kv_file(char path[64], size_t size) {
    const char *dirs[] = {"/dev/shm", "/tmp"};
    for (int d = 0; d < 2; d++) {
        snprintf(path, 64, "%s/kvt-c-test-XXXXXX", dirs[d]);
        int fd = mkstemp(path);
        if (fd < 0) continue;
        void *p = ftruncate(fd, (off_t)size) == 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
        close(fd);
        if (p != MAP_FAILED) return p;
        unlink(path);
    }
    return NULL;
}

/* Where block b of tensor (l, t) is, as section 10's arrangement table says. */
static size_t contiguous_at(uint64_t base, int l, int t, int b) {
    return (size_t)(base + ((uint64_t)(l * 2 + t) * D_BLOCKS + (uint64_t)b) * D_S);
}
static size_t separate_at(const uint64_t *bases, int l, int t, int b) { return (size_t)(bases[l * 2 + t] + (uint64_t)b * D_S); }

/* The first `tokens` tokens of every slice of writer block `from` into reader block `to`, in the image of
 * the reader's buffer the test expects; with `zeros` tokens after them zero (a partial page's tail). */
static void expect_load(uint8_t *image, const uint64_t *bases, int to, const uint8_t *w, uint64_t wbase, int from,
                        int tokens, int zeros) {
    for (int l = 0; l < 3; l++)
        for (int t = 0; t < 2; t++) {
            uint8_t *dst = image + separate_at(bases, l, t, to);
            memcpy(dst, w + contiguous_at(wbase, l, t, from), (size_t)tokens * D_TOKEN);
            memset(dst + (size_t)tokens * D_TOKEN, 0, (size_t)zeros * D_TOKEN);
        }
}

static void check_image(const uint8_t *got, const uint8_t *expected, size_t n, const char *when) {
    size_t at = 0;
    while (at < n && got[at] == expected[at]) at++;
    CHECK(at == n, "%s: the reader's buffer differs first at byte %zu (%02x, expected %02x)", when, at,
          at < n ? got[at] : 0, at < n ? expected[at] : 0);
}

static void test_device(const char *socket_path) {
    kvt_key root;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char salt[64];
    snprintf(salt, sizeof salt, "device-%d-%lld-%ld", (int)getpid(), (long long)now.tv_sec, now.tv_nsec);
    kvt_namespace_root("c-client-test", "bf16/block4/page-first", 0, salt, &root);
    uint32_t tokens[12];
    for (int i = 0; i < 12; i++) tokens[i] = (uint32_t)(2000 + i);
    kvt_key keys[3];
    CHECK(kvt_page_keys(&root, tokens, 12, 4, 0, keys, 3) == 3, "3 keys");

    int err;
    char msg[256];
    kvt_client *c = kvt_connect(socket_path, &root, 1, 16, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect: %s %s", kvt_error_name(err), msg);
    if (!c) return;
    CHECK(kvt_kv_block_bytes(&SHAPE) <= kvt_page_size(c), "a block of %llu bytes fits a page of %u",
          (unsigned long long)kvt_kv_block_bytes(&SHAPE), kvt_page_size(c));

    /* The writer's KV contiguous from offset 256 of its file; the reader's one tensor after another in
     * one file, each 64 bytes after the end of the last, the gaps and every block filled 0x5A. */
    const uint64_t tensor = (uint64_t)D_BLOCKS * D_S;
    const uint64_t wbase = 256;
    const size_t wsize = (size_t)(wbase + D_SLOTS * tensor);
    const size_t rsize = (size_t)(64 + D_SLOTS * (tensor + 64));
    char wpath[64], rpath[64];
    uint8_t *w = kv_file(wpath, wsize);
    uint8_t *r = kv_file(rpath, rsize);
    uint8_t *expected = malloc(rsize);
    CHECK(w && r && expected, "KV buffer files in /dev/shm or /tmp");
    if (!w || !r || !expected) return;
    for (size_t i = 0; i < wsize; i++) w[i] = (uint8_t)(i * 7 + 3);
    memset(r, 0x5A, rsize);
    memset(expected, 0x5A, rsize);
    uint64_t rbases[D_SLOTS];
    const char *rpaths[D_SLOTS];
    for (int i = 0; i < D_SLOTS; i++) {
        rbases[i] = 64 + (uint64_t)i * (tensor + 64);
        rpaths[i] = rpath;
    }

    kvt_result res;
    const char *wpaths[2] = {wpath, wpath};
    int wid = kvt_register_host_files(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, wpaths, &wbase, 1, &res);
    CHECK(wid == 1 && res.status == 0, "the first layout is 1: %d %s", wid, kvt_last_error_message(c));

    /* refusals: INVALID, the detail in Result Count, and no layout id taken */
    struct { int detail; int rc; } refused[5];
    refused[0].detail = KVT_REGISTER_TOO_SMALL; /* one block more than the file holds from its offset */
    refused[0].rc = kvt_register_host_files(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS + 1, wpaths, &wbase, 1, &res);
    CHECK(res.status == KVT_INVALID && res.result_count == KVT_REGISTER_TOO_SMALL, "TOO_SMALL in the result: %d %d",
          res.status, res.result_count);
    refused[1].detail = KVT_REGISTER_ALLOCATION_COUNT; /* CONTIGUOUS takes one allocation */
    uint64_t two[2] = {0, 0};
    refused[1].rc = kvt_register_host_files(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, wpaths, two, 2, &res);
    refused[2].detail = KVT_REGISTER_OPEN_FAILED; /* not an absolute path */
    const char *relative[1] = {"kvt-c-test.kv"};
    refused[2].rc = kvt_register_host_files(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, relative, &wbase, 1, &res);
    refused[3].detail = KVT_REGISTER_SHAPE; /* T is 1 or 2 */
    kvt_kv_shape three = SHAPE;
    three.tensors = 3;
    refused[3].rc = kvt_register_host_files(c, KVT_ARRANGEMENT_CONTIGUOUS, &three, 1, wpaths, &wbase, 1, &res);
    refused[4].detail = KVT_REGISTER_HANDLE_KIND;
    kvt_kv_allocation a;
    memset(&a, 0, sizeof a);
    a.offset = wbase;
    memcpy(a.handle, wpath, strlen(wpath));
    refused[4].rc = kvt_register_kv(c, 7, 0, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, &a, 1, &res);
    for (int i = 0; i < 5; i++)
        CHECK(refused[i].rc == -1, "a registration refused for %s answered %d", kvt_register_detail_name(refused[i].detail),
              refused[i].rc);
    CHECK(kvt_last_error(c) == KVT_INVALID && kvt_last_detail(c) == KVT_REGISTER_HANDLE_KIND,
          "the last refusal: %s, detail %s", kvt_error_name(kvt_last_error(c)), kvt_register_detail_name(kvt_last_detail(c)));

    int rid = kvt_register_host_files(c, KVT_ARRANGEMENT_SEPARATE, &SHAPE, D_BLOCKS, rpaths, rbases, D_SLOTS, &res);
    CHECK(rid == 2, "the refusals took no layout id: the reader's is %d (%s)", rid, kvt_last_error_message(c));
    CHECK(kvt_last_detail(c) == 0, "a registration answered OK has no detail");
    /* the engine holds its own mappings from here on (section 10) */
    unlink(wpath);
    unlink(rpath);

    /* save: writer blocks 5, 1 and 6 (2 valid tokens) into reserved pages, committed */
    CHECK(kvt_reserve(c, 0, 0, keys, 3, &res) == 3, "reserved: %s", kvt_last_error_message(c));
    int32_t saved[3] = {5, 1, 6}, valid[3] = {4, 4, 2};
    int n = kvt_device_save(c, wid, 0, saved, valid, 3, &res);
    CHECK(n == 3 && res.entry_count == 3, "saved %d: %s", n, kvt_last_error_message(c));
    for (int k = 0; k < 3; k++)
        CHECK(kvt_slot_status(c, k) == KVT_PAGE_COMMITTED, "saved slot %d %s", k, kvt_page_status_name(kvt_slot_status(c, k)));
    n = kvt_device_save(c, 99, 8, saved, valid, 1, &res);
    CHECK(n == -1 && kvt_last_error(c) == KVT_INVALID && kvt_last_detail(c) == 0 && res.entry_count == 0,
          "a layout id never given: %s", kvt_error_name(kvt_last_error(c)));

    /* the pages read in place hold each block page-first, a partial block's other tokens zero */
    CHECK(kvt_acquire(c, 0, 4, keys, 3, &res) == 3, "pinned: %s", kvt_last_error_message(c));
    int32_t pinned[3];
    for (int k = 0; k < 3; k++) {
        pinned[k] = kvt_slot_page(c, 4 + k);
        const uint8_t *page = kvt_slot_addr(c, 4 + k);
        CHECK(page != NULL && kvt_slot_status(c, 4 + k) == KVT_PAGE_PINNED, "slot %d %s", 4 + k,
              kvt_page_status_name(kvt_slot_status(c, 4 + k)));
        if (!page) continue;
        for (int l = 0; l < 3; l++)
            for (int t = 0; t < 2; t++) {
                const uint8_t *slot = page + (size_t)(l * 2 + t) * D_S;
                size_t copied = (size_t)valid[k] * D_TOKEN, nonzero = 0;
                CHECK(memcmp(slot, w + contiguous_at(wbase, l, t, saved[k]), copied) == 0, "page %d slot (%d, %d)", k, l, t);
                for (size_t b = copied; b < D_S; b++) nonzero += slot[b] != 0;
                CHECK(nonzero == 0, "page %d slot (%d, %d): %zu bytes past the valid tokens not zero", k, l, t, nonzero);
            }
    }

    /* load: the pinned pages into reader blocks 0, 7 and 3; every other byte of the reader left alone */
    int32_t loaded[3] = {0, 7, 3};
    n = kvt_device_load(c, rid, 4, loaded, valid, 3, &res);
    CHECK(n == 3, "loaded %d: %s", n, kvt_last_error_message(c));
    for (int k = 0; k < 3; k++) {
        CHECK(kvt_slot_status(c, 4 + k) == KVT_PAGE_COPIED, "loaded slot %d %s", 4 + k, kvt_page_status_name(kvt_slot_status(c, 4 + k)));
        CHECK(kvt_slot_page(c, 4 + k) == pinned[k], "slot %d keeps its pin on page %d: %d", 4 + k, pinned[k], kvt_slot_page(c, 4 + k));
        expect_load(expected, rbases, loaded[k], w, wbase, saved[k], valid[k], 0);
    }
    check_image(r, expected, rsize, "after the load");

    /* per slot: page 0 into block 2; block 2 again; a block past the end; a slot without a pin */
    int32_t blocks2[4] = {2, 2, D_BLOCKS, 1}, valid2[4] = {4, 4, 4, 4};
    n = kvt_device_load(c, rid, 4, blocks2, valid2, 4, &res);
    CHECK(n == 1, "one of four copied: %d %s", n, kvt_last_error_message(c));
    const int statuses[4] = {KVT_PAGE_COPIED, KVT_PAGE_INVALID, KVT_PAGE_INVALID, KVT_PAGE_NONE};
    for (int i = 0; i < 4; i++)
        CHECK(kvt_slot_status(c, 4 + i) == statuses[i], "slot %d %s, expected %s", 4 + i,
              kvt_page_status_name(kvt_slot_status(c, 4 + i)), kvt_page_status_name(statuses[i]));
    expect_load(expected, rbases, 2, w, wbase, saved[0], 4, 0);
    /* all 4 tokens of the partial page: its last 2 are the zeros the save wrote; then 0 valid tokens */
    int32_t block4 = 4, four = 4, zero = 0;
    CHECK(kvt_device_load(c, rid, 6, &block4, &four, 1, &res) == 1 && kvt_slot_status(c, 6) == KVT_PAGE_COPIED,
          "the partial page loaded whole: %s", kvt_page_status_name(kvt_slot_status(c, 6)));
    expect_load(expected, rbases, 4, w, wbase, saved[2], 2, 2);
    CHECK(kvt_device_load(c, rid, 5, &block4, &zero, 1, &res) == 0 && kvt_slot_status(c, 5) == KVT_PAGE_INVALID,
          "0 valid tokens: %s", kvt_page_status_name(kvt_slot_status(c, 5)));
    check_image(r, expected, rsize, "after the per-slot loads");

    CHECK(kvt_release(c, 4, 3, &res) == 3, "the loads kept the 3 pins: %s", kvt_last_error_message(c));
    CHECK(kvt_close(c) == 0, "close");
    munmap(w, wsize);
    munmap(r, rsize);
    free(expected);
    printf("device operations against %s: registered 2 layouts (5 refused), saved 3 blocks, loaded 5\n", socket_path);
}

int main(int argc, char **argv) {
    test_sha256();
    test_keys();
    test_hello();
    test_welcome();
    test_request_header();
    test_response();
    test_device_codecs();
    test_ring();
    test_names();
    if (argc == 3 && strcmp(argv[1], "--socket") == 0) {
        test_engine(argv[2]);
        test_device(argv[2]);
    }
    else if (argc != 1) { fprintf(stderr, "usage: %s [--socket PATH]\n", argv[0]); return 2; }
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}

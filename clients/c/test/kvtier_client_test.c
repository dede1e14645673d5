/* Tests of the kvtier C client.
 *
 *   kvtier_client_test                  codecs against docs/ipc-protocol.md's diagrams, the ring
 *                                       (wrap, padding, full), SHA-256 and docs/keys.md's vectors
 *   kvtier_client_test --socket PATH [--engine-minor 1|2] [--prefetch-waits] [SCENARIO...]
 *                                       then end to end against the engine listening on PATH, each
 *                                       scenario a client of its own:
 *     basic     a 1.2 session mapping its WELCOME's descriptors (the ring a memfd file); reserve,
 *               write, commit, acquire, bytes equal; payload lengths and keys from the pages'
 *               trailers; a stale request id answered STALE_REQUEST_ID; STATS named by the counters
 *               region; both rings round several laps
 *     device    the device operations of section 10 on host-file KV buffers (two arrangements),
 *               every byte of both buffers and of the saved pages checked
 *     host-fd   the same with KV buffers passed as descriptors (HOST_FD), the descriptors' numbering,
 *               taking and limit; a save whose buffer shrank answered INTERNAL_ERROR
 *     entries   section 4's entries and Result Count for every operation (needs an L3 that commits
 *               are copied to; with --prefetch-waits, an engine that waits for the prefetch a LOOKUP
 *               of 4 L3 pages starts, also LOOKUP's LOADED)
 *     minor1    a session announcing 1.1 (and 1.0): the files opened by path, HOST_FD refused
 *   Without scenarios: basic and device, then (unless --engine-minor 1, an engine before 1.2) host-fd,
 *   entries and minor1.
 * Exit status 0 when every check passed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kvt_internal.h"
#include "../chaos/page_pattern.h"

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

/* docs/keys.md "engine page ids": keys from SGLang's page hashes and vLLM's block hashes */
static void test_engine_keys(void) {
    static const struct { const char *salt, *sglang[2], *vllm[5]; } expected[2] = {
        {"", {"430f263b9dc95918deb7ee45953afe6b", "3d741f8f68f3c8b1a9af1d9007163394"},
         {"2009f7e3f4b58e370db07e4be8e7e603", "9f6c9bc89b440664847b82a50520fce3", "0bf1b92f2bc83a846866735f5b06bda9",
          "0bf1b92f2bc83a846866735f5b06bda9", "35bffc88ddf5e3b8d8cb7899c214912b"}},
        {"tenant-a", {"3a89da3184daf12093d1754e399fc776", "5a1d17b21ad0e9169b7f5922cb8768f4"},
         {"a56066e62a24a6b15f262df0a950d20d", "399fe0ccaac3384ec41a3ddc6e43dfbe", "e51ac7db86e30880ded7656160056e8f",
          "e51ac7db86e30880ded7656160056e8f", "a4ae0bc3c5c6053df941b656bf3bd403"}},
    };
    static const char *sglang[2] = {"600d09dbd8d8ac802f5040e66bf03fda1dc0ad81c81b0e0238101e6570799276",
                                    "b8682f237e183a55a80dee347452d604f4d345f2a32c648348029a651a4baa28"};
    /* the int block hashes 1234 and -2 (taken modulo 2^64) as 32 bytes big-endian */
    static const struct { const char *hash; uint32_t group; } vllm[5] = {
        {"fa8e730bce6dbc9102511486407c1db4ac6ee0c9cc367b8766a707fd0eae2ac0", 0},
        {"fa8e730bce6dbc9102511486407c1db4ac6ee0c9cc367b8766a707fd0eae2ac0", 1},
        {"00000000000000000000000000000000000000000000000000000000000004d2", 0},
        {"00000000000000000000000000000000000000000000000000000000000004d2", 0},
        {"000000000000000000000000000000000000000000000000fffffffffffffffe", 3},
    };
    for (int s = 0; s < 2; s++) {
        kvt_key root, key;
        char h[33];
        kvt_namespace_root("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, expected[s].salt, &root);
        for (int i = 0; i < 2; i++) {
            CHECK(kvt_sglang_page_key(&root, sglang[i], strlen(sglang[i]), &key) == 0, "sglang key %d", i);
            kvt_key_hex(&key, h);
            CHECK(strcmp(h, expected[s].sglang[i]) == 0, "salt '%s' sglang %d: %s, expected %s", expected[s].salt, i, h,
                  expected[s].sglang[i]);
        }
        for (int i = 0; i < 5; i++) {
            uint8_t block[32];
            from_hex(vllm[i].hash, block, 32);
            CHECK(kvt_vllm_page_key(&root, block, 32, vllm[i].group, &key) == 0, "vllm key %d", i);
            kvt_key_hex(&key, h);
            CHECK(strcmp(h, expected[s].vllm[i]) == 0, "salt '%s' vllm %d: %s, expected %s", expected[s].salt, i, h,
                  expected[s].vllm[i]);
        }
        CHECK(kvt_sglang_page_key(&root, "", 0, &key) == -1, "an empty SGLang hash is refused");
        CHECK(kvt_vllm_page_key(&root, NULL, 0, 0, &key) == -1, "an empty vLLM hash is refused");
    }
}

/* ---- codecs ---- */

static void test_hello(void) {
    kvt_key ns[2];
    for (int i = 0; i < 16; i++) { ns[0].bytes[i] = (uint8_t)i; ns[1].bytes[i] = (uint8_t)(0xf0 + i); }
    uint8_t out[24 + 32];
    size_t n = kvt_encode_hello(out, 256, ns, 2, 0x01020304);
    CHECK(n == 56, "HELLO length %zu", n);
    /* offset 0 magic "HELL"; 4 major 1, minor 3; 8 max keys; 12 N; 16 pid; 20 reserved; 24 roots */
    const char *expected = "48454c4c" "01000300" "00010000" "02000000" "04030201" "00000000"
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
             "0020000000000000" "4010000000000000" "00000400" "30750000" "20100000" "02000000" "03000000" "00000000",
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
    /* 60 Engine Minor Version, 64 Descriptors (1.2) */
    CHECK(w.engine_minor == 2 && w.descriptors == 3, "engine minor %u descriptors %u", w.engine_minor, w.descriptors);
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

/* DESCRIPTORS (section 2): magic "KVFD", then Count */
static void test_descriptors_message(void) {
    uint8_t out[8];
    kvt_encode_descriptors(out, 3);
    char h[17];
    hex(out, 8, h);
    CHECK(strcmp(h, "4b564644" "03000000") == 0, "DESCRIPTORS bytes %s", h);
    CHECK(memcmp(out, "KVFD", 4) == 0, "DESCRIPTORS magic reads \"KVFD\"");
    uint8_t handle[KVT_HANDLE_BYTES];
    memset(handle, 0xff, sizeof handle);
    kvt_fd_handle(0x01020304u, handle);
    size_t nonzero = 0;
    for (int i = 4; i < KVT_HANDLE_BYTES; i++) nonzero += handle[i] != 0;
    CHECK(kvt_get_u32(handle) == 0x01020304u && nonzero == 0, "HOST_FD handle: the number as a u32, the other 60 bytes 0");
}

/* CRC32C (Castagnoli): the check value and iSCSI's (RFC 3720, B.4) vectors */
static void test_crc32c(void) {
    CHECK(kvt_crc32c("123456789", 9) == 0xE3069283u, "check value %08x", kvt_crc32c("123456789", 9));
    uint8_t b[32];
    memset(b, 0, sizeof b);
    CHECK(kvt_crc32c(b, 32) == 0x8A9136AAu, "32 zero bytes %08x", kvt_crc32c(b, 32));
    memset(b, 0xff, sizeof b);
    CHECK(kvt_crc32c(b, 32) == 0x62A8AB43u, "32 bytes of ff %08x", kvt_crc32c(b, 32));
    for (int i = 0; i < 32; i++) b[i] = (uint8_t)i;
    CHECK(kvt_crc32c(b, 32) == 0x46DD794Eu, "0..31 %08x", kvt_crc32c(b, 32));
    CHECK(kvt_crc32c(b, 0) == 0, "nothing");
}

/* A page's trailer as section 11's table lays it out, field by field */
static void test_trailer(void) {
    uint8_t t[KVT_TRAILER_SIZE];
    memset(t, 0, sizeof t);
    memcpy(t, "KVTPAGE1", 8);
    kvt_put_u64(t + 8, 0x0102030405060708ull);   /* Key High */
    kvt_put_u64(t + 16, 0x1112131415161718ull);  /* Key Low */
    kvt_put_u64(t + 24, 1000);                   /* Payload Length */
    kvt_put_u32(t + 32, 0xCAFEBABEu);            /* Payload CRC32C */
    kvt_put_u32(t + 36, 2);                      /* Frame Version */
    kvt_put_u64(t + 40, 4096);                   /* Page Size */
    kvt_put_u64(t + 48, 1700000000123ull);       /* Commit Time */
    kvt_put_u64(t + 56, 0x0d8d5b6bec68e56eull);  /* Namespace Tag */
    kvt_put_u32(t + 64, kvt_crc32c(t, 64));      /* Trailer CRC32C of bytes 0..63 */
    kvt_page_trailer r;
    CHECK(kvt_decode_trailer(t, &r) == 0, "an intact trailer");
    CHECK(r.key_high == 0x0102030405060708ull && r.key_low == 0x1112131415161718ull && r.payload_length == 1000 &&
          r.payload_crc32c == 0xCAFEBABEu && r.frame_version == 2 && r.page_size == 4096 && r.commit_time_ms == 1700000000123ull &&
          r.namespace_tag == 0x0d8d5b6bec68e56eull, "trailer fields");
    t[30] ^= 1; /* a bit of the payload length */
    CHECK(kvt_decode_trailer(t, &r) == -1, "a trailer whose bytes do not match its CRC32C");
    t[30] ^= 1;
    t[0] = 'X';
    kvt_put_u32(t + 64, kvt_crc32c(t, 64));
    CHECK(kvt_decode_trailer(t, &r) == -1, "a trailer without its magic");
}

/* A counter record (section 11): Record State, Type, Name Length and Name at 12, Description Length at
 * 64 and Description at 68 */
static void test_counter_record(void) {
    _Alignas(8) uint8_t r[KVT_COUNTER_RECORD_SIZE];
    memset(r, 0, sizeof r);
    kvt_counter_info info;
    CHECK(kvt_decode_counter_record(r, 5, &info) == 0 && info.id == 5, "Record State 0: no counter");
    kvt_put_u32(r, 1);
    kvt_put_u32(r + 4, KVT_COUNTER_GAUGE);
    kvt_put_u32(r + 8, 12);
    memcpy(r + 12, "pages_in_use", 12);
    kvt_put_u32(r + 64, 9);
    memcpy(r + 68, "Pages ...", 9);
    CHECK(kvt_decode_counter_record(r, 30, &info) == 1, "a counter");
    CHECK(info.id == 30 && info.type == KVT_COUNTER_GAUGE && strcmp(info.name, "pages_in_use") == 0 &&
          strcmp(info.description, "Pages ...") == 0, "%d %u %s %s", info.id, info.type, info.name, info.description);
    memset(r + 12, 'n', 52);
    kvt_put_u32(r + 8, 52);
    CHECK(kvt_decode_counter_record(r, 30, &info) == 1 && strlen(info.name) == 52, "a name of 52 bytes, the most");
    kvt_put_u32(r + 8, 53);
    CHECK(kvt_decode_counter_record(r, 30, &info) == -1, "a name longer than its field");
    kvt_put_u32(r + 8, 1);
    kvt_put_u32(r + 64, 189);
    CHECK(kvt_decode_counter_record(r, 30, &info) == -1, "a description longer than its field");
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

    /* a padding record must run exactly to the end of the data (section 4) */
    _Atomic uint64_t t3 = 64, h3 = 0;
    uint8_t d3[64] = {0};
    kvt_put_u32(d3, 16); /* padding of 16 at offset 0 of a 64-byte ring: not the space left */
    kvt_ring misplaced = {d3, 64, &t3, &h3};
    CHECK(kvt_ring_peek(&misplaced, &got, &len) == -1 && h3 == 0, "a padding record short of the end is not skipped");
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

/* The engine's minor version the scenarios expect: 3 (kvtier's engine), 2 for an engine of 1.2 (spec_engine.py),
 * or 1 for an engine before 1.2 (spec_engine.py --engine-minor 1), which writes Engine Minor Version 0 and
 * passes no descriptors. */
static uint32_t expected_engine_minor = 3;
/* The engine waits for the prefetch a LOOKUP starts (policy.prefetch wait-complete, 4 pages at least:
 * spec_engine.py --prefetch-waits): --prefetch-waits. */
static int prefetch_waits = 0;

static uint8_t pattern(int page, size_t i) { return (uint8_t)(page * 31 + i * 7 + 1); }

/* A namespace of this run's own (pid and clock as the tenant salt): new keys even on an engine that
 * has served earlier runs. */
static void fresh_root(const char *what, kvt_key *root) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char salt[96];
    snprintf(salt, sizeof salt, "%s-%d-%lld-%ld", what, (int)getpid(), (long long)now.tv_sec, now.tv_nsec);
    kvt_namespace_root("c-client-test", "bytes/page4", 0, salt, root);
}

static uint64_t be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

/* Whether this process maps an anonymous memory file (memfd_create: "/memfd:NAME (deleted)" in
 * /proc/self/maps) of `size` bytes (rounded up to whole pages, as mapped): the ring of a 1.2 session. */
static int maps_memfd_of(size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size = (size + page - 1) / page * page;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 0;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long long start, end;
        char *name = strchr(line, '/');
        if (sscanf(line, "%llx-%llx", &start, &end) == 2 && name && strncmp(name, "/memfd:", 7) == 0 && end - start == size) found = 1;
    }
    fclose(f);
    return found;
}

/* The id of counter `name`, checked to exist. */
static int32_t counter_named(kvt_client *c, const char *name) {
    int32_t id = kvt_counter_id(c, name);
    CHECK(id >= 0, "the pool names a counter %s: %s", name, kvt_last_error_message(c));
    return id;
}

/* STATS value `id`, or -1. */
static int64_t stat_value(kvt_client *c, int32_t id) {
    int64_t values[KVT_COUNTERS_MAX];
    int n = kvt_stats(c, values, KVT_COUNTERS_MAX);
    CHECK(n > id && id >= 0, "STATS answers %d values, counter %d among them: %s", n, id, kvt_last_error_message(c));
    return n > id && id >= 0 ? values[id] : -1;
}

static void test_engine(const char *socket_path) {
    kvt_key root;
    fresh_root("run", &root);
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
    /* section 2: a 1.2 session maps the three descriptors of its WELCOME; the ring has no name */
    if (expected_engine_minor >= 2) {
        CHECK(kvt_engine_minor(c) == expected_engine_minor && kvt_session_minor(c) == expected_engine_minor,
              "a 1.%u session: engine minor %u, session minor %u", expected_engine_minor,
              kvt_engine_minor(c), kvt_session_minor(c));
        CHECK(kvt_descriptors_mapped(c) == 1, "the pool, control file and ring came as descriptors");
        CHECK(strcmp(kvt_file_path(c, KVT_FILE_RING), "") == 0, "a 1.2 ring has no path: \"%s\"", kvt_file_path(c, KVT_FILE_RING));
        CHECK(maps_memfd_of(4096 + 2 * (size_t)kvt_ring_capacity(c)), "the ring mapped is a memfd_create file of %u bytes",
              4096 + 2 * kvt_ring_capacity(c));
    } else {
        CHECK(kvt_engine_minor(c) == 0 && kvt_session_minor(c) == 1 && kvt_descriptors_mapped(c) == 0,
              "an engine before 1.2: engine minor %u, session minor %u, descriptors %d", kvt_engine_minor(c), kvt_session_minor(c),
              kvt_descriptors_mapped(c));
        CHECK(access(kvt_file_path(c, KVT_FILE_RING), F_OK) == 0, "the ring opened by its path %s", kvt_file_path(c, KVT_FILE_RING));
    }
    CHECK(kvt_file_path(c, KVT_FILE_POOL)[0] == '/' && kvt_file_path(c, KVT_FILE_CONTROL)[0] == '/', "pool %s, control %s",
          kvt_file_path(c, KVT_FILE_POOL), kvt_file_path(c, KVT_FILE_CONTROL));
    int32_t committed_id = counter_named(c, "pages_committed");
    int64_t committed_before = stat_value(c, committed_id);

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
    /* section 11: STATS value i is counter i, named by the pool's counters region */
    int64_t committed_after = stat_value(c, committed_id);
    CHECK(committed_after - committed_before == 3, "pages_committed went from %lld to %lld for 3 commits",
          (long long)committed_before, (long long)committed_after);
    CHECK(kvt_counter_value(c, committed_id) == committed_after, "the pool's pages_committed %lld, STATS %lld",
          (long long)kvt_counter_value(c, committed_id), (long long)committed_after);

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
        /* section 11: the payload length from the page's trailer, which names the key and namespace */
        int64_t length = kvt_slot_payload_length(c, 4 + p);
        CHECK(length == lengths[p], "slot %d's payload length %lld, committed %d (%s)", 4 + p, (long long)length, lengths[p],
              kvt_last_error_message(c));
        kvt_page_trailer t;
        CHECK(kvt_read_page_trailer(c, kvt_slot_page(c, 4 + p), &t) == 0, "trailer: %s", kvt_last_error_message(c));
        uint64_t tag = be64(root.bytes) ? be64(root.bytes) : 1;
        CHECK(t.key_high == be64(keys[p].bytes) && t.key_low == be64(keys[p].bytes + 8) && t.namespace_tag == tag &&
              t.page_size == size && t.frame_version == 2, "page %d's trailer: key %016llx%016llx, tag %llx, page size %llu, version %u",
              p, (unsigned long long)t.key_high, (unsigned long long)t.key_low, (unsigned long long)t.namespace_tag,
              (unsigned long long)t.page_size, t.frame_version);
        CHECK(kvt_page_verify_payload(c, kvt_slot_page(c, 4 + p)) == 1, "page %d's payload has its trailer's CRC32C", p);
        size_t tail = 0;
        for (size_t i = (size_t)lengths[p]; i < size; i++) tail += page[i] != 0;
        CHECK(tail == 0, "page %d: %zu bytes past the payload are not zero", p, tail);
    }
    n = kvt_release(c, 4, 3, &res);
    CHECK(n >= 0, "release: %s", kvt_last_error_message(c));
    CHECK(kvt_slot_payload_length(c, 4) == -1 && kvt_last_error(c) == KVT_ERR_ARGUMENT, "a released slot has no payload length: %s",
          kvt_error_name(kvt_last_error(c)));

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

    int64_t values[KVT_COUNTERS_MAX];
    int count = kvt_stats(c, values, KVT_COUNTERS_MAX);
    CHECK(count > 0, "stats: %d %s", count, kvt_last_error_message(c));
    int named = 0;
    for (int i = 0; i < count; i++) {
        kvt_counter_info info;
        int r = kvt_counter(c, i, &info);
        named += r == 1 && info.name[0] != '\0' && info.type >= KVT_COUNTER_GROWS && info.type <= KVT_COUNTER_FACT;
    }
    CHECK(named == count, "%d of the %d STATS values are named by the counters region", named, count);
    CHECK(values[counter_named(c, "requests")] > (int64_t)laps, "the requests counter counts this client's %llu requests",
          (unsigned long long)laps);

    uint32_t session = kvt_session_minor(c);
    int mapped = kvt_descriptors_mapped(c);
    CHECK(kvt_close(c) == 0, "close");
    printf("end to end against %s: connected (session 1.%u, files by %s), reserved, committed, acquired 3 pages of %u bytes, "
           "payload lengths from their trailers, %d STATS values named\n", socket_path, session, mapped ? "descriptors" : "paths",
           size, count);
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

/* ---- HOST_FD buffers (protocol 1.2: sections 2 and 10) ---- */

/* An anonymous memory file of `size` bytes mapped MAP_SHARED: KV buffers with no name anywhere. */
static uint8_t *kv_memfd(int *fd, size_t size) {
    *fd = memfd_create("kvt-c-test-kv", MFD_CLOEXEC);
    if (*fd < 0) return NULL;
    void *p = ftruncate(*fd, (off_t)size) == 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0) : MAP_FAILED;
    return p == MAP_FAILED ? NULL : p;
}

static void test_host_fd(const char *socket_path) {
    kvt_key root;
    fresh_root("host-fd", &root);
    uint32_t tokens[20];
    for (int i = 0; i < 20; i++) tokens[i] = (uint32_t)(3000 + i);
    kvt_key keys[5];
    CHECK(kvt_page_keys(&root, tokens, 20, 4, 0, keys, 5) == 5, "5 keys");
    int err;
    char msg[256];
    kvt_client *c = kvt_connect(socket_path, &root, 1, 16, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect: %s %s", kvt_error_name(err), msg);
    if (!c) return;
    CHECK(kvt_session_minor(c) >= 2, "HOST_FD needs a 1.2 session: 1.%u", kvt_session_minor(c));

    /* the writer's KV contiguous from offset 512 of one memfd; the reader's one tensor after another in
     * another, each 64 bytes after the end of the last, the gaps and every block filled 0x5A */
    const uint64_t tensor = (uint64_t)D_BLOCKS * D_S;
    const uint64_t wbase = 512;
    const size_t wsize = (size_t)(wbase + D_SLOTS * tensor);
    const size_t rsize = (size_t)(64 + D_SLOTS * (tensor + 64));
    int wfd = -1, rfd = -1;
    uint8_t *w = kv_memfd(&wfd, wsize);
    uint8_t *r = kv_memfd(&rfd, rsize);
    uint8_t *expected = malloc(rsize);
    CHECK(w && r && expected, "KV buffers in memfd_create files");
    if (!w || !r || !expected) return;
    for (size_t i = 0; i < wsize; i++) w[i] = (uint8_t)(i * 13 + 5);
    memset(r, 0x5A, rsize);
    memset(expected, 0x5A, rsize);
    uint64_t rbases[D_SLOTS];
    int rfds[D_SLOTS];
    for (int i = 0; i < D_SLOTS; i++) {
        rbases[i] = 64 + (uint64_t)i * (tensor + 64);
        rfds[i] = rfd; /* six allocations of one descriptor: one number, one mapping */
    }
    int32_t saved_id = counter_named(c, "device_blocks_saved"), loaded_id = counter_named(c, "device_blocks_loaded");
    int64_t saved_before = stat_value(c, saved_id), loaded_before = stat_value(c, loaded_id);

    kvt_result res;
    int wid = kvt_register_host_fds(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, &wfd, &wbase, 1, &res);
    CHECK(wid >= 1 && res.status == 0, "the writer's layout: %d %s", wid, kvt_last_error_message(c));
    int rid = kvt_register_host_fds(c, KVT_ARRANGEMENT_SEPARATE, &SHAPE, D_BLOCKS, rfds, rbases, D_SLOTS, &res);
    CHECK(rid == wid + 1, "the reader's layout: %d %s", rid, kvt_last_error_message(c));
    CHECK(kvt_descriptors_pending(c) == 0, "both registrations took their descriptors: %u pending", kvt_descriptors_pending(c));
    /* a registration too long for the engine's Max Message Length sends no descriptor */
    int *lots = malloc(sizeof(int) * KVT_MAX_ALLOCATIONS);
    for (int i = 0; lots && i < KVT_MAX_ALLOCATIONS; i++) lots[i] = rfd;
    CHECK(lots && kvt_register_host_fds(c, KVT_ARRANGEMENT_SEPARATE, &SHAPE, D_BLOCKS, lots, NULL, KVT_MAX_ALLOCATIONS, &res) == -1 &&
          kvt_last_error(c) == KVT_ERR_ARGUMENT && kvt_descriptors_pending(c) == 0,
          "512 allocations (Max Message Length %u): %s, %u descriptors left pending", kvt_max_message_length(c),
          kvt_error_name(kvt_last_error(c)), kvt_descriptors_pending(c));
    free(lots);

    /* refusals, each OPEN_FAILED: a number already named, a number never sent, a descriptor open read-only */
    kvt_kv_allocation a;
    memset(&a, 0, sizeof a);
    a.offset = wbase;
    kvt_fd_handle(0, a.handle);
    int rc = kvt_register_kv(c, KVT_HANDLE_HOST_FD, 0, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, &a, 1, &res);
    CHECK(rc == -1 && kvt_last_detail(c) == KVT_REGISTER_OPEN_FAILED, "number 0 named twice: %s", kvt_register_detail_name(kvt_last_detail(c)));
    kvt_fd_handle(1000, a.handle);
    rc = kvt_register_kv(c, KVT_HANDLE_HOST_FD, 0, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, &a, 1, &res);
    CHECK(rc == -1 && kvt_last_detail(c) == KVT_REGISTER_OPEN_FAILED, "a number never sent: %s", kvt_register_detail_name(kvt_last_detail(c)));
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", wfd);
    int ro = open(self, O_RDONLY | O_CLOEXEC);
    CHECK(ro >= 0, "a read-only descriptor of the writer's file");
    rc = kvt_register_host_fds(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, &ro, &wbase, 1, &res);
    CHECK(rc == -1 && kvt_last_detail(c) == KVT_REGISTER_OPEN_FAILED, "a read-only descriptor: %s", kvt_register_detail_name(kvt_last_detail(c)));
    close(ro);
    /* a refusal before the handles are looked at takes the descriptors all the same: 64 sent, a 65th is
     * refused by the client (the engine would drop it), then registrations naming the 64 take them */
    int many[16];
    for (int i = 0; i < 16; i++) many[i] = wfd;
    int64_t first = -1;
    for (int m = 0; m < 4; m++) {
        int64_t f = kvt_send_descriptors(c, many, 16);
        CHECK(f >= 0, "16 descriptors sent: %s", kvt_last_error_message(c));
        if (m == 0) first = f;
    }
    CHECK(kvt_descriptors_pending(c) == 64 && kvt_send_descriptors(c, many, 1) == -1 && kvt_last_error(c) == KVT_ERR_ARGUMENT,
          "a 65th descriptor not yet named is refused before it is sent: %u pending, %s", kvt_descriptors_pending(c),
          kvt_error_name(kvt_last_error(c)));
    /* 8 registrations of 8 allocations (SEPARATE, 4 layers of K and V), each refused SHAPE (no heads) */
    kvt_kv_shape headless = {4, 2, 4, 0, 8, 2};
    kvt_kv_allocation eight[8];
    memset(eight, 0, sizeof eight);
    for (int g = 0; g < 8; g++) {
        for (int i = 0; i < 8; i++) kvt_fd_handle((uint32_t)(first + 8 * g + i), eight[i].handle);
        rc = kvt_register_kv(c, KVT_HANDLE_HOST_FD, 0, KVT_ARRANGEMENT_SEPARATE, &headless, 1, eight, 8, &res);
        CHECK(rc == -1 && kvt_last_detail(c) == KVT_REGISTER_SHAPE, "8 allocations refused SHAPE: %d %s", rc,
              kvt_register_detail_name(kvt_last_detail(c)));
    }
    CHECK(kvt_descriptors_pending(c) == 0, "the refused registrations took their 64 descriptors: %u pending", kvt_descriptors_pending(c));
    CHECK(kvt_send_descriptors(c, many, 1) == first + 64, "the next number is %lld", (long long)(first + 64));
    kvt_fd_handle((uint32_t)(first + 64), a.handle);
    a.offset = (uint64_t)1 << 63; /* refused TOO_SMALL: the offset is negative as a signed value */
    CHECK(kvt_register_kv(c, KVT_HANDLE_HOST_FD, 0, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, &a, 1, &res) == -1 &&
          kvt_last_detail(c) == KVT_REGISTER_TOO_SMALL && kvt_descriptors_pending(c) == 0, "an offset of 2^63: %s",
          kvt_register_detail_name(kvt_last_detail(c)));

    /* save: writer blocks 2, 7 and 0 (3 valid tokens) into reserved pages, committed */
    CHECK(kvt_reserve(c, 0, 0, keys, 3, &res) == 3, "reserved: %s", kvt_last_error_message(c));
    int32_t saved[3] = {2, 7, 0}, valid[3] = {4, 4, 3};
    int n = kvt_device_save(c, wid, 0, saved, valid, 3, &res);
    CHECK(n == 3, "saved %d: %s", n, kvt_last_error_message(c));
    CHECK(stat_value(c, saved_id) - saved_before == 3, "device_blocks_saved counted the 3 blocks");

    /* every byte of the pages read in place: page-first, a partial block's other tokens zero */
    CHECK(kvt_acquire(c, 0, 4, keys, 3, &res) == 3, "pinned: %s", kvt_last_error_message(c));
    for (int k = 0; k < 3; k++) {
        const uint8_t *page = kvt_slot_addr(c, 4 + k);
        CHECK(kvt_slot_payload_length(c, 4 + k) == (int64_t)kvt_kv_block_bytes(&SHAPE), "page %d's payload length %lld", k,
              (long long)kvt_slot_payload_length(c, 4 + k));
        if (!page) { CHECK(0, "slot %d holds no page", 4 + k); continue; }
        size_t bad = 0;
        for (int l = 0; l < 3; l++)
            for (int t = 0; t < 2; t++) {
                const uint8_t *slot = page + (size_t)(l * 2 + t) * D_S;
                const uint8_t *block = w + contiguous_at(wbase, l, t, saved[k]);
                for (size_t b = 0; b < D_S; b++) bad += slot[b] != (b < (size_t)valid[k] * D_TOKEN ? block[b] : 0);
            }
        CHECK(bad == 0, "page %d: %zu of its bytes are not the block's", k, bad);
    }

    /* load: the pinned pages into reader blocks 5, 1 and 6; every byte of the reader's buffer compared */
    int32_t loaded[3] = {5, 1, 6};
    n = kvt_device_load(c, rid, 4, loaded, valid, 3, &res);
    CHECK(n == 3, "loaded %d: %s", n, kvt_last_error_message(c));
    for (int k = 0; k < 3; k++) expect_load(expected, rbases, loaded[k], w, wbase, saved[k], valid[k], 0);
    check_image(r, expected, rsize, "after the HOST_FD load");
    CHECK(stat_value(c, loaded_id) - loaded_before == 3, "device_blocks_loaded counted the 3 blocks");
    CHECK(kvt_release(c, 4, 3, &res) == 3, "the loads kept the 3 pins: %s", kvt_last_error_message(c));

    /* a buffer shrunk under the engine's mapping: the save's copy faults, the request is answered
     * INTERNAL_ERROR, its reservations go back unwritten, and the engine carries on */
    CHECK(kvt_reserve(c, 0, 8, keys + 3, 2, &res) == 2, "reserved 2 more: %s", kvt_last_error_message(c));
    CHECK(ftruncate(wfd, 64) == 0, "the writer's file shrunk to 64 bytes");
    int32_t two[2] = {3, 4}, whole[2] = {4, 4};
    n = kvt_device_save(c, wid, 8, two, whole, 2, &res);
    CHECK(n == -1 && kvt_last_error(c) == KVT_INTERNAL_ERROR && res.entry_count == 0, "a faulting save: %d %s", n,
          kvt_error_name(kvt_last_error(c)));
    CHECK(kvt_slot_status(c, 8) == KVT_PAGE_NONE && kvt_slot_page(c, 9) == -1, "its reservations are gone from the slots: %s %d",
          kvt_page_status_name(kvt_slot_status(c, 8)), kvt_slot_page(c, 9));
    CHECK(kvt_lookup(c, 0, 8, keys + 3, 2, &res) == 0 && res.pool_pages == 0, "none of its pages became visible: %d",
          res.pool_pages);
    CHECK(kvt_reserve(c, 0, 8, NULL, 2, &res) == 2, "the keys can be reserved again (given back, not held): %s",
          kvt_last_error_message(c));
    CHECK(kvt_abort(c, 8, 2, &res) == 2, "aborted: %s", kvt_last_error_message(c));

    CHECK(kvt_close(c) == 0, "close");
    munmap(w, wsize);
    munmap(r, rsize);
    close(wfd);
    close(rfd);
    free(expected);
    printf("HOST_FD buffers against %s: registered 2 layouts by descriptor, saved 3 blocks and loaded them back byte for byte, "
           "a faulting save answered INTERNAL_ERROR\n", socket_path);
}

/* ---- the entries of every operation (section 4) ---- */

static int holds_page(int status) {
    return status == KVT_PAGE_PINNED || status == KVT_PAGE_PINNED_FROM_L3 || status == KVT_PAGE_RESERVED || status == KVT_PAGE_COPIED;
}

/* An OK answer with one entry per slot of [first, first + count), each of the status given: a page
 * for a slot that holds one, else Page Id -1 and Generation 0. A status given negated is that status
 * with the slot's pinned page (a DEVICE_LOAD's INVALID). */
static void expect_entries(kvt_client *c, const char *what, int rc, const kvt_result *r, int32_t first, int32_t count,
                           const int *statuses, int result_count) {
    CHECK(rc == result_count && r->status == 0 && r->first_slot == first && r->entry_count == count,
          "%s: answered %d (%s), status %d, entries [%d, +%d), expected Result Count %d and entries [%d, +%d)", what, rc,
          kvt_last_error_message(c), r->status, r->first_slot, r->entry_count, result_count, first, count);
    for (int32_t i = 0; i < count; i++) {
        int32_t s = first + i, status = kvt_slot_status(c, s), page = kvt_slot_page(c, s), gen = kvt_slot_generation(c, s);
        int want = statuses[i] < 0 ? -statuses[i] : statuses[i];
        CHECK(status == want, "%s: slot %d is %s, expected %s", what, s, kvt_page_status_name(status), kvt_page_status_name(want));
        if (holds_page(want) || statuses[i] < 0)
            CHECK(page >= 0, "%s: slot %d (%s) names no page", what, s, kvt_page_status_name(status));
        else
            CHECK(page == -1 && gen == 0, "%s: slot %d (%s) names page %d generation %d, expected -1 and 0", what, s,
                  kvt_page_status_name(status), page, gen);
    }
}

static void expect_refused(kvt_client *c, const char *what, int rc, const kvt_result *r, int code) {
    CHECK(rc == -1 && kvt_last_error(c) == code && r->status == code && r->entry_count == 0 && r->result_count == 0 &&
          r->first_slot == 0 && r->pool_pages == 0 && r->l3_pages == 0 && r->from_pool == 0 && r->from_l3 == 0,
          "%s: %s, expected %s with no entries and zero counts (entries %d, result %d, first %d)", what,
          kvt_error_name(kvt_last_error(c)), kvt_error_name(code), r->entry_count, r->result_count, r->first_slot);
}

static void write_page(kvt_client *c, int32_t slot, uint8_t fill) {
    uint8_t *p = kvt_slot_addr(c, slot);
    if (p) memset(p, fill, kvt_page_size(c));
}

/* Section 4's entries and Result Count for every operation, against an engine with an L3 that every
 * commit is copied to (the engine's default write-through; spec_engine.py does the same). */
static void test_entries(const char *socket_path) {
    kvt_key root;
    fresh_root("entries", &root);
    uint32_t tokens[48];
    for (int i = 0; i < 48; i++) tokens[i] = (uint32_t)(7000 + i);
    kvt_key k[12];
    CHECK(kvt_page_keys(&root, tokens, 48, 4, 0, k, 12) == 12, "12 keys");
    int err;
    char msg[256];
    kvt_client *c = kvt_connect(socket_path, &root, 1, 16, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect: %s %s", kvt_error_name(err), msg);
    if (!c) return;
    const int P = KVT_PAGE_PINNED, L3 = KVT_PAGE_PINNED_FROM_L3, R = KVT_PAGE_RESERVED, N = KVT_PAGE_NONE, M = KVT_PAGE_MISS;
    const int C = KVT_PAGE_COMMITTED, I = KVT_PAGE_INVALID, B = KVT_PAGE_BUSY;
    kvt_result r;
    int rc;

    rc = kvt_lookup(c, 0, 0, k, 4, &r);
    expect_entries(c, "LOOKUP of new keys", rc, &r, 0, 4, (int[]){N, N, N, N}, 0);
    CHECK(r.pool_pages == 0 && r.l3_pages == 0, "nothing found");
    rc = kvt_reserve(c, 0, 0, k, 4, &r);
    expect_entries(c, "RESERVE", rc, &r, 0, 4, (int[]){R, R, R, R}, 4);
    rc = kvt_reserve(c, 0, 0, k, 4, &r);
    expect_entries(c, "RESERVE of slots already holding those reservations", rc, &r, 0, 4, (int[]){R, R, R, R}, 4);
    rc = kvt_reserve(c, 0, 8, k, 2, &r);
    expect_entries(c, "RESERVE of keys being written", rc, &r, 8, 2, (int[]){B, B}, 0);
    for (int i = 0; i < 4; i++) write_page(c, i, (uint8_t)(0x10 + i));
    int32_t lengths[4] = {100, 200, 0, (int32_t)kvt_page_size(c)};
    rc = kvt_commit(c, 0, 4, lengths, &r);
    expect_entries(c, "COMMIT (one length 0)", rc, &r, 0, 4, (int[]){C, C, I, C}, 3);
    rc = kvt_commit(c, 0, 4, lengths, &r);
    expect_entries(c, "COMMIT again: nothing read back", rc, &r, 0, 4, (int[]){N, N, N, N}, 0);
    rc = kvt_abort(c, 0, 4, &r);
    expect_entries(c, "ABORT of slots holding nothing", rc, &r, 0, 4, (int[]){N, N, N, N}, 0);

    rc = kvt_lookup(c, 0, 0, k, 4, &r);
    expect_entries(c, "LOOKUP: a prefix of 2", rc, &r, 0, 4, (int[]){N, N, N, N}, 2);
    CHECK(r.pool_pages == 2 && r.l3_pages == 0 && rc == r.pool_pages + r.l3_pages, "pool %d, L3 %d", r.pool_pages, r.l3_pages);
    rc = kvt_acquire(c, 0, 4, k, 4, &r);
    expect_entries(c, "ACQUIRE: every slot after the prefix a MISS", rc, &r, 4, 4, (int[]){P, P, M, M}, 2);
    CHECK(r.from_pool == 2 && r.from_l3 == 0, "from pool %d, from L3 %d", r.from_pool, r.from_l3);
    int32_t pinned0 = kvt_slot_page(c, 4);
    rc = kvt_acquire(c, 0, 4, NULL, 4, &r);
    expect_entries(c, "ACQUIRE of held pins", rc, &r, 4, 4, (int[]){P, P, M, M}, 2);
    CHECK(r.from_pool == 2 && kvt_slot_page(c, 4) == pinned0, "a held pin counts From Pool: %d", r.from_pool);
    rc = kvt_lookup(c, 0, 4, NULL, 4, &r);
    expect_entries(c, "LOOKUP over held pins", rc, &r, 4, 4, (int[]){P, P, N, N}, 2);
    CHECK(kvt_reserve(c, 0, 10, k + 4, 1, &r) == 1, "K4 reserved in slot 10");
    rc = kvt_release(c, 4, 4, &r);
    expect_entries(c, "RELEASE", rc, &r, 4, 4, (int[]){N, N, N, N}, 2);
    rc = kvt_release(c, 4, 4, &r);
    expect_entries(c, "RELEASE again", rc, &r, 4, 4, (int[]){N, N, N, N}, 0);
    rc = kvt_release(c, 10, 2, &r);
    expect_entries(c, "RELEASE of a reserved slot: it keeps its reservation", rc, &r, 10, 2, (int[]){R, N}, 0);
    rc = kvt_abort(c, 10, 2, &r);
    expect_entries(c, "ABORT", rc, &r, 10, 2, (int[]){N, N}, 1);

    rc = kvt_flush(c, &r);
    CHECK(rc == 0 && r.entry_count == 0 && r.first_slot == 0, "FLUSH: every backup ended (%d), no entries (%d)", rc, r.entry_count);
    rc = kvt_evict(c, 0, 0, k, 2, &r);
    expect_entries(c, "EVICT", rc, &r, 0, 2, (int[]){N, N}, 2);
    rc = kvt_lookup(c, 0, 0, k, 2, &r);
    expect_entries(c, "LOOKUP of evicted pages", rc, &r, 0, 2, (int[]){N, N}, 2);
    CHECK(r.pool_pages == 0 && r.l3_pages == 2, "in L3 only: pool %d, L3 %d", r.pool_pages, r.l3_pages);
    rc = kvt_acquire(c, 0, 4, k, 2, &r);
    expect_entries(c, "ACQUIRE loading from L3", rc, &r, 4, 2, (int[]){L3, L3}, 2);
    CHECK(r.from_l3 == 2 && r.from_pool == 0, "from L3 %d, from pool %d", r.from_l3, r.from_pool);
    CHECK(kvt_slot_payload_length(c, 4) == 100 && kvt_slot_payload_length(c, 5) == 200, "the loaded pages' trailers: %lld, %lld",
          (long long)kvt_slot_payload_length(c, 4), (long long)kvt_slot_payload_length(c, 5));
    rc = kvt_acquire(c, 0, 4, NULL, 2, &r);
    expect_entries(c, "ACQUIRE again: each load counted once", rc, &r, 4, 2, (int[]){P, P}, 2);
    CHECK(r.from_pool == 2 && r.from_l3 == 0, "from pool %d, from L3 %d", r.from_pool, r.from_l3);
    CHECK(kvt_release(c, 4, 2, &r) == 2, "released");

    rc = kvt_evict(c, 0, 0, k, 2, &r);
    expect_entries(c, "EVICT again", rc, &r, 0, 2, (int[]){N, N}, 2);
    rc = kvt_prefetch(c, 0, 0, k, 2, &r);
    expect_entries(c, "PREFETCH", rc, &r, 0, 2, (int[]){N, N}, 2);
    int in_pool = 0;
    for (int round = 0; round < 1000 && in_pool < 2; round++) { /* bounded: 10 s */
        in_pool = kvt_lookup(c, 0, 0, k, 2, &r) >= 0 ? r.pool_pages : -1;
        if (in_pool < 2) { struct timespec ts = {0, 10000000}; nanosleep(&ts, NULL); }
    }
    CHECK(in_pool == 2, "the prefetch put both pages in the pool (%d)", in_pool);
    rc = kvt_acquire(c, 0, 4, k, 2, &r);
    expect_entries(c, "ACQUIRE after a PREFETCH: the first pin of a prefetched page", rc, &r, 4, 2, (int[]){L3, L3}, 2);
    CHECK(r.from_l3 == 2, "from L3 %d", r.from_l3);
    rc = kvt_acquire(c, 0, 6, k, 2, &r);
    expect_entries(c, "ACQUIRE of the same pages in other slots", rc, &r, 6, 2, (int[]){P, P}, 2);
    CHECK(r.from_pool == 2 && r.from_l3 == 0, "from pool %d, from L3 %d", r.from_pool, r.from_l3);
    rc = kvt_backup(c, 0, 0, k, 2, &r);
    CHECK(rc >= 0 && rc <= 2, "BACKUP started or queued %d of 2", rc);
    expect_entries(c, "BACKUP", rc, &r, 0, 2, (int[]){N, N}, rc);
    rc = kvt_evict(c, 0, 4, NULL, 2, &r);
    expect_entries(c, "EVICT of pinned pages: left alone", rc, &r, 4, 2, (int[]){P, P}, 0);
    CHECK(kvt_release(c, 4, 4, &r) == 4, "released 4");

    /* an ACQUIRE whose prefix ends before a slot that held a pin: the slot is a MISS and holds nothing */
    CHECK(kvt_acquire(c, 0, 13, k + 1, 1, &r) == 1, "K1 pinned in slot 13");
    kvt_key gap[2] = {k[7], k[1]};
    rc = kvt_acquire(c, 0, 12, gap, 2, &r);
    expect_entries(c, "ACQUIRE whose prefix ends at once", rc, &r, 12, 2, (int[]){M, M}, 0);
    rc = kvt_release(c, 13, 1, &r);
    expect_entries(c, "RELEASE of the slot after it", rc, &r, 13, 1, (int[]){N}, 0);

    /* answers that are not OK: no entries, zero counts, the slots as they were */
    CHECK(kvt_acquire(c, 0, 4, k + 3, 1, &r) == 1, "K3 pinned in slot 4");
    rc = kvt_lookup(c, 9, 4, k, 1, &r);
    expect_refused(c, "LOOKUP naming namespace 9", rc, &r, KVT_NAMESPACE_DENIED);
    rc = kvt_reserve(c, 0, 4, k + 3, 1, &r);
    expect_refused(c, "RESERVE over a pin", rc, &r, KVT_SLOT_HELD);
    CHECK(kvt_slot_status(c, 4) == P, "slot 4 still reads PINNED: %s", kvt_page_status_name(kvt_slot_status(c, 4)));
    rc = kvt_reserve(c, 0, 14, NULL, 2, &r);
    CHECK(rc == -1 && kvt_last_error(c) == KVT_ERR_ARGUMENT, "KEYS_IN_SLOTS on slots never given a key is refused before it is sent: %s",
          kvt_error_name(kvt_last_error(c)));
    rc = kvt_request(c, KVT_OP_STATS, 0, 0, 0, 0, NULL, 0, &r);
    CHECK(rc > 0 && r.entry_count == 0 && r.result_count == rc, "STATS: %d values, no entries (%d)", rc, r.entry_count);

    if (prefetch_waits) {
        /* a LOOKUP whose L3 part the engine prefetches and waits for: LOADED, counted in the pool; the
         * first ACQUIRE to pin those pages counts them From L3 */
        CHECK(kvt_reserve(c, 0, 12, k + 8, 4, &r) == 4, "K8..K11 reserved");
        CHECK(kvt_commit(c, 12, 4, (int32_t[]){8, 8, 8, 8}, &r) == 4 && kvt_flush(c, &r) == 0, "committed and backed up");
        CHECK(kvt_evict(c, 0, 12, NULL, 4, &r) == 4, "evicted: %s", kvt_last_error_message(c));
        rc = kvt_lookup(c, 0, 12, NULL, 4, &r);
        expect_entries(c, "LOOKUP whose prefetch was waited for", rc, &r, 12, 4, (int[]){KVT_PAGE_LOADED, KVT_PAGE_LOADED,
                       KVT_PAGE_LOADED, KVT_PAGE_LOADED}, 4);
        CHECK(r.pool_pages == 4 && r.l3_pages == 0, "the loaded pages count in the pool: pool %d, L3 %d", r.pool_pages, r.l3_pages);
        rc = kvt_acquire(c, 0, 12, NULL, 4, &r);
        expect_entries(c, "ACQUIRE of what the LOOKUP loaded", rc, &r, 12, 4, (int[]){L3, L3, L3, L3}, 4);
        CHECK(r.from_l3 == 4, "from L3 %d", r.from_l3);
        CHECK(kvt_release(c, 12, 4, &r) == 4, "released");
    }

    /* the device operations: a pinned slot stays PINNED in a save; a load answers a pinned slot whose page
     * is not a block of the layout's shape INVALID, with the page */
    char path[64];
    const size_t size = (size_t)D_SLOTS * D_BLOCKS * D_S;
    uint8_t *kvbuf = kv_file(path, size);
    CHECK(kvbuf != NULL, "a KV buffer file");
    if (kvbuf) {
        for (size_t i = 0; i < size; i++) kvbuf[i] = (uint8_t)(i * 3);
        const char *paths[1] = {path};
        int layout = kvt_register_host_files(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, D_BLOCKS, paths, NULL, 1, &r);
        CHECK(layout >= 1 && r.entry_count == 0, "REGISTER_KV: layout %d, no entries (%d): %s", layout, r.entry_count,
              kvt_last_error_message(c));
        unlink(path);
        CHECK(kvt_reserve(c, 0, 5, k + 4, 2, &r) == 2, "K4, K5 reserved in slots 5, 6");
        rc = kvt_device_save(c, layout, 4, (int32_t[]){0, 1, D_BLOCKS, 2}, (int32_t[]){4, 4, 4, 4}, 4, &r);
        expect_entries(c, "DEVICE_SAVE", rc, &r, 4, 4, (int[]){P, C, I, N}, 1);
        CHECK(kvt_acquire(c, 0, 5, k + 4, 1, &r) == 1, "K4 pinned in slot 5");
        rc = kvt_device_load(c, layout, 4, (int32_t[]){3, 4, 5}, (int32_t[]){4, 4, 4}, 3, &r);
        expect_entries(c, "DEVICE_LOAD", rc, &r, 4, 3, (int[]){-I, KVT_PAGE_COPIED, N}, 1);
        CHECK(kvt_slot_page(c, 4) >= 0 && kvt_slot_page(c, 5) >= 0, "the loaded slots name their pinned pages");
        CHECK(kvt_release(c, 4, 2, &r) == 2, "released");
        munmap(kvbuf, size);
    }
    CHECK(kvt_close(c) == 0, "close");
    printf("entries against %s: every operation answered for every slot of its range\n", socket_path);
}

/* ---- a session below 1.2 (section 2: paths, the engine's own user) ---- */

static void test_minor1(const char *socket_path) {
    kvt_key root;
    fresh_root("minor1", &root);
    uint32_t tokens[8];
    for (int i = 0; i < 8; i++) tokens[i] = (uint32_t)(9000 + i);
    kvt_key keys[2];
    CHECK(kvt_page_keys(&root, tokens, 8, 4, 0, keys, 2) == 2, "2 keys");
    int err;
    char msg[256];
    kvt_client *c = kvt_connect_minor(socket_path, &root, 1, 8, 1, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect announcing 1.1: %s %s", kvt_error_name(err), msg);
    if (!c) return;
    CHECK(kvt_engine_minor(c) == (expected_engine_minor >= 2 ? expected_engine_minor : 0u) && kvt_session_minor(c) == 1 && kvt_descriptors_mapped(c) == 0,
          "a 1.1 session: engine minor %u, session minor %u, descriptors %d", kvt_engine_minor(c), kvt_session_minor(c),
          kvt_descriptors_mapped(c));
    char ring[256];
    snprintf(ring, sizeof ring, "%s", kvt_file_path(c, KVT_FILE_RING));
    struct stat st;
    CHECK(ring[0] == '/' && stat(ring, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600,
          "the ring opened by its path %s, a file of mode 0600", ring);
    CHECK(!maps_memfd_of(4096 + 2 * (size_t)kvt_ring_capacity(c)), "no memfd ring mapped");
    kvt_result r;
    CHECK(kvt_reserve(c, 0, 0, keys, 2, &r) == 2, "reserved: %s", kvt_last_error_message(c));
    for (int i = 0; i < 2; i++) write_page(c, i, (uint8_t)(0xa0 + i));
    CHECK(kvt_commit(c, 0, 2, (int32_t[]){33, 44}, &r) == 2, "committed: %s", kvt_last_error_message(c));
    CHECK(kvt_acquire(c, 0, 2, keys, 2, &r) == 2, "pinned: %s", kvt_last_error_message(c));
    const uint8_t *p = kvt_slot_addr(c, 3);
    CHECK(p && p[0] == 0xa1 && p[43] == 0xa1 && p[44] == 0 && kvt_slot_payload_length(c, 3) == 44, "the bytes and length read back");
    CHECK(kvt_release(c, 2, 2, &r) == 2, "released");
    int fd = memfd_create("kvt-minor1", MFD_CLOEXEC);
    CHECK(kvt_send_descriptors(c, &fd, 1) == -1 && kvt_last_error(c) == KVT_ERR_UNSUPPORTED, "no DESCRIPTORS below 1.2: %s",
          kvt_error_name(kvt_last_error(c)));
    CHECK(kvt_register_host_fds(c, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, 1, &fd, NULL, 1, &r) == -1 &&
          kvt_last_error(c) == KVT_ERR_UNSUPPORTED, "no HOST_FD registration below 1.2: %s", kvt_error_name(kvt_last_error(c)));
    close(fd);
    kvt_kv_allocation a;
    memset(&a, 0, sizeof a);
    kvt_fd_handle(0, a.handle);
    CHECK(kvt_register_kv(c, KVT_HANDLE_HOST_FD, 0, KVT_ARRANGEMENT_CONTIGUOUS, &SHAPE, 1, &a, 1, &r) == -1 &&
          kvt_last_detail(c) == KVT_REGISTER_HANDLE_KIND, "the engine refuses HOST_FD in a 1.1 session: %s",
          kvt_register_detail_name(kvt_last_detail(c)));
    CHECK(kvt_close(c) == 0, "close");
    int gone = 0;
    for (int round = 0; round < 1000 && !gone; round++) { /* bounded: 10 s */
        gone = access(ring, F_OK) != 0;
        if (!gone) { struct timespec ts = {0, 10000000}; nanosleep(&ts, NULL); }
    }
    CHECK(gone, "the engine unlinked the ring file %s once the client closed", ring);

    c = kvt_connect_minor(socket_path, &root, 1, 8, 0, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect announcing 1.0: %s %s", kvt_error_name(err), msg);
    if (c) {
        int32_t blocks = 0, valid = 1;
        CHECK(kvt_session_minor(c) == 0 && kvt_device_load(c, 1, 0, &blocks, &valid, 1, &r) == -1 &&
              kvt_last_error(c) == KVT_UNKNOWN_TYPE, "device operations in a 1.0 session: %s", kvt_error_name(kvt_last_error(c)));
        CHECK(kvt_close(c) == 0, "close");
    }
    printf("a 1.1 session against %s: the files opened by path, bytes and lengths read back, HOST_FD refused\n", socket_path);
}

/* Protocol 1.3's combined requests against a 1.3 engine: LOOKUP_AND_LOCK pins the committed prefix and
 * reserves the rest (or up to its limit), COMMIT_AND_RELEASE drops the pins and commits the reservations,
 * every entry and count as section 4 says and every byte read back; a Reserve Limit out of range and a
 * slot holding a reservation refused by the client; BACKUP on a COMMIT answered MALFORMED by the engine; a
 * 1.2 session refusing both with KVT_ERR_UNSUPPORTED, and the engine answering one sent raw UNKNOWN_TYPE. */
static void test_combined(const char *socket_path) {
    kvt_key root;
    fresh_root("combined", &root);
    uint32_t tokens[24];
    for (int i = 0; i < 24; i++) tokens[i] = (uint32_t)(11000 + i);
    kvt_key k[6];
    CHECK(kvt_page_keys(&root, tokens, 24, 4, 0, k, 6) == 6, "6 keys");
    int err;
    char msg[256];
    kvt_client *c = kvt_connect(socket_path, &root, 1, 16, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect: %s %s", kvt_error_name(err), msg);
    if (!c) return;
    CHECK(kvt_session_minor(c) == 3, "a 1.3 session: 1.%u", kvt_session_minor(c));
    const int P = KVT_PAGE_PINNED, R = KVT_PAGE_RESERVED, N = KVT_PAGE_NONE, M = KVT_PAGE_MISS, C = KVT_PAGE_COMMITTED;
    kvt_result r;
    int rc;
    uint32_t size = kvt_page_size(c);
    int32_t lengths[6];
    for (int i = 0; i < 6; i++) lengths[i] = (int32_t)(100 + i);

    /* the first two pages with the fine-grained requests */
    CHECK(kvt_reserve(c, 0, 0, k, 2, &r) == 2, "reserve 2");
    for (int i = 0; i < 2; i++) write_page(c, i, (uint8_t)(0x40 + i));
    CHECK(kvt_commit(c, 0, 2, lengths, &r) == 2, "commit 2");

    rc = kvt_lookup_and_lock(c, 0, 4, k, 6, KVT_RESERVE_ALL, &r);
    expect_entries(c, "LOOKUP_AND_LOCK: the prefix pinned, the rest reserved", rc, &r, 4, 6, (int[]){P, P, R, R, R, R}, 2);
    CHECK(r.pool_pages == 4 && r.from_pool == 2, "reserved %d, from pool %d", r.pool_pages, r.from_pool);
    for (int i = 0; i < 2; i++) {
        const uint8_t *p = kvt_slot_addr(c, 4 + i);
        CHECK(p && p[0] == 0x40 + i && p[lengths[i] - 1] == 0x40 + i && kvt_slot_payload_length(c, 4 + i) == lengths[i],
              "pinned page %d holds its bytes", i);
    }
    for (int i = 2; i < 6; i++) write_page(c, 4 + i, (uint8_t)(0x40 + i));
    rc = kvt_commit_and_release(c, 4, 6, lengths, 0, &r);
    expect_entries(c, "COMMIT_AND_RELEASE: pins dropped, reservations committed", rc, &r, 4, 6, (int[]){N, N, C, C, C, C}, 4);
    CHECK(r.pool_pages == 2, "pins dropped %d", r.pool_pages);
    rc = kvt_acquire(c, 0, 4, NULL, 6, &r);
    CHECK(rc == 6, "all 6 committed pages acquired: %d", rc);
    for (int i = 0; i < 6 && rc == 6; i++) {
        const uint8_t *p = kvt_slot_addr(c, 4 + i);
        CHECK(p && p[0] == 0x40 + i && kvt_slot_payload_length(c, 4 + i) == lengths[i] && kvt_page_verify_payload(c, kvt_slot_page(c, 4 + i)) == 1,
              "page %d: its bytes, its length and its CRC32C", i);
    }
    CHECK(kvt_release(c, 4, 6, &r) == 6, "release");

    /* a limit of 1: one key reserved after the prefix, the rest MISS */
    uint32_t t2[16];
    for (int i = 0; i < 16; i++) t2[i] = (uint32_t)(12000 + i);
    kvt_key fresh[4];
    CHECK(kvt_page_keys(&root, t2, 16, 4, 0, fresh, 4) == 4, "4 fresh keys");
    rc = kvt_lookup_and_lock(c, 0, 0, fresh, 4, 1, &r);
    expect_entries(c, "LOOKUP_AND_LOCK with a limit of 1", rc, &r, 0, 4, (int[]){R, M, M, M}, 0);
    CHECK(r.pool_pages == 1, "reserved %d", r.pool_pages);
    CHECK(kvt_lookup_and_lock(c, 0, 0, fresh, 4, 1, &r) == -1 && kvt_last_error(c) == KVT_ERR_ARGUMENT,
          "a slot holding a reservation is refused by the client: %s", kvt_error_name(kvt_last_error(c)));
    CHECK(kvt_abort(c, 0, 4, &r) == 1, "abort the reservation");
    CHECK(kvt_lookup_and_lock(c, 0, 0, fresh, 4, 5, &r) == -1 && kvt_last_error(c) == KVT_ERR_ARGUMENT, "a limit above the count");
    CHECK(kvt_lookup_and_lock(c, 0, 0, fresh, 4, -2, &r) == -1 && kvt_last_error(c) == KVT_ERR_ARGUMENT, "a limit below -1");

    /* sent raw, a LOOKUP_AND_LOCK carries Reserve Limit 0: an ACQUIRE, nothing reserved */
    uint8_t body[16 * 4];
    for (int i = 0; i < 4; i++) memcpy(body + 16 * i, fresh[i].bytes, 16);
    rc = kvt_request(c, KVT_OP_LOOKUP_AND_LOCK, 0, 0, 0, 4, body, sizeof body, &r);
    expect_entries(c, "a raw LOOKUP_AND_LOCK (Reserve Limit 0)", rc, &r, 0, 4, (int[]){M, M, M, M}, 0);
    CHECK(r.pool_pages == 0, "reserved %d", r.pool_pages);
    int32_t one = 64;
    rc = kvt_request(c, KVT_OP_COMMIT, 0, 2 /* BACKUP */, 0, 1, &one, 4, &r);
    CHECK(rc == -1 && kvt_last_error(c) == KVT_MALFORMED, "BACKUP on a COMMIT: %s", kvt_error_name(kvt_last_error(c)));
    rc = kvt_lookup_and_lock(c, 0, 0, fresh, 4, KVT_RESERVE_ALL, &r);
    expect_entries(c, "LOOKUP_AND_LOCK after the refusals", rc, &r, 0, 4, (int[]){R, R, R, R}, 0);
    for (int i = 0; i < 4; i++) write_page(c, i, 0x77);
    int32_t whole[4] = {(int32_t)size, (int32_t)size, (int32_t)size, (int32_t)size};
    rc = kvt_commit_and_release(c, 0, 4, whole, 1, &r);
    expect_entries(c, "COMMIT_AND_RELEASE with BACKUP", rc, &r, 0, 4, (int[]){C, C, C, C}, 4);
    CHECK(kvt_close(c) == 0, "close");

    /* a 1.2 session knows neither */
    c = kvt_connect_minor(socket_path, &root, 1, 8, 2, &err, msg, sizeof msg);
    CHECK(c != NULL, "connect announcing 1.2: %s %s", kvt_error_name(err), msg);
    if (c) {
        CHECK(kvt_lookup_and_lock(c, 0, 0, fresh, 2, KVT_RESERVE_ALL, &r) == -1 && kvt_last_error(c) == KVT_ERR_UNSUPPORTED,
              "LOOKUP_AND_LOCK in a 1.2 session: %s", kvt_error_name(kvt_last_error(c)));
        CHECK(kvt_commit_and_release(c, 0, 2, whole, 0, &r) == -1 && kvt_last_error(c) == KVT_ERR_UNSUPPORTED,
              "COMMIT_AND_RELEASE in a 1.2 session");
        rc = kvt_request(c, KVT_OP_COMMIT_AND_RELEASE, 0, 0, 0, 1, &one, 4, &r);
        CHECK(rc == -1 && kvt_last_error(c) == KVT_UNKNOWN_TYPE, "sent raw in a 1.2 session: %s", kvt_error_name(kvt_last_error(c)));
        CHECK(kvt_close(c) == 0, "close");
    }
    printf("combined requests against %s: a prefix locked and the rest reserved in one request, committed and released in another\n",
           socket_path);
}

/* ---- the scenarios ---- */

typedef struct scenario {
    const char *name;
    void (*run)(const char *socket_path);
} scenario;

static const scenario SCENARIOS[] = {
    {"basic", test_engine}, {"device", test_device}, {"host-fd", test_host_fd}, {"entries", test_entries}, {"minor1", test_minor1},
    {"combined", test_combined},
};
#define N_SCENARIOS (sizeof SCENARIOS / sizeof SCENARIOS[0])

/* The chaos client's page pattern and request draws (chaos/page_pattern.h) against values bench's Java
 * PagePattern and SplittableRandom produce (ChaosClientVectorsTest asserts the same of the Java): words 0,
 * 1 and 2047 and the SHA-256 of a 16 KiB page, for keys that exercise each half, and one key the chaos
 * namespace's key chain makes from tokens. */
static void test_chaos_pattern(void) {
    static const struct {
        uint64_t high, low, w0, w1, wlast;
        const char *sha;
    } pages[] = {
        {0, 0, 0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull, 0x28b3bf5520dddf02ull,
         "b4f179edd8a88ae4fa68d7e5bf2e987c90d5d19f093bef2e0847487253b64678"},
        {0x0123456789abcdefull, 0xfedcba9876543210ull, 0x1727f342e7bd80deull, 0x73c5b0f22f84f43full, 0x9dee89a02a073577ull,
         "8184e86c166376dcf455fb168813c507e264b5b3143a01835367a69de77e067c"},
        {0xffffffffffffffffull, 0, 0xe4d971771b652c20ull, 0xe99ff867dbf682c9ull, 0xfda5fa35cc1123d6ull,
         "486814438291a8bcb51808a4289d46438bb59a0064f2299098b634b40b2cae57"},
        {0x4c1475d89b15738aull, 0x68acd1ba4cb6e331ull, 0x57cd2f6528f45cecull, 0xe1fad11b3700e0a1ull, 0x69e53abd02ef4df4ull,
         "814dd13727b2a33a27617123ce1b44caabd3a0b7697e2661b6699a822f323ab1"},
    };
    static uint8_t page[16384];
    for (size_t k = 0; k < sizeof pages / sizeof pages[0]; k++) {
        kvt_pattern_fill(page, pages[k].high, pages[k].low, sizeof page);
        CHECK(kvt_pattern_get(page, 0) == pages[k].w0, "key %zu word 0 %016llx", k, (unsigned long long)kvt_pattern_get(page, 0));
        CHECK(kvt_pattern_get(page, 8) == pages[k].w1, "key %zu word 1", k);
        CHECK(kvt_pattern_get(page, sizeof page - 8) == pages[k].wlast, "key %zu word 2047", k);
        kvt_sha256 s;
        uint8_t d[32];
        char h[65];
        kvt_sha256_init(&s);
        kvt_sha256_update(&s, page, sizeof page);
        kvt_sha256_final(&s, d);
        for (int i = 0; i < 32; i++) sprintf(h + 2 * i, "%02x", d[i]);
        CHECK(strcmp(h, pages[k].sha) == 0, "key %zu page SHA-256 %s, expected %s", k, h, pages[k].sha);
        CHECK(kvt_pattern_matches(page, pages[k].high, pages[k].low, sizeof page), "key %zu matches its own pattern", k);
        page[sizeof page / 2] ^= 0x10;
        CHECK(!kvt_pattern_matches(page, pages[k].high, pages[k].low, sizeof page), "key %zu with a byte flipped", k);
    }
    /* The last key: the second page of tokens 0..15 then conversation 3's first turn, in the chaos namespace. */
    kvt_key root, keys[2];
    uint32_t tokens[32];
    for (uint32_t i = 0; i < 32; i++) tokens[i] = i < 16 ? i : 50000000u + 3u * 100003u + (i - 16);
    kvt_namespace_root("chaos", "chaos-page16", 0, "", &root);
    CHECK(kvt_page_keys(&root, tokens, 32, 16, 0, keys, 2) == 2, "two chaos keys");
    CHECK(kvt_pattern_be64(keys[1].bytes) == pages[3].high && kvt_pattern_be64(keys[1].bytes + 8) == pages[3].low,
          "the chaos key chain's second key");
    static const struct {
        int64_t seed;
        int draws[36];
    } randoms[] = {
        {20000061, {2, 2, 0, 7, 13, 1, 3, 0, 2, 0, 3, 2, 4, 11, 2, 3, 5, 2, 7, 13, 2, 0, 4, 2, 6, 15, 2, 7, 14, 1, 3, 8, 2, 3, 7, 2}},
        {-7, {2, 1, 1, 5, 11, 1, 1, 0, 2, 3, 7, 0, 5, 10, 0, 5, 10, 1, 5, 13, 0, 2, 8, 1, 7, 15, 1, 7, 15, 1, 7, 15, 2, 6, 12, 0}},
    };
    for (size_t k = 0; k < sizeof randoms / sizeof randoms[0]; k++) {
        kvt_split_random r = {(uint64_t)randoms[k].seed};
        for (int i = 0; i < 36; i++) {
            int bound = i % 3 == 0 ? 8 : i % 3 == 1 ? 16 : 3;
            int got = kvt_random_next_bounded(&r, bound);
            CHECK(got == randoms[k].draws[i], "seed %lld draw %d of nextInt(%d): %d, expected %d", (long long)randoms[k].seed, i, bound, got,
                  randoms[k].draws[i]);
        }
    }
}

int main(int argc, char **argv) {
    test_sha256();
    test_keys();
    test_engine_keys();
    test_hello();
    test_welcome();
    test_descriptors_message();
    test_crc32c();
    test_trailer();
    test_counter_record();
    test_request_header();
    test_response();
    test_device_codecs();
    test_ring();
    test_names();
    test_chaos_pattern();
    const char *socket_path = NULL;
    int first_scenario = argc, usage = 0;
    for (int i = 1; i < argc && first_scenario == argc; i++) {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) socket_path = argv[++i];
        else if (strcmp(argv[i], "--engine-minor") == 0 && i + 1 < argc) expected_engine_minor = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--prefetch-waits") == 0) prefetch_waits = 1;
        else if (argv[i][0] != '-') first_scenario = i;
        else usage = 1;
    }
    for (int i = first_scenario; i < argc && !usage; i++) {
        size_t k = 0;
        while (k < N_SCENARIOS && strcmp(SCENARIOS[k].name, argv[i]) != 0) k++;
        usage = k == N_SCENARIOS;
    }
    if (usage || (first_scenario < argc && !socket_path)) {
        fprintf(stderr, "usage: %s [--socket PATH [--engine-minor 1|2|3] [--prefetch-waits] [SCENARIO...]]\n  scenarios:", argv[0]);
        for (size_t k = 0; k < N_SCENARIOS; k++) fprintf(stderr, " %s", SCENARIOS[k].name);
        fprintf(stderr, " (default: basic device, then host-fd entries minor1 against a 1.2 engine, then combined against 1.3)\n");
        return 2;
    }
    if (socket_path) {
        if (first_scenario == argc) {
            test_engine(socket_path);
            test_device(socket_path);
            if (expected_engine_minor >= 2) {
                test_host_fd(socket_path);
                test_entries(socket_path);
                test_minor1(socket_path);
            }
            if (expected_engine_minor >= 3) test_combined(socket_path);
        }
        for (int i = first_scenario; i < argc; i++)
            for (size_t k = 0; k < N_SCENARIOS; k++)
                if (strcmp(SCENARIOS[k].name, argv[i]) == 0) SCENARIOS[k].run(socket_path);
    }
    printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}

/* Internals of the kvtier C client: SHA-256, the wire codecs and the ring, kept apart from the
 * connection so that the C test checks them against docs/ipc-protocol.md without an engine. */
#ifndef KVT_INTERNAL_H
#define KVT_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kvtier_client.h"

/* ---- SHA-256 ---- */
typedef struct kvt_sha256 {
    uint32_t h[8];
    uint64_t length;
    uint8_t block[64];
    size_t used;
} kvt_sha256;

void kvt_sha256_init(kvt_sha256 *s);
void kvt_sha256_update(kvt_sha256 *s, const void *data, size_t n);
void kvt_sha256_final(kvt_sha256 *s, uint8_t digest[32]);

/* ---- little-endian fields ---- */
static inline void kvt_put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void kvt_put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void kvt_put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t kvt_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t kvt_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t kvt_get_u64(const uint8_t *p) {
    return (uint64_t)kvt_get_u32(p) | ((uint64_t)kvt_get_u32(p + 4) << 32);
}

/* ---- protocol constants (docs/ipc-protocol.md) ---- */
#define KVT_HELLO_MAGIC 0x4C4C4548u   /* "HELL" */
#define KVT_WELCOME_MAGIC 0x43574C45u /* "ELWC" */
#define KVT_DESCRIPTORS_MAGIC 0x4446564Bu /* "KVFD" */
#define KVT_MAJOR KVT_PROTOCOL_MAJOR
#define KVT_MINOR KVT_PROTOCOL_MINOR
#define KVT_HELLO_HEADER 24
#define KVT_WELCOME_HEADER 72
#define KVT_WELCOME_DESCRIPTORS 3 /* pool, control file, ring: in that order (section 2) */
#define KVT_DESCRIPTORS_MESSAGE 8
#define KVT_MAX_NAMESPACES 16
#define KVT_MAX_KEYS_LIMIT 65536
#define KVT_CONTROL_MAGIC "KVTIPC01"
#define KVT_RING_MAGIC "KVTRING1"
#define KVT_CONTROL_SIZE 4096
#define KVT_CTL_STATE 12
#define KVT_CTL_EPOCH 16
#define KVT_CTL_PID 24
#define KVT_CTL_HEARTBEAT 64
#define KVT_CTL_DOORBELL 128
#define KVT_STATE_OPEN 1
#define KVT_STATE_CLOSED 2
#define KVT_RING_HEADER 4096
#define KVT_RH_CLIENT_ID 8
#define KVT_RH_CAPACITY 12
#define KVT_RH_EPOCH 16
#define KVT_RH_REQ_TAIL 64
#define KVT_RH_REQ_HEAD 128
#define KVT_RH_RESP_TAIL 192
#define KVT_RH_RESP_HEAD 256
#define KVT_RH_CLIENT_SLEEPING 320
#define KVT_RH_CLIENT_HEARTBEAT 384
#define KVT_RH_DISCONNECT 448
#define KVT_RECORD_HEADER 8
#define KVT_REQUEST_HEADER 32
#define KVT_RESPONSE_HEADER 48
#define KVT_ENTRY_SIZE 12
#define KVT_FLAG_KEYS_IN_SLOTS 1u
#define KVT_FLAG_BACKUP 2u        /* COMMIT_AND_RELEASE only (1.3): copy each committed page to L3 */
#define KVT_RESERVE_LIMIT_AT 28   /* a LOOKUP_AND_LOCK's Reserve Limit: the header's reserved word (1.3) */
#define KVT_REGISTER_KV_FIXED 48 /* REGISTER_KV's body before its allocations (record offsets 32..80) */
#define KVT_ALLOCATION_SIZE 72
#define KVT_DEVICE_COPY_FIXED 8   /* DEVICE_LOAD / DEVICE_SAVE body before its (block, tokens) pairs */

/* the pool file (section 11) */
#define KVT_POOL_MAGIC "KVTPOOL1"
#define KVT_POOL_LAYOUT_VERSION 3
#define KVT_PH_LAYOUT_VERSION 8
#define KVT_PH_STATE 12
#define KVT_PH_PAGE_SIZE 16
#define KVT_PH_FRAME_LENGTH 24
#define KVT_PH_DATA_OFFSET 64
#define KVT_PH_COUNTERS_OFFSET 80
#define KVT_PH_COUNTERS_LENGTH 88
#define KVT_PH_EPOCH 112
#define KVT_PH_SIZE 120
#define KVT_TRAILER_MAGIC "KVTPAGE1"
#define KVT_TRAILER_SIZE 68
#define KVT_TRAILER_CHECKED 64 /* the Trailer CRC32C covers bytes 0..63 */
#define KVT_COUNTER_RECORDS 4096 /* the records start after 512 values of 8 bytes */
#define KVT_COUNTER_RECORD_SIZE 256
#define KVT_COUNTERS_SIZE (KVT_COUNTER_RECORDS + KVT_COUNTERS_MAX * KVT_COUNTER_RECORD_SIZE)
#define KVT_COUNTER_NAME_MAX 52
#define KVT_COUNTER_DESCRIPTION_MAX 188

static inline uint64_t kvt_align8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* HELLO: writes 24 + 16 * ns_count bytes into out; returns that length. */
size_t kvt_encode_hello(uint8_t *out, uint32_t max_keys, const kvt_key *namespaces, uint32_t ns_count,
                        uint32_t pid);

typedef struct kvt_welcome {
    uint32_t status;
    uint32_t client_id;
    uint32_t max_keys;
    uint64_t epoch;
    uint32_t page_size;
    uint32_t page_count;
    uint64_t data_offset;
    uint64_t frame_length;
    uint32_t ring_capacity;
    uint32_t client_timeout_ms;
    uint32_t max_message_length;
    uint32_t engine_minor; /* offset 60: 2, or 0 from an engine before 1.2 */
    uint32_t descriptors;  /* offset 64: 3 attached to this WELCOME, or 0 */
    /* pointers into the decoded buffer, not NUL-terminated; message set when status != 0 */
    const char *pool_path; uint32_t pool_path_len;
    const char *control_path; uint32_t control_path_len;
    const char *ring_path; uint32_t ring_path_len;
    const char *message; uint32_t message_len;
} kvt_welcome;

/* Decodes a WELCOME of `len` bytes. Returns 1 when complete, 0 when more bytes are needed,
 * -1 when malformed (bad magic, non-zero reserved fields are tolerated). */
int kvt_decode_welcome(const uint8_t *buf, size_t len, kvt_welcome *w);

/* DESCRIPTORS (section 2): writes the 8-byte message announcing `count` descriptors. */
void kvt_encode_descriptors(uint8_t out[KVT_DESCRIPTORS_MESSAGE], uint32_t count);

/* A page's trailer (section 11), from its 68 bytes: 0 when its magic is "KVTPAGE1" and its Trailer
 * CRC32C matches bytes 0..63, -1 otherwise (`out` filled either way). */
int kvt_decode_trailer(const uint8_t *trailer, kvt_page_trailer *out);

/* One 256-byte counter record (section 11): 1 it exists (out filled), 0 Record State is not 1, -1 a
 * length runs past its field. Reads Record State with acquire first. */
int kvt_decode_counter_record(const uint8_t *record, int32_t id, kvt_counter_info *out);

/* Request header (32 bytes). */
void kvt_encode_request_header(uint8_t *out, uint32_t length, int32_t type, uint64_t request_id,
                               int32_t first_slot, int32_t count, uint16_t ns, uint16_t flags);

/* REGISTER_KV's body (the record after its 32-byte header): writes 48 + 72 * count bytes into out
 * and returns that length. */
size_t kvt_encode_register_kv(uint8_t *out, uint32_t handle_kind, int32_t device, uint16_t arrangement,
                              const kvt_kv_shape *shape, int32_t blocks, const kvt_kv_allocation *allocations,
                              int32_t count);

/* DEVICE_LOAD / DEVICE_SAVE's body: writes 8 + 8 * count bytes into out and returns that length. */
size_t kvt_encode_device_copy(uint8_t *out, int32_t layout_id, const int32_t *blocks, const int32_t *valid_tokens,
                              int32_t count);

typedef struct kvt_response {
    int32_t length;
    int32_t type;
    uint64_t request_id;
    kvt_result result;
    const uint8_t *entries; /* entry_count x 12 bytes */
    const uint8_t *body;    /* bytes after the header (entries, or STATS' body) */
    uint32_t body_len;
} kvt_response;

/* Decodes a response record of `len` bytes: 0, or -1 when its lengths are inconsistent. */
int kvt_decode_response(const uint8_t *rec, uint32_t len, kvt_response *r);

/* ---- one ring: a view of the data and of its producer's and consumer's counters ---- */
typedef struct kvt_ring {
    uint8_t *data;
    uint32_t capacity; /* a power of two */
    _Atomic uint64_t *tail;
    _Atomic uint64_t *head;
} kvt_ring;

/* Producer: bytes of ring a record of `length` bytes takes at the current tail, padding
 * included. */
uint64_t kvt_ring_needed(const kvt_ring *r, uint64_t tail, uint32_t length);

/* Producer: writes the record (length bytes at rec, Length field included) when it fits;
 * 1 written (tail published with release), 0 no room now, -1 can never fit. */
int kvt_ring_offer(kvt_ring *r, const uint8_t *rec, uint32_t length);

/* Consumer: the next non-padding record at head (padding records are consumed on the way).
 * Returns 1 and sets *rec / *length (pointer into the ring), 0 when empty, -1 when the record
 * at head is malformed. The caller calls kvt_ring_consume() when done with the bytes. */
int kvt_ring_peek(kvt_ring *r, const uint8_t **rec, uint32_t *length);
void kvt_ring_consume(kvt_ring *r, uint32_t length);

#endif

/* The wire layouts and the ring of docs/ipc-protocol.md, sections 2, 4 and 10. */
#include <string.h>

#include "kvt_internal.h"

size_t kvt_encode_hello(uint8_t *out, uint32_t max_keys, const kvt_key *namespaces, uint32_t ns_count,
                        uint32_t pid) {
    kvt_put_u32(out + 0, KVT_HELLO_MAGIC);
    kvt_put_u16(out + 4, KVT_MAJOR);
    kvt_put_u16(out + 6, KVT_MINOR);
    kvt_put_u32(out + 8, max_keys);
    kvt_put_u32(out + 12, ns_count);
    kvt_put_u32(out + 16, pid);
    kvt_put_u32(out + 20, 0);
    for (uint32_t i = 0; i < ns_count; i++) memcpy(out + KVT_HELLO_HEADER + 16 * i, namespaces[i].bytes, 16);
    return KVT_HELLO_HEADER + 16 * (size_t)ns_count;
}

/* One "u32 length + UTF-8" field at *at: 1 complete, 0 more bytes needed. */
static int path_field(const uint8_t *buf, size_t len, size_t *at, const char **s, uint32_t *n) {
    if (len < *at + 4) return 0;
    uint32_t l = kvt_get_u32(buf + *at);
    if (len - (*at + 4) < l) return 0;
    *s = (const char *)buf + *at + 4;
    *n = l;
    *at += 4 + (size_t)l;
    return 1;
}

int kvt_decode_welcome(const uint8_t *buf, size_t len, kvt_welcome *w) {
    memset(w, 0, sizeof *w);
    if (len >= 4 && kvt_get_u32(buf) != KVT_WELCOME_MAGIC) return -1;
    if (len < KVT_WELCOME_HEADER) return 0;
    w->status = kvt_get_u32(buf + 4);
    w->client_id = kvt_get_u32(buf + 8);
    w->max_keys = kvt_get_u32(buf + 12);
    w->epoch = kvt_get_u64(buf + 16);
    w->page_size = kvt_get_u32(buf + 24);
    w->page_count = kvt_get_u32(buf + 28);
    w->data_offset = kvt_get_u64(buf + 32);
    w->frame_length = kvt_get_u64(buf + 40);
    w->ring_capacity = kvt_get_u32(buf + 48);
    w->client_timeout_ms = kvt_get_u32(buf + 52);
    w->max_message_length = kvt_get_u32(buf + 56);
    w->engine_minor = kvt_get_u32(buf + 60);
    w->descriptors = kvt_get_u32(buf + 64);
    size_t at = KVT_WELCOME_HEADER;
    if (w->status != 0) return path_field(buf, len, &at, &w->message, &w->message_len);
    if (!path_field(buf, len, &at, &w->pool_path, &w->pool_path_len)) return 0;
    if (!path_field(buf, len, &at, &w->control_path, &w->control_path_len)) return 0;
    if (!path_field(buf, len, &at, &w->ring_path, &w->ring_path_len)) return 0;
    return 1;
}

void kvt_encode_descriptors(uint8_t out[KVT_DESCRIPTORS_MESSAGE], uint32_t count) {
    kvt_put_u32(out, KVT_DESCRIPTORS_MAGIC);
    kvt_put_u32(out + 4, count);
}

/* CRC32C, reflected polynomial 0x82F63B78, a byte at a time from a table made on first use. */
static uint32_t crc_table[256];
static _Atomic int crc_table_ready;

uint32_t kvt_crc32c(const void *data, size_t n) {
    if (!atomic_load_explicit(&crc_table_ready, memory_order_acquire)) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            crc_table[i] = c; /* threads racing here write the same values */
        }
        atomic_store_explicit(&crc_table_ready, 1, memory_order_release);
    }
    const uint8_t *p = data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) crc = crc_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

int kvt_decode_trailer(const uint8_t *t, kvt_page_trailer *out) {
    out->key_high = kvt_get_u64(t + 8);
    out->key_low = kvt_get_u64(t + 16);
    out->payload_length = kvt_get_u64(t + 24);
    out->payload_crc32c = kvt_get_u32(t + 32);
    out->frame_version = kvt_get_u32(t + 36);
    out->page_size = kvt_get_u64(t + 40);
    out->commit_time_ms = kvt_get_u64(t + 48);
    out->namespace_tag = kvt_get_u64(t + 56);
    out->trailer_crc32c = kvt_get_u32(t + 64);
    if (memcmp(t, KVT_TRAILER_MAGIC, 8) != 0) return -1;
    return kvt_crc32c(t, KVT_TRAILER_CHECKED) == out->trailer_crc32c ? 0 : -1;
}

int kvt_decode_counter_record(const uint8_t *r, int32_t id, kvt_counter_info *out) {
    memset(out, 0, sizeof *out);
    out->id = id;
    uint32_t state = atomic_load_explicit((_Atomic uint32_t *)(void *)r, memory_order_acquire);
    if (state != 1) return 0;
    out->type = kvt_get_u32(r + 4);
    uint32_t name_len = kvt_get_u32(r + 8), description_len = kvt_get_u32(r + 64);
    if (name_len > KVT_COUNTER_NAME_MAX || description_len > KVT_COUNTER_DESCRIPTION_MAX) return -1;
    memcpy(out->name, r + 12, name_len);
    memcpy(out->description, r + 68, description_len);
    return 1;
}

void kvt_encode_request_header(uint8_t *out, uint32_t length, int32_t type, uint64_t request_id,
                               int32_t first_slot, int32_t count, uint16_t ns, uint16_t flags) {
    kvt_put_u32(out + 0, length);
    kvt_put_u32(out + 4, (uint32_t)type);
    kvt_put_u64(out + 8, request_id);
    kvt_put_u32(out + 16, (uint32_t)first_slot);
    kvt_put_u32(out + 20, (uint32_t)count);
    kvt_put_u16(out + 24, ns);
    kvt_put_u16(out + 26, flags);
    kvt_put_u32(out + 28, 0);
}

size_t kvt_encode_register_kv(uint8_t *out, uint32_t handle_kind, int32_t device, uint16_t arrangement,
                              const kvt_kv_shape *shape, int32_t blocks, const kvt_kv_allocation *allocations,
                              int32_t count) {
    kvt_put_u32(out + 0, handle_kind);
    kvt_put_u32(out + 4, (uint32_t)device);
    kvt_put_u16(out + 8, arrangement);
    kvt_put_u16(out + 10, 0);
    const int32_t fields[6] = {shape->layers, shape->tensors, shape->block_tokens, shape->heads, shape->head_dim,
                               shape->element_bytes};
    for (int i = 0; i < 6; i++) kvt_put_u32(out + 12 + 4 * i, (uint32_t)fields[i]);
    kvt_put_u32(out + 36, (uint32_t)blocks);
    kvt_put_u32(out + 40, (uint32_t)count);
    kvt_put_u32(out + 44, 0);
    for (int32_t i = 0; i < count; i++) {
        uint8_t *a = out + KVT_REGISTER_KV_FIXED + (size_t)KVT_ALLOCATION_SIZE * i;
        kvt_put_u64(a, allocations[i].offset);
        memcpy(a + 8, allocations[i].handle, KVT_HANDLE_BYTES);
    }
    return KVT_REGISTER_KV_FIXED + (size_t)KVT_ALLOCATION_SIZE * (size_t)count;
}

size_t kvt_encode_device_copy(uint8_t *out, int32_t layout_id, const int32_t *blocks, const int32_t *valid_tokens,
                              int32_t count) {
    kvt_put_u32(out + 0, (uint32_t)layout_id);
    kvt_put_u32(out + 4, 0);
    for (int32_t i = 0; i < count; i++) {
        kvt_put_u32(out + KVT_DEVICE_COPY_FIXED + 8 * (size_t)i, (uint32_t)blocks[i]);
        kvt_put_u32(out + KVT_DEVICE_COPY_FIXED + 8 * (size_t)i + 4, (uint32_t)valid_tokens[i]);
    }
    return KVT_DEVICE_COPY_FIXED + 8 * (size_t)count;
}

int kvt_decode_response(const uint8_t *rec, uint32_t len, kvt_response *r) {
    memset(r, 0, sizeof *r);
    if (len < KVT_RESPONSE_HEADER) return -1;
    r->length = (int32_t)kvt_get_u32(rec);
    r->type = (int32_t)kvt_get_u32(rec + 4);
    r->request_id = kvt_get_u64(rec + 8);
    r->result.status = (int32_t)kvt_get_u32(rec + 16);
    r->result.result_count = (int32_t)kvt_get_u32(rec + 20);
    r->result.first_slot = (int32_t)kvt_get_u32(rec + 24);
    r->result.entry_count = (int32_t)kvt_get_u32(rec + 28);
    r->result.pool_pages = (int32_t)kvt_get_u32(rec + 32);
    r->result.l3_pages = (int32_t)kvt_get_u32(rec + 36);
    r->result.from_pool = (int32_t)kvt_get_u32(rec + 40);
    r->result.from_l3 = (int32_t)kvt_get_u32(rec + 44);
    if (r->length < KVT_RESPONSE_HEADER || (uint32_t)r->length != len) return -1;
    if (r->result.entry_count < 0 ||
        (uint64_t)r->result.entry_count * KVT_ENTRY_SIZE > len - KVT_RESPONSE_HEADER) return -1;
    r->body = rec + KVT_RESPONSE_HEADER;
    r->body_len = len - KVT_RESPONSE_HEADER;
    r->entries = r->body;
    return 0;
}

uint64_t kvt_ring_needed(const kvt_ring *r, uint64_t tail, uint32_t length) {
    uint64_t at = tail & (r->capacity - 1);
    uint64_t size = kvt_align8(length);
    return at + size > r->capacity ? (r->capacity - at) + size : size;
}

int kvt_ring_offer(kvt_ring *r, const uint8_t *rec, uint32_t length) {
    if (length < KVT_RECORD_HEADER || kvt_align8(length) > r->capacity) return -1;
    uint64_t tail = atomic_load_explicit(r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(r->head, memory_order_acquire);
    uint64_t needed = kvt_ring_needed(r, tail, length);
    if (tail - head + needed > r->capacity) return 0;
    uint64_t at = tail & (r->capacity - 1);
    if (at + kvt_align8(length) > r->capacity) {
        uint32_t pad = (uint32_t)(r->capacity - at);
        kvt_put_u32(r->data + at, pad);
        kvt_put_u32(r->data + at + 4, 0);
        at = 0;
    }
    memcpy(r->data + at, rec, length);
    atomic_store_explicit(r->tail, tail + needed, memory_order_release);
    return 1;
}

int kvt_ring_peek(kvt_ring *r, const uint8_t **rec, uint32_t *length) {
    for (;;) {
        uint64_t head = atomic_load_explicit(r->head, memory_order_relaxed);
        uint64_t tail = atomic_load_explicit(r->tail, memory_order_acquire);
        if (head >= tail) return 0;
        uint64_t at = head & (r->capacity - 1);
        if ((head & 7) != 0 || tail - head < KVT_RECORD_HEADER) return -1;
        uint32_t len = kvt_get_u32(r->data + at);
        int32_t type = (int32_t)kvt_get_u32(r->data + at + 4);
        if (len < KVT_RECORD_HEADER || at + len > r->capacity || kvt_align8(len) > tail - head) return -1;
        if (type == 0) {
            /* a padding record runs exactly to the end of the data (section 4): anything else is not one */
            if (len != r->capacity - at) return -1;
            atomic_store_explicit(r->head, head + kvt_align8(len), memory_order_release);
            continue;
        }
        *rec = r->data + at;
        *length = len;
        return 1;
    }
}

void kvt_ring_consume(kvt_ring *r, uint32_t length) {
    uint64_t head = atomic_load_explicit(r->head, memory_order_relaxed);
    atomic_store_explicit(r->head, head + kvt_align8(length), memory_order_release);
}

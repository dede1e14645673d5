/* Page keys as docs/keys.md defines them. */
#include <string.h>

#include "kvt_internal.h"

static void put_field(kvt_sha256 *s, const char *x) {
    size_t n = x == NULL ? 0 : strlen(x);
    uint8_t len[4];
    kvt_put_u32(len, (uint32_t)n);
    kvt_sha256_update(s, len, 4);
    if (n > 0) kvt_sha256_update(s, x, n);
}

void kvt_namespace_root(const char *model_id, const char *kv_layout, uint32_t tp_rank,
                        const char *tenant_salt, kvt_key *root_out) {
    kvt_sha256 s;
    uint8_t digest[32], rank[4];
    kvt_sha256_init(&s);
    kvt_sha256_update(&s, "kvtier:ns:v1", 12);
    put_field(&s, model_id);
    put_field(&s, kv_layout);
    kvt_put_u32(rank, tp_rank);
    kvt_sha256_update(&s, rank, 4);
    put_field(&s, tenant_salt);
    kvt_sha256_final(&s, digest);
    memcpy(root_out->bytes, digest, 16);
}

int64_t kvt_page_keys(const kvt_key *root, const uint32_t *tokens, size_t n_tokens,
                      uint32_t tokens_per_page, int include_partial, kvt_key *keys_out,
                      size_t max_keys) {
    if (tokens_per_page == 0) return -1;
    size_t full = n_tokens / tokens_per_page;
    size_t pages = full + (include_partial && n_tokens % tokens_per_page != 0 ? 1 : 0);
    kvt_key previous = *root;
    for (size_t i = 0; i < pages && i < max_keys; i++) {
        size_t start = i * (size_t)tokens_per_page;
        size_t n = n_tokens - start < tokens_per_page ? n_tokens - start : tokens_per_page;
        kvt_sha256 s;
        uint8_t digest[32], word[4];
        kvt_sha256_init(&s);
        kvt_sha256_update(&s, "kvtier:page:v1", 14);
        kvt_sha256_update(&s, previous.bytes, 16);
        kvt_put_u32(word, (uint32_t)n);
        kvt_sha256_update(&s, word, 4);
        for (size_t t = 0; t < n; t++) {
            kvt_put_u32(word, tokens[start + t]);
            kvt_sha256_update(&s, word, 4);
        }
        kvt_sha256_final(&s, digest);
        memcpy(keys_out[i].bytes, digest, 16);
        previous = keys_out[i];
    }
    return (int64_t)pages;
}

int64_t kvt_compute_keys(const char *model_id, const char *kv_layout, uint32_t tp_rank,
                         const char *tenant_salt, const uint32_t *tokens, size_t n_tokens,
                         uint32_t tokens_per_page, int include_partial, kvt_key *keys_out,
                         size_t max_keys) {
    kvt_key root;
    kvt_namespace_root(model_id, kv_layout, tp_rank, tenant_salt, &root);
    return kvt_page_keys(&root, tokens, n_tokens, tokens_per_page, include_partial, keys_out, max_keys);
}

/* An engine's page id under a namespace: SHA-256(tag || root || u32le(len) || id [|| u32be(group)]),
 * the group being the tail of vLLM's OffloadKey, so the field's length counts it. */
static void engine_key(const char *tag, size_t tag_len, const kvt_key *root, const void *id, size_t len,
                       const uint8_t *tail, size_t tail_len, kvt_key *key_out) {
    kvt_sha256 s;
    uint8_t digest[32], word[4];
    kvt_sha256_init(&s);
    kvt_sha256_update(&s, tag, tag_len);
    kvt_sha256_update(&s, root->bytes, 16);
    kvt_put_u32(word, (uint32_t)(len + tail_len));
    kvt_sha256_update(&s, word, 4);
    kvt_sha256_update(&s, id, len);
    if (tail_len > 0) kvt_sha256_update(&s, tail, tail_len);
    kvt_sha256_final(&s, digest);
    memcpy(key_out->bytes, digest, 16);
}

int kvt_sglang_page_key(const kvt_key *root, const char *page_hash, size_t len, kvt_key *key_out) {
    if (page_hash == NULL || len == 0) return -1;
    engine_key("kvtier:sglang:v1", 16, root, page_hash, len, NULL, 0, key_out);
    return 0;
}

int kvt_vllm_page_key(const kvt_key *root, const uint8_t *block_hash, size_t len, uint32_t group_index,
                      kvt_key *key_out) {
    if (block_hash == NULL || len == 0) return -1;
    uint8_t group[4] = {(uint8_t)(group_index >> 24), (uint8_t)(group_index >> 16), (uint8_t)(group_index >> 8),
                        (uint8_t)group_index};
    engine_key("kvtier:vllm:v1", 14, root, block_hash, len, group, 4, key_out);
    return 0;
}

void kvt_key_hex(const kvt_key *key, char out[33]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[key->bytes[i] >> 4];
        out[2 * i + 1] = digits[key->bytes[i] & 15];
    }
    out[32] = '\0';
}

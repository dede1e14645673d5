#!/usr/bin/env python3
"""Reference implementation of kvtier page keys (docs/keys.md), standard library only.

Run it to print the test vectors of docs/keys.md; import it to compute keys from another client.
"""
import hashlib
import struct

ROOT_TAG = b"kvtier:ns:v1"
PAGE_TAG = b"kvtier:page:v1"
L3_TAG = b"kvtier:l3:v1"
SGLANG_TAG = b"kvtier:sglang:v1"
VLLM_TAG = b"kvtier:vllm:v1"
LMCACHE_TAG = b"kvtier:lmcache:v1"


def _field(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def namespace_root(model_id: str, kv_layout: str, tp_rank: int, tenant_salt: str) -> bytes:
    """The 16-byte parent of the first page of every chain in this namespace."""
    message = (ROOT_TAG + _field(model_id.encode("utf-8")) + _field(kv_layout.encode("utf-8"))
               + struct.pack("<I", tp_rank) + _field(tenant_salt.encode("utf-8")))
    return hashlib.sha256(message).digest()[:16]


def page_key(parent: bytes, tokens) -> bytes:
    """The 16-byte key of one page of token ids under its parent key."""
    message = PAGE_TAG + parent + struct.pack("<I", len(tokens)) + b"".join(struct.pack("<I", t) for t in tokens)
    return hashlib.sha256(message).digest()[:16]


def key_chain(root: bytes, tokens, page_tokens: int, partial: bool = True):
    """Keys of tokens split into pages of page_tokens; a last partial page gets its own key when partial."""
    keys = []
    parent = root
    end = len(tokens) if partial else len(tokens) - len(tokens) % page_tokens
    for start in range(0, end, page_tokens):
        parent = page_key(parent, tokens[start:start + page_tokens])
        keys.append(parent)
    return keys


def namespace_tag(root: bytes) -> int:
    """The namespace's tag: the root's first 8 bytes as a big-endian integer, or 1 if those are all 0."""
    high = struct.unpack(">Q", root[:8])[0]
    return high if high != 0 else 1


def l3_name(key: bytes, tag: int, salt: str) -> bytes:
    """The name an engine gives a page's object in every L3 tier: the key itself when the page has no
    namespace (tag 0) and the engine no L3 key salt; otherwise a hash of salt, tag and key, so that a
    namespace's objects (and a trust domain's) are apart from every other's."""
    if tag == 0 and salt == "":
        return key
    message = L3_TAG + _field(salt.encode("utf-8")) + struct.pack(">Q", tag) + key
    return hashlib.sha256(message).digest()[:16]


def sglang_page_key(root: bytes, page_hash: str) -> bytes:
    """The 16-byte key of a page SGLang names by ``page_hash`` (its chained SHA-256 hex string, as is)."""
    data = page_hash.encode("utf-8")
    if not data:
        raise ValueError("an SGLang page hash must not be empty")
    return hashlib.sha256(SGLANG_TAG + root + _field(data)).digest()[:16]


def vllm_block_hash_bytes(block_hash) -> bytes:
    """A vLLM block hash as bytes: bytes as they are; an int as 32 bytes big-endian, a negative one
    (Python's built-in hash) first taken modulo 2**64."""
    if isinstance(block_hash, int):
        if block_hash < 0:
            if block_hash < -(1 << 63):
                raise ValueError(f"an int block hash must be >= -2**63, not {block_hash}")
            block_hash += 1 << 64
        if block_hash >= 1 << 256:
            raise ValueError(f"an int block hash must be < 2**256, not {block_hash}")
        return block_hash.to_bytes(32, "big")
    data = bytes(block_hash)
    if not data:
        raise ValueError("a vLLM block hash must not be empty")
    return data


def vllm_offload_key(block_hash, group_index: int = 0) -> bytes:
    """vLLM's OffloadKey: the block hash then the KV cache group index as 4 bytes big-endian."""
    if not 0 <= group_index < 1 << 32:
        raise ValueError(f"a group index must be in [0, 2**32), not {group_index}")
    return vllm_block_hash_bytes(block_hash) + struct.pack(">I", group_index)


def vllm_page_key(root: bytes, offload_key: bytes) -> bytes:
    """The 16-byte key of a block vLLM names by ``offload_key`` (``vllm_offload_key``)."""
    return hashlib.sha256(VLLM_TAG + root + _field(bytes(offload_key))).digest()[:16]


def lmcache_chunk_key(model_name: str, kv_rank: int, chunk_hash: bytes, object_group_id: int = 0, cache_salt: str = "") -> str:
    """The string LMCache gives its native L2 connector for a chunk: model, rank (8 hex digits), group
    (hex), chunk hash (hex) and the cache salt if any, joined by '@'."""
    text = f"{model_name}@{kv_rank:08x}@{object_group_id:x}@{chunk_hash.hex()}"
    return f"{text}@{cache_salt}" if cache_salt else text


def lmcache_page_key(root: bytes, chunk_key: str) -> bytes:
    """The 16-byte key of a chunk LMCache names by ``chunk_key`` (its connector string, as is)."""
    data = chunk_key.encode("utf-8")
    if not data:
        raise ValueError("an LMCache chunk key must not be empty")
    return hashlib.sha256(LMCACHE_TAG + root + _field(data)).digest()[:16]


VECTORS = [
    # (name, model, layout, rank, salt, tokens, page_tokens)
    ("basic", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "", list(range(40)), 16),
    ("tenant salt", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "tenant-a", list(range(40)), 16),
    ("tp rank 1", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp2", 1, "", list(range(40)), 16),
    ("large ids", "Qwen/Qwen3-8B", "fp8/page4", 3, "", [0, 151643, 4294967295, 7, 9], 4),
]


L3_VECTOR_NAMESPACE = ("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "")


SGLANG_HASHES = [
    hashlib.sha256(b"sglang page 0").hexdigest(),
    hashlib.sha256(b"sglang page 1").hexdigest(),
]

VLLM_BLOCKS = [
    # (block hash, group index)
    (hashlib.sha256(b"vllm block 0").digest(), 0),
    (hashlib.sha256(b"vllm block 0").digest(), 1),
    (bytes.fromhex("00000000000000000000000000000000000000000000000000000000000004d2"), 0),
    (1234, 0),
    (-2, 3),
]

LMCACHE_CHUNKS = [
    # (model name, kv rank, chunk hash, object group id, cache salt)
    ("meta-llama/Llama-3.1-8B-Instruct", 0, hashlib.sha256(b"lmcache chunk 0").digest(), 0, ""),
    ("meta-llama/Llama-3.1-8B-Instruct", 1, hashlib.sha256(b"lmcache chunk 0").digest(), 0, ""),
    ("meta-llama/Llama-3.1-8B-Instruct", 0, hashlib.sha256(b"lmcache chunk 0").digest(), 2, "tenant-a"),
]


def main():
    for name, model, layout, rank, salt, tokens, page_tokens in VECTORS:
        root = namespace_root(model, layout, rank, salt)
        print(f"### {name}")
        print(f"- model `{model}`, layout `{layout}`, rank {rank}, salt `{salt}`")
        print(f"- tokens {tokens if len(tokens) < 10 else 'range(' + str(len(tokens)) + ')'}, {page_tokens} tokens per page")
        print(f"- root `{root.hex()}`")
        for i, key in enumerate(key_chain(root, tokens, page_tokens)):
            print(f"- key {i} `{key.hex()}`")
        print()
    key = key_chain(namespace_root(*L3_VECTOR_NAMESPACE), list(range(16)), 16)[0]
    tag = namespace_tag(namespace_root(*L3_VECTOR_NAMESPACE))
    print("### L3 object names")
    print(f"- key `{key.hex()}` (key 0 of the basic vector), namespace tag `{tag:016x}`")
    for salt in ["", "tenant-a"]:
        print(f"- untagged, salt `{salt}`: `{l3_name(key, 0, salt).hex()}`")
        print(f"- tagged, salt `{salt}`: `{l3_name(key, tag, salt).hex()}`")
    print()
    for salt in ["", "tenant-a"]:
        root = namespace_root(L3_VECTOR_NAMESPACE[0], L3_VECTOR_NAMESPACE[1], L3_VECTOR_NAMESPACE[2], salt)
        print(f"### engine page ids, salt `{salt}`")
        print(f"- namespace: model `{L3_VECTOR_NAMESPACE[0]}`, layout `{L3_VECTOR_NAMESPACE[1]}`, rank 0, salt `{salt}`,"
              f" root `{root.hex()}`")
        for page_hash in SGLANG_HASHES:
            print(f"- sglang `{page_hash}`: `{sglang_page_key(root, page_hash).hex()}`")
        for block_hash, group in VLLM_BLOCKS:
            shown = f"int {block_hash}" if isinstance(block_hash, int) else f"bytes {block_hash.hex()}"
            print(f"- vllm {shown}, group {group} (OffloadKey `{vllm_offload_key(block_hash, group).hex()}`):"
                  f" `{vllm_page_key(root, vllm_offload_key(block_hash, group)).hex()}`")
        for chunk in LMCACHE_CHUNKS:
            chunk_key = lmcache_chunk_key(*chunk)
            print(f"- lmcache `{chunk_key}`: `{lmcache_page_key(root, chunk_key).hex()}`")
        print()


if __name__ == "__main__":
    main()

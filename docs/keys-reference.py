#!/usr/bin/env python3
"""Reference implementation of kvtier page keys (docs/keys.md), standard library only.

Run it to print the test vectors of docs/keys.md; import it to compute keys from another client.
"""
import hashlib
import struct

ROOT_TAG = b"kvtier:ns:v1"
PAGE_TAG = b"kvtier:page:v1"
L3_TAG = b"kvtier:l3:v1"


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


VECTORS = [
    # (name, model, layout, rank, salt, tokens, page_tokens)
    ("basic", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "", list(range(40)), 16),
    ("tenant salt", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "tenant-a", list(range(40)), 16),
    ("tp rank 1", "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp2", 1, "", list(range(40)), 16),
    ("large ids", "Qwen/Qwen3-8B", "fp8/page4", 3, "", [0, 151643, 4294967295, 7, 9], 4),
]


L3_VECTOR_NAMESPACE = ("meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1", 0, "")


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


if __name__ == "__main__":
    main()

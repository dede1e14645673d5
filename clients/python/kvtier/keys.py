"""Page keys (docs/keys.md) in pure Python, with hashlib and nothing else: from tokens (the namespace
root and the chained page keys, as the C library computes them too) and from an inference engine's
own page ids (SGLang's chained SHA-256 hex strings, vLLM's block hashes with their group index, LMCache's
chunk key strings).

Every function is a pure function of its arguments: the same inputs give the same key in every
process, on every node, so two instances of one engine serving one model share pages; the namespace
root carries the tenant salt, so tenants stay apart; each scheme hashes under its own tag, so keys of
different schemes never collide.
"""
from __future__ import annotations

import hashlib
import struct
from typing import Iterable, List, Sequence, Union

__all__ = [
    "ROOT_TAG", "PAGE_TAG", "SGLANG_TAG", "VLLM_TAG", "namespace_root", "page_key", "page_keys",
    "sglang_page_key", "vllm_block_hash_bytes", "vllm_offload_key", "vllm_page_key", "vllm_offload_page_key",
    "LMCACHE_TAG", "lmcache_chunk_key", "lmcache_page_key",
]

ROOT_TAG = b"kvtier:ns:v1"
PAGE_TAG = b"kvtier:page:v1"
SGLANG_TAG = b"kvtier:sglang:v1"
VLLM_TAG = b"kvtier:vllm:v1"
LMCACHE_TAG = b"kvtier:lmcache:v1"
KEY_BYTES = 16

BlockHash = Union[bytes, bytearray, memoryview, int]


def _field(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def _root(root: bytes) -> bytes:
    root = bytes(root)
    if len(root) != KEY_BYTES:
        raise ValueError("a namespace root is %d bytes, not %d" % (KEY_BYTES, len(root)))
    return root


def namespace_root(model_id: str, kv_layout: str, tp_rank: int = 0, tenant_salt: str = "") -> bytes:
    """The 16-byte namespace root: the parent of every chain's first page, carrying the tenant salt."""
    if not 0 <= tp_rank < 1 << 32:
        raise ValueError("tp_rank must be in [0, 2**32), not %d" % tp_rank)
    message = (ROOT_TAG + _field(model_id.encode("utf-8")) + _field(kv_layout.encode("utf-8"))
               + struct.pack("<I", tp_rank) + _field(tenant_salt.encode("utf-8")))
    return hashlib.sha256(message).digest()[:KEY_BYTES]


def page_key(parent: bytes, tokens: Sequence[int]) -> bytes:
    """The 16-byte key of one page of token ids (each in [0, 2**32)) under its parent key."""
    message = PAGE_TAG + _root(parent) + struct.pack("<I", len(tokens)) + b"".join(struct.pack("<I", t) for t in tokens)
    return hashlib.sha256(message).digest()[:KEY_BYTES]


def page_keys(root: bytes, tokens: Iterable[int], tokens_per_page: int, include_partial: bool = False) -> List[bytes]:
    """The chained keys of ``tokens`` split into pages of ``tokens_per_page``; a last partial page is
    keyed only when ``include_partial``."""
    if tokens_per_page <= 0:
        raise ValueError("tokens_per_page must be positive, not %d" % tokens_per_page)
    tokens = list(tokens)
    end = len(tokens) if include_partial else len(tokens) - len(tokens) % tokens_per_page
    keys = []
    parent = _root(root)
    for start in range(0, end, tokens_per_page):
        parent = page_key(parent, tokens[start:start + tokens_per_page])
        keys.append(parent)
    return keys


def sglang_page_key(root: bytes, page_hash: str) -> bytes:
    """The kvtier key of a page SGLang names by ``page_hash`` (its chained SHA-256 hex string, taken as
    is) under the namespace ``root``."""
    if not isinstance(page_hash, str):
        raise TypeError("an SGLang page hash is a str, not %s" % type(page_hash).__name__)
    data = page_hash.encode("utf-8")
    if not data:
        raise ValueError("an SGLang page hash must not be empty")
    return hashlib.sha256(SGLANG_TAG + _root(root) + _field(data)).digest()[:KEY_BYTES]


def vllm_block_hash_bytes(block_hash: BlockHash) -> bytes:
    """A vLLM block hash as bytes: bytes as they are; an int as 32 bytes big-endian, a negative one
    (Python's built-in ``hash``, at least -2**63) first taken as ``h + 2**64``."""
    if isinstance(block_hash, bool):
        raise TypeError("a block hash is bytes or an int, not a bool")
    if isinstance(block_hash, int):
        h = block_hash
        if h < 0:
            if h < -(1 << 63):
                raise ValueError("an int block hash must be >= -2**63, not %d" % block_hash)
            h += 1 << 64
        if h >= 1 << 256:
            raise ValueError("an int block hash must be < 2**256, not %d" % block_hash)
        return h.to_bytes(32, "big")
    data = bytes(block_hash)
    if not data:
        raise ValueError("a vLLM block hash must not be empty")
    return data


def vllm_offload_key(block_hash: BlockHash, group_index: int = 0) -> bytes:
    """vLLM's OffloadKey: the block hash then the KV cache group index as 4 bytes big-endian."""
    if not 0 <= group_index < 1 << 32:
        raise ValueError("a group index must be in [0, 2**32), not %d" % group_index)
    return vllm_block_hash_bytes(block_hash) + struct.pack(">I", group_index)


def vllm_page_key(root: bytes, block_hash: BlockHash, group_index: int = 0) -> bytes:
    """The kvtier key of the block vLLM names by ``block_hash`` in KV cache group ``group_index``
    under the namespace ``root`` (docs/keys.md: SHA-256 of the vLLM tag, the root and the OffloadKey)."""
    return vllm_offload_page_key(root, vllm_offload_key(block_hash, group_index))


def vllm_offload_page_key(root: bytes, offload_key: Union[bytes, bytearray, memoryview]) -> bytes:
    """The kvtier key of a block from vLLM's OffloadKey as vLLM holds it (block hash + u32be group)."""
    data = bytes(offload_key)
    if len(data) < 5:
        raise ValueError("an OffloadKey is a block hash and a 4-byte group index, not %d bytes" % len(data))
    return hashlib.sha256(VLLM_TAG + _root(root) + _field(data)).digest()[:KEY_BYTES]


def lmcache_chunk_key(model_name: str, kv_rank: int, chunk_hash: Union[bytes, bytearray, memoryview], object_group_id: int = 0,
                      cache_salt: str = "") -> str:
    """The string LMCache hands a native L2 connector for one chunk: its model name, its KV rank as 8 hex
    digits, its object group id in hex, its chunk hash in hex and, when it has one, its cache salt, joined
    by ``@`` (which neither the model name nor the salt may contain)."""
    if not model_name or "@" in model_name:
        raise ValueError("an LMCache model name is not empty and has no '@', not %r" % model_name)
    if "@" in cache_salt:
        raise ValueError("an LMCache cache salt has no '@', not %r" % cache_salt)
    if not 0 <= kv_rank < 1 << 32:
        raise ValueError("an LMCache KV rank must be in [0, 2**32), not %d" % kv_rank)
    if object_group_id < 0:
        raise ValueError("an LMCache object group id must be >= 0, not %d" % object_group_id)
    data = bytes(chunk_hash)
    if not data:
        raise ValueError("an LMCache chunk hash must not be empty")
    text = "%s@%08x@%x@%s" % (model_name, kv_rank, object_group_id, data.hex())
    return text + "@" + cache_salt if cache_salt else text


def lmcache_page_key(root: bytes, chunk_key: str) -> bytes:
    """The kvtier key of the chunk LMCache names by ``chunk_key`` (the string its native L2 connector is
    given, taken as is: :func:`lmcache_chunk_key` builds one) under the namespace ``root``."""
    if not isinstance(chunk_key, str):
        raise TypeError("an LMCache chunk key is a str, not %s" % type(chunk_key).__name__)
    data = chunk_key.encode("utf-8")
    if not data:
        raise ValueError("an LMCache chunk key must not be empty")
    return hashlib.sha256(LMCACHE_TAG + _root(root) + _field(data)).digest()[:KEY_BYTES]

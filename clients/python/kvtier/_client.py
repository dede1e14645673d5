"""Python binding of the kvtier C client (ctypes and the standard library only).

Attaches to a running ``kvtier serve`` over the IPC protocol (docs/ipc-protocol.md) through
``libkvtier_client.so`` and gives page bytes as ``memoryview`` objects over the mapped pool: no
copy between the engine's pool and the caller. The library is found at ``$KVTIER_CLIENT_LIB``, else
next to this file (where an installed wheel carries it), else at ``clients/c/build`` of the checkout.

    import kvtier as kv                          # or, from the checkout, kvtier_client
    root = kv.namespace_root("my-model@rev", "bf16/page16/tp1")
    keys = kv.page_keys(root, tokens, 16)
    with kv.Client("/dev/shm/kvtier.sock", namespaces=[root]) as c:
        with c.reserved(keys) as r:              # COMMIT on success, ABORT on an exception
            for i, page in r.pages():
                page[:n] = my_bytes(i); r.set_length(i, n)
        with c.pinned(keys) as pages:            # RELEASE at exit
            data = bytes(pages[0][:n])

The device operations of protocol section 10 have the engine copy KV between the pool and the
caller's own KV buffers (CUDA IPC handles, host files mapped shared, or in a 1.2 session host files
passed as descriptors) instead:

    fd = os.memfd_create("kv"); os.ftruncate(fd, size); kv_buffer = mmap.mmap(fd, size)
    layout = c.register_host_fds(kv.ARRANGEMENT_CONTIGUOUS, (layers, 2, 16, heads, dim, 2), blocks, [fd])
    c.reserve(keys); c.device_save(layout, 0, blocks_of_keys, valid_tokens)     # committed
    c.acquire(keys); c.device_load(layout, 0, free_blocks, valid_tokens); c.release(0, len(keys))

Protocol 1.3 (the default) adds ``lookup_and_lock`` and ``commit_and_release``: one request's two round trips
instead of five. Since 1.2 the engine passes the pool, control file and ring as descriptors, so a
process of another user than the engine's may attach; ``Client(..., minor_version=1)`` opens them by
path as 1.1 did (the engine's own user only). Section 11: ``payload_length(slot)`` reads a pinned
page's committed length from its trailer, ``stats_named()`` names the STATS values from the pool's
counters region.

Views handed out by ``pinned``/``reserved`` are released when the block ends, so using one later
raises ``ValueError`` instead of reading a page that may hold another key by then. Views from
``page()``/``slot_view()`` are the caller's to stop using once the slot is released.
A Client is used by one thread at a time.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from typing import Iterable, Iterator, List, Optional, Sequence, Union

__all__ = [
    "KvtierError", "Client", "Result", "namespace_root", "page_keys", "compute_keys",
    "error_name", "page_status_name", "register_detail_name", "slot_bytes", "block_bytes", "load_library",
    "fd_handle", "crc32c", "library_path", "PageTrailer", "Counter", "PROTOCOL_MINOR", "ERR_UNSUPPORTED",
    "HANDLE_HOST_FD", "COUNTER_GROWS", "COUNTER_GAUGE", "COUNTER_FACT",
    "OK", "STALE_REQUEST_ID", "NAMESPACE_DENIED", "SLOT_HELD", "SLOT_RANGE",
    "PAGE_NONE", "PAGE_PINNED", "PAGE_PINNED_FROM_L3", "PAGE_RESERVED", "PAGE_COMMITTED",
    "PAGE_EXISTS", "PAGE_BUSY", "PAGE_POOL_FULL", "PAGE_MISS", "PAGE_EXPIRED", "PAGE_INVALID",
    "PAGE_LOADED", "PAGE_COPIED", "RESERVE_ALL",
    "HANDLE_CUDA_IPC", "HANDLE_HOST_FILE", "ARRANGEMENT_SEPARATE", "ARRANGEMENT_CONTIGUOUS", "ARRANGEMENT_INTERLEAVED",
    "REGISTER_SHAPE", "REGISTER_ARRANGEMENT", "REGISTER_HANDLE_KIND", "REGISTER_ALLOCATION_COUNT", "REGISTER_NO_DEVICE",
    "REGISTER_OPEN_FAILED", "REGISTER_TOO_SMALL", "REGISTER_TOO_MANY_LAYOUTS", "REGISTER_PAGE_SIZE",
]

# status and error codes (protocol section 6) and the client's own (100 and above)
OK, LEASE_EXPIRED, CLOSED, INVALID, INTERNAL_ERROR = 0, 1, 2, 3, 4
MALFORMED, UNKNOWN_TYPE, STALE_REQUEST_ID, SLOT_RANGE, SLOT_HELD, NAMESPACE_DENIED = 16, 17, 18, 19, 20, 21
TOO_LONG, NOT_READING, TIMED_OUT = 22, 23, 24
VERSION, NOT_ALLOWED, TOO_MANY_CLIENTS, BAD_HELLO = 32, 33, 34, 35
ERR_SYSTEM, ERR_PROTOCOL, ERR_ARGUMENT, ERR_ENGINE_GONE, ERR_DISCONNECTED, ERR_TIMEOUT = 100, 101, 102, 103, 104, 105
ERR_UNSUPPORTED = 106  # the session's minor version (or the pool's layout) lacks what the call needs

PROTOCOL_MINOR = 3  # the newest minor version the library speaks (protocol 1.3)
WAIT_KINDS = {"backoff": 0, "awake": 1}  # Client(wait=...): the C library's KVT_WAIT_BACKOFF, KVT_WAIT_AWAKE

# page statuses (protocol section 4)
(PAGE_NONE, PAGE_PINNED, PAGE_PINNED_FROM_L3, PAGE_RESERVED, PAGE_COMMITTED, PAGE_EXISTS, PAGE_BUSY,
 PAGE_POOL_FULL, PAGE_MISS, PAGE_EXPIRED, PAGE_INVALID) = range(11)
PAGE_LOADED = 12
PAGE_COPIED = 13  # DEVICE_LOAD: the page's KV is in the block (version 1.1)

# operations (protocol section 4)
OP_LOOKUP, OP_ACQUIRE, OP_RELEASE, OP_RESERVE, OP_COMMIT, OP_ABORT = 2, 3, 4, 5, 6, 7
OP_PREFETCH, OP_BACKUP, OP_FLUSH, OP_EVICT, OP_CLOSE, OP_STATS = 8, 9, 10, 11, 13, 14
OP_REGISTER_KV, OP_DEVICE_LOAD, OP_DEVICE_SAVE = 15, 16, 17
OP_LOOKUP_AND_LOCK, OP_COMMIT_AND_RELEASE = 18, 19  # protocol 1.3
RESERVE_ALL = -1  # lookup_and_lock: reserve a page for every key after the pinned prefix

# device operations (protocol section 10): handle kinds, arrangements, and what a refused
# REGISTER_KV's detail (KvtierError.detail, its Result Count) names
HANDLE_CUDA_IPC, HANDLE_HOST_FILE, HANDLE_HOST_FD = 1, 2, 3
ARRANGEMENT_SEPARATE, ARRANGEMENT_CONTIGUOUS, ARRANGEMENT_INTERLEAVED = 1, 2, 3
(REGISTER_SHAPE, REGISTER_ARRANGEMENT, REGISTER_HANDLE_KIND, REGISTER_ALLOCATION_COUNT, REGISTER_NO_DEVICE,
 REGISTER_OPEN_FAILED, REGISTER_TOO_SMALL, REGISTER_TOO_MANY_LAYOUTS, REGISTER_PAGE_SIZE) = range(1, 10)
HANDLE_BYTES = 64
DESCRIPTORS_PER_MESSAGE, DESCRIPTORS_PENDING_MAX = 16, 64

# counter types of the pool's counters region (protocol section 11)
COUNTER_GROWS, COUNTER_GAUGE, COUNTER_FACT = 1, 2, 3
COUNTERS_MAX = 512

KEY_BYTES = 16
LIBRARY_NAME = "libkvtier_client.so"
BUILD_HINT = "build it with ./mvnw -pl clients -am package or make -C clients/c"


class _Key(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint8 * KEY_BYTES)]


class _Result(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in (
        "status", "result_count", "first_slot", "entry_count",
        "pool_pages", "l3_pages", "from_pool", "from_l3")]


class _Shape(ctypes.Structure):
    _fields_ = [(name, ctypes.c_int32) for name in (
        "layers", "tensors", "block_tokens", "heads", "head_dim", "element_bytes")]


class _Allocation(ctypes.Structure):
    _fields_ = [("offset", ctypes.c_uint64), ("handle", ctypes.c_uint8 * HANDLE_BYTES)]


class _Trailer(ctypes.Structure):
    _fields_ = [("key_high", ctypes.c_uint64), ("key_low", ctypes.c_uint64), ("payload_length", ctypes.c_uint64),
                ("payload_crc32c", ctypes.c_uint32), ("frame_version", ctypes.c_uint32), ("page_size", ctypes.c_uint64),
                ("commit_time_ms", ctypes.c_uint64), ("namespace_tag", ctypes.c_uint64), ("trailer_crc32c", ctypes.c_uint32)]


class _CounterInfo(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int32), ("type", ctypes.c_uint32), ("name", ctypes.c_char * 53),
                ("description", ctypes.c_char * 189)]


class PageTrailer:
    """A page frame's trailer (protocol section 11): ``key`` (16 bytes), ``payload_length``,
    ``payload_crc32c``, ``frame_version``, ``page_size``, ``commit_time_ms``, ``namespace_tag``."""

    __slots__ = ("key", "payload_length", "payload_crc32c", "frame_version", "page_size", "commit_time_ms", "namespace_tag")

    def __init__(self, raw):
        self.key = raw.key_high.to_bytes(8, "big") + raw.key_low.to_bytes(8, "big")
        for name in self.__slots__[1:]:
            setattr(self, name, getattr(raw, name))

    def __repr__(self):
        return "PageTrailer(key=%s, payload_length=%d, namespace_tag=%#x)" % (self.key.hex(), self.payload_length, self.namespace_tag)


class Counter:
    """A counter of the pool's counters region (protocol section 11): ``id`` (its STATS value's index),
    ``type`` (COUNTER_GROWS, COUNTER_GAUGE or COUNTER_FACT), ``name``, ``description``."""

    __slots__ = ("id", "type", "name", "description")

    def __init__(self, raw):
        self.id, self.type = raw.id, raw.type
        self.name = raw.name.decode("utf-8", errors="replace")
        self.description = raw.description.decode("utf-8", errors="replace")

    def __repr__(self):
        return "Counter(%d, %s)" % (self.id, self.name)


def _shape(shape):
    """(layers, tensors, block_tokens, heads, head_dim, element_bytes) as the C struct."""
    shape = tuple(shape)
    if len(shape) != 6:
        raise ValueError("a shape is (layers, tensors, block_tokens, heads, head_dim, element_bytes), not %r" % (shape,))
    return _Shape(*shape)


class Result:
    """The header of a response: status, result_count, first_slot, entry_count, pool_pages,
    l3_pages, from_pool, from_l3."""

    __slots__ = ("status", "result_count", "first_slot", "entry_count",
                 "pool_pages", "l3_pages", "from_pool", "from_l3")

    def __init__(self, raw):
        for name in self.__slots__:
            setattr(self, name, getattr(raw, name))

    def __repr__(self):
        return "Result(%s)" % ", ".join("%s=%d" % (n, getattr(self, n)) for n in self.__slots__)


class KvtierError(Exception):
    """A failed call: ``code`` (protocol section 6, or the client's own 100+), ``name``, ``result``
    (the response's header when the engine answered)."""

    def __init__(self, code, message, result=None, detail=0):
        self.code = code
        self.name = error_name(code)
        self.result = result
        self.detail = detail  # a REGISTER_KV answered INVALID: what it refused (REGISTER_*), else 0
        super().__init__("%s (%d): %s" % (self.name, code, message))


_lib = None


def library_path() -> str:
    """Where the C client library is loaded from: ``$KVTIER_CLIENT_LIB`` when set, else the copy an
    installed package carries next to this file, else the checkout's ``clients/c/build``."""
    env = os.environ.get("KVTIER_CLIENT_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    packaged = os.path.join(here, LIBRARY_NAME)
    if os.path.exists(packaged):
        return packaged
    return os.path.normpath(os.path.join(here, os.pardir, os.pardir, "c", "build", LIBRARY_NAME))


def load_library(path: Optional[str] = None) -> ctypes.CDLL:
    """Loads libkvtier_client.so once (``path``, else ``library_path()``). A library that is not
    there raises FileNotFoundError saying how to build it."""
    global _lib
    if _lib is not None:
        return _lib
    path = path or library_path()
    if not os.path.exists(path):
        raise FileNotFoundError("the kvtier C client library is not at %s: %s, or set KVTIER_CLIENT_LIB" % (path, BUILD_HINT))
    lib = ctypes.CDLL(path)
    P, I32, U32, U16, U64, I64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint16, ctypes.c_uint64, ctypes.c_int64
    KEYS = ctypes.POINTER(_Key)
    RES = ctypes.POINTER(_Result)
    sig = {
        "kvt_namespace_root": (None, [ctypes.c_char_p, ctypes.c_char_p, U32, ctypes.c_char_p, KEYS]),
        "kvt_sglang_page_key": (ctypes.c_int, [KEYS, ctypes.c_char_p, ctypes.c_size_t, KEYS]),
        "kvt_vllm_page_key": (ctypes.c_int, [KEYS, ctypes.c_char_p, ctypes.c_size_t, U32, KEYS]),
        "kvt_page_keys": (I64, [KEYS, ctypes.POINTER(U32), ctypes.c_size_t, U32, ctypes.c_int, KEYS, ctypes.c_size_t]),
        "kvt_error_name": (ctypes.c_char_p, [ctypes.c_int]),
        "kvt_page_status_name": (ctypes.c_char_p, [ctypes.c_int]),
        "kvt_register_detail_name": (ctypes.c_char_p, [ctypes.c_int]),
        "kvt_kv_slot_bytes": (U64, [ctypes.POINTER(_Shape)]),
        "kvt_kv_block_bytes": (U64, [ctypes.POINTER(_Shape)]),
        "kvt_register_kv": (ctypes.c_int, [P, U32, I32, U16, ctypes.POINTER(_Shape), I32, ctypes.POINTER(_Allocation), I32, RES]),
        "kvt_last_detail": (ctypes.c_int, [P]),
        "kvt_device_load": (ctypes.c_int, [P, I32, I32, ctypes.POINTER(I32), ctypes.POINTER(I32), I32, RES]),
        "kvt_device_save": (ctypes.c_int, [P, I32, I32, ctypes.POINTER(I32), ctypes.POINTER(I32), I32, RES]),
        "kvt_connect": (P, [ctypes.c_char_p, KEYS, U32, U32, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_size_t]),
        "kvt_close": (ctypes.c_int, [P]),
        "kvt_last_error": (ctypes.c_int, [P]),
        "kvt_last_error_message": (ctypes.c_char_p, [P]),
        "kvt_client_id": (U32, [P]),
        "kvt_max_keys": (U32, [P]),
        "kvt_epoch": (U64, [P]),
        "kvt_page_size": (U32, [P]),
        "kvt_page_count": (U32, [P]),
        "kvt_set_response_timeout_ms": (None, [P, U32]),
        "kvt_set_wait": (ctypes.c_int, [P, ctypes.c_int]),
        "kvt_lookup": (ctypes.c_int, [P, U16, I32, KEYS, I32, RES]),
        "kvt_acquire": (ctypes.c_int, [P, U16, I32, KEYS, I32, RES]),
        "kvt_reserve": (ctypes.c_int, [P, U16, I32, KEYS, I32, RES]),
        "kvt_prefetch": (ctypes.c_int, [P, U16, I32, KEYS, I32, RES]),
        "kvt_backup": (ctypes.c_int, [P, U16, I32, KEYS, I32, RES]),
        "kvt_evict": (ctypes.c_int, [P, U16, I32, KEYS, I32, RES]),
        "kvt_release": (ctypes.c_int, [P, I32, I32, RES]),
        "kvt_abort": (ctypes.c_int, [P, I32, I32, RES]),
        "kvt_commit": (ctypes.c_int, [P, I32, I32, ctypes.POINTER(I32), RES]),
        "kvt_lookup_and_lock": (ctypes.c_int, [P, U16, I32, KEYS, I32, I32, RES]),
        "kvt_commit_and_release": (ctypes.c_int, [P, I32, I32, ctypes.POINTER(I32), ctypes.c_int, RES]),
        "kvt_flush": (ctypes.c_int, [P, RES]),
        "kvt_stats": (ctypes.c_int, [P, ctypes.POINTER(I64), U32]),
        "kvt_request": (ctypes.c_int, [P, I32, U16, U16, I32, I32, ctypes.c_char_p, U32, RES]),
        "kvt_next_request_id": (U64, [P]),
        "kvt_set_next_request_id": (None, [P, U64]),
        "kvt_slot_page": (I32, [P, I32]),
        "kvt_slot_generation": (I32, [P, I32]),
        "kvt_slot_status": (I32, [P, I32]),
        "kvt_page_addr": (P, [P, I32]),
        "kvt_connect_minor": (P, [ctypes.c_char_p, KEYS, U32, U32, U16, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p,
                                  ctypes.c_size_t]),
        "kvt_engine_minor": (U32, [P]),
        "kvt_session_minor": (U32, [P]),
        "kvt_descriptors_mapped": (ctypes.c_int, [P]),
        "kvt_file_path": (ctypes.c_char_p, [P, ctypes.c_int]),
        "kvt_max_message_length": (U32, [P]),
        "kvt_ring_capacity": (U32, [P]),
        "kvt_client_timeout_ms": (U32, [P]),
        "kvt_send_descriptors": (I64, [P, ctypes.POINTER(ctypes.c_int), U32]),
        "kvt_descriptors_pending": (U32, [P]),
        "kvt_fd_handle": (None, [U32, ctypes.POINTER(ctypes.c_uint8)]),
        "kvt_register_host_fds": (ctypes.c_int, [P, U16, ctypes.POINTER(_Shape), I32, ctypes.POINTER(ctypes.c_int),
                                                 ctypes.POINTER(U64), I32, RES]),
        "kvt_read_page_trailer": (ctypes.c_int, [P, I32, ctypes.POINTER(_Trailer)]),
        "kvt_slot_payload_length": (I64, [P, I32]),
        "kvt_page_verify_payload": (ctypes.c_int, [P, I32]),
        "kvt_crc32c": (U32, [ctypes.c_char_p, ctypes.c_size_t]),
        "kvt_counter": (ctypes.c_int, [P, I32, ctypes.POINTER(_CounterInfo)]),
        "kvt_counter_id": (I32, [P, ctypes.c_char_p]),
        "kvt_counter_value": (I64, [P, I32]),
    }
    for name, (restype, argtypes) in sig.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    _lib = lib
    return lib


def error_name(code: int) -> str:
    return load_library().kvt_error_name(code).decode()


def page_status_name(status: int) -> str:
    return load_library().kvt_page_status_name(status).decode()


def register_detail_name(detail: int) -> str:
    """The name of a refused REGISTER_KV's detail ("TOO_SMALL", ...), "UNKNOWN" for others."""
    return load_library().kvt_register_detail_name(detail).decode()


def slot_bytes(shape: Sequence[int]) -> int:
    """S = block_tokens x heads x head_dim x element_bytes: one block of one tensor (0 if invalid)."""
    return load_library().kvt_kv_slot_bytes(ctypes.byref(_shape(shape)))


def block_bytes(shape: Sequence[int]) -> int:
    """layers x tensors x S: a whole block, the payload of a page DEVICE_SAVE writes (0 if invalid)."""
    return load_library().kvt_kv_block_bytes(ctypes.byref(_shape(shape)))


def fd_handle(number: int) -> bytes:
    """The 64-byte HOST_FD handle naming descriptor ``number`` (protocol section 10)."""
    out = (ctypes.c_uint8 * HANDLE_BYTES)()
    load_library().kvt_fd_handle(number, out)
    return bytes(out)


def crc32c(data: Union[bytes, bytearray, memoryview]) -> int:
    """CRC32C (Castagnoli) of ``data``, as the engine computes a page's and a trailer's."""
    data = bytes(data)
    return load_library().kvt_crc32c(data, len(data))


def _text(s):
    return s.encode("utf-8") if isinstance(s, str) else bytes(s)


def _keys_array(keys):
    keys = list(keys)
    arr = (_Key * max(1, len(keys)))()
    for i, k in enumerate(keys):
        k = bytes(k)
        if len(k) != KEY_BYTES:
            raise ValueError("a key is %d bytes, not %d" % (KEY_BYTES, len(k)))
        ctypes.memmove(arr[i].bytes, k, KEY_BYTES)
    return arr, len(keys)


def namespace_root(model_id: str, kv_layout: str, tp_rank: int = 0, tenant_salt: str = "") -> bytes:
    """The namespace root of docs/keys.md: 16 bytes."""
    out = _Key()
    load_library().kvt_namespace_root(_text(model_id), _text(kv_layout), tp_rank, _text(tenant_salt), ctypes.byref(out))
    return bytes(out.bytes)


def page_keys(root: bytes, tokens: Iterable[int], tokens_per_page: int, include_partial: bool = False) -> List[bytes]:
    """The keys (16 bytes each) of the pages of ``tokens`` (ints 0..2**32-1) under ``root``."""
    if tokens_per_page <= 0:
        raise ValueError("tokens_per_page must be positive")
    tokens = list(tokens)
    n = len(tokens)
    pages = n // tokens_per_page + (1 if include_partial and n % tokens_per_page else 0)
    toks = (ctypes.c_uint32 * max(1, n))(*tokens)
    r = _Key()
    ctypes.memmove(r.bytes, bytes(root), KEY_BYTES)
    out = (_Key * max(1, pages))()
    got = load_library().kvt_page_keys(ctypes.byref(r), toks, n, tokens_per_page, 1 if include_partial else 0, out, pages)
    return [bytes(out[i].bytes) for i in range(got)]


def compute_keys(model_id: str, kv_layout: str, tp_rank: int, tenant_salt: str, tokens: Iterable[int], tokens_per_page: int,
                 include_partial: bool = False) -> List[bytes]:
    """namespace_root() then page_keys()."""
    return page_keys(namespace_root(model_id, kv_layout, tp_rank, tenant_salt), tokens, tokens_per_page, include_partial)


class Client:
    """One connection to the engine (protocol sections 2-7). ``namespaces``: up to 16 roots
    (``namespace_root``); requests name one by its index (``ns``)."""

    def __init__(self, socket_path: str, namespaces: Sequence[bytes] = (), max_keys: int = 256, timeout_ms: Optional[int] = None,
                 minor_version: int = PROTOCOL_MINOR, wait: str = "backoff") -> None:
        """``minor_version`` is what the HELLO announces: 2 (the files come as descriptors), or 1 or 0
        to open them by path as the engine's own user (section 2). ``wait`` is how a call waits for its
        answer (section 5): "backoff" (spin, yield, then sleep) or "awake" (spin while the engine is
        awake, for a budget that follows the waits seen, then sleep; never yield)."""
        if wait not in WAIT_KINDS:
            raise ValueError(f"wait={wait!r} is none of {', '.join(WAIT_KINDS)}")
        lib = load_library()
        self._lib = lib
        self._c = None
        arr, n = _keys_array(namespaces)
        err = ctypes.c_int(0)
        msg = ctypes.create_string_buffer(512)
        handle = lib.kvt_connect_minor(_text(socket_path), arr, n, max_keys, minor_version, ctypes.byref(err), msg, len(msg))
        if not handle:
            raise KvtierError(err.value, msg.value.decode(errors="replace"))
        self._c = handle
        if timeout_ms is not None:
            lib.kvt_set_response_timeout_ms(handle, timeout_ms)
        if lib.kvt_set_wait(handle, WAIT_KINDS[wait]) != 0:
            error = KvtierError(lib.kvt_last_error(handle), lib.kvt_last_error_message(handle).decode(errors="replace"))
            lib.kvt_close(handle)
            self._c = None
            raise error
        self.page_size = lib.kvt_page_size(handle)
        self.page_count = lib.kvt_page_count(handle)
        self.max_keys = lib.kvt_max_keys(handle)
        self.client_id = lib.kvt_client_id(handle)
        self.epoch = lib.kvt_epoch(handle)
        self.engine_minor = lib.kvt_engine_minor(handle)    # WELCOME offset 60; 0 from an engine before 1.2
        self.session_minor = lib.kvt_session_minor(handle)  # the lower of the HELLO's and the engine's
        self.descriptors_mapped = bool(lib.kvt_descriptors_mapped(handle))
        self.max_message_length = lib.kvt_max_message_length(handle)
        self.ring_capacity = lib.kvt_ring_capacity(handle)
        self.client_timeout_ms = lib.kvt_client_timeout_ms(handle)
        # the WELCOME's paths, for messages (the ring's is "" in a 1.2 session: it has no name)
        self.pool_path, self.control_path, self.ring_path = (
            lib.kvt_file_path(handle, i).decode(errors="replace") for i in range(3))

    # -- life --

    def close(self) -> None:
        """CLOSE: the engine gives back every pin and reservation; the mappings go."""
        if self._c:
            handle, self._c = self._c, None
            if self._lib.kvt_close(handle) != 0:
                raise KvtierError(ERR_DISCONNECTED, "CLOSE was not answered")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._c:
            raise KvtierError(ERR_DISCONNECTED, "the client is closed")
        return self._c

    def _check(self, rc, raw=None):
        if rc < 0:
            code = self._lib.kvt_last_error(self._c)
            message = self._lib.kvt_last_error_message(self._c).decode(errors="replace")
            raise KvtierError(code, message, Result(raw) if raw is not None and raw.status != 0 else None,
                              self._lib.kvt_last_detail(self._c))
        return rc

    @property
    def last_error(self) -> int:
        """The code of the last failed call (0 when none failed)."""
        return self._lib.kvt_last_error(self._handle())

    # -- requests --

    def _keyed(self, fn, keys, first_slot, ns, count):
        raw = _Result()
        if keys is None:
            if count is None:
                raise ValueError("count is needed when the keys are those already in the slots")
            rc = fn(self._handle(), ns, first_slot, None, count, ctypes.byref(raw))
        else:
            arr, n = _keys_array(keys)
            rc = fn(self._handle(), ns, first_slot, arr, n, ctypes.byref(raw))
        self._check(rc, raw)
        return Result(raw)

    def lookup(self, keys: Optional[Sequence[bytes]], first_slot: int = 0, ns: int = 0, count: Optional[int] = None) -> Result:
        """LOOKUP: ``pool_pages`` leading pages in the pool, ``l3_pages`` in L3 after them.
        ``keys=None`` (with ``count``) uses the keys already in the slots."""
        return self._keyed(self._lib.kvt_lookup, keys, first_slot, ns, count)

    def acquire(self, keys: Optional[Sequence[bytes]], first_slot: int = 0, ns: int = 0, count: Optional[int] = None) -> Result:
        """ACQUIRE: pins the longest prefix; ``result_count`` pages, read them with slot_view()."""
        return self._keyed(self._lib.kvt_acquire, keys, first_slot, ns, count)

    def reserve(self, keys: Optional[Sequence[bytes]], first_slot: int = 0, ns: int = 0, count: Optional[int] = None) -> Result:
        """RESERVE: a page per key to write (slot status PAGE_RESERVED), then commit() or abort()."""
        return self._keyed(self._lib.kvt_reserve, keys, first_slot, ns, count)

    def prefetch(self, keys: Optional[Sequence[bytes]], first_slot: int = 0, ns: int = 0, count: Optional[int] = None) -> Result:
        """PREFETCH: brings pages from L3 into the pool ahead of an ACQUIRE."""
        return self._keyed(self._lib.kvt_prefetch, keys, first_slot, ns, count)

    def backup(self, keys: Optional[Sequence[bytes]], first_slot: int = 0, ns: int = 0, count: Optional[int] = None) -> Result:
        """BACKUP: writes pool pages to L3."""
        return self._keyed(self._lib.kvt_backup, keys, first_slot, ns, count)

    def evict(self, keys: Optional[Sequence[bytes]], first_slot: int = 0, ns: int = 0, count: Optional[int] = None) -> Result:
        """EVICT: drops pages from the pool (L3 copies stay)."""
        return self._keyed(self._lib.kvt_evict, keys, first_slot, ns, count)

    def release(self, first_slot: int, count: int) -> Result:
        """RELEASE: gives back the pins of slots [first_slot, first_slot + count)."""
        raw = _Result()
        self._check(self._lib.kvt_release(self._handle(), first_slot, count, ctypes.byref(raw)), raw)
        return Result(raw)

    def abort(self, first_slot: int, count: int) -> Result:
        """ABORT: gives back the reservations of slots [first_slot, first_slot + count), never visible."""
        raw = _Result()
        self._check(self._lib.kvt_abort(self._handle(), first_slot, count, ctypes.byref(raw)), raw)
        return Result(raw)

    def commit(self, first_slot: int, lengths: Sequence[int]) -> Result:
        """COMMIT: lengths[i] bytes (1..page_size) were written into slot first_slot + i's page."""
        lengths = list(lengths)
        arr = (ctypes.c_int32 * max(1, len(lengths)))(*lengths)
        raw = _Result()
        self._check(self._lib.kvt_commit(self._handle(), first_slot, len(lengths), arr, ctypes.byref(raw)), raw)
        return Result(raw)

    def lookup_and_lock(self, keys: Optional[Sequence[bytes]], first_slot: int = 0, ns: int = 0, count: Optional[int] = None,
                        reserve_limit: int = RESERVE_ALL) -> Result:
        """LOOKUP_AND_LOCK (protocol 1.3): pins the longest prefix as acquire() does, then reserves pages for
        keys after it as reserve() does, at most ``reserve_limit`` of them (RESERVE_ALL: every one), in one
        round trip. ``result_count`` is the prefix pinned, ``pool_pages`` the pages reserved; each slot's
        status says which it holds. ``keys=None`` (with ``count``) uses the keys already in the slots."""
        raw = _Result()
        if keys is None:
            if count is None:
                raise ValueError("count is needed when the keys are those already in the slots")
            rc = self._lib.kvt_lookup_and_lock(self._handle(), ns, first_slot, None, count, reserve_limit, ctypes.byref(raw))
        else:
            arr, n = _keys_array(keys)
            rc = self._lib.kvt_lookup_and_lock(self._handle(), ns, first_slot, arr, n, reserve_limit, ctypes.byref(raw))
        self._check(rc, raw)
        return Result(raw)

    def commit_and_release(self, first_slot: int, lengths: Sequence[int], backup: bool = False) -> Result:
        """COMMIT_AND_RELEASE (protocol 1.3): drops the pins of slots [first_slot, first_slot + len(lengths))
        and commits their reservations, lengths[i] bytes for a reserved slot first_slot + i (a pinned slot's
        length is not read), in one round trip; ``backup`` copies each committed page to L3.
        ``result_count`` is the pages committed, ``pool_pages`` the pins dropped."""
        lengths = list(lengths)
        arr = (ctypes.c_int32 * max(1, len(lengths)))(*lengths)
        raw = _Result()
        self._check(self._lib.kvt_commit_and_release(self._handle(), first_slot, len(lengths), arr, 1 if backup else 0,
                                                     ctypes.byref(raw)), raw)
        return Result(raw)

    def flush(self) -> Result:
        """FLUSH: waits until every BACKUP so far is in L3."""
        raw = _Result()
        self._check(self._lib.kvt_flush(self._handle(), ctypes.byref(raw)), raw)
        return Result(raw)

    def stats(self, capacity: int = 1024) -> List[int]:
        """The engine's counters 0..n-1 as a list of ints."""
        values = (ctypes.c_int64 * capacity)()
        n = self._check(self._lib.kvt_stats(self._handle(), values, capacity))
        return list(values[:min(n, capacity)])

    def request(self, op: int, first_slot: int = 0, count: int = 0, body: bytes = b"", ns: int = 0, flags: int = 0) -> Result:
        """Any request as it goes on the wire (for tests and new operations)."""
        raw = _Result()
        body = bytes(body)
        rc = self._lib.kvt_request(self._handle(), op, ns, flags, first_slot, count, body, len(body), ctypes.byref(raw))
        self._check(rc, raw)
        return Result(raw)

    # -- device operations (protocol section 10) --

    def register_kv(self, handle_kind: int, arrangement: int, shape: Sequence[int], blocks: int,
                    allocations: Sequence[tuple], device: int = 0) -> int:
        """REGISTER_KV: ``shape`` is (layers, tensors, block_tokens, heads, head_dim, element_bytes),
        ``allocations`` (offset, handle) pairs, a handle being up to 64 bytes (a cudaIpcMemHandle_t, or
        an absolute path NUL-terminated). Returns the Layout Id; a refusal raises KvtierError with code
        INVALID and ``detail`` one of REGISTER_*, and changes nothing."""
        allocations = list(allocations)
        arr = (_Allocation * max(1, len(allocations)))()
        for i, (offset, handle) in enumerate(allocations):
            handle = bytes(handle)
            if len(handle) > HANDLE_BYTES:
                raise ValueError("a handle is at most %d bytes, not %d" % (HANDLE_BYTES, len(handle)))
            arr[i].offset = offset
            ctypes.memmove(arr[i].handle, handle, len(handle))
        raw = _Result()
        rc = self._lib.kvt_register_kv(self._handle(), handle_kind, device, arrangement, ctypes.byref(_shape(shape)), blocks,
                                       arr, len(allocations), ctypes.byref(raw))
        return self._check(rc, raw)

    def send_descriptors(self, fds: Sequence[int]) -> int:
        """DESCRIPTORS (a 1.2 session): passes 1..16 open descriptors to the engine in one message; returns
        the number the engine gives the first (the others follow). The caller may close its own once
        this returns. Name them in a HOST_FD registration (``register_kv(HANDLE_HOST_FD, ...)`` with
        ``fd_handle(number)``); at most 64 may be sent and not yet named."""
        fds = list(fds)
        arr = (ctypes.c_int * max(1, len(fds)))(*fds)
        return self._check(self._lib.kvt_send_descriptors(self._handle(), arr, len(fds)))

    @property
    def descriptors_pending(self) -> int:
        """Descriptors sent and not yet named by an answered registration."""
        return self._lib.kvt_descriptors_pending(self._handle())

    def register_host_fds(self, arrangement: int, shape: Sequence[int], blocks: int, fds: Sequence[int],
                          offsets: Optional[Sequence[int]] = None) -> int:
        """register_kv() of host files passed as descriptors (HOST_FD, a 1.2 session): allocation i is
        ``offsets[i]`` (default 0) into the regular file open read-write at ``fds[i]`` (an
        ``os.memfd_create`` file, say), mapped shared by the caller. The engine never sees a path;
        the caller may close its descriptors once this returns."""
        fds = [int(fd) for fd in fds]
        offsets = list(offsets) if offsets is not None else [0] * len(fds)
        if len(offsets) != len(fds):
            raise ValueError("%d offsets for %d descriptors" % (len(offsets), len(fds)))
        f = (ctypes.c_int * max(1, len(fds)))(*fds)
        o = (ctypes.c_uint64 * max(1, len(fds)))(*offsets)
        raw = _Result()
        rc = self._lib.kvt_register_host_fds(self._handle(), arrangement, ctypes.byref(_shape(shape)), blocks, f, o, len(fds),
                                             ctypes.byref(raw))
        return self._check(rc, raw)

    def register_host_files(self, arrangement: int, shape: Sequence[int], blocks: int, paths: Sequence[str],
                            offsets: Optional[Sequence[int]] = None) -> int:
        """register_kv() of host files: allocation i is ``offsets[i]`` (default 0) into ``paths[i]``, an
        absolute path (at most 63 bytes) to a regular file of this user, mapped shared by the caller."""
        paths = [os.fsencode(p) for p in paths]
        offsets = list(offsets) if offsets is not None else [0] * len(paths)
        if len(offsets) != len(paths):
            raise ValueError("%d offsets for %d paths" % (len(offsets), len(paths)))
        for p in paths:
            if len(p) >= HANDLE_BYTES:
                raise ValueError("a path of %d bytes does not fit the %d-byte handle with its NUL: %r" % (len(p), HANDLE_BYTES, p))
        return self.register_kv(HANDLE_HOST_FILE, arrangement, shape, blocks, list(zip(offsets, paths)))

    def _device_copy(self, fn, layout_id, first_slot, blocks, valid_tokens):
        blocks, valid_tokens = list(blocks), list(valid_tokens)
        if len(blocks) != len(valid_tokens):
            raise ValueError("%d blocks for %d valid token counts" % (len(blocks), len(valid_tokens)))
        n = len(blocks)
        b = (ctypes.c_int32 * max(1, n))(*blocks)
        v = (ctypes.c_int32 * max(1, n))(*valid_tokens)
        raw = _Result()
        self._check(fn(self._handle(), layout_id, first_slot, b, v, n, ctypes.byref(raw)), raw)
        return Result(raw)

    def device_load(self, layout_id: int, first_slot: int, blocks: Sequence[int], valid_tokens: Sequence[int]) -> Result:
        """DEVICE_LOAD: each pinned slot first_slot + i's page, its first valid_tokens[i] tokens, into
        block blocks[i]; ``result_count`` slots copied (slot_status PAGE_COPIED). The pins stay."""
        return self._device_copy(self._lib.kvt_device_load, layout_id, first_slot, blocks, valid_tokens)

    def device_save(self, layout_id: int, first_slot: int, blocks: Sequence[int], valid_tokens: Sequence[int]) -> Result:
        """DEVICE_SAVE: block blocks[i]'s first valid_tokens[i] tokens into each reserved slot's page,
        then committed; ``result_count`` slots committed (slot_status PAGE_COMMITTED)."""
        return self._device_copy(self._lib.kvt_device_save, layout_id, first_slot, blocks, valid_tokens)

    @property
    def next_request_id(self) -> int:
        """The request id the next request carries."""
        return self._lib.kvt_next_request_id(self._handle())

    @next_request_id.setter
    def next_request_id(self, value: int) -> None:
        self._lib.kvt_set_next_request_id(self._handle(), value)

    # -- slots and pages --

    def slot_page(self, slot: int) -> int:
        """The page id slot ``slot`` holds, or -1."""
        return self._lib.kvt_slot_page(self._handle(), slot)

    def slot_generation(self, slot: int) -> int:
        """The generation of the page slot ``slot`` holds."""
        return self._lib.kvt_slot_generation(self._handle(), slot)

    def slot_status(self, slot: int) -> int:
        """The last answer for slot ``slot`` (PAGE_*)."""
        return self._lib.kvt_slot_status(self._handle(), slot)

    def page(self, page_id: int) -> memoryview:
        """A writable memoryview of page ``page_id``'s page_size bytes in the mapped pool (no copy)."""
        addr = self._lib.kvt_page_addr(self._handle(), page_id)
        if not addr:
            raise ValueError("no page %d (the pool has %d)" % (page_id, self.page_count))
        return memoryview((ctypes.c_char * self.page_size).from_address(addr)).cast("B")

    def slot_view(self, slot: int) -> Optional[memoryview]:
        """The page a slot holds as a memoryview, or None when it holds none."""
        page_id = self.slot_page(slot)
        return None if page_id < 0 else self.page(page_id)

    # -- the pool file (protocol section 11) --

    def payload_length(self, slot: int) -> int:
        """The committed length of the page ``slot`` holds pinned, from the page's trailer (which must
        name the key this client put in the slot)."""
        return self._check(self._lib.kvt_slot_payload_length(self._handle(), slot))

    def payload(self, slot: int) -> memoryview:
        """The pinned page's committed bytes: a memoryview of ``payload_length(slot)`` bytes in place."""
        n = self.payload_length(slot)
        return self.slot_view(slot)[:n]

    def page_trailer(self, page_id: int) -> PageTrailer:
        """Page ``page_id``'s trailer (PageTrailer); stable only while this client holds its pin."""
        raw = _Trailer()
        self._check(self._lib.kvt_read_page_trailer(self._handle(), page_id, ctypes.byref(raw)))
        return PageTrailer(raw)

    def verify_payload(self, page_id: int) -> bool:
        """True when the page's committed bytes have its trailer's CRC32C (reads the whole payload)."""
        return self._check(self._lib.kvt_page_verify_payload(self._handle(), page_id)) == 1

    def counter(self, counter_id: int) -> Optional[Counter]:
        """Counter ``counter_id`` of the pool's counters region (Counter), or None when none has that id."""
        raw = _CounterInfo()
        return Counter(raw) if self._check(self._lib.kvt_counter(self._handle(), counter_id, ctypes.byref(raw))) == 1 else None

    def counters(self) -> List[Counter]:
        """Every counter the pool names, by id."""
        return [c for c in (self.counter(i) for i in range(COUNTERS_MAX)) if c is not None]

    def counter_id(self, name: str) -> int:
        """The id of the counter called ``name`` (its STATS value's index); KvtierError when none is."""
        return self._check(self._lib.kvt_counter_id(self._handle(), _text(name)))

    def counter_value(self, counter_id: int) -> int:
        """Counter ``counter_id``'s value as the pool holds it now."""
        return self._lib.kvt_counter_value(self._handle(), counter_id)

    def stats_named(self) -> dict:
        """STATS, each value named by the counters region: {name: value} for the counters that exist."""
        values = self.stats()
        names = {c.id: c.name for c in self.counters()}
        return {names[i]: v for i, v in enumerate(values) if i in names}

    # -- context managers --

    @contextlib.contextmanager
    def pinned(self, keys: Sequence[bytes], first_slot: int = 0, ns: int = 0) -> Iterator[List[memoryview]]:
        """ACQUIRE ``keys``; yields the pinned prefix's pages as memoryviews (the list may be
        shorter than keys); RELEASEs the slots and the views at exit."""
        keys = list(keys)
        result = self.acquire(keys, first_slot, ns)
        views = []
        try:
            for i in range(len(keys)):
                if self.slot_status(first_slot + i) not in (PAGE_PINNED, PAGE_PINNED_FROM_L3):
                    break
                views.append(self.slot_view(first_slot + i))
            yield _Pinned(views, result)
        finally:
            for v in views:
                v.release()
            if self._c:
                self.release(first_slot, len(keys))

    @contextlib.contextmanager
    def reserved(self, keys: Sequence[bytes], first_slot: int = 0, ns: int = 0) -> Iterator["Reservation"]:
        """RESERVE ``keys``; yields a Reservation. At the end of the block the reserved pages are
        COMMITted with the lengths set (page_size by default), or ABORTed if the block raised."""
        keys = list(keys)
        result = self.reserve(keys, first_slot, ns)
        r = Reservation(self, first_slot, len(keys), result)
        try:
            yield r
        except BaseException:
            r._release_views()
            if self._c:
                self.abort(first_slot, len(keys))
            raise
        r._release_views()
        r.commit_result = self.commit(first_slot, r.lengths)


class _Pinned(list):
    """The pinned pages (memoryviews), with ``result`` the ACQUIRE's header."""

    def __init__(self, views, result):
        super().__init__(views)
        self.result = result


class Reservation:
    """Pages reserved by Client.reserved(): ``view(i)`` is key i's page (None when it was not
    reserved: see ``status(i)``, e.g. PAGE_EXISTS), ``set_length(i, n)`` the bytes written."""

    def __init__(self, client, first_slot, count, result):
        self._client = client
        self.first_slot = first_slot
        self.count = count
        self.result = result
        self.commit_result = None
        self._views = {}
        self.lengths = [client.page_size if client.slot_status(first_slot + i) == PAGE_RESERVED else 1
                        for i in range(count)]

    def status(self, i: int) -> int:
        """Key i's slot status (PAGE_RESERVED, PAGE_EXISTS, ...)."""
        return self._client.slot_status(self.first_slot + i)

    def view(self, i: int) -> Optional[memoryview]:
        """Key i's reserved page, or None when it was not reserved."""
        if self.status(i) != PAGE_RESERVED:
            return None
        if i not in self._views:
            self._views[i] = self._client.slot_view(self.first_slot + i)
        return self._views[i]

    def pages(self) -> List[tuple]:
        """(i, view) for each key whose page was reserved."""
        return [(i, self.view(i)) for i in range(self.count) if self.status(i) == PAGE_RESERVED]

    def set_length(self, i: int, n: int) -> None:
        """Key i's page holds n bytes (1..page_size) at the commit."""
        if not 1 <= n <= self._client.page_size:
            raise ValueError("length %d outside 1..%d" % (n, self._client.page_size))
        self.lengths[i] = n

    def _release_views(self):
        for v in self._views.values():
            v.release()
        self._views.clear()

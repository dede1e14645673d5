"""SGLang's HiCache storage contract, restated (or SGLang's own classes, when SGLang is importable).

``REAL`` says which: True when ``sglang.srt.mem_cache.hicache_storage`` imported, and then every name
here is SGLang's own; False when it did not, and then the names are this module's restatement. The
facts restated (names, signatures, semantics) come from SGLang's public source as summarised in the
project's notes (``peers.md`` sections 2 and 6) and re-read in ``hicache_storage.py``,
``storage/backend_factory.py`` and the host pools' ``get_page_buffer_meta``; docs/adapters/sglang.md
lists each with where it comes from. Nothing here is SGLang's code.

What a storage backend is handed and must answer:

- construction: ``cls(storage_config, kwargs)`` (the dynamic factory passes its keyword arguments as
  ONE positional dict), after ``issubclass(cls, HiCacheStorage)``; then the cache controller calls
  ``register_mem_pool_host(pool)`` with the host KV pool;
- the host pool's ``get_page_buffer_meta(indices) -> (ptrs, sizes)``: ``indices`` are token slots of
  the host pool (``page_size`` per page, a page's slots contiguous), walked a page at a time; each page
  gives one or more (pointer, byte size) buffers in a fixed order (K then V for MHA, one for MLA;
  one per layer and K/V for layer-first layouts); ``sizes`` is a list, or one int for all;
- ``batch_exists(keys, extra_info) -> int``: the leading run of keys the store holds;
- ``batch_get_v1`` / ``batch_set_v1(keys, host_indices, extra_info) -> List[bool]``, a list the
  length of ``keys``: never None (a None kills HiCache's prefetch or backup thread for good, which
  HiCache never restarts);
- the legacy ``get``/``set``/``batch_get``/``batch_set``/``exists`` (abstract), ``clear``, ``get_stats``
  (a ``StorageMetrics`` or None);
- the v2 hybrid-pool calls over ``PoolTransfer`` descriptors (``batch_exists_v2``, ``batch_get_v2``,
  ``batch_set_v2``, ``register_mem_host_pool_v2``).
"""
from __future__ import annotations

import abc
import enum
import hashlib
import importlib
import ctypes
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["REAL", "STORAGE_BATCH_SIZE", "HiCacheStorage", "HiCacheStorageConfig", "HiCacheStorageExtraInfo", "PoolName",
           "PoolHitPolicy", "PoolTransfer", "PoolTransferResult", "StorageMetrics", "create_dynamic_backend",
           "sglang_page_hashes", "HostPool"]

#: Pages per batched storage call of HiCache's controller.
STORAGE_BATCH_SIZE = 128

PoolName = PoolHitPolicy = PoolTransfer = PoolTransferResult = StorageMetrics = None
try:  # SGLang's own classes, when it is installed
    from sglang.srt.mem_cache.hicache_storage import (  # type: ignore
        HiCacheStorage, HiCacheStorageConfig, HiCacheStorageExtraInfo)
    REAL = True
except ImportError:
    REAL = False

if REAL:
    try:
        from sglang.srt.mem_cache.hicache_storage import (  # type: ignore
            PoolHitPolicy, PoolName, PoolTransfer, PoolTransferResult)
    except ImportError:  # an SGLang from before the hybrid-pool (v2) calls
        PoolName = PoolHitPolicy = PoolTransfer = PoolTransferResult = None  # restated below
    try:
        from sglang.srt.metrics.collector import StorageMetrics  # type: ignore
    except ImportError:
        StorageMetrics = None  # restated below
else:
    @dataclass
    class HiCacheStorageConfig:
        """What SGLang tells a backend about the process it serves (restated)."""
        tp_rank: int
        tp_size: int
        pp_rank: int
        pp_size: int
        attn_cp_rank: int
        attn_cp_size: int
        is_mla_model: bool
        enable_storage_metrics: bool
        is_page_first_layout: bool
        model_name: Optional[str]
        dp_rank: int = 0
        dp_size: int = 1
        tp_lcm_size: Optional[int] = None
        should_split_heads: bool = False
        extra_config: Optional[dict] = None

    @dataclass
    class HiCacheStorageExtraInfo:
        """The page hashes before a batch's first (``prefix_keys``) and anything else (restated)."""
        prefix_keys: Optional[List[str]] = None
        extra_info: Optional[dict] = None

    class HiCacheStorage(abc.ABC):
        """SGLang's storage backend base (restated): five abstract legacy calls; the rest have defaults
        (the v1/v2 calls raise NotImplementedError, never answer None)."""

        def register_mem_pool_host(self, mem_pool_host) -> None:
            self.mem_pool_host = mem_pool_host

        def register_mem_host_pool_v2(self, host_pool, host_pool_name) -> None:
            if not hasattr(self, "registered_pools"):
                self.registered_pools = {}
            self.registered_pools[host_pool_name] = host_pool

        def batch_exists_v2(self, keys, pool_transfers=None, extra_info=None):
            raise NotImplementedError()

        def batch_get_v2(self, transfers, extra_info=None):
            raise NotImplementedError()

        def batch_set_v2(self, transfers, extra_info=None):
            raise NotImplementedError()

        def batch_get_v1(self, keys, host_indices, extra_info=None) -> List[bool]:
            raise NotImplementedError()

        def batch_set_v1(self, keys, host_indices, extra_info=None) -> List[bool]:
            raise NotImplementedError()

        @abc.abstractmethod
        def get(self, key, target_location=None, target_sizes=None):
            """The value of ``key`` (a tensor), or None when the store does not hold it."""

        @abc.abstractmethod
        def batch_get(self, keys, target_locations=None, target_sizes=None):
            """A tensor or None per key."""

        @abc.abstractmethod
        def set(self, key, value=None, target_location=None, target_sizes=None) -> bool:
            """Stores ``value`` under ``key``."""

        @abc.abstractmethod
        def batch_set(self, keys, values=None, target_locations=None, target_sizes=None) -> bool:
            """True only when every key was stored."""

        @abc.abstractmethod
        def exists(self, key) -> bool:
            """Whether the store holds ``key``."""

        def batch_exists(self, keys, extra_info=None) -> int:
            for i, key in enumerate(keys):
                if not self.exists(key):
                    return i
            return len(keys)

        def clear(self) -> None:
            pass

        def get_stats(self):
            return None

if PoolName is None:
    class PoolName(str, enum.Enum):
        """The pools a hybrid model's transfer can name (restated; ``kv`` is the KV pool)."""
        KV = "kv"
        MAMBA = "mamba"
        SWA = "swa"
        INDEXER = "indexer"

        def __str__(self) -> str:
            return self.value

    class PoolHitPolicy(str, enum.Enum):
        """ALL_PAGES: every page of the prefix must exist; TRAILING_PAGES: only the last ones (restated)."""
        ALL_PAGES = "all_pages"
        TRAILING_PAGES = "trailing_pages"

    @dataclass
    class PoolTransfer:
        """One pool's part of a v2 transfer (restated)."""
        name: Any
        host_indices: Any = None
        device_indices: Any = None
        keys: Optional[List[str]] = None
        hit_policy: Any = PoolHitPolicy.ALL_PAGES
        nodes_to_load: Optional[List[Any]] = None
        indices_from_pool: Any = None

    @dataclass
    class PoolTransferResult:
        """The usable KV prefix and each extra pool's hits (restated)."""
        kv_hit_pages: int
        extra_pool_hit_pages: Dict[str, int]

if StorageMetrics is None:
    @dataclass
    class StorageMetrics:
        """What ``get_stats`` hands SGLang's metrics collector (restated): per-batch samples since the last call."""
        prefetch_pgs: List[int] = field(default_factory=list)
        backup_pgs: List[int] = field(default_factory=list)
        prefetch_bandwidth: List[float] = field(default_factory=list)
        backup_bandwidth: List[float] = field(default_factory=list)


def create_dynamic_backend(storage_config, mem_pool_host=None, **kwargs):
    """``--hicache-storage-backend dynamic``: SGLang's own factory when it is importable, else the same
    steps restated: the extra config must name ``backend_name``, ``module_path`` and ``class_name``; the
    class is imported and must subclass HiCacheStorage; it is constructed as ``cls(storage_config,
    kwargs)``. The caller then registers the host pool, as HiCache's controller does."""
    if REAL:
        from sglang.srt.mem_cache.storage.backend_factory import StorageBackendFactory  # type: ignore
        return StorageBackendFactory.create_backend("dynamic", storage_config, mem_pool_host, **kwargs)
    config = storage_config.extra_config
    if config is None:
        raise ValueError("Unknown storage backend 'dynamic': no extra config")
    for name in ("backend_name", "module_path", "class_name"):
        if name not in config:
            raise ValueError("Missing required field '%s' in backend config for 'dynamic' backend" % name)
    module = importlib.import_module(config["module_path"])
    cls = getattr(module, config["class_name"])
    if not (isinstance(cls, type) and issubclass(cls, HiCacheStorage)):
        raise TypeError("Backend class %s must inherit from HiCacheStorage" % config["class_name"])
    return cls(storage_config, kwargs)


def sglang_page_hashes(tokens: Sequence[int], page_size: int) -> List[str]:
    """The page ids SGLang gives the whole pages of ``tokens``: per page, SHA-256 over the previous
    page's digest (raw bytes, none for the first page) then each token id as 4 bytes little-endian,
    as a lowercase hex string."""
    hashes: List[str] = []
    prior = None
    for start in range(0, len(tokens) - len(tokens) % page_size, page_size):
        h = hashlib.sha256()
        if prior:
            h.update(bytes.fromhex(prior))
        for t in tokens[start:start + page_size]:
            h.update(int(t).to_bytes(4, "little", signed=False))
        prior = h.hexdigest()
        hashes.append(prior)
    return hashes


class HostPool:
    """A host KV pool shaped as SGLang's page-first host pools are, for the drivers and tests: ``pages``
    pages of ``page_size`` token slots; each page is ``buffers`` regions (2: K then V, as MHA; 1: one
    latent buffer, as MLA) of ``bytes_per_buffer`` bytes, each region in its own big buffer as SGLang's
    page-first pool keeps K and V apart. With torch (``use_torch``, the default when importable) the
    buffers are torch tensors of ``dtype`` and indices torch int64 tensors, as SGLang's are; without,
    ctypes buffers and int lists.

    ``get_page_buffer_meta(indices)`` answers as SGLang's pools do: for each page (every
    ``page_size``-th index, a page's slots being contiguous) its regions' pointers, and their sizes."""

    layout = "page_first"

    def __init__(self, pages: int, page_size: int, bytes_per_buffer: int, buffers: int = 2, use_torch: Optional[bool] = None,
                 dtype: Any = None) -> None:
        if pages < 1 or page_size < 1 or bytes_per_buffer < 1 or buffers < 1:
            raise ValueError("pages, page_size, bytes_per_buffer and buffers must be positive")
        self.pages, self.page_size, self.bytes_per_buffer, self.buffers = pages, page_size, bytes_per_buffer, buffers
        self.size = pages * page_size
        torch = None
        if use_torch is not False:
            try:
                import torch  # noqa: F811
            except ImportError:
                if use_torch:
                    raise
        self.torch = torch
        if torch is not None:
            dtype = dtype if dtype is not None else torch.bfloat16
            item = torch.tensor([], dtype=dtype).element_size()
            if bytes_per_buffer % item:
                raise ValueError("bytes_per_buffer %d is not a whole number of %s elements" % (bytes_per_buffer, dtype))
            self.dtype = dtype
            self.kv_buffer = torch.zeros((buffers, pages, bytes_per_buffer // item), dtype=dtype)
            self._bases = [self.kv_buffer[b].data_ptr() for b in range(buffers)]
        else:
            self.dtype = "uint8"
            self.kv_buffer = [(ctypes.c_char * (pages * bytes_per_buffer))() for _ in range(buffers)]
            self._bases = [ctypes.addressof(b) for b in self.kv_buffer]

    @property
    def page_bytes(self) -> int:
        """The bytes of one page over all its regions."""
        return self.bytes_per_buffer * self.buffers

    def indices(self, slots: Sequence[int]):
        """The host indices of whole pages ``slots`` (page numbers), as SGLang passes them."""
        flat = [s * self.page_size + t for s in slots for t in range(self.page_size)]
        return self.torch.tensor(flat, dtype=self.torch.int64) if self.torch is not None else flat

    def get_page_buffer_meta(self, indices):
        flat = indices.tolist() if hasattr(indices, "tolist") else list(indices)
        if len(flat) % self.page_size:
            raise ValueError("%d indices are not whole pages of %d" % (len(flat), self.page_size))
        ptrs = []
        for i in range(0, len(flat), self.page_size):
            page = int(flat[i]) // self.page_size
            if not 0 <= page < self.pages:
                raise IndexError("host index %d is outside the pool's %d slots" % (flat[i], self.size))
            for base in self._bases:
                ptrs.append(base + page * self.bytes_per_buffer)
        return ptrs, [self.bytes_per_buffer] * len(ptrs)

    def page_ptrs(self, page: int) -> List[int]:
        """Page ``page``'s region pointers."""
        return [base + page * self.bytes_per_buffer for base in self._bases]

    def write_page(self, page: int, data: bytes) -> None:
        """Writes ``data`` (page_bytes long) across page ``page``'s regions, in order."""
        if len(data) != self.page_bytes:
            raise ValueError("a page is %d bytes, not %d" % (self.page_bytes, len(data)))
        for i, ptr in enumerate(self.page_ptrs(page)):
            ctypes.memmove(ptr, data[i * self.bytes_per_buffer:(i + 1) * self.bytes_per_buffer], self.bytes_per_buffer)

    def read_page(self, page: int) -> bytes:
        """Page ``page``'s bytes over its regions, in order."""
        return b"".join(ctypes.string_at(ptr, self.bytes_per_buffer) for ptr in self.page_ptrs(page))

    def get_dummy_flat_data_page(self):
        """A flat page-sized buffer (legacy get's target), as SGLang's pools give one."""
        if self.torch is not None:
            return self.torch.zeros(self.page_bytes // self.kv_buffer.element_size(), dtype=self.dtype)
        return bytearray(self.page_bytes)

    def get_data_page(self, index, flat: bool = True):
        """The page holding host index ``index`` as one flat tensor (a copy), as the legacy set path reads it."""
        page = int(index) // self.page_size
        if self.torch is not None:
            return self.torch.cat([self.kv_buffer[b][page] for b in range(self.buffers)])
        return bytearray(self.read_page(page))

    def set_from_flat_data_page(self, index, data_page) -> None:
        """Writes a flat page (as legacy get returns) into the page holding host index ``index``."""
        page = int(index) // self.page_size
        if self.torch is not None:
            data = data_page.contiguous().view(self.torch.uint8)
            self.write_page(page, ctypes.string_at(data.data_ptr(), data.numel()))
        else:
            self.write_page(page, bytes(data_page))

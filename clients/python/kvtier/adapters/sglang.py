"""kvtier as an SGLang HiCache storage backend (L3 of HiCache), sharing one kvtier pool between every
SGLang process on the node, zero-copy from the pool's side: a page's bytes go by one ``memmove`` per
host-pool buffer between SGLang's host KV pool and the page in kvtier's shared pool.

Point SGLang at it with::

    --enable-hierarchical-cache --hicache-storage-backend dynamic \\
    --hicache-storage-backend-extra-config '{"backend_name": "kvtier", "module_path": "kvtier.adapters.sglang",
        "class_name": "KvtierHiCacheStorage", "interface_v1": 1,
        "kvtier_socket": "/dev/shm/kvtier-pool.sock", "kvtier_salt": "tenant-a"}'

Settings (in the extra config; docs/adapters/sglang.md): ``kvtier_socket`` (else ``$KVTIER_SOCKET``),
``kvtier_salt`` (the tenant salt, default ""), ``kvtier_model`` (default SGLang's ``model_name``),
``kvtier_layout`` (the KV layout text of the namespace, default ``sglang``), ``kvtier_timeout_ms``
(default 5000), ``kvtier_retry_seconds`` (how soon after a failure a call tries the engine again,
default 1.0).

Keys: ``kvtier.keys.sglang_page_key`` of SGLang's own page hash under the namespace root of (model,
layout with the parallel position, rank, salt); an MLA model's rank is 0 and only TP rank 0 writes.
Every call answers its type: a failure (no engine, timeout, refusal) is a False/miss for the keys
concerned, logged once per reason a minute, and a later call reconnects. Calls are serialized on one
kvtier session (SGLang calls from its prefetch and backup threads at once).
"""
from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import _client as kv
from .. import keys as kvkeys
from ..contracts import sglang as contract
from ..contracts.sglang import HiCacheStorage, HiCacheStorageExtraInfo, PoolTransferResult, StorageMetrics

__all__ = ["KvtierHiCacheStorage", "Unsupported", "PAUSE_BEFORE_COMMIT"]

log = logging.getLogger(__name__)

#: Under test only: seconds a batch_set_v1 sleeps after reserving and writing part of its pages and
#: before committing them, having printed ``KVTIER_ADAPTER_PAUSED`` (so that a test can kill it there).
PAUSE_BEFORE_COMMIT = "KVTIER_ADAPTER_TEST_PAUSE_BEFORE_COMMIT"

_LOG_EVERY_SECONDS = 60.0


class Unsupported(NotImplementedError):
    """A call or setting this backend refuses (SGLang's own refusal is NotImplementedError); the
    message names what and why."""


def _setting(config: dict, name: str, kind, default):
    value = config.get(name, default)
    if value is None:
        return None
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            raise ValueError
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError("extra_config %r must be a %s, not %r" % (name, kind.__name__, value)) from None


class KvtierHiCacheStorage(HiCacheStorage):
    """SGLang HiCache storage backend over a kvtier engine (see the module's documentation)."""

    def __init__(self, storage_config, kwargs: Optional[dict] = None) -> None:
        config = dict(storage_config.extra_config or {})
        self.config = storage_config
        socket = config.get("kvtier_socket") or os.environ.get("KVTIER_SOCKET")
        if not socket:
            raise ValueError("no kvtier socket: set extra_config 'kvtier_socket' (or $KVTIER_SOCKET) to the engine's IPC socket")
        if not isinstance(socket, str):
            raise ValueError("extra_config 'kvtier_socket' must be a path string, not %r" % (socket,))
        self.socket = socket
        self.salt = _setting(config, "kvtier_salt", str, "")
        self.model = _setting(config, "kvtier_model", str, storage_config.model_name)
        if not self.model:
            raise ValueError("no model id for the kvtier namespace: SGLang gave no model_name; set extra_config 'kvtier_model'")
        self.timeout_ms = _setting(config, "kvtier_timeout_ms", int, 5000)
        if self.timeout_ms < 1:
            raise ValueError("extra_config 'kvtier_timeout_ms' must be at least 1, not %d" % self.timeout_ms)
        self.retry_seconds = _setting(config, "kvtier_retry_seconds", float, 1.0)
        if self.retry_seconds < 0:
            raise ValueError("extra_config 'kvtier_retry_seconds' must be >= 0, not %s" % self.retry_seconds)
        if getattr(storage_config, "should_split_heads", False):
            raise Unsupported("kvtier's SGLang backend does not support should_split_heads (heads split across TP ranks of "
                              "different sizes, tp_lcm_size): a page would hold another rank layout's slice")
        self.is_mla = bool(storage_config.is_mla_model)
        self.tp_rank = int(storage_config.tp_rank)
        # An MLA model's KV is the same on every TP rank: one copy, under rank 0, written by rank 0 only.
        self.writes = not self.is_mla or self.tp_rank == 0
        self.layout = self._layout_text(storage_config, _setting(config, "kvtier_layout", str, "sglang"))
        self.rank = 0 if self.is_mla else self.tp_rank
        self.root = kvkeys.namespace_root(self.model, self.layout, self.rank, self.salt)
        self.mem_pool_host = None
        self.page_bytes = 0          # one engine page over its buffers, once the host pool is registered
        self.buffers_per_page = 0
        self._lock = threading.Lock()
        self._client: Optional[kv.Client] = None
        self._retry_at = 0.0
        self._logged: Dict[str, float] = {}
        self.last_error: Optional[str] = None
        self.counts = {"exists_keys": 0, "loaded_pages": 0, "stored_pages": 0, "failed_pages": 0, "errors": 0}
        self._metrics = StorageMetrics()
        self._pause = float(os.environ.get(PAUSE_BEFORE_COMMIT, "0") or 0)
        with self._lock:
            self._connected()   # fail early and loudly only on settings; an absent engine is a later miss

    # -- settings and capabilities --

    @staticmethod
    def _layout_text(cfg, base: str) -> str:
        parts = [base, "mla" if cfg.is_mla_model else "tp%d" % cfg.tp_size]
        if getattr(cfg, "pp_size", 1) > 1:
            parts.append("pp%d/%d" % (cfg.pp_rank, cfg.pp_size))
        if getattr(cfg, "attn_cp_size", 1) > 1:
            parts.append("cp%d/%d" % (cfg.attn_cp_rank, cfg.attn_cp_size))
        return ";".join(parts)

    @staticmethod
    def capabilities() -> dict:
        """What this backend does and does not do (issue 19 section 6), with the reasons."""
        return {
            "supported": ["batch_get_v1", "batch_set_v1", "batch_exists", "exists", "get", "set", "batch_get", "batch_set",
                          "get_stats", "batch_exists_v2/batch_get_v2/batch_set_v2 for the KV pool",
                          "MLA (one copy, rank 0 writes)", "any host pool layout get_page_buffer_meta describes"],
            "unsupported": {
                "clear": "kvtier's pool is shared by every engine process and tenant on the node and evicts by itself; "
                         "one backend cannot drop only its own pages, and dropping all would take others' (use kvtier's admin)",
                "hybrid pools": "pools other than 'kv' (mamba, swa, indexer, ...) are not stored; register_mem_host_pool_v2 "
                                "refuses them and v2 calls naming them answer misses",
                "gpu direct": "the backend copies between SGLang's host pool and kvtier's pool on the CPU; no GPU or "
                              "storage-direct path",
                "should_split_heads": "pages split across TP ranks of different sizes are refused at construction",
            },
        }

    # -- session --

    def _note(self, reason: str) -> None:
        """Records a failure: the reason is kept (last_error) and logged once a minute per reason."""
        self.last_error = reason
        self.counts["errors"] += 1
        now = time.monotonic()
        if now - self._logged.get(reason, -1e9) >= _LOG_EVERY_SECONDS:
            self._logged[reason] = now
            log.warning("kvtier SGLang backend: %s (the keys concerned answer False or a miss)", reason)

    def _connected(self) -> Optional[kv.Client]:
        """The session (connecting when there is none and the retry time has come), or None."""
        if self._client is not None:
            return self._client
        if time.monotonic() < self._retry_at:
            return None
        try:
            self._client = kv.Client(self.socket, namespaces=[self.root], max_keys=contract.STORAGE_BATCH_SIZE,
                                     timeout_ms=self.timeout_ms)
        except (kv.KvtierError, OSError) as e:
            self._retry_at = time.monotonic() + self.retry_seconds
            self._note("no kvtier engine at %s: %s" % (self.socket, e))
            return None
        if self.page_bytes and self.page_bytes > self._client.page_size:
            size = self._client.page_size
            self._drop()
            self._note("an SGLang page of %d bytes does not fit the kvtier pool's pages of %d bytes" % (self.page_bytes, size))
            return None
        return self._client

    def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # the engine is gone: nothing to give back that its lease will not
                pass

    def _failed(self, what: str, e: BaseException) -> None:
        """A call failed mid-way: note it, and start a new session on a later call (the engine gives back
        anything the old one held when it goes: CLOSE now, or its lease)."""
        self._note("%s failed: %s" % (what, e))
        self._drop()
        self._retry_at = time.monotonic() + self.retry_seconds

    def close(self) -> None:
        """Ends the kvtier session (SGLang's detach calls nothing; the process's exit does the same)."""
        with self._lock:
            self._drop()

    # -- the host pool --

    def register_mem_pool_host(self, mem_pool_host) -> None:
        """Takes SGLang's host KV pool: one page's buffers (from ``get_page_buffer_meta``) make a kvtier
        page's payload, which the kvtier pool's page size must hold (ValueError naming both otherwise)."""
        page_size = int(mem_pool_host.page_size)
        probe = list(range(page_size))
        try:
            import torch
            probe = torch.arange(page_size, dtype=torch.int64)
        except ImportError:
            pass
        ptrs, sizes = mem_pool_host.get_page_buffer_meta(probe)
        sizes = self._sizes(ptrs, sizes)
        if not ptrs:
            raise ValueError("the host pool's get_page_buffer_meta gave no buffer for one page")
        page_bytes = sum(sizes)
        with self._lock:
            client = self._connected()
            if client is not None and page_bytes > client.page_size:
                raise ValueError("an SGLang page is %d bytes (%d buffers of %s bytes) and the kvtier pool's pages are %d bytes: "
                                 "serve kvtier with pool.page-size of at least %d"
                                 % (page_bytes, len(sizes), "/".join(str(s) for s in sorted(set(sizes))), client.page_size, page_bytes))
            self.mem_pool_host = mem_pool_host
            self.page_bytes = page_bytes
            self.buffers_per_page = len(ptrs)
            self.page_tokens = page_size

    def register_mem_host_pool_v2(self, host_pool, host_pool_name) -> None:
        """Only the KV pool: any other pool (mamba, swa, indexer, ...) is refused here, at start-up."""
        if str(host_pool_name) != "kv":
            raise Unsupported("kvtier's SGLang backend stores the KV pool only, not the %r pool of a hybrid model"
                              % str(host_pool_name))
        self.register_mem_pool_host(host_pool)

    @staticmethod
    def _sizes(ptrs, sizes) -> List[int]:
        if isinstance(sizes, int):
            return [sizes] * len(ptrs)
        sizes = [int(s) for s in sizes]
        if len(sizes) != len(ptrs):
            raise ValueError("get_page_buffer_meta gave %d pointers and %d sizes" % (len(ptrs), len(sizes)))
        return sizes

    def _pages(self, keys: Sequence[str], host_indices) -> List[List[Tuple[int, int]]]:
        """Each key's page as [(pointer, size), ...] in the host pool, in the order the pool gives them."""
        if self.mem_pool_host is None:
            raise RuntimeError("no host pool: SGLang calls register_mem_pool_host before any transfer")
        n = len(host_indices)
        if n != len(keys) * self.page_tokens:
            raise ValueError("%d host indices for %d keys of %d tokens" % (n, len(keys), self.page_tokens))
        ptrs, sizes = self.mem_pool_host.get_page_buffer_meta(host_indices)
        sizes = self._sizes(ptrs, sizes)
        per = self.buffers_per_page
        if len(ptrs) != per * len(keys):
            raise ValueError("get_page_buffer_meta gave %d buffers for %d pages of %d" % (len(ptrs), len(keys), per))
        pages = [list(zip(ptrs[i * per:(i + 1) * per], sizes[i * per:(i + 1) * per])) for i in range(len(keys))]
        for page in pages:
            if sum(s for _, s in page) != self.page_bytes:
                raise ValueError("a page of %d bytes where the host pool's pages are %d" % (sum(s for _, s in page), self.page_bytes))
        return pages

    def key(self, page_hash: str) -> bytes:
        """The kvtier key of the page SGLang names ``page_hash``, in this backend's namespace."""
        return kvkeys.sglang_page_key(self.root, page_hash)

    # -- the zero-copy calls --

    def batch_exists(self, keys: List[str], extra_info: Optional[HiCacheStorageExtraInfo] = None) -> int:
        """The leading run of ``keys`` kvtier holds (its pool, then its L3 tiers)."""
        keys = list(keys)
        with self._lock:
            client = self._connected()
            if client is None:
                return 0
            held = 0
            try:
                for start in range(0, len(keys), client.max_keys):
                    chunk = [self.key(k) for k in keys[start:start + client.max_keys]]
                    r = client.lookup(chunk)
                    found = r.pool_pages + r.l3_pages
                    held += found
                    if found < len(chunk):
                        break
            except Exception as e:  # SGLang's prefetch thread must get its int
                self._failed("batch_exists", e)
            self.counts["exists_keys"] += held
            return held

    def exists(self, key: str) -> bool:
        return self.batch_exists([key]) == 1

    def batch_get_v1(self, keys: List[str], host_indices, extra_info: Optional[HiCacheStorageExtraInfo] = None) -> List[bool]:
        """Loads the leading run of ``keys`` into their host pages; True per page loaded, the first False ends it."""
        keys = list(keys)
        out = [False] * len(keys)
        started = time.monotonic()
        with self._lock:
            begun = self._begin("batch_get_v1", keys, host_indices)
            if begun is None:
                return out
            client, pages = begun
            loaded = self._chunks("batch_get_v1", self._get_chunk, client, keys, pages, out)
            self.counts["loaded_pages"] += loaded
            if loaded:
                self._metrics.prefetch_pgs.append(loaded)
                self._metrics.prefetch_bandwidth.append(loaded * self.page_bytes / max(time.monotonic() - started, 1e-9) / 1e9)
        return out

    def _begin(self, call: str, keys, host_indices) -> Optional[Tuple[kv.Client, List[List[Tuple[int, int]]]]]:
        """The session and the host pages of ``keys`` for a v1 batch, or None (the reason noted) when the host pool
        refuses them or no engine answers; the caller holds the lock."""
        try:
            pages = self._pages(keys, host_indices)
        except Exception as e:  # whatever the host pool makes of them: a raise here would end HiCache's thread
            self._note("%s of %d keys refused: %s" % (call, len(keys), e))
            return None
        client = self._connected()
        if client is None:
            return None
        return client, pages

    def _chunks(self, call: str, transfer, client, keys, pages, out) -> int:
        """Runs ``transfer`` (``_get_chunk`` or ``_set_chunk``) over ``keys`` a chunk of ``max_keys`` at a time until a
        chunk leaves a page out; returns the leading run of pages done, every entry of ``out`` after it False. An
        exception ends the batch, counted as ``call``'s failure and never raised: SGLang's prefetch and backup threads
        must get their answer."""
        done = 0
        try:
            while done < len(keys):
                n = transfer(client, keys, pages, done, out)
                if not all(out[done:done + n]):
                    break
                done += n
        except Exception as e:
            self._failed(call, e)
        run = out.index(False) if False in out else len(out)
        out[run:] = [False] * (len(out) - run)
        return run

    def _get_chunk(self, client, keys, pages, start, out) -> int:
        """ACQUIREs keys[start:start + max_keys], copies each pinned page of the expected length into its host
        page in order, stops at the first that is not; RELEASEs whatever happens. Returns the keys attempted."""
        chunk = keys[start:start + client.max_keys]
        client.acquire([self.key(k) for k in chunk])
        try:
            for i in range(len(chunk)):
                if client.slot_status(i) not in (kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3):
                    return len(chunk)
                length = client.payload_length(i)
                if length != self.page_bytes:
                    self._note("page %s holds %d bytes, not an SGLang page's %d: a miss" % (chunk[i], length, self.page_bytes))
                    return len(chunk)
                view = client.slot_view(i)
                try:
                    src = ctypes.addressof(ctypes.c_char.from_buffer(view))
                    offset = 0
                    for ptr, size in pages[start + i]:
                        ctypes.memmove(ptr, src + offset, size)
                        offset += size
                finally:
                    view.release()
                out[start + i] = True
            return len(chunk)
        finally:
            client.release(0, len(chunk))

    def batch_set_v1(self, keys: List[str], host_indices, extra_info: Optional[HiCacheStorageExtraInfo] = None) -> List[bool]:
        """Stores the host pages of ``keys``: True per page kvtier holds afterwards (written now, or already
        there); the first False ends the batch. Only committed pages are ever visible."""
        keys = list(keys)
        out = [False] * len(keys)
        started = time.monotonic()
        if not self.writes:
            # MLA, TP rank > 0: rank 0 stores the one copy of these very bytes.
            return [True] * len(keys)
        with self._lock:
            begun = self._begin("batch_set_v1", keys, host_indices)
            if begun is None:
                return out
            client, pages = begun
            stored = self._chunks("batch_set_v1", self._set_chunk, client, keys, pages, out)
            self.counts["stored_pages"] += stored
            self.counts["failed_pages"] += len(out) - stored
            if stored:
                self._metrics.backup_pgs.append(stored)
                self._metrics.backup_bandwidth.append(stored * self.page_bytes / max(time.monotonic() - started, 1e-9) / 1e9)
        return out

    def _set_chunk(self, client, keys, pages, start, out) -> int:
        """RESERVEs keys[start:start + max_keys], writes the leading run of reserved (or already held) pages,
        COMMITs those it wrote and ABORTs every other reservation; on any exception ABORTs them all."""
        chunk = keys[start:start + client.max_keys]
        n = len(chunk)
        client.reserve([self.key(k) for k in chunk])
        committed = False
        try:
            run = 0
            statuses = [client.slot_status(i) for i in range(n)]
            for i in range(n):
                if statuses[i] == kv.PAGE_EXISTS:
                    run += 1
                    continue
                if statuses[i] != kv.PAGE_RESERVED:
                    break
                view = client.slot_view(i)
                try:
                    dst = ctypes.addressof(ctypes.c_char.from_buffer(view))
                    offset = 0
                    for ptr, size in pages[start + i]:
                        ctypes.memmove(dst + offset, ptr, size)
                        offset += size
                finally:
                    view.release()
                run += 1
                if self._pause and i == 0:
                    sys.stdout.write("KVTIER_ADAPTER_PAUSED %d\n" % n)
                    sys.stdout.flush()
                    time.sleep(self._pause)
            lengths = [sum(size for _, size in pages[start + i]) if statuses[i] == kv.PAGE_RESERVED else 1 for i in range(run)]
            if run:
                client.commit(0, lengths)
            committed = True
            for i in range(run):
                out[start + i] = statuses[i] == kv.PAGE_EXISTS or client.slot_status(i) == kv.PAGE_COMMITTED
            if run < n:
                client.abort(run, n - run)
            return n
        except BaseException:
            if not committed:
                try:
                    client.abort(0, n)
                except Exception:
                    pass  # the session is going: the engine gives the reservations back with it
            raise

    # -- the legacy calls (tensors) --

    def _bytes_of(self, value, target_location=None, target_sizes=None) -> Optional[bytes]:
        if value is None and isinstance(target_location, int) and isinstance(target_sizes, int):
            return ctypes.string_at(target_location, target_sizes)
        if value is None:
            return None
        if hasattr(value, "data_ptr"):
            if getattr(value, "device", None) is not None and str(value.device) != "cpu":
                raise Unsupported("kvtier's SGLang backend copies host memory only, not a tensor on %s" % value.device)
            value = value.contiguous()
            return ctypes.string_at(value.data_ptr(), value.numel() * value.element_size())
        return bytes(value)

    def set(self, key: str, value=None, target_location=None, target_sizes=None) -> bool:
        return self.batch_set([key], [value], [target_location] if target_location is not None else None,
                              [target_sizes] if target_sizes is not None else None)

    def batch_set(self, keys: List[str], values=None, target_locations=None, target_sizes=None) -> bool:
        """Stores each value (a CPU tensor, bytes, or a pointer and size) under its key; True only if all were."""
        keys = list(keys)
        if not keys:
            return True
        if not self.writes:
            return True
        try:
            data = [self._bytes_of(values[i] if values is not None else None,
                                   target_locations[i] if target_locations is not None else None,
                                   target_sizes[i] if target_sizes is not None else None) for i in range(len(keys))]
        except Exception as e:  # a value it cannot read (a GPU tensor, ...): False, as the backup thread expects
            self._note("batch_set of %d keys refused: %s" % (len(keys), e))
            return False
        with self._lock:
            client = self._connected()
            if client is None:
                return False
            for i, d in enumerate(data):
                if d is None or not d or len(d) > client.page_size or (self.page_bytes and len(d) != self.page_bytes):
                    self._note("set of %s refused: a value of %s bytes (pages hold %d, an SGLang page is %d)"
                               % (keys[i], None if d is None else len(d), client.page_size, self.page_bytes))
                    return False
            buffers = [ctypes.create_string_buffer(d, len(d)) for d in data]
            pages = [[(ctypes.addressof(b), len(b))] for b in buffers]
            ok = self._chunks("batch_set", self._set_chunk, client, keys, pages, [False] * len(keys))
            self.counts["stored_pages"] += ok
            return ok == len(keys)

    def get(self, key: str, target_location=None, target_sizes=None):
        return self.batch_get([key], [target_location] if target_location is not None else None,
                              [target_sizes] if target_sizes is not None else None)[0]

    def batch_get(self, keys: List[str], target_locations=None, target_sizes=None):
        """A tensor per key held (copied into ``target_locations[i]`` when given, whose byte size must be the
        page's), None for the rest; the first None ends the batch."""
        keys = list(keys)
        out: List[Any] = [None] * len(keys)
        with self._lock:
            client = self._connected()
            if client is None:
                return out
            try:
                for start in range(0, len(keys), client.max_keys):
                    chunk = keys[start:start + client.max_keys]
                    with client.pinned([self.key(k) for k in chunk]):
                        for i in range(len(chunk)):
                            if client.slot_status(i) not in (kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3):
                                break
                            data = client.payload(i)
                            target = target_locations[start + i] if target_locations is not None else None
                            value = self._into(data, target, chunk[i])
                            data.release()
                            if value is None:
                                break
                            out[start + i] = value
                    if out[min(start + len(chunk), len(keys)) - 1] is None:
                        break
            except Exception as e:  # the legacy prefetch path must get its list
                self._failed("batch_get", e)
        if None in out:
            first = out.index(None)
            out[first:] = [None] * (len(out) - first)
        return out

    def _into(self, data: memoryview, target, key: str):
        n = len(data)
        if self.page_bytes and n != self.page_bytes:
            self._note("page %s holds %d bytes, not an SGLang page's %d: a miss" % (key, n, self.page_bytes))
            return None
        if target is None:
            try:
                import torch
                value = torch.empty(n, dtype=torch.uint8)
                ctypes.memmove(value.data_ptr(), ctypes.addressof(ctypes.c_char.from_buffer(data)), n)
                return value
            except ImportError:
                return bytearray(data)
        if hasattr(target, "data_ptr"):
            if not target.is_contiguous() or target.numel() * target.element_size() != n or str(target.device) != "cpu":
                self._note("page %s of %d bytes does not fit its target of %d bytes on %s: a miss"
                           % (key, n, target.numel() * target.element_size(), target.device))
                return None
            ctypes.memmove(target.data_ptr(), ctypes.addressof(ctypes.c_char.from_buffer(data)), n)
            return target
        if len(target) != n:
            self._note("page %s of %d bytes does not fit its target of %d bytes: a miss" % (key, n, len(target)))
            return None
        target[:] = data
        return target

    # -- the rest of the contract --

    def clear(self) -> None:
        raise Unsupported("clear: " + self.capabilities()["unsupported"]["clear"])

    def get_stats(self):
        """SGLang's StorageMetrics: the pages and bandwidth of each batch since the last call."""
        with self._lock:
            metrics, self._metrics = self._metrics, StorageMetrics()
        return metrics

    def stats(self) -> dict:
        """This backend's own counters and last error (for operators and tests)."""
        out = dict(self.counts)
        out["last_error"] = self.last_error
        out["connected"] = self._client is not None
        return out

    # -- hybrid pools (v2): the KV pool only --

    def _kv_only(self, transfers, call: str) -> Optional[str]:
        for t in transfers or ():
            if str(t.name) != "kv":
                self._note("%s names the %r pool: kvtier stores the KV pool only; a miss" % (call, str(t.name)))
                return str(t.name)
        return None

    def batch_exists_v2(self, keys, pool_transfers=None, extra_info=None):
        hit = self.batch_exists(keys, extra_info)
        other = self._kv_only(pool_transfers, "batch_exists_v2")
        extra = {str(t.name): 0 for t in pool_transfers or () if str(t.name) != "kv"}
        return PoolTransferResult(0 if other else hit, extra)

    def batch_get_v2(self, transfers, extra_info=None) -> Dict[str, List[bool]]:
        return self._v2(transfers, extra_info, self.batch_get_v1, "batch_get_v2")

    def batch_set_v2(self, transfers, extra_info=None) -> Dict[str, List[bool]]:
        return self._v2(transfers, extra_info, self.batch_set_v1, "batch_set_v2")

    def _v2(self, transfers, extra_info, call, name) -> Dict[str, List[bool]]:
        out: Dict[str, List[bool]] = {}
        for t in transfers or ():
            keys = list(t.keys or [])
            if str(t.name) != "kv":
                self._kv_only([t], name)
                out[str(t.name)] = [False] * len(keys)
            else:
                out[str(t.name)] = call(keys, t.host_indices, extra_info)
        return out

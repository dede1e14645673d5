"""kvtier as an LMCache L2 store, through LMCache's ``native_plugin`` L2 adapter (docs/adapters/lmcache.md).

LMCache constructs :class:`KvtierL2Connector` from its L2 adapter config::

    {"type": "native_plugin", "module_path": "kvtier.adapters.lmcache", "class_name": "KvtierL2Connector",
     "adapter_params": {"socket_path": "/dev/shm/kvtier-pool.sock", "model_id": "meta-llama/Llama-3.1-8B-Instruct@5206a32",
                        "kv_layout": "bf16/chunk256/tp1", "tenant_salt": ""}}

and calls it as its native-connector bridge does (``kvtier.contracts.lmcache``): every ``submit_batch_*`` answers a
future id at once; one worker thread of the connector, the only user of its ``kvtier.Client``, does the work in
submission order, copying bytes between LMCache's host memoryviews and the pool's pages with ``ctypes.memmove``;
each completion is queued and signalled on the connector's eventfd, and ``drain_completions()`` hands them over.

A chunk is one kvtier page: its key is ``kvtier.keys.lmcache_page_key(root, chunk_key)`` under the namespace root of
the adapter params, its bytes are the chunk's memoryview as LMCache gives it. A batch is a prefix chain: the first
key that fails ends it, and the keys after it are answered False without being tried. Nothing raises out of the
worker: an engine that is gone, a timeout or a refusal answers False for those keys with the reason (logged at most
once a minute per reason), and the next batch connects again.
"""
from __future__ import annotations

import ctypes
import itertools
import logging
import os
import queue
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import _client as kv
from .. import keys as kvkeys

__all__ = ["KvtierL2Connector", "CAPABILITIES", "PARAMETERS", "PAUSE_BEFORE_COMMIT"]

log = logging.getLogger(__name__)

# Only the adapter tests set it: a store stops after reserving and writing part of its pages, prints a line on
# stdout and sleeps, so that the test can kill the process there.
PAUSE_BEFORE_COMMIT = "KVTIER_ADAPTER_TEST_PAUSE_BEFORE_COMMIT"

PARAMETERS = {
    "socket_path": "the kvtier engine's IPC socket (default: $KVTIER_SOCKET)",
    "model_id": "the model and its revision, for the namespace root (required)",
    "kv_layout": "what changes a chunk's bytes: dtype, tokens per chunk, layout, TP degree (required)",
    "tenant_salt": "kvtier's tenant salt, for the namespace root (default empty: shared)",
    "tp_rank": "the rank in the namespace root (default 0; LMCache's chunk keys carry their own KV rank)",
    "mla": "true for an MLA model: one copy for all ranks (the namespace rank is 0, and only rank 0 stores)",
    "chunk_bytes": "the bytes of one chunk, if known: construction fails when the pool's page is smaller",
    "timeout_ms": "how long one request to the engine may take (default 5000)",
}

# What the connector does and does not do (issue 19 section 6), with reasons.
CAPABILITIES = {
    "supported": {
        "submit_batch_exists": "leading run of the keys the pool or kvtier's L3 holds",
        "submit_batch_get": "client copy (ctypes.memmove) from pinned pool pages into LMCache's host memoryviews",
        "submit_batch_set": "client copy into reserved pool pages, committed only when written",
        "submit_batch_delete": "drops the pool's copy of each key; kvtier's own L3 copies stay (its tiers evict them)",
    },
    "unsupported": {
        "gpu_direct": "the native_plugin contract passes host memoryviews only; kvtier never touches device memory here",
        "engine_copy": "LMCache's L1 buffers are not a shared-memory file kvtier could register (HOST_FILE/HOST_FD); "
                       "this process copies the bytes",
        "lookup_lock": "exists does not pin: LMCache's bridge keeps its locks itself, and a get of a key evicted "
                       "since answers False for it",
        "l2_adapter_interface": "the plugin type (an L2AdapterInterface subclass) is not this class: configure "
                                "type native_plugin",
    },
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_DROP_SESSION = {kv.LEASE_EXPIRED, kv.CLOSED, kv.ERR_SYSTEM, kv.ERR_PROTOCOL, kv.ERR_ENGINE_GONE, kv.ERR_DISCONNECTED,
                 kv.ERR_TIMEOUT}
_LOG_EVERY_SECONDS = 60.0
_STOP = object()


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("adapter_params %s must be true or false, not %r" % (name, value))


def _integer(name: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError("adapter_params %s must be an integer in [%d, %d], not %r" % (name, low, high, value)) from None
    if not low <= number <= high or isinstance(value, bool):
        raise ValueError("adapter_params %s must be an integer in [%d, %d], not %r" % (name, low, high, value))
    return number


def _byte_view(view: Any, index: int) -> memoryview:
    mv = view if isinstance(view, memoryview) else memoryview(view)
    if not mv.c_contiguous:
        raise ValueError("buffer %d is not contiguous" % index)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


def _address(mv: memoryview) -> Optional[int]:
    """The address of a writable byte view, or None for a read-only one (copied by slice assignment instead)."""
    if mv.readonly:
        return None
    return ctypes.addressof(ctypes.c_char.from_buffer(mv))


class _Failed(Exception):
    """Ends a batch: every key from ``index`` on is answered False, for ``reason``."""

    def __init__(self, index: int, reason: str):
        super().__init__(reason)
        self.index = index
        self.reason = reason


class KvtierL2Connector:
    """An LMCache native L2 connector over a kvtier engine's shared page pool. Thread-safe: submit from any thread."""

    def __init__(self, *args: Any, **params: Any):
        if args:
            raise TypeError("KvtierL2Connector takes its adapter_params as keyword arguments (LMCache's native_plugin "
                            "loader); it is not an L2AdapterInterface for the plugin type: configure type native_plugin")
        unknown = sorted(set(params) - set(PARAMETERS))
        if unknown:
            raise ValueError("unknown adapter_params %s: the kvtier LMCache connector takes %s"
                             % (", ".join(unknown), ", ".join(sorted(PARAMETERS))))
        socket_path = params.get("socket_path") or os.environ.get("KVTIER_SOCKET")
        if not socket_path or not isinstance(socket_path, str):
            raise ValueError("adapter_params socket_path is not set and neither is KVTIER_SOCKET: name the kvtier engine's "
                             "IPC socket (kvtier serve prints it)")
        for name in ("model_id", "kv_layout"):
            if not isinstance(params.get(name), str) or not params.get(name):
                raise ValueError("adapter_params %s must be a non-empty string, not %r (%s)" % (name, params.get(name), PARAMETERS[name]))
        salt = params.get("tenant_salt", "")
        if not isinstance(salt, str):
            raise ValueError("adapter_params tenant_salt must be a string, not %r" % (salt,))
        self.mla = _flag("mla", params.get("mla", False))
        self.rank = _integer("tp_rank", params.get("tp_rank", 0), 0, (1 << 32) - 1)
        self.chunk_bytes = _integer("chunk_bytes", params.get("chunk_bytes", 0), 0, 1 << 40)
        self.timeout_ms = _integer("timeout_ms", params.get("timeout_ms", 5000), 1, 3600 * 1000)
        self.socket_path = socket_path
        self.model_id, self.kv_layout, self.tenant_salt = params["model_id"], params["kv_layout"], salt
        # MLA: every rank holds the same KV, so the namespace has rank 0 and only rank 0 writes
        self.stores = not self.mla or self.rank == 0
        self.root = kvkeys.namespace_root(self.model_id, self.kv_layout, 0 if self.mla else self.rank, salt)

        self._client: Optional[kv.Client] = None
        self._logged: Dict[str, float] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._completions: List[Tuple[int, bool, str, Optional[List[bool]]]] = []
        self._closed = False
        self._efd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._work: "queue.Queue[Any]" = queue.Queue()
        try:
            self._client = self._connect()
        except _Failed as failed:
            self._note(failed.reason)  # the engine may come later: every batch tries again
        except ValueError:
            os.close(self._efd)
            raise
        self._worker = threading.Thread(target=self._run, name="kvtier-lmcache-l2", daemon=True)
        self._worker.start()

    # -- the native_plugin contract --

    def event_fd(self) -> int:
        """The eventfd that becomes readable when completions wait in :meth:`drain_completions`."""
        return self._efd

    def submit_batch_get(self, keys: Sequence[str], memoryviews: Sequence[Any]) -> int:
        """Loads ``keys`` into ``memoryviews`` (one per key, all one length): True for each key of the leading run
        whose page holds exactly that many bytes, now copied; False from the first other on."""
        return self._submit("get", keys, memoryviews)

    def submit_batch_set(self, keys: Sequence[str], memoryviews: Sequence[Any]) -> int:
        """Stores each key's memoryview as one page: True for each key of the leading run now committed (or already
        held), False from the first that could not be."""
        return self._submit("set", keys, memoryviews)

    def submit_batch_exists(self, keys: Sequence[str]) -> int:
        """Which keys the engine holds: True for the leading run it holds (pool or L3), False from the first miss on."""
        return self._submit("exists", keys, None)

    def submit_batch_delete(self, keys: Sequence[str]) -> int:
        """Drops the pool's copy of each key: True for each key whose pool copy is gone now and was there before."""
        return self._submit("delete", keys, None)

    def drain_completions(self) -> List[Tuple[int, bool, str, Optional[List[bool]]]]:
        """Clears the eventfd and answers every completion since the last drain as (future_id, ok, error, result_bools)."""
        try:
            os.eventfd_read(self._efd)
        except (BlockingIOError, OSError):
            pass
        with self._lock:
            done, self._completions = self._completions, []
        return done

    def close(self) -> None:
        """Finishes the batches already submitted, then closes the session and the eventfd. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._work.put(_STOP)
        self._worker.join(timeout=max(30.0, 4 * self.timeout_ms / 1000.0))
        self._drop_client()
        try:
            os.close(self._efd)
        except OSError:
            pass

    # -- what it does not do (section 6) --

    def capabilities(self) -> Dict[str, Dict[str, str]]:
        """What this connector supports and what it does not, each with its reason."""
        return {k: dict(v) for k, v in CAPABILITIES.items()}

    @staticmethod
    def require(feature: str) -> None:
        """Raises NotImplementedError naming ``feature`` and the reason when the connector does not support it."""
        if feature in CAPABILITIES["supported"]:
            return
        reason = CAPABILITIES["unsupported"].get(feature)
        raise NotImplementedError("kvtier's LMCache connector does not support %s: %s"
                                  % (feature, reason or "no such feature (it supports %s)" % ", ".join(CAPABILITIES["supported"])))

    def _refuse(self, name: str):
        raise NotImplementedError("kvtier's LMCache connector does not implement the L2AdapterInterface call %s: %s"
                                  % (name, CAPABILITIES["unsupported"]["l2_adapter_interface"]))

    def submit_store_task(self, *args, **kwargs):
        self._refuse("submit_store_task")

    def submit_lookup_and_lock_task(self, *args, **kwargs):
        self._refuse("submit_lookup_and_lock_task")

    def submit_load_task(self, *args, **kwargs):
        self._refuse("submit_load_task")

    def submit_unlock(self, *args, **kwargs):
        self._refuse("submit_unlock")

    # -- submission and completion --

    def _submit(self, op: str, keys: Sequence[str], views: Optional[Sequence[Any]]) -> int:
        keys = list(keys)
        if not keys:
            raise ValueError("a %s batch needs at least one key" % op)
        for i, k in enumerate(keys):
            if not isinstance(k, str) or not k:
                raise TypeError("key %d of a %s batch must be a non-empty str (LMCache's chunk key), not %r" % (i, op, k))
        if views is not None:
            views = list(views)
            if len(views) != len(keys):
                raise ValueError("a %s batch of %d keys came with %d memoryviews" % (op, len(keys), len(views)))
            views = [_byte_view(v, i) for i, v in enumerate(views)]
            if any(v.nbytes != views[0].nbytes for v in views):
                raise ValueError("the memoryviews of a %s batch must all be %d bytes (the first one's), not %s"
                                 % (op, views[0].nbytes, sorted({v.nbytes for v in views})))
        with self._lock:
            if self._closed:
                raise RuntimeError("the kvtier LMCache connector is closed: no %s batch after close()" % op)
            future_id = next(self._ids)
        self._work.put((future_id, op, keys, views))
        return future_id

    def _complete(self, future_id: int, ok: bool, error: str, results: Optional[List[bool]]) -> None:
        with self._lock:
            self._completions.append((future_id, ok, error, results))
        try:
            os.eventfd_write(self._efd, 1)
        except OSError:
            pass  # closed under us: close() is finishing, nobody polls any more

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is _STOP:
                return
            future_id, op, keys, views = item
            try:
                results, reason = self._do(op, keys, views)
            except BaseException as e:  # noqa: B902 - the worker never dies: the batch fails, named
                results, reason = [False] * len(keys), "%s failed: %s: %s" % (op, type(e).__name__, e)
                self._drop_client()
                self._note(reason)
            # a miss is an answer, not an error, for exists and delete; a get or set is ok only when whole
            ok = reason is None if op in ("exists", "delete") else all(results)
            self._complete(future_id, ok, reason or "", results)

    def _do(self, op: str, keys: List[str], views: Optional[List[memoryview]]) -> Tuple[List[bool], Optional[str]]:
        """Answers (one bool per key, the reason the chain ended early or None)."""
        results = [False] * len(keys)
        try:
            client = self._client or self._reconnect()
            if op == "set" and not self.stores:
                raise _Failed(0, "an MLA model stores one copy, from rank 0: rank %d does not store" % self.rank)
            page_keys = [kvkeys.lmcache_page_key(self.root, k) for k in keys]
            step = client.max_keys
            for start in range(0, len(keys), step):
                end = min(len(keys), start + step)
                if op == "exists":
                    done = self._exists(client, page_keys[start:end])
                elif op == "get":
                    done = self._get(client, page_keys[start:end], views[start:end], start)
                elif op == "set":
                    done = self._set(client, page_keys[start:end], views[start:end], start)
                else:
                    done = self._delete(client, page_keys[start:end])
                for i, ok in enumerate(done):
                    results[start + i] = ok
                if op != "delete" and not all(done):
                    return results, None if op == "exists" else "%s: key %d (%s) was not %s" % (
                        op, start + done.index(False), keys[start + done.index(False)],
                        "found holding a page of its buffer's length" if op == "get" else "stored")
            return results, None
        except _Failed as failed:
            for i in range(failed.index, len(keys)):
                results[i] = False
            self._note(failed.reason)
            return results, failed.reason
        except kv.KvtierError as e:
            reason = "%s of %d keys failed: %s" % (op, len(keys), e)
            if e.code in _DROP_SESSION:
                self._drop_client()
            self._note(reason)
            return [False] * len(keys), reason

    # -- the operations, one chunk of at most max_keys keys each; slots from 0 --

    @staticmethod
    def _exists(client: kv.Client, page_keys: List[bytes]) -> List[bool]:
        found = client.lookup(page_keys)
        held = found.pool_pages + found.l3_pages
        return [i < held for i in range(len(page_keys))]

    @staticmethod
    def _delete(client: kv.Client, page_keys: List[bytes]) -> List[bool]:
        before = [client.lookup([k]).pool_pages == 1 for k in page_keys]
        client.evict(page_keys)
        return [was and client.lookup([k]).pool_pages == 0 for k, was in zip(page_keys, before)]

    def _get(self, client: kv.Client, page_keys: List[bytes], views: List[memoryview], offset: int) -> List[bool]:
        n = len(page_keys)
        done = [False] * n
        try:
            client.acquire(page_keys)
            for i in range(n):
                if client.slot_status(i) not in (kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3):
                    break
                want = views[i].nbytes
                have = client.payload_length(i)
                if have != want:
                    self._note("get: key %d holds %d bytes, not the %d of LMCache's buffer: a miss" % (offset + i, have, want))
                    break
                page = client.slot_view(i)
                target = _address(views[i])
                if target is None:
                    raise _Failed(offset + i, "get: buffer %d is read-only: LMCache's load buffers must be writable" % (offset + i))
                ctypes.memmove(target, ctypes.addressof(ctypes.c_char.from_buffer(page)), want)
                done[i] = True
        finally:
            client.release(0, n)
        return done

    def _set(self, client: kv.Client, page_keys: List[bytes], views: List[memoryview], offset: int) -> List[bool]:
        n = len(page_keys)
        size = views[0].nbytes
        if not 1 <= size <= client.page_size:
            raise _Failed(offset, "set: a chunk of %d bytes does not fit a kvtier page of %d bytes (pool.page-size)"
                          % (size, client.page_size))
        run, committed = 0, False
        try:
            client.reserve(page_keys)
            statuses = [client.slot_status(i) for i in range(n)]
            run = 0
            while run < n and statuses[run] in (kv.PAGE_RESERVED, kv.PAGE_EXISTS):
                run += 1
            lengths = [1] * run
            reserved = [i for i in range(run) if statuses[i] == kv.PAGE_RESERVED]
            pause = os.environ.get(PAUSE_BEFORE_COMMIT) == "1"
            for count, i in enumerate(reserved):
                if pause and count == max(1, len(reserved) // 2):
                    sys.stdout.write("kvtier-lmcache: paused before commit, %d of %d pages written\n" % (count, len(reserved)))
                    sys.stdout.flush()
                    time.sleep(3600)
                page = client.slot_view(i)
                source = _address(views[i])
                if source is None:
                    page[:size] = views[i]
                else:
                    ctypes.memmove(ctypes.addressof(ctypes.c_char.from_buffer(page)), source, size)
                lengths[i] = size
            if run:
                client.commit(0, lengths)
            committed = True
            done = [False] * n
            for i in range(run):
                status = client.slot_status(i)
                if statuses[i] == kv.PAGE_RESERVED and status != kv.PAGE_COMMITTED:
                    self._note("set: key %d was not committed (%s)" % (offset + i, kv.page_status_name(status)))
                    break
                done[i] = True
            if run < n:
                self._note("set: key %d was not reserved (%s)" % (offset + run, kv.page_status_name(statuses[run])))
            return done
        finally:
            # the reservations after the leading run, or all of them when the copy or the commit failed
            first = run if committed else 0
            if first < n:
                client.abort(first, n - first)

    # -- the session --

    def _connect(self) -> kv.Client:
        try:
            client = kv.Client(self.socket_path, namespaces=[self.root], timeout_ms=self.timeout_ms)
        except (kv.KvtierError, OSError) as e:
            raise _Failed(0, "no kvtier engine at %s: %s" % (self.socket_path, e)) from None
        if self.chunk_bytes > client.page_size:
            client.close()
            raise ValueError("a chunk of %d bytes (adapter_params chunk_bytes) does not fit the engine's pages of %d bytes "
                             "(pool.page-size): serve kvtier with pages of at least one chunk" % (self.chunk_bytes, client.page_size))
        return client

    def _reconnect(self) -> kv.Client:
        try:
            self._client = self._connect()
        except ValueError as e:
            raise _Failed(0, str(e)) from None
        log.info("kvtier LMCache connector: connected to %s (pages of %d bytes)", self.socket_path, self._client.page_size)
        return self._client

    def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # the engine is gone: its lease gives back whatever the session held
                pass

    def _note(self, reason: str) -> None:
        """Logs a reason at most once a minute (the reason's text without its numbers is its identity)."""
        identity = "".join(c for c in reason if not c.isdigit())
        now = time.monotonic()
        last = self._logged.get(identity)
        if last is None or now - last >= _LOG_EVERY_SECONDS:
            self._logged[identity] = now
            log.warning("kvtier LMCache connector: %s", reason)

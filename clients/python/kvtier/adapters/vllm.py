"""kvtier as a secondary tier of vLLM's tiering offloading spec (``SecondaryTierManager``).

vLLM loads it by module path, from the tiering spec's ``secondary_tiers`` list::

    --kv-transfer-config '{"kv_connector": "OffloadingConnector", "kv_role": "kv_both",
      "kv_connector_extra_config": {"spec_name": "TieringOffloadingSpec", "cpu_bytes_to_use": 8589934592,
        "secondary_tiers": [{"type": "KvtierSecondaryTier", "module_path": "kvtier.adapters.vllm",
                             "socket": "/dev/shm/kvtier-pool.sock", "tenant_salt": "tenant-a"}]}}'

Each primary slot (one row of vLLM's primary view, every worker's share of one offloaded block) is
one kvtier page, keyed by ``kvtier.keys.vllm_offload_page_key`` from vLLM's own OffloadKey under the
namespace of the model, the row geometry (or ``kv_layout``) and the tenant salt, so several vLLM
instances on a node, and their restarts, share one pool. Bytes move one of two ways:

- **engine copy** (``copy: engine``, chosen by ``auto`` when it can be): vLLM's primary region is a
  file in /dev/shm; the adapter hands the kvtier engine that file once (HOST_FD in a 1.2 session,
  HOST_FILE by path otherwise) and stores and loads become DEVICE_SAVE / DEVICE_LOAD of rows: the
  engine copies, the scheduler process spends no CPU on bytes;
- **client copy** (``copy: client``): RESERVE, ``ctypes.memmove`` of each row into its reserved page,
  COMMIT; ACQUIRE, check each page's committed length, ``memmove`` into the row, RELEASE.

Calls never raise out of the contract's methods after construction: an engine that went away, a
timeout or a refusal is a miss (``lookup`` False, the job's ``JobResult`` not successful), logged once
per reason and minute, and the adapter reconnects on a later call. See docs/adapters/vllm.md.
"""
from __future__ import annotations

import collections
import ctypes
import logging
import os
import queue
import sys
import threading
import time
from typing import Any, Collection, Dict, Iterable, List, Optional, Sequence, Tuple

from .. import _client as kv
from ..contracts import vllm as contract
from ..keys import namespace_root, vllm_offload_page_key

__all__ = ["KvtierSecondaryTier", "SETTINGS", "PageTooSmall", "Unsupported"]

LOG = logging.getLogger("kvtier.adapters.vllm")
Unsupported = contract.Unsupported

#: the tier configuration's entries this adapter reads (besides vLLM's own "type" and "module_path")
SETTINGS = {
    "socket": "the kvtier engine's IPC socket (else $KVTIER_SOCKET)",
    "model": "the model id the namespace derives from (else the spec's served model)",
    "tenant_salt": "keeps this tenant's pages apart from other tenants' (default empty)",
    "kv_layout": "the layout text of the namespace (default vllm-row/<row bytes>)",
    "copy": "auto (engine copy when the primary region is a file, else client copy), engine, or client",
    "row_bytes": "bytes of one primary slot, needed only when the primary view is one-dimensional",
    "max_batch": "keys per kvtier request (default 128)",
    "timeout_ms": "how long a kvtier request may take before it counts as a miss (default 5000)",
    "reconnect_seconds": "least time between two attempts to reach a kvtier engine that went away (default 1.0)",
    "protocol_minor": "the newest IPC protocol minor version to ask for (default the library's; 1 registers the region by path)",
    "gpu_direct": "refused: a secondary tier of vLLM's tiering spec never sees GPU memory",
}

_GONE = {kv.ERR_ENGINE_GONE, kv.ERR_DISCONNECTED, kv.ERR_TIMEOUT, kv.ERR_SYSTEM, kv.ERR_PROTOCOL, kv.LEASE_EXPIRED, kv.CLOSED}
_PINNED = (kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3)
PAUSE_ENV = "KVTIER_ADAPTER_TEST_PAUSE_BEFORE_COMMIT"


class PageTooSmall(ValueError):
    """The kvtier pool's page cannot hold one primary slot (a row) of vLLM's region."""


class _Unavailable(Exception):
    """No session with the kvtier engine right now (the reason is the message)."""


def _address(view: memoryview) -> int:
    """The address of a writable, C-contiguous buffer's first byte."""
    return ctypes.addressof(ctypes.c_char.from_buffer(view))


def _mapping_of(address: int, length: int) -> Optional[Tuple[str, int, int]]:
    """(path, file offset, inode) of the shared file mapping that holds [address, address+length), from
    /proc/self/maps; None when the memory is anonymous, private, or its file was deleted."""
    try:
        with open("/proc/self/maps", "r") as f:
            lines = f.readlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        if not start <= address < end:
            continue
        path = parts[5].strip()
        if "s" not in parts[1] or not path.startswith("/") or path.endswith("(deleted)"):
            return None
        # the engine maps the file itself, from the view's offset; it refuses (TOO_SMALL) a file shorter than the rows
        return path, int(parts[2], 16) + (address - start), int(parts[4])
    return None


class KvtierSecondaryTier(contract.SecondaryTierManager):
    """A vLLM secondary tier over kvtier's shared page pool (see the module's description)."""

    def __init__(self, offloading_spec: Any, primary_kv_view: memoryview, tier_type: str = "KvtierSecondaryTier",
                 **settings: Any) -> None:
        super().__init__(offloading_spec=offloading_spec, primary_kv_view=primary_kv_view, tier_type=tier_type)
        unknown = sorted(set(settings) - set(SETTINGS))
        if unknown:
            raise ValueError("unknown kvtier tier setting(s) %s: the settings are %s" % (unknown, sorted(SETTINGS)))
        if settings.get("gpu_direct"):
            raise Unsupported("gpu_direct: vLLM's tiering spec gives a secondary tier only the CPU primary region, "
                              "so kvtier has no GPU memory to copy to or from (use the CPU primary tier)")
        self.socket = settings.get("socket") or os.environ.get("KVTIER_SOCKET")
        if not self.socket:
            raise ValueError("the kvtier tier setting 'socket' is missing and KVTIER_SOCKET is not set: name the kvtier "
                             "engine's IPC socket (kvtier serve prints it, e.g. /dev/shm/kvtier-pool.sock)")
        self.copy_setting = str(settings.get("copy", "auto"))
        if self.copy_setting not in ("auto", "engine", "client"):
            raise ValueError("the kvtier tier setting 'copy' is %r: it must be auto, engine or client" % self.copy_setting)
        self.max_batch = self._positive(settings, "max_batch", 128)
        self.timeout_ms = self._positive(settings, "timeout_ms", 5000)
        self.protocol_minor = self._positive(settings, "protocol_minor", kv.PROTOCOL_MINOR)
        if self.protocol_minor > kv.PROTOCOL_MINOR:
            raise ValueError("the kvtier tier setting 'protocol_minor' is %r: it must be 1..%d (device copies need 1)"
                             % (settings.get("protocol_minor"), kv.PROTOCOL_MINOR))
        try:
            self.reconnect_seconds = float(settings.get("reconnect_seconds", 1.0))
        except (TypeError, ValueError):
            raise ValueError("the kvtier tier setting 'reconnect_seconds' is %r: it must be a number of seconds >= 0"
                             % (settings.get("reconnect_seconds"),)) from None
        if not self.reconnect_seconds >= 0:
            raise ValueError("the kvtier tier setting 'reconnect_seconds' is %r: it must be >= 0" % self.reconnect_seconds)

        # the primary region: num_blocks rows of row_bytes, writable, contiguous
        view = memoryview(primary_kv_view)
        if view.readonly:
            raise ValueError("vLLM's primary KV view is read-only: a load has to write into it")
        if not view.c_contiguous:
            raise ValueError("vLLM's primary KV view is not C-contiguous")
        if view.ndim == 2:
            self.num_blocks, self.row_bytes = view.shape[0], view.shape[1] * view.itemsize
            if settings.get("row_bytes") not in (None, self.row_bytes):
                raise ValueError("the kvtier tier setting 'row_bytes' is %r but the primary view's rows are %d bytes"
                                 % (settings.get("row_bytes"), self.row_bytes))
        elif view.ndim == 1:
            self.row_bytes = self._positive(settings, "row_bytes", None)
            if view.nbytes % self.row_bytes:
                raise ValueError("the primary view's %d bytes are not a whole number of rows of row_bytes=%d"
                                 % (view.nbytes, self.row_bytes))
            self.num_blocks = view.nbytes // self.row_bytes
        else:
            raise ValueError("vLLM's primary KV view has %d dimensions: expected (blocks, row bytes)" % view.ndim)
        if self.num_blocks < 1 or self.row_bytes < 1:
            raise ValueError("vLLM's primary KV view is empty (%d rows of %d bytes)" % (self.num_blocks, self.row_bytes))
        self._view = view
        self._base = _address(view if view.ndim == 1 and view.format == "B" else view.cast("B"))

        self.model = settings.get("model") or self._spec_model(offloading_spec)
        if not self.model:
            raise ValueError("the kvtier tier setting 'model' is missing and the offloading spec names no served model: "
                             "name the model the namespace derives from")
        self.tenant_salt = str(settings.get("tenant_salt", ""))
        self.kv_layout = str(settings.get("kv_layout") or "vllm-row/%d" % self.row_bytes)
        # one row holds every worker's share of the block, so the scheduler's one tier stores it once: rank 0
        self.root = namespace_root(str(self.model), self.kv_layout, 0, self.tenant_salt)

        self._host_file = _mapping_of(self._base, self.num_blocks * self.row_bytes)
        if self.copy_setting == "engine" and self._host_file is None:
            raise Unsupported("copy=engine: vLLM's primary region here is not a shared file mapping (vLLM's own is "
                              "/dev/shm/vllm_offload_<engine_id>.mmap), so the kvtier engine cannot map it; use copy=client or auto")
        self.copy = "engine" if self._host_file is not None and self.copy_setting != "client" else "client"

        self._lock = threading.Lock()            # the scheduler-side session (lookup)
        self._worker_lock = threading.Lock()     # the worker's session (stores and loads)
        self._finished_lock = threading.Lock()
        self._lookup_client: Optional[kv.Client] = None
        self._worker_client: Optional[kv.Client] = None
        self._layout_id = 0
        self._next_attempt = {"lookup": 0.0, "worker": 0.0}
        self._finished: List[Any] = []
        self._storing: Dict[bytes, int] = collections.Counter()
        self._jobs: "queue.Queue" = queue.Queue()
        self._warned: Dict[str, float] = {}
        self.last_error = ""
        self.counts = collections.Counter()
        self._closed = False

        # a pool whose pages cannot hold a row is a configuration error: say so now, naming both sizes
        try:
            self._lookup_client = self._connect()
        except PageTooSmall:
            raise
        except (kv.KvtierError, OSError) as e:
            self._failed("connect", "no kvtier engine at %s yet (%s): lookups miss until it answers" % (self.socket, e))
        if self._lookup_client is not None:
            # the worker's session too, so that the region is registered now and the first job pays nothing
            try:
                self._worker_client = self._connect()
            except (kv.KvtierError, OSError) as e:
                self._failed("connect", "kvtier engine at %s: %s" % (self.socket, e))
            if self.copy == "engine" and self._worker_client is not None:
                try:
                    self._layout_id = self._register(self._worker_client)
                except (kv.KvtierError, OSError, ValueError) as e:
                    if self.copy_setting == "engine":
                        self.shutdown_sessions()
                        raise Unsupported("copy=engine: kvtier refused vLLM's primary region %s: %s"
                                          % (self._host_file[0], e)) from None
                    self._failed("register", "kvtier refused vLLM's primary region %s (%s): the client copies instead"
                                 % (self._host_file[0], e))
                    self.copy = "client"
        self._thread = threading.Thread(target=self._work, name="kvtier-vllm-tier", daemon=True)
        self._thread.start()

    # -- the contract --

    def lookup(self, key: bytes, req_context: Any = None) -> Any:
        """True when kvtier holds the block (in its pool or an L3 tier), None while this tier is storing
        it, False otherwise (also when kvtier cannot be reached: the reason is logged). Against a vLLM whose
        contract answers with its LookupResult enum: HIT, RETRY and MISS for these."""
        answer = self._lookup(key)
        enum = contract.LOOKUP_RESULT
        if enum is None:
            return answer
        return enum.HIT if answer else (enum.RETRY if answer is None else enum.MISS)

    def _lookup(self, key: bytes) -> Optional[bool]:
        try:
            k = vllm_offload_page_key(self.root, key)
        except (TypeError, ValueError) as e:
            self._failed("key", "lookup of a key that is not an OffloadKey: %s" % e)
            return False
        if self._closed:
            return False
        with self._finished_lock:
            if self._storing.get(k):
                return None
        with self._lock:
            try:
                client = self._session("lookup")
                r = client.lookup([k])
            except _Unavailable as e:
                self._failed("unavailable", str(e))
                return False
            except kv.KvtierError as e:
                self._drop("lookup", e)
                return False
        self.counts["lookups"] += 1
        hit = r.pool_pages >= 1 or r.l3_pages >= 1
        if hit:
            self.counts["lookup_hits"] += 1
        return hit

    def submit_store(self, job_metadata: Any) -> None:
        """Queues the job for the adapter's worker thread; returns at once."""
        self._submit("store", job_metadata)

    def submit_load(self, job_metadata: Any) -> None:
        """Queues the job for the adapter's worker thread; returns at once."""
        self._submit("load", job_metadata)

    def get_finished(self) -> Iterable[Any]:
        """Every JobResult since the last call."""
        with self._finished_lock:
            done, self._finished = self._finished, []
        return done

    get_finished_jobs = get_finished  # the name some vLLM versions call it by

    def touch(self, keys: Collection[bytes], req_context: Any = None) -> None:
        """kvtier orders its pages by their own use (its lookups and acquires), so nothing to do."""
        return None

    def request_finished(self, req_context: Any = None) -> None:
        """Nothing is held per request between calls: every pin and reservation ends with its job."""
        return None

    def drain_jobs(self) -> None:
        """Waits until every submitted job has finished (vLLM calls it before it frees primary slots)."""
        self._jobs.join()

    def shutdown(self) -> None:
        """Finishes the queued jobs, stops the worker thread and closes both sessions."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        self._thread.join()
        self.shutdown_sessions()
        try:
            self._view.release()  # so that vLLM (or a driver) can unmap its region
        except (BufferError, ValueError):
            pass

    def shutdown_sessions(self) -> None:
        """Closes both sessions with the kvtier engine (a later call would open new ones)."""
        for name in ("_lookup_client", "_worker_client"):
            c = getattr(self, name)
            setattr(self, name, None)
            if c is not None:
                try:
                    c.close()
                except kv.KvtierError:
                    pass

    def capabilities(self) -> Dict[str, Dict[str, Any]]:
        """What this tier does and does not do, each with the reason."""
        engine_reason = ("the primary region is the shared file %s: DEVICE_SAVE/DEVICE_LOAD of rows, the engine copies"
                         % self._host_file[0]) if self._host_file else (
            "the primary region is not a shared file mapping: the kvtier engine cannot map it")
        return {
            "client_copy": {"supported": True, "why": "RESERVE/memmove/COMMIT and ACQUIRE/memmove/RELEASE in this process"},
            "engine_copy": {"supported": self._host_file is not None, "why": engine_reason, "in_use": self.copy == "engine"},
            "gpu_direct": {"supported": False, "why": "a secondary tier of vLLM's tiering spec only sees the CPU primary region"},
            "lookup_in_flight": {"supported": True, "why": "a key this tier is storing answers None (ask again)"},
            "l3": {"supported": True, "why": "a block kvtier holds in an L3 tier is a hit; the load brings it back through the pool"},
            "touch": {"supported": False, "why": "kvtier's eviction follows its own lookups and acquires; touch changes nothing"},
            "delete": {"supported": False, "why": "the contract has no delete; kvtier evicts by its own policy"},
        }

    def stats(self) -> Dict[str, int]:
        """The adapter's own counts (lookups, hits, jobs, pages, bytes, failures)."""
        return dict(self.counts)

    # -- settings --

    @staticmethod
    def _positive(settings: dict, name: str, default: Optional[int]) -> int:
        value = settings.get(name, default)
        if value is None:
            raise ValueError("the kvtier tier setting %r is missing: the primary view is one-dimensional" % name)
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise ValueError("the kvtier tier setting %r is %r: it must be a positive integer" % (name, value)) from None
        if n < 1:
            raise ValueError("the kvtier tier setting %r is %d: it must be a positive integer" % (name, n))
        return n

    @staticmethod
    def _spec_model(spec: Any) -> Optional[str]:
        for path in (("model",), ("vllm_config", "model_config", "model"), ("config", "model_config", "model"),
                     ("config", "vllm_config", "model_config", "model")):
            obj = spec
            for name in path:
                obj = getattr(obj, name, None)
                if obj is None:
                    break
            if isinstance(obj, str) and obj:
                return obj
        return None

    # -- sessions --

    def _connect(self) -> kv.Client:
        client = kv.Client(self.socket, namespaces=[self.root], max_keys=self.max_batch, timeout_ms=self.timeout_ms,
                           minor_version=self.protocol_minor)
        if client.page_size < self.row_bytes:
            client.close()
            raise PageTooSmall("kvtier's pool pages are %d bytes but one vLLM primary slot (row) is %d bytes: serve kvtier "
                               "with pool.page-size of at least %d" % (client.page_size, self.row_bytes, self.row_bytes))
        return client

    def _session(self, which: str) -> kv.Client:
        name = "_%s_client" % which
        client = getattr(self, name)
        if client is not None:
            return client
        now = time.monotonic()
        if now < self._next_attempt[which]:
            raise _Unavailable("kvtier engine at %s unreachable: %s" % (self.socket, self.last_error))
        self._next_attempt[which] = now + self.reconnect_seconds
        try:
            client = self._connect()
        except (kv.KvtierError, OSError, PageTooSmall) as e:
            raise _Unavailable("kvtier engine at %s unreachable: %s" % (self.socket, e)) from None
        if which == "worker" and self.copy == "engine":
            try:
                self._layout_id = self._register(client)
            except (kv.KvtierError, OSError, ValueError) as e:
                client.close()
                raise _Unavailable("kvtier refused the primary region %s: %s" % (self._host_file[0], e)) from None
        setattr(self, name, client)
        self.counts["connects"] += 1
        return client

    def _register(self, client: kv.Client) -> int:
        """Hands the primary region's file to the engine as rows: shape (1, 1, 1, 1, row, 1), CONTIGUOUS,
        so block b is bytes [b x row, (b+1) x row) from the view's offset in the file, and a saved page's
        payload is exactly one row, as a client-copied page's is."""
        path, offset, inode = self._host_file
        shape = (1, 1, 1, 1, self.row_bytes, 1)
        if client.session_minor >= 2:
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                if os.fstat(fd).st_ino != inode:
                    raise OSError("%s is no longer the file vLLM's primary region maps" % path)
                return client.register_host_fds(kv.ARRANGEMENT_CONTIGUOUS, shape, self.num_blocks, [fd], [offset])
            finally:
                os.close(fd)
        return client.register_host_files(kv.ARRANGEMENT_CONTIGUOUS, shape, self.num_blocks, [path], [offset])

    def _drop(self, which: str, e: kv.KvtierError) -> None:
        """A failed request: a session that is gone (or may hold state we cannot trust) is closed, so that
        the engine gives back its pins and reservations and a later call reconnects."""
        self._failed("error-%d" % e.code, "kvtier %s failed: %s" % (which, e))
        if e.code in _GONE:
            name = "_%s_client" % which
            client = getattr(self, name)
            setattr(self, name, None)
            if client is not None:
                try:
                    client.close()
                except kv.KvtierError:
                    pass

    def _failed(self, reason: str, message: str) -> None:
        self.last_error = message
        self.counts["failures"] += 1
        now = time.monotonic()
        if now - self._warned.get(reason, -1e9) >= 60.0:
            self._warned[reason] = now
            LOG.warning("%s (further ones of this kind are counted, not logged, for a minute)", message)

    # -- jobs --

    def _submit(self, kind: str, job: Any) -> None:
        if self._closed:
            self._finish(job, False, "the tier is shut down")
            return
        if kind == "store":
            try:
                keys = [vllm_offload_page_key(self.root, k) for k in job.keys]
            except (TypeError, ValueError):
                keys = []
            with self._finished_lock:
                for k in keys:
                    self._storing[k] += 1
            self._jobs.put((kind, job, keys))
        else:
            self._jobs.put((kind, job, None))

    def _finish(self, job: Any, success: bool, why: str = "") -> None:
        if not success and why:
            self._failed("job", "kvtier job %s failed: %s" % (getattr(job, "job_id", "?"), why))
        with self._finished_lock:
            self._finished.append(contract.JobResult(job_id=job.job_id, success=success))

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            try:
                if item is None:
                    return
                kind, job, storing = item
                try:
                    ok, why = self._run(kind, job)
                except Exception as e:  # never a dead worker: the job fails, named
                    ok, why = False, "%s: %s" % (type(e).__name__, e)
                if storing:
                    with self._finished_lock:
                        for k in storing:
                            self._storing[k] -= 1
                            if self._storing[k] <= 0:
                                del self._storing[k]
                self._finish(job, ok, why)
            finally:
                self._jobs.task_done()

    def _run(self, kind: str, job: Any) -> Tuple[bool, str]:
        keys = list(job.keys)
        blocks = [int(b) for b in job.block_ids]
        if len(keys) != len(blocks):
            return False, "%d keys for %d block ids" % (len(keys), len(blocks))
        for b in blocks:
            if not 0 <= b < self.num_blocks:
                return False, "block id %d is outside the primary region's 0..%d" % (b, self.num_blocks - 1)
        try:
            kkeys = [vllm_offload_page_key(self.root, k) for k in keys]
        except (TypeError, ValueError) as e:
            return False, "not an OffloadKey: %s" % e
        with self._worker_lock:
            for start in range(0, len(kkeys), self.max_batch):
                chunk, rows = kkeys[start:start + self.max_batch], blocks[start:start + self.max_batch]
                try:
                    client = self._session("worker")
                    done, why = (self._store if kind == "store" else self._load)(client, chunk, rows)
                except _Unavailable as e:
                    return False, str(e)
                except kv.KvtierError as e:
                    self._drop("worker", e)
                    return False, "kvtier %s: %s" % (kind, e)
                self.counts[kind + "_pages"] += done
                self.counts[kind + "_bytes"] += done * self.row_bytes
                if done < len(chunk):
                    return False, why
        self.counts[kind + "_jobs"] += 1
        return True, ""

    def _store(self, c: kv.Client, keys: List[bytes], rows: List[int]) -> Tuple[int, str]:
        """Stores a chain's rows; the first key that cannot be stored ends it. Returns (keys now held, why not all)."""
        c.reserve(keys)
        n, why = len(keys), ""
        ok = 0
        committed = False
        try:
            statuses = [c.slot_status(i) for i in range(n)]
            while ok < n and statuses[ok] in (kv.PAGE_RESERVED, kv.PAGE_EXISTS):
                ok += 1
            if ok < n:
                why = "kvtier did not reserve key %d of %d: %s" % (ok, n, kv.page_status_name(statuses[ok]))
                c.abort(ok, n - ok)
            pause = os.environ.get(PAUSE_ENV) == "1"
            if self.copy == "engine":
                if pause:
                    self._pause()
                if ok:
                    c.device_save(self._layout_id, 0, rows[:ok], [1] * ok)
            else:
                for i in range(ok):
                    if statuses[i] == kv.PAGE_RESERVED:
                        page = c.slot_view(i)
                        ctypes.memmove(_address(page), self._base + rows[i] * self.row_bytes, self.row_bytes)
                        if pause and i >= ok // 2:
                            self._pause()
                if ok:
                    c.commit(0, [self.row_bytes if statuses[i] == kv.PAGE_RESERVED else 1 for i in range(ok)])
            committed = True
        finally:
            if not committed and self._worker_client is c:
                try:
                    c.abort(0, n)
                except kv.KvtierError:
                    pass
        held = 0
        for i in range(ok):
            s = c.slot_status(i)
            if statuses[i] == kv.PAGE_EXISTS or s == kv.PAGE_COMMITTED:
                held += 1
            else:
                why = why or "key %d of %d was not committed: %s" % (i, n, kv.page_status_name(s))
                break
        return held, why

    def _load(self, c: kv.Client, keys: List[bytes], rows: List[int]) -> Tuple[int, str]:
        """Loads a chain into its rows; the first page missing or of the wrong length ends it."""
        n = len(keys)
        c.acquire(keys)
        loaded, why = 0, ""
        try:
            pinned = 0
            while pinned < n and c.slot_status(pinned) in _PINNED:
                pinned += 1
            if pinned < n:
                why = "kvtier holds %d of the %d keys (key %d: %s)" % (pinned, n, pinned, kv.page_status_name(c.slot_status(pinned)))
            # a page whose committed length is not one row is not one of ours: a miss, never copied
            good = 0
            while good < pinned:
                length = c.payload_length(good)
                if length != self.row_bytes:
                    why = "key %d's page holds %d bytes, not a row of %d: a miss" % (good, length, self.row_bytes)
                    break
                good += 1
            if self.copy == "engine":
                if good:
                    c.device_load(self._layout_id, 0, rows[:good], [1] * good)
                    while loaded < good and c.slot_status(loaded) == kv.PAGE_COPIED:
                        loaded += 1
                    if loaded < good:
                        why = "key %d was not copied: %s" % (loaded, kv.page_status_name(c.slot_status(loaded)))
            else:
                for i in range(good):
                    page = c.slot_view(i)
                    ctypes.memmove(self._base + rows[i] * self.row_bytes, _address(page), self.row_bytes)
                    loaded += 1
        finally:
            if self._worker_client is c:
                c.release(0, n)
        return loaded, why

    @staticmethod
    def _pause() -> None:
        sys.stdout.write("kvtier-vllm: paused before commit\n")
        sys.stdout.flush()
        while True:
            time.sleep(60)

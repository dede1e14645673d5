"""LMCache's ``native_plugin`` L2 adapter contract, restated in the project's own words (docs/adapters/lmcache.md
says where each fact comes from).

LMCache loads a native L2 connector from its L2 adapter config ``{"type": "native_plugin", "module_path": M,
"class_name": C, "adapter_params": {...}}``: it imports ``M``, takes ``C`` from it, constructs
``C(**adapter_params)``, checks that the object has the six calls below (closing it and failing when one is
missing; warning when the optional delete is), and wraps it in its native-connector bridge, which:

- calls ``event_fd()`` once and polls that descriptor for readability from one background thread;
- submits, from LMCache's store and prefetch controller threads at once, ``submit_batch_set(keys, memoryviews)``,
  ``submit_batch_exists(keys)``, ``submit_batch_get(keys, memoryviews)`` and ``submit_batch_delete(keys)``, each
  answering a future id (an int) at once, the work happening later; keys are strings (``kvtier.keys.lmcache_chunk_key``),
  memoryviews are byte views over LMCache's host (L1) memory objects, one per key, all of one length in a batch;
- when the descriptor is readable, calls ``drain_completions()``, which clears the descriptor and answers every
  completion since the last drain as ``(future_id, ok, error, result_bools)``: ``ok`` and ``error`` for the whole
  batch, ``result_bools`` one bool per key (or None); a future id it does not know is logged and dropped;
- turns an exists completion into its lookup bitmap (only when ``ok``), a get completion into its load bitmap
  (``result_bools`` when given, else every key when ``ok``), a set completion into a whole-task store result (``ok``);
- calls ``close()`` once at shutdown (after stopping its thread); close must be idempotent.

The C++ connector interface under the Python binding takes ``(keys, bufs, lens, batch_chunk_num_bytes)``; the binding
derives those from the memoryviews (the first view's length is the batch's chunk size) and refuses an empty batch
or a batch whose key and view counts differ by raising.

``REAL`` says whether LMCache itself is importable here; when it is, ``real_loader()`` gives its own factory.
"""
from __future__ import annotations

import importlib
import logging
import select
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["REAL", "CONFIG_TYPE", "REQUIRED_METHODS", "OPTIONAL_METHODS", "Completion", "NativePluginConfig",
           "load_native_plugin", "real_loader", "Bridge", "BatchOutcome"]

log = logging.getLogger(__name__)

CONFIG_TYPE = "native_plugin"
REQUIRED_METHODS = ("event_fd", "submit_batch_get", "submit_batch_set", "submit_batch_exists", "drain_completions", "close")
OPTIONAL_METHODS = ("submit_batch_delete",)

# (future_id, ok, error, result_bools or None)
Completion = Tuple[int, bool, str, Optional[List[bool]]]

try:  # pragma: no cover - LMCache does not install on the build machines
    from lmcache.v1.distributed.l2_adapters import native_plugin_l2_adapter as _real_module  # type: ignore
    REAL = True
except Exception:  # ImportError, or an LMCache that fails to import without a GPU
    _real_module = None
    REAL = False


class NativePluginConfig:
    """The ``native_plugin`` entry of LMCache's L2 adapter list: ``module_path``, ``class_name``, ``adapter_params``."""

    def __init__(self, module_path: str, class_name: str, adapter_params: Optional[Dict[str, Any]] = None):
        self.module_path = module_path
        self.class_name = class_name
        self.adapter_params = dict(adapter_params or {})

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "NativePluginConfig":
        """Validates the entry as LMCache does: two non-empty strings and a dict, each refusal naming the field."""
        if d.get("type", CONFIG_TYPE) != CONFIG_TYPE:
            raise ValueError("an L2 adapter entry for a native connector has type %r, not %r" % (CONFIG_TYPE, d.get("type")))
        for field in ("module_path", "class_name"):
            if not isinstance(d.get(field), str) or not d.get(field):
                raise ValueError("%s must be a non-empty string, not %r" % (field, d.get(field)))
        params = d.get("adapter_params", {})
        if not isinstance(params, dict):
            raise ValueError("adapter_params must be a dict, not %s" % type(params).__name__)
        return cls(d["module_path"], d["class_name"], params)


def load_native_plugin(entry: Dict[str, Any]) -> Any:
    """Constructs the connector an L2 adapter entry names, as LMCache's native_plugin factory does (without wrapping
    it in LMCache's bridge: see :class:`Bridge`)."""
    config = NativePluginConfig.from_dict(entry)
    module = importlib.import_module(config.module_path)
    try:
        connector_class = getattr(module, config.class_name)
    except AttributeError:
        raise AttributeError("module %r has no class %r" % (config.module_path, config.class_name)) from None
    connector = connector_class(**config.adapter_params)
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(connector, m, None))]
    if missing:
        if callable(getattr(connector, "close", None)):
            connector.close()
        raise TypeError("%s.%s lacks the required method %r" % (config.module_path, config.class_name, missing[0]))
    if not callable(getattr(connector, "submit_batch_delete", None)):
        log.warning("%s.%s has no submit_batch_delete: LMCache's L2 eviction would not delete", config.module_path,
                    config.class_name)
    return connector


def real_loader() -> Optional[Callable[..., Any]]:
    """LMCache's own native_plugin factory (config object → its bridge around the connector), or None when LMCache
    is not importable."""
    if not REAL:
        return None
    return lambda entry: _real_module._create_native_plugin_l2_adapter(  # pragma: no cover
        _real_module.NativePluginL2AdapterConfig.from_dict(entry))


class BatchOutcome:
    """One batch's completion as the bridge received it."""

    __slots__ = ("future_id", "ok", "error", "results")

    def __init__(self, future_id: int, ok: bool, error: str, results: Optional[List[bool]]):
        self.future_id, self.ok, self.error, self.results = future_id, ok, error, results

    def __repr__(self):
        return "BatchOutcome(%d, ok=%s, error=%r, results=%r)" % (self.future_id, self.ok, self.error, self.results)


class Bridge:
    """What LMCache's native-connector bridge does with a connector, for drivers and tests: one thread polls the
    connector's ``event_fd()`` and drains completions, routing each to the batch that waits for it by future id.

    Submit calls go straight to the connector (from any thread, as LMCache's controllers call them); ``wait(fid)``
    blocks until that batch's completion arrives (bounded: a timeout raises naming the future id)."""

    def __init__(self, connector: Any, poll_ms: int = 100):
        self.connector = connector
        self._fd = int(connector.event_fd())
        self._lock = threading.Condition()
        self._done: Dict[int, BatchOutcome] = {}
        self.unknown: List[int] = []
        self._stop = threading.Event()
        self._poll_ms = poll_ms
        self._thread = threading.Thread(target=self._loop, name="lmcache-l2-bridge", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(self._poll_ms):
                continue
            try:
                completions = self.connector.drain_completions()
            except Exception:  # LMCache logs it and keeps polling
                log.exception("drain_completions failed")
                continue
            with self._lock:
                for future_id, ok, error, results in completions:
                    self._done[int(future_id)] = BatchOutcome(int(future_id), bool(ok), str(error),
                                                              None if results is None else [bool(b) for b in results])
                self._lock.notify_all()

    def wait(self, future_id: int, timeout: float = 60.0) -> BatchOutcome:
        """The completion of batch ``future_id``; AssertionError naming it when none comes within ``timeout``."""
        with self._lock:
            if not self._lock.wait_for(lambda: future_id in self._done, timeout):
                raise AssertionError("no completion for future id %d within %.0f s" % (future_id, timeout))
            return self._done.pop(future_id)

    def set(self, keys: List[str], views: List[memoryview], timeout: float = 60.0) -> BatchOutcome:
        return self.wait(self.connector.submit_batch_set(keys, views), timeout)

    def get(self, keys: List[str], views: List[memoryview], timeout: float = 60.0) -> BatchOutcome:
        return self.wait(self.connector.submit_batch_get(keys, views), timeout)

    def exists(self, keys: List[str], timeout: float = 60.0) -> BatchOutcome:
        return self.wait(self.connector.submit_batch_exists(keys), timeout)

    def delete(self, keys: List[str], timeout: float = 60.0) -> BatchOutcome:
        return self.wait(self.connector.submit_batch_delete(keys), timeout)

    def close(self) -> None:
        """Stops the polling thread, then closes the connector (LMCache's order)."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.connector.close()

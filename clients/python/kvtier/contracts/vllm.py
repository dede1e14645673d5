"""vLLM's secondary-tier contract for its tiering offloading spec, restated in the project's own words.

vLLM's ``TieringOffloadingSpec`` keeps offloaded KV blocks in a CPU primary tier (one shared-memory
file per engine instance, ``/dev/shm/vllm_offload_{engine_id}.mmap``, one row of ``row_stride`` bytes
per primary slot) and hands each configured secondary tier a ``memoryview`` over that region. A
secondary tier never touches GPU memory: a store copies primary slots into the tier, a load copies
the tier's blocks into primary slots that vLLM allocated for them.

The facts this restatement assumes (from vLLM's public source, ``vllm/v1/kv_offload/tiering/base.py``,
``tiering/factory.py``, ``tiering/spec.py``, ``cpu/shared_offload_region.py`` and ``kv_offload/base.py``,
as the project's notes summarise them in ``peers.md`` section 6):

- ``SecondaryTierManager.__init__(offloading_spec, primary_kv_view, tier_type)``; the factory passes
  these three by keyword, plus every other entry of the tier's configuration dict as a keyword.
- ``lookup(key, req_context)`` answers True (present and ready), False (absent) or None (being
  transferred: ask again later). It runs on the scheduler's thread, so it must be quick.
- ``submit_store(job)`` and ``submit_load(job)`` start an asynchronous copy and return at once;
  ``get_finished()`` returns the ``JobResult`` of every job finished since the previous call.
- ``touch(keys, req_context)``, ``request_finished(req_context)`` and ``shutdown()`` have default
  implementations that do nothing.
- ``JobMetadata(job_id, keys, block_ids, is_promotion, req_context)``: ``block_ids`` are primary slots
  (row indices of the view), pinned by vLLM for the job's duration; ``JobResult(job_id, success)``.
- An ``OffloadKey`` is ``bytes``: the block hash then the KV cache group index as 4 bytes big endian.
- Out-of-tree tiers load by module path: a tier config ``{"type": CLASS_NAME, "module_path": MODULE,
  ...}`` whose type is not a registered name imports MODULE, takes CLASS_NAME from it and requires it
  to subclass ``SecondaryTierManager``.

When vLLM is importable (``REAL`` is True) the names below are vLLM's own classes and the loader is
vLLM's ``SecondaryTierFactory``; otherwise they are this module's restatements.
"""
from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Collection, Dict, Iterable, Optional

__all__ = ["REAL", "LOOKUP_RESULT", "OffloadKey", "make_offload_key", "ReqContext", "JobMetadata", "JobResult", "SecondaryTierManager",
           "create_secondary_tier", "get_tier_class", "Unsupported", "OffloadingSpecStandIn"]


class Unsupported(NotImplementedError):
    """A call or setting the adapter does not support; the message names it and why."""


def make_offload_key(block_hash: bytes, group_index: int = 0) -> bytes:
    """An OffloadKey: the block hash, then the group index as 4 bytes big endian."""
    return bytes(block_hash) + int(group_index).to_bytes(4, "big", signed=False)


OffloadKey = bytes


class _OwnSecondaryTierManager(ABC):
    """The restated ``SecondaryTierManager``: one tier below vLLM's CPU primary tier."""

    def __init__(self, offloading_spec: Any, primary_kv_view: memoryview, tier_type: str) -> None:
        self._offloading_spec = offloading_spec
        self._primary_kv_view = primary_kv_view
        self.tier_type = tier_type

    @abstractmethod
    def lookup(self, key: bytes, req_context: Any) -> Optional[bool]:
        """True when the block is here and ready, False when not, None while it is being transferred."""

    @abstractmethod
    def submit_store(self, job_metadata: Any) -> None:
        """Starts copying the job's primary slots into this tier; returns at once."""

    @abstractmethod
    def submit_load(self, job_metadata: Any) -> None:
        """Starts copying the job's blocks from this tier into its primary slots; returns at once."""

    @abstractmethod
    def get_finished(self) -> Iterable[Any]:
        """The JobResult of every job finished since the last call."""

    def touch(self, keys: Collection[bytes], req_context: Any) -> None:
        """The blocks were used (for the tier's eviction order); nothing by default."""
        return None

    def request_finished(self, req_context: Any) -> None:
        """A request ended; nothing by default."""
        return None

    def shutdown(self) -> None:
        """Gives back what the tier holds (threads, connections); nothing by default."""
        return None


@dataclass
class _OwnReqContext:
    """The restated per-request context vLLM passes to lookup, touch and request_finished."""

    req_id: str
    kv_transfer_params: Optional[Dict[str, Any]] = None


@dataclass
class _OwnJobMetadata:
    """The restated job description: ``block_ids`` are primary slots, one per key, in order."""

    job_id: int
    keys: Collection[bytes]
    block_ids: Any
    is_promotion: bool
    req_context: Any


@dataclass
class _OwnJobResult:
    """The restated job outcome."""

    job_id: int
    success: bool


def _own_get_tier_class(tier_config: dict):
    tier_type = tier_config.get("type")
    if not tier_type:
        raise ValueError("a secondary tier configuration needs 'type' (a registered name, or a class name with 'module_path')")
    module_path = tier_config.get("module_path")
    if module_path is None:
        raise ValueError("unknown secondary tier type %r: an out-of-tree tier also needs 'module_path'" % (tier_type,))
    module = importlib.import_module(module_path)
    cls = getattr(module, tier_type, None)
    if cls is None:
        raise ValueError("module %s has no class %r" % (module_path, tier_type))
    if not (isinstance(cls, type) and issubclass(cls, SecondaryTierManager)):
        raise TypeError("%s.%s is not a SecondaryTierManager" % (module_path, tier_type))
    return cls


def _own_create_secondary_tier(tier_config: dict, primary_kv_view: memoryview, offloading_spec: Any):
    cls = _own_get_tier_class(tier_config)
    config = dict(tier_config)
    tier_type = config.pop("type")
    config.pop("module_path", None)
    return cls(offloading_spec=offloading_spec, primary_kv_view=primary_kv_view, tier_type=tier_type, **config)


try:  # vLLM's own classes and loader when vLLM is installed
    from vllm.v1.kv_offload.tiering.base import JobMetadata, JobResult, SecondaryTierManager  # type: ignore
    from vllm.v1.kv_offload.base import ReqContext  # type: ignore
    from vllm.v1.kv_offload.tiering.factory import SecondaryTierFactory as _Factory  # type: ignore

    def get_tier_class(tier_config: dict):
        """vLLM's own resolution of a tier configuration to its class."""
        return _Factory.get_tier_class(tier_config)

    def create_secondary_tier(tier_config: dict, primary_kv_view: memoryview, offloading_spec: Any):
        """vLLM's own construction of a secondary tier from its configuration dict."""
        return _Factory.create_secondary_tier(tier_config, primary_kv_view, offloading_spec)

    REAL = True
except ImportError:
    SecondaryTierManager = _OwnSecondaryTierManager
    ReqContext = _OwnReqContext
    JobMetadata = _OwnJobMetadata
    JobResult = _OwnJobResult
    get_tier_class = _own_get_tier_class
    create_secondary_tier = _own_create_secondary_tier
    REAL = False


#: vLLM's LookupResult enum (MISS, HIT, HIT_PENDING, RETRY) when the installed vLLM's SecondaryTierManager.lookup
#: answers with it rather than with bool|None (the API is experimental and has done both); None otherwise
LOOKUP_RESULT = None
if REAL:
    if "LookupResult" in str(getattr(SecondaryTierManager.lookup, "__annotations__", {}).get("return", "")):
        from vllm.v1.kv_offload.base import LookupResult as LOOKUP_RESULT  # type: ignore  # noqa: N811


@dataclass
class OffloadingSpecStandIn:
    """What an adapter may read from vLLM's ``OffloadingSpec`` when the driver has no real one: the
    engine instance's id (which names vLLM's shared region) and the served model's name."""

    engine_id: str = "driver"
    model: str = ""
    extra_config: Dict[str, Any] = field(default_factory=dict)

"""Plays LMCache over kvtier's LMCache connector, as LMCache's native_plugin loader and its native-connector bridge
call it (``kvtier.contracts.lmcache``): constructed from an L2 adapter entry, completions taken from its eventfd.

``python -m kvtier.drivers.lmcache play --socket S --workload F --instance NAME [--model M] [--salt T] [--json]``
replays a workload as one LMCache instance: per request, the chunk keys LMCache would name (one chunk per page of
the workload, its hash chained over the tokens so far), ``submit_batch_exists`` for the leading run the store holds,
``submit_batch_get`` of that run into this process's own host memory with every byte checked, then
``submit_batch_set`` of the rest. ``bench`` times one batch against ``ctypes.memmove`` of the same bytes.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import statistics
import sys
import time
from typing import List, Optional, Sequence

from .. import _client as kv
from .. import keys as kvkeys
from ..contracts import lmcache as contract
from .workload import Summary, common_arguments, page_bytes, read_workload, warm_pool

ENGINE = "lmcache"
LAYOUT = "driver/lmcache"
EXIT_CORRUPT = 5
EXIT_UNSUPPORTED = 2


def chunk_hashes(pages: Sequence[Sequence[int]]) -> List[bytes]:
    """The chained hash of each chunk: SHA-256 of the previous chunk's hash and this chunk's tokens (4 bytes each,
    little endian). LMCache chains its chunk hashes over the prefix the same way; its exact hash function is its own
    (the adapter never reads the hash: it keys the whole chunk key string)."""
    out, previous = [], b""
    for tokens in pages:
        previous = hashlib.sha256(previous + b"".join(int(t & 0xFFFFFFFF).to_bytes(4, "little") for t in tokens)).digest()
        out.append(previous)
    return out


def connector_entry(socket: str, model: str, salt: str, layout: str = LAYOUT, **extra) -> dict:
    """The L2 adapter entry an operator writes in LMCache's config for kvtier."""
    params = {"socket_path": socket, "model_id": model, "kv_layout": layout, "tenant_salt": salt}
    params.update(extra)
    return {"type": contract.CONFIG_TYPE, "module_path": "kvtier.adapters.lmcache", "class_name": "KvtierL2Connector",
            "adapter_params": params}


class HostMemory:
    """This process's own host memory (LMCache's L1): ``pages`` buffers of ``size`` bytes in one ctypes block, handed
    to the connector as byte memoryviews, as LMCache hands it its memory objects."""

    def __init__(self, pages: int, size: int):
        self.size = size
        self.block = (ctypes.c_ubyte * max(1, pages * size))()
        self.base = ctypes.addressof(self.block)
        self._view = memoryview(self.block).cast("B")

    def view(self, i: int) -> memoryview:
        return self._view[i * self.size:(i + 1) * self.size]

    def address(self, i: int) -> int:
        return self.base + i * self.size


def play(args) -> int:
    workload = read_workload(args.workload)
    summary = Summary(ENGINE, args.instance)
    connector = contract.load_native_plugin(connector_entry(args.socket, args.model, args.salt, chunk_bytes=workload.page_bytes))
    bridge = contract.Bridge(connector)
    corrupt = 0
    try:
        for tokens in workload.requests:
            pages = workload.pages(tokens)
            if not pages:
                summary.add("requests")
                continue
            chunk_keys = [kvkeys.lmcache_chunk_key(args.model, 0, h) for h in chunk_hashes(pages)]
            expected = [page_bytes(tokens[:(i + 1) * workload.page_tokens], workload.page_bytes) for i in range(len(pages))]
            summary.add("requests")
            summary.add("pages", len(pages))
            memory = HostMemory(len(pages), workload.page_bytes)
            found = bridge.exists(chunk_keys)
            held = 0
            while found.results is not None and held < len(pages) and found.results[held]:
                held += 1
            good = 0
            if held:
                loaded = bridge.get(chunk_keys[:held], [memory.view(i) for i in range(held)])
                results = loaded.results or [loaded.ok] * held
                for i in range(held):
                    if not results[i]:
                        break
                    summary.add("pages_loaded")
                    summary.add("bytes_loaded", workload.page_bytes)
                    if bytes(memory.view(i)) == expected[i]:
                        summary.add("pages_verified")
                        if good == i:
                            good += 1
                    else:
                        summary.add("pages_corrupt")
                        corrupt += 1
            summary.add("pages_hit", good)
            if good < len(pages):
                for i in range(good, len(pages)):
                    memory.view(i)[:] = expected[i]
                stored = bridge.set(chunk_keys[good:], [memory.view(i) for i in range(good, len(pages))])
                results = stored.results or [stored.ok] * (len(pages) - good)
                ok = sum(1 for r in results if r)
                summary.add("pages_stored", ok)
                summary.add("bytes_stored", ok * workload.page_bytes)
                summary.add("pages_store_failed", len(results) - ok)
                if stored.error and stored.error not in summary.refusals:
                    summary.refusals.append(stored.error)
    finally:
        bridge.close()
    summary.emit(args.json)
    return EXIT_CORRUPT if corrupt else 0


def _bench_keys(seed: str, round_index: int, pages: int) -> List[str]:
    return [kvkeys.lmcache_chunk_key("bench-model", 0, hashlib.sha256(("%s/%d/%d" % (seed, round_index, i)).encode()).digest())
            for i in range(pages)]


def _bench_bytes(seed: str, round_index: int, i: int, size: int) -> bytes:
    # a short pattern repeated: a whole 2 MiB page of SHAKE per page would make preparing rounds slower than timing them
    pattern = hashlib.shake_256(("%s/%d/%d" % (seed, round_index, i)).encode()).digest(4096)
    return (pattern * (size // len(pattern) + 1))[:size]


def bench(args) -> int:
    if args.copy == "engine":
        try:
            from ..adapters.lmcache import KvtierL2Connector
            KvtierL2Connector.require("engine_copy")
        except NotImplementedError as e:
            sys.stderr.write("%s\n" % e)
            return EXIT_UNSUPPORTED
    size, n = args.page_bytes, args.pages
    entry = connector_entry(args.socket, "bench-model", "", layout="bench/%d" % size, chunk_bytes=size)
    connector = contract.load_native_plugin(entry)
    bridge = contract.Bridge(connector)
    side = kv.Client(args.socket, namespaces=[connector.root])
    if args.role == "set":
        warm_pool(args.socket, connector.root, args.seed, (args.rounds + 1) * n)
    memory = HostMemory(n, size)
    adapter_seconds, memmove_seconds, cpu_seconds = [], [], []
    try:
        for r in range(args.rounds):
            chunk_keys = _bench_keys(args.seed, r, n)
            views = [memory.view(i) for i in range(n)]
            if args.role == "set":
                for i in range(n):
                    views[i][:] = _bench_bytes(args.seed, r, i, size)
                # the baseline first, into pages reserved for this round's keys and given back unwritten (never
                # committed), so that the pool needs room for the stored rounds only, not for a second batch
                side.reserve([kvkeys.lmcache_page_key(connector.root, k) for k in chunk_keys])
                try:
                    if sum(1 for i in range(n) if side.slot_status(i) == kv.PAGE_RESERVED) != n:
                        raise SystemExit("round %d: the pool could not reserve %d pages for the memmove baseline" % (r, n))
                    targets = [ctypes.addressof(ctypes.c_char.from_buffer(side.slot_view(i))) for i in range(n)]
                    started = time.perf_counter()
                    for i in range(n):
                        ctypes.memmove(targets[i], memory.address(i), size)
                    memmove_seconds.append(time.perf_counter() - started)
                finally:
                    side.abort(0, n)
                started, cpu = time.perf_counter(), time.process_time()
                outcome = bridge.set(chunk_keys, views)
                adapter_seconds.append(time.perf_counter() - started)
                cpu_seconds.append(time.process_time() - cpu)
                if not outcome.ok:
                    raise SystemExit("round %d: the set failed: %s" % (r, outcome.error))
            else:
                ctypes.memset(memory.block, 0, n * size)
                started, cpu = time.perf_counter(), time.process_time()
                outcome = bridge.get(chunk_keys, views)
                adapter_seconds.append(time.perf_counter() - started)
                cpu_seconds.append(time.process_time() - cpu)
                if not outcome.ok:
                    raise SystemExit("round %d: the get failed (run the set role first, same --seed): %s" % (r, outcome.error))
                for i in range(n):
                    if bytes(views[i]) != _bench_bytes(args.seed, r, i, size):
                        raise SystemExit("round %d: page %d came back with other bytes" % (r, i))
                side.acquire([kvkeys.lmcache_page_key(connector.root, k) for k in chunk_keys])
                try:
                    sources = [ctypes.addressof(ctypes.c_char.from_buffer(side.slot_view(i))) for i in range(n)]
                    started = time.perf_counter()
                    for i in range(n):
                        ctypes.memmove(memory.address(i), sources[i], size)
                    memmove_seconds.append(time.perf_counter() - started)
                finally:
                    side.release(0, n)
    finally:
        side.close()
        bridge.close()
    adapter, memmove = statistics.median(adapter_seconds), statistics.median(memmove_seconds)
    gigabytes = n * size / 1e9
    result = {"engine": ENGINE, "role": args.role, "copy": args.copy, "pages": n, "page_bytes": size, "rounds": args.rounds,
              "adapter_seconds": adapter_seconds, "memmove_seconds": memmove_seconds,
              "adapter_cpu_seconds": cpu_seconds, "adapter_cpu_s": statistics.median(cpu_seconds),
              "adapter_gb_s": gigabytes / adapter if adapter else 0.0, "memmove_gb_s": gigabytes / memmove if memmove else 0.0,
              "ratio": adapter / memmove if memmove else 0.0}
    sys.stdout.write((json.dumps(result, sort_keys=True) if args.json else
                      "lmcache %s: adapter %.2f GB/s, memmove %.2f GB/s, ratio %.2f" % (
                          args.role, result["adapter_gb_s"], result["memmove_gb_s"], result["ratio"])) + "\n")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = common_arguments(ENGINE).parse_args(argv)
    return play(args) if args.command == "play" else bench(args)


if __name__ == "__main__":
    sys.exit(main())

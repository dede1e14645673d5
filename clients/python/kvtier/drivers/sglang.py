"""Plays SGLang over kvtier's SGLang backend, as SGLang's HiCache calls it.

The backend is built as ``--hicache-storage-backend dynamic`` builds it (SGLang's own factory when
SGLang is importable, else the restatement in ``kvtier.contracts.sglang``), the host pool registered
as HiCache's controller registers it, and then, per request, the controller's calls: the pages' own
ids (chained SHA-256 hex), ``batch_exists`` for the prefix held, ``batch_get_v1`` of that prefix into
this process's host pool (every byte checked against ``workload.page_bytes``), and ``batch_set_v1``
of the rest, in batches of at most ``STORAGE_BATCH_SIZE`` pages.

    python -m kvtier.drivers.sglang play --socket S --workload F --instance a [--model M] [--salt T] [--json]
    python -m kvtier.drivers.sglang bench --socket S --role set|get [--pages 64 --page-bytes 2097152 ...] --json
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import statistics
import sys
import time
from typing import List, Optional

from .. import _client as kv
from ..contracts import sglang as contract
from . import workload as wl

ENGINE = "sglang"
BACKEND = {"backend_name": "kvtier", "module_path": "kvtier.adapters.sglang", "class_name": "KvtierHiCacheStorage",
           "interface_v1": 1}


def storage_config(model: str, extra: dict, tp_rank: int = 0, tp_size: int = 1, mla: bool = False):
    """A HiCacheStorageConfig as SGLang fills it for one scheduler process."""
    config = dict(BACKEND)
    config.update(extra)
    return contract.HiCacheStorageConfig(tp_rank=tp_rank, tp_size=tp_size, pp_rank=0, pp_size=1, attn_cp_rank=0, attn_cp_size=1,
                                         is_mla_model=mla, enable_storage_metrics=False, is_page_first_layout=True,
                                         model_name=model, extra_config=config)


def build(socket: str, model: str, salt: str, pool: contract.HostPool, tp_rank: int = 0, tp_size: int = 1, mla: bool = False):
    """The backend, constructed by the dynamic factory and given the host pool, as SGLang starts it."""
    backend = contract.create_dynamic_backend(storage_config(model, {"kvtier_socket": socket, "kvtier_salt": salt},
                                                             tp_rank, tp_size, mla), pool)
    backend.register_mem_pool_host(pool)
    return backend


def host_pool(pages: int, page_tokens: int, page_bytes: int) -> contract.HostPool:
    """A page-first host pool whose pages are ``page_bytes`` long: K and V halves when it divides evenly."""
    buffers = 2 if page_bytes % 4 == 0 else 1
    try:
        import torch  # noqa: F401
        dtype = torch.bfloat16 if (page_bytes // buffers) % 2 == 0 else torch.uint8
    except ImportError:
        dtype = None
    return contract.HostPool(pages, page_tokens, page_bytes // buffers, buffers, dtype=dtype)


def play(args) -> int:
    w = wl.read_workload(args.workload)
    summary = wl.Summary(ENGINE, args.instance)
    longest = max([len(w.pages(r)) for r in w.requests] + [1])
    pool = host_pool(longest, w.page_tokens, w.page_bytes)
    backend = build(args.socket, args.model, args.salt, pool)
    batch = contract.STORAGE_BATCH_SIZE
    for tokens in w.requests:
        pages = w.pages(tokens)
        hashes = contract.sglang_page_hashes(tokens, w.page_tokens)
        summary.add("requests")
        summary.add("pages", len(pages))
        held = 0
        for start in range(0, len(hashes), batch):   # the prefetch's existence check, batch by batch
            n = backend.batch_exists(hashes[start:start + batch], contract.HiCacheStorageExtraInfo(prefix_keys=hashes[:start]))
            held += n
            if n < len(hashes[start:start + batch]):
                break
        hit = 0
        for start in range(0, held, batch):          # the prefetch: load the prefix held into the host pool
            end = min(held, start + batch)
            results = backend.batch_get_v1(hashes[start:end], pool.indices(range(start, end)),
                                           contract.HiCacheStorageExtraInfo(prefix_keys=hashes[:start]))
            stop = False
            for i, ok in enumerate(results):
                if not ok:
                    stop = True
                    break
                page = start + i
                summary.add("pages_loaded")
                summary.add("bytes_loaded", w.page_bytes)
                if pool.read_page(page) == wl.page_bytes(tokens[:(page + 1) * w.page_tokens], w.page_bytes):
                    summary.add("pages_verified")
                    hit += 1
                else:
                    summary.add("pages_corrupt")
                    stop = True
                    break
            if stop:
                break
        summary.add("pages_hit", hit)
        for page in range(hit, len(pages)):          # "compute" the rest, then the backup thread stores it
            pool.write_page(page, wl.page_bytes(tokens[:(page + 1) * w.page_tokens], w.page_bytes))
        for start in range(hit, len(pages), batch):
            end = min(len(pages), start + batch)
            results = backend.batch_set_v1(hashes[start:end], pool.indices(range(start, end)),
                                           contract.HiCacheStorageExtraInfo(prefix_keys=hashes[:start]))
            stored = results.index(False) if False in results else len(results)
            summary.add("pages_stored", stored)
            summary.add("bytes_stored", stored * w.page_bytes)
            if stored < len(results):
                summary.add("pages_store_failed", len(pages) - start - stored)
                break
    if backend.last_error:
        summary.refusals.append(backend.last_error)
    backend.close()
    summary.emit(args.json)
    return 5 if summary.counts["pages_corrupt"] else 0


def _bench_hashes(seed: str, r: int, n: int) -> List[str]:
    return [hashlib.sha256(("%s:%d:%d" % (seed, r, i)).encode()).hexdigest() for i in range(n)]


def _median(xs: List[float]) -> float:
    return statistics.median(xs) if xs else 0.0


def bench(args) -> int:
    if args.copy == "engine":
        sys.stderr.write("the sglang adapter has no engine-copy path: SGLang's host pool is the process's own memory, "
                         "so the adapter copies (--copy client)\n")
        return 2
    if args.pages < 1 or args.page_bytes < 1 or args.rounds < 1:
        sys.stderr.write("--pages, --page-bytes and --rounds must be at least 1\n")
        return 2
    pool = host_pool(args.pages, 1, args.page_bytes)
    backend = build(args.socket, "bench-model", "bench:" + args.seed, pool)
    indices = pool.indices(range(args.pages))
    adapter_s: List[float] = []
    memmove_s: List[float] = []
    cpu_s: List[float] = []
    bad = 0
    client = kv.Client(args.socket, namespaces=[backend.root], max_keys=max(args.pages, 1))
    if args.role == "set":
        wl.warm_pool(args.socket, backend.root, args.seed, (args.rounds + 1) * args.pages)
    try:
        for r in range(args.rounds):
            hashes = _bench_hashes(args.seed, r, args.pages)
            if args.role == "set":
                for p in range(args.pages):
                    pool.write_page(p, wl.page_bytes([r, p], args.page_bytes))
                t, c = time.perf_counter(), time.process_time()
                results = backend.batch_set_v1(hashes, indices)
                adapter_s.append(time.perf_counter() - t)
                cpu_s.append(time.process_time() - c)
                bad += results.count(False)
                # the baseline: the same bytes between the same buffers, into other reserved pages, then aborted
                other = [backend.key(h + ":memmove") for h in hashes]
                client.reserve(other)
                try:
                    dst = [client.slot_view(i) for i in range(args.pages) if client.slot_status(i) == kv.PAGE_RESERVED]
                    addrs = [ctypes.addressof(ctypes.c_char.from_buffer(v)) for v in dst]
                    t = time.perf_counter()
                    for p, addr in enumerate(addrs):
                        off = 0
                        for ptr, size in zip(pool.page_ptrs(p), [pool.bytes_per_buffer] * pool.buffers):
                            ctypes.memmove(addr + off, ptr, size)
                            off += size
                    memmove_s.append(time.perf_counter() - t)
                    del addrs
                    for v in dst:
                        v.release()
                finally:
                    client.abort(0, args.pages)
            else:
                for p in range(args.pages):
                    pool.write_page(p, b"\0" * args.page_bytes)
                t, c = time.perf_counter(), time.process_time()
                results = backend.batch_get_v1(hashes, indices)
                adapter_s.append(time.perf_counter() - t)
                cpu_s.append(time.process_time() - c)
                for p in range(args.pages):
                    if not results[p] or pool.read_page(p) != wl.page_bytes([r, p], args.page_bytes):
                        bad += 1
                client.acquire([backend.key(h) for h in hashes])
                try:
                    src = [client.slot_view(i) for i in range(args.pages)
                           if client.slot_status(i) in (kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3)]
                    addrs = [ctypes.addressof(ctypes.c_char.from_buffer(v)) for v in src]
                    t = time.perf_counter()
                    for p, addr in enumerate(addrs):
                        off = 0
                        for ptr in pool.page_ptrs(p):
                            ctypes.memmove(ptr, addr + off, pool.bytes_per_buffer)
                            off += pool.bytes_per_buffer
                    memmove_s.append(time.perf_counter() - t)
                    del addrs
                    for v in src:
                        v.release()
                finally:
                    client.release(0, args.pages)
    finally:
        client.close()
        backend.close()
    total = args.pages * args.page_bytes
    a, m = _median(adapter_s), _median(memmove_s)
    out = {"engine": ENGINE, "role": args.role, "copy": args.copy, "pages": args.pages, "page_bytes": args.page_bytes,
           "rounds": args.rounds, "adapter_seconds": adapter_s, "memmove_seconds": memmove_s,
           "adapter_cpu_seconds": cpu_s, "adapter_cpu_s": _median(cpu_s),
           "adapter_gb_s": total / a / 1e9 if a else 0.0, "memmove_gb_s": total / m / 1e9 if m else 0.0,
           "ratio": a / m if m else 0.0, "pages_failed": bad}
    if args.json:
        sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    else:
        sys.stdout.write("sglang %s: %d x %d bytes, adapter %.2f GB/s, memmove %.2f GB/s, ratio %.2f, %d failed\n"
                         % (args.role, args.pages, args.page_bytes, out["adapter_gb_s"], out["memmove_gb_s"], out["ratio"], bad))
    return 1 if bad else 0


def main(argv: Optional[List[str]] = None) -> int:
    args = wl.common_arguments(ENGINE).parse_args(argv)
    return play(args) if args.command == "play" else bench(args)


if __name__ == "__main__":
    sys.exit(main())

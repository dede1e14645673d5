"""Plays vLLM over kvtier's vLLM adapter, as vLLM's tiering offloading spec calls a secondary tier.

Like vLLM, the driver keeps a CPU primary region in a shared-memory file
(``/dev/shm/vllm_offload_<engine_id>.mmap``, one row per primary slot), builds the tier from its
configuration dict through the secondary-tier loader (module path and class name), names blocks by
chained block hashes with their group index (OffloadKey), asks ``lookup`` key by key along a prefix,
and moves rows with ``submit_load``/``submit_store``, polling ``get_finished``.

    python -m kvtier.drivers.vllm play --socket S --workload F --instance a [--model M] [--salt T] [--json]
    python -m kvtier.drivers.vllm bench --socket S --role set|get --pages 64 --page-bytes 2097152 --rounds 5 \
        --seed X [--copy client|engine] --json

The block hashes are SHA-256 chained over the previous block's hash and the block's token ids (4 bytes
big endian each), from 32 zero bytes: the shape of vLLM's own chained hashes, not its exact bytes
(vLLM hashes a CBOR or pickle encoding with a per-deployment seed); the adapter takes whatever bytes
vLLM gives it.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import mmap
import os
import statistics
import sys
import time
from typing import List, Tuple

from .. import _client as kv
from ..contracts import vllm as contract
from ..keys import vllm_offload_page_key
from .workload import Summary, common_arguments, page_bytes, read_workload, warm_pool

ENGINE = "vllm"
WAIT_SECONDS = 120.0


class Region:
    """vLLM's CPU primary region: ``rows`` rows of ``row`` bytes in a shared-memory file, as a 2-D view."""

    def __init__(self, engine_id: str, rows: int, row: int):
        self.path = "/dev/shm/vllm_offload_%s.mmap" % engine_id
        self.rows, self.row = rows, row
        fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, rows * row)
            self.mm = mmap.mmap(fd, rows * row, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self.view = memoryview(self.mm).cast("B", [rows, row])

    def write(self, slot: int, data: bytes) -> None:
        self.mm[slot * self.row:(slot + 1) * self.row] = data

    def read(self, slot: int) -> bytes:
        return self.mm[slot * self.row:(slot + 1) * self.row]

    def zero(self, first: int, count: int) -> None:
        self.mm[first * self.row:(first + count) * self.row] = bytes(count * self.row)

    def address(self, slot: int) -> int:
        return ctypes.addressof(ctypes.c_char.from_buffer(self.mm)) + slot * self.row

    def close(self) -> None:
        try:
            self.view.release()
            self.mm.close()
        finally:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass


def block_hashes(pages: List[List[int]]) -> List[bytes]:
    """Chained block hashes of a request's whole pages (see the module's description)."""
    parent, out = bytes(32), []
    for tokens in pages:
        parent = hashlib.sha256(parent + b"".join(int(t & 0xFFFFFFFF).to_bytes(4, "big") for t in tokens)).digest()
        out.append(parent)
    return out


def make_tier(socket: str, region: Region, model: str, salt: str, copy: str = "auto", engine_id: str = "driver"):
    """The tier as vLLM's loader builds it: from a tier configuration dict with module_path."""
    config = {"type": "KvtierSecondaryTier", "module_path": "kvtier.adapters.vllm", "socket": socket, "model": model,
              "tenant_salt": salt, "copy": copy}
    return contract.create_secondary_tier(config, region.view, contract.OffloadingSpecStandIn(engine_id=engine_id, model=model))


def _block_ids(rows):
    try:
        import numpy
        return numpy.array(rows, dtype=numpy.int32)  # vLLM passes its slots as an int32 array
    except ImportError:
        return list(rows)


class Jobs:
    """Submits jobs to a tier and waits for their results, as vLLM's tiering manager polls get_finished."""

    def __init__(self, tier):
        self.tier = tier
        self.next_id = 1
        self.results = {}

    def run(self, kind: str, keys: List[bytes], rows: List[int], request: str) -> bool:
        job_id, self.next_id = self.next_id, self.next_id + 1
        job = contract.JobMetadata(job_id=job_id, keys=list(keys), block_ids=_block_ids(rows), is_promotion=(kind == "load"),
                                   req_context=contract.ReqContext(req_id=request))
        (self.tier.submit_load if kind == "load" else self.tier.submit_store)(job)
        deadline = time.monotonic() + WAIT_SECONDS
        while job_id not in self.results:
            for result in self.tier.get_finished():
                self.results[result.job_id] = bool(result.success)
            if job_id in self.results:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the tier never finished %s job %d in %.0f s" % (kind, job_id, WAIT_SECONDS))
            time.sleep(0.0005)
        return self.results.pop(job_id)


def lookup_prefix(tier, keys: List[bytes], request: str) -> int:
    """How many leading keys the tier holds, asking key by key as vLLM does; a None (in flight) is asked again."""
    context = contract.ReqContext(req_id=request)
    n = 0
    for key in keys:
        deadline = time.monotonic() + WAIT_SECONDS
        answer = tier.lookup(key, context)
        while answer is None:
            if time.monotonic() > deadline:
                raise RuntimeError("lookup kept answering None (in flight) for %.0f s" % WAIT_SECONDS)
            time.sleep(0.001)
            answer = tier.lookup(key, context)
        if not answer:
            break
        n += 1
    return n


def play(args) -> int:
    workload = read_workload(args.workload)
    summary = Summary(ENGINE, args.instance)
    row, per = workload.page_bytes, workload.page_tokens
    slots = max([len(workload.pages(r)) for r in workload.requests] + [1])
    engine_id = "kvtier-driver-%s-%d" % (args.instance, os.getpid())
    region = Region(engine_id, slots, row)
    tier = None
    try:
        tier = make_tier(args.socket, region, args.model, args.salt, engine_id=engine_id)
        jobs = Jobs(tier)
        for number, tokens in enumerate(workload.requests):
            request = "%s-%d" % (args.instance, number)
            pages = workload.pages(tokens)
            keys = [contract.make_offload_key(h, 0) for h in block_hashes(pages)]
            summary.add("requests")
            summary.add("pages", len(pages))
            held = lookup_prefix(tier, keys, request)
            verified = 0
            if held:
                region.zero(0, held)  # so that bytes left from an earlier request can never pass as loaded
                if jobs.run("load", keys[:held], list(range(held)), request):
                    summary.add("pages_loaded", held)
                    summary.add("bytes_loaded", held * row)
                    for i in range(held):
                        if region.read(i) == page_bytes(tokens[:(i + 1) * per], row):
                            summary.add("pages_verified")
                            if verified == i:
                                verified += 1
                        else:
                            summary.add("pages_corrupt")
                else:
                    summary.refusals.append("load of %d pages for %s: %s" % (held, request, tier.last_error))
            summary.add("pages_hit", verified)
            if verified < len(pages):
                for i in range(verified, len(pages)):
                    region.write(i, page_bytes(tokens[:(i + 1) * per], row))
                if jobs.run("store", keys[verified:], list(range(verified, len(pages))), request):
                    summary.add("pages_stored", len(pages) - verified)
                    summary.add("bytes_stored", (len(pages) - verified) * row)
                else:
                    summary.add("pages_store_failed", len(pages) - verified)
                    summary.refusals.append("store of %d pages for %s: %s" % (len(pages) - verified, request, tier.last_error))
    finally:
        if tier is not None:
            tier.shutdown()
        region.close()
    summary.emit(args.json)
    return 5 if summary.counts["pages_corrupt"] else 0


def _bench_keys(seed: str, r: int, pages: int, what: str = "page") -> List[bytes]:
    return [contract.make_offload_key(hashlib.sha256(("%s:%s:%d:%d" % (seed, what, r, i)).encode()).digest(), 0)
            for i in range(pages)]


def _bench_bytes(seed: str, r: int, i: int, length: int) -> bytes:
    return page_bytes([r, i] + list(hashlib.sha256(seed.encode()).digest()), length)


def bench(args) -> int:
    if args.pages < 1 or args.page_bytes < 1 or args.rounds < 1:
        sys.stderr.write("--pages, --page-bytes and --rounds must be positive\n")
        return 2
    engine_id = "kvtier-bench-%s-%d" % (args.role, os.getpid())
    region = Region(engine_id, args.pages, args.page_bytes)
    tier = None
    client = None
    try:
        model = "kvtier-bench"
        tier = make_tier(args.socket, region, model, args.seed, copy=args.copy, engine_id=engine_id)
        client = kv.Client(args.socket, namespaces=[tier.root], max_keys=max(args.pages, 1))
        if args.role == "set":
            warm_pool(args.socket, tier.root, args.seed, (args.rounds + 1) * args.pages)
        jobs = Jobs(tier)
        adapter_s, memmove_s, cpu_s = [], [], []
        rows = list(range(args.pages))
        for r in range(args.rounds):
            keys = _bench_keys(args.seed, r, args.pages)
            if args.role == "set":
                for i in rows:
                    region.write(i, _bench_bytes(args.seed, r, i, args.page_bytes))
                t0, c0 = time.perf_counter(), time.process_time()
                ok = jobs.run("store", keys, rows, "bench-%d" % r)
                adapter_s.append(time.perf_counter() - t0)
                cpu_s.append(time.process_time() - c0)
                if not ok:
                    raise RuntimeError("store of round %d failed: %s" % (r, tier.last_error))
                other = [vllm_offload_page_key(tier.root, k) for k in _bench_keys(args.seed, r, args.pages, "memmove")]
                client.reserve(other)
                try:
                    targets = [client.slot_view(i) for i in rows if client.slot_status(i) == kv.PAGE_RESERVED]
                    if len(targets) != args.pages:
                        raise RuntimeError("kvtier reserved %d of %d pages for the memmove baseline" % (len(targets), args.pages))
                    addresses = [ctypes.addressof(ctypes.c_char.from_buffer(t)) for t in targets]
                    t0 = time.perf_counter()
                    for i in rows:
                        ctypes.memmove(addresses[i], region.address(i), args.page_bytes)
                    memmove_s.append(time.perf_counter() - t0)
                finally:
                    client.abort(0, args.pages)
            else:
                region.zero(0, args.pages)
                t0, c0 = time.perf_counter(), time.process_time()
                ok = jobs.run("load", keys, rows, "bench-%d" % r)
                adapter_s.append(time.perf_counter() - t0)
                cpu_s.append(time.process_time() - c0)
                if not ok:
                    raise RuntimeError("load of round %d failed (run --role set first): %s" % (r, tier.last_error))
                for i in rows:
                    if region.read(i) != _bench_bytes(args.seed, r, i, args.page_bytes):
                        sys.stderr.write("page %d of round %d loaded wrong bytes\n" % (i, r))
                        return 5
                client.acquire([vllm_offload_page_key(tier.root, k) for k in keys])
                try:
                    sources = [client.slot_view(i) for i in rows if client.slot_status(i) in (kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3)]
                    if len(sources) != args.pages:
                        raise RuntimeError("kvtier pinned %d of %d pages for the memmove baseline" % (len(sources), args.pages))
                    addresses = [ctypes.addressof(ctypes.c_char.from_buffer(s)) for s in sources]
                    t0 = time.perf_counter()
                    for i in rows:
                        ctypes.memmove(region.address(i), addresses[i], args.page_bytes)
                    memmove_s.append(time.perf_counter() - t0)
                finally:
                    client.release(0, args.pages)
        total = args.pages * args.page_bytes
        a, m = statistics.median(adapter_s), statistics.median(memmove_s)
        out = {"engine": ENGINE, "role": args.role, "copy": tier.copy, "pages": args.pages, "page_bytes": args.page_bytes,
               "rounds": args.rounds, "adapter_seconds": adapter_s, "memmove_seconds": memmove_s,
               "adapter_cpu_seconds": cpu_s, "adapter_cpu_s": statistics.median(cpu_s),
               "adapter_gb_s": total / a / 1e9, "memmove_gb_s": total / m / 1e9, "ratio": a / m}
        sys.stdout.write((json.dumps(out, sort_keys=True) if args.json else
                          "%s %s (%s copy): adapter %.2f GB/s, memmove %.2f GB/s, ratio %.2f" % (
                              ENGINE, args.role, tier.copy, out["adapter_gb_s"], out["memmove_gb_s"], out["ratio"])) + "\n")
        return 0
    finally:
        if client is not None:
            client.close()
        if tier is not None:
            tier.shutdown()
        region.close()


def main(argv=None) -> int:
    args = common_arguments(ENGINE).parse_args(argv)
    try:
        return play(args) if args.command == "play" else bench(args)
    except contract.Unsupported as e:
        sys.stderr.write("%s\n" % e)
        return 2
    except (ValueError, RuntimeError, OSError, kv.KvtierError) as e:
        sys.stderr.write("kvtier.drivers.vllm %s: %s\n" % (args.command, e))
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""What every engine driver shares: the workload file, the bytes a page must hold, and the summary.

A driver plays an inference engine over its adapter (``kvtier.drivers.sglang``, ``.vllm``,
``.lmcache``). ``play`` replays a workload as that engine would: for each request it asks how long a
prefix the store holds, loads those pages into its own host memory and checks every byte, then
"computes" the rest and stores it. Two drivers of two engine instances on one kvtier engine show
the hit rate one gets from the other's prefixes (``kvtier demo --engine``).

The workload file is JSON::

    {"page_tokens": 16, "page_bytes": 65536, "requests": [[1, 2, 3, ...], [1, 2, 3, ..., 9], ...]}

Each request is a token list; only whole pages count (a trailing partial page is neither looked up
nor stored). A page's bytes are a function of the tokens up to and including it
(:func:`page_bytes`), so any process can check a page it loaded without having written it.
"""
import argparse
import ctypes
import hashlib
import json
import sys
import time
from typing import Dict, List, Sequence

from .. import _client

__all__ = ["Workload", "page_bytes", "Summary", "common_arguments", "read_workload", "warm_pool"]


class Workload:
    """A parsed workload file."""

    def __init__(self, page_tokens: int, page_bytes: int, requests: List[List[int]]):
        if page_tokens < 1:
            raise ValueError("page_tokens must be at least 1, not %d" % page_tokens)
        if page_bytes < 1:
            raise ValueError("page_bytes must be at least 1, not %d" % page_bytes)
        self.page_tokens = page_tokens
        self.page_bytes = page_bytes
        self.requests = requests

    def pages(self, tokens: Sequence[int]) -> List[List[int]]:
        """The whole pages of a request's tokens, in order."""
        n = len(tokens) // self.page_tokens
        return [list(tokens[i * self.page_tokens:(i + 1) * self.page_tokens]) for i in range(n)]


def read_workload(path: str) -> Workload:
    """Reads a workload file, naming the file and the field when it is malformed."""
    with open(path, "rb") as f:
        try:
            data = json.loads(f.read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ValueError("%s: not a JSON workload: %s" % (path, e)) from None
    for field in ("page_tokens", "page_bytes", "requests"):
        if field not in data:
            raise ValueError("%s: the workload has no %r" % (path, field))
    requests = data["requests"]
    if not isinstance(requests, list) or not all(isinstance(r, list) for r in requests):
        raise ValueError("%s: 'requests' must be a list of token lists" % path)
    return Workload(int(data["page_tokens"]), int(data["page_bytes"]), requests)


def page_bytes(prefix_tokens: Sequence[int], length: int) -> bytes:
    """The bytes the page ending a prefix holds: SHAKE-256 of the prefix's tokens (4 bytes each, big
    endian), ``length`` bytes long. Two engines computing the same prefix write the same bytes."""
    h = hashlib.shake_256(b"kvtier-driver-page:")
    h.update(b"".join(int(t & 0xFFFFFFFF).to_bytes(4, "big") for t in prefix_tokens))
    return h.digest(length)


class Summary:
    """What a driver's ``play`` did, printed as one JSON object (``--json``) or a line of text."""

    FIELDS = ("requests", "pages", "pages_hit", "pages_loaded", "pages_verified", "pages_corrupt", "pages_stored",
              "pages_store_failed", "bytes_loaded", "bytes_stored")

    def __init__(self, engine: str, instance: str):
        self.engine = engine
        self.instance = instance
        self.counts: Dict[str, int] = {f: 0 for f in self.FIELDS}
        self.started = time.monotonic()
        self.refusals: List[str] = []

    def add(self, field: str, n: int = 1) -> None:
        self.counts[field] += n

    def as_dict(self) -> dict:
        out = {"engine": self.engine, "instance": self.instance}
        out.update(self.counts)
        pages = self.counts["pages"]
        out["hit_rate"] = (self.counts["pages_hit"] / pages) if pages else 0.0
        out["seconds"] = round(time.monotonic() - self.started, 6)
        out["refusals"] = list(self.refusals)
        return out

    def emit(self, as_json: bool) -> None:
        d = self.as_dict()
        if as_json:
            sys.stdout.write(json.dumps(d, sort_keys=True) + "\n")
        else:
            sys.stdout.write("%s %s: %d requests, %d pages, %d hit (%.1f%%), %d verified, %d corrupt, %d stored in %.2f s\n" % (
                d["engine"], d["instance"], d["requests"], d["pages"], d["pages_hit"], 100 * d["hit_rate"],
                d["pages_verified"], d["pages_corrupt"], d["pages_stored"], d["seconds"]))
        sys.stdout.flush()


def warm_pool(socket: str, root: bytes, seed: str, n: int) -> None:
    """Has the kvtier pool's free pages written once before a benchmark's timed rounds: a page of the pool file in
    /dev/shm costs a page fault per 4 KiB on its first write, which would otherwise land in whichever
    side of the comparison happens to get never-used pages. Reserves up to ``n`` pages under throw-away
    keys, writes each, aborts them all and waits for them to leave quarantine."""
    names = [kv_key for kv_key in (hashlib.sha256(("%s:warm:%d" % (seed, i)).encode()).digest()[:16] for i in range(n))]
    with _client.Client(socket, namespaces=[root], max_keys=n) as c:
        c.reserve(names)
        try:
            for i in range(n):
                if c.slot_status(i) == _client.PAGE_RESERVED:
                    view = c.slot_view(i)
                    ctypes.memset(ctypes.addressof(ctypes.c_char.from_buffer(view)), 0, len(view))
                    view.release()
        finally:
            c.abort(0, n)
        deadline = time.monotonic() + 30
        while c.stats_named().get("pages_quarantined", 0) and time.monotonic() < deadline:
            time.sleep(0.05)


def common_arguments(engine: str) -> argparse.ArgumentParser:
    """The command line every driver takes: ``play`` and ``bench``, each with the engine's socket."""
    parser = argparse.ArgumentParser(prog="python -m kvtier.drivers." + engine,
                                     description="Plays %s over kvtier's %s adapter, as %s's own loader and controller call it."
                                                 % (engine, engine, engine))
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="replay a workload file as one engine instance")
    play.add_argument("--socket", required=True, help="the kvtier engine's IPC socket")
    play.add_argument("--workload", required=True, help="a workload file (kvtier.drivers.workload)")
    play.add_argument("--instance", default="a", help="this engine instance's name, in the summary")
    play.add_argument("--model", default="driver-model", help="the model id the namespace is derived from")
    play.add_argument("--salt", default="", help="the tenant salt")
    play.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    bench = sub.add_parser("bench", help="time one batch set or get against memmove of the same bytes")
    bench.add_argument("--socket", required=True, help="the kvtier engine's IPC socket")
    bench.add_argument("--role", choices=("set", "get"), required=True)
    bench.add_argument("--pages", type=int, default=64)
    bench.add_argument("--page-bytes", type=int, default=2 << 20)
    bench.add_argument("--rounds", type=int, default=5)
    bench.add_argument("--seed", default="bench", help="names the pages, so that a get process finds a set process's pages")
    bench.add_argument("--copy", choices=("client", "engine"), default="client",
                       help="who copies bytes: this process (client) or the kvtier engine from a HOST_FILE/HOST_FD host region")
    bench.add_argument("--json", action="store_true")
    return parser

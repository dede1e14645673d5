"""``python -m kvtier``: a quick check against a running engine.

    python -m kvtier stats  --socket /dev/shm/kvtier-pool.sock
    python -m kvtier lookup --socket PATH --model ID --layout TEXT [--rank N] [--salt S]
                            (--tokens T ... --page-tokens N | --sglang HASH ... | --vllm HEX[:GROUP] ...)
    python -m kvtier version

Exit codes: 0 done, 1 the engine refused or failed a request, 2 bad arguments, 3 no engine at the
socket, 4 the C client library is not built.
"""
from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from typing import List, Optional, Sequence

from . import _client, keys

EXIT_ENGINE, EXIT_USAGE, EXIT_NO_ENGINE, EXIT_NO_LIBRARY = 1, 2, 3, 4


class _Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _check_socket(path: str) -> None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise _Failure(EXIT_NO_ENGINE, "no engine socket at %s: start an engine with `./kvtier serve` (its IPC socket is"
                                       " ipc.socket-path, /dev/shm/kvtier-pool.sock by default) or pass --socket" % path)
    except OSError as e:
        raise _Failure(EXIT_NO_ENGINE, "cannot reach the engine socket %s: %s" % (path, e.strerror))
    if not stat.S_ISSOCK(mode):
        raise _Failure(EXIT_NO_ENGINE, "%s is not a socket (the engine's IPC socket is a Unix domain socket)" % path)


def _connect(path: str, namespaces: Sequence[bytes], max_keys: int) -> _client.Client:
    _check_socket(path)
    try:
        _client.load_library()
    except (FileNotFoundError, OSError) as e:
        raise _Failure(EXIT_NO_LIBRARY, str(e))
    try:
        return _client.Client(path, namespaces=namespaces, max_keys=max_keys, timeout_ms=10_000)
    except _client.KvtierError as e:
        raise _Failure(EXIT_NO_ENGINE, "no engine answered at %s: %s" % (path, e))


def _vllm_block(text: str) -> bytes:
    hex_part, _, group = text.partition(":")
    try:
        block = bytes.fromhex(hex_part)
    except ValueError:
        raise _Failure(EXIT_USAGE, "--vllm %r: the block hash must be hex digits, optionally followed by :GROUP" % text)
    try:
        return keys.vllm_offload_key(block, int(group) if group else 0)
    except ValueError as e:
        raise _Failure(EXIT_USAGE, "--vllm %r: %s" % (text, e))


def _lookup_keys(args: argparse.Namespace, root: bytes) -> List[bytes]:
    chosen = [name for name in ("tokens", "sglang", "vllm") if getattr(args, name)]
    if len(chosen) != 1:
        raise _Failure(EXIT_USAGE, "give exactly one of --tokens, --sglang or --vllm, not %s"
                       % (" and ".join("--" + c for c in chosen) or "none"))
    try:
        if args.tokens:
            if not args.page_tokens:
                raise _Failure(EXIT_USAGE, "--tokens needs --page-tokens N (the tokens per page of the KV layout)")
            return keys.page_keys(root, args.tokens, args.page_tokens, include_partial=args.partial)
        if args.sglang:
            return [keys.sglang_page_key(root, h) for h in args.sglang]
        return [keys.vllm_offload_page_key(root, _vllm_block(b)) for b in args.vllm]
    except ValueError as e:
        raise _Failure(EXIT_USAGE, str(e))


def _stats(args: argparse.Namespace) -> int:
    with _connect(args.socket, (), 1) as c:
        values = c.stats_named()
    if args.json:
        print(json.dumps(values, sort_keys=False))
    else:
        width = max((len(n) for n in values), default=0)
        for name, value in values.items():
            print("%-*s %d" % (width, name, value))
    return 0


def _lookup(args: argparse.Namespace) -> int:
    root = keys.namespace_root(args.model, args.layout, args.rank, args.salt)
    page_keys = _lookup_keys(args, root)
    if not page_keys:
        raise _Failure(EXIT_USAGE, "no page to look up (fewer tokens than one page?)")
    with _connect(args.socket, [root], len(page_keys)) as c:
        result = c.lookup(page_keys)
    answer = {"pages": len(page_keys), "pool_pages": result.pool_pages, "l3_pages": result.l3_pages,
              "keys": [k.hex() for k in page_keys]}
    if args.json:
        print(json.dumps(answer))
    else:
        print("%d of %d pages in the pool, %d more in L3" % (result.pool_pages, len(page_keys), result.l3_pages))
        for i, k in enumerate(page_keys):
            where = "pool" if i < result.pool_pages else "l3" if i < result.pool_pages + result.l3_pages else "-"
            print("%4d %s %s" % (i, k.hex(), where))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m kvtier", description="Checks a running kvtier engine over its IPC socket.")
    sub = parser.add_subparsers(dest="command", required=True)
    default_socket = os.environ.get("KVTIER_SOCKET", "/dev/shm/kvtier-pool.sock")
    stats = sub.add_parser("stats", help="the engine's counters, by name")
    stats.add_argument("--socket", default=default_socket, help="the engine's IPC socket (default %(default)s)")
    stats.add_argument("--json", action="store_true", help="one JSON object")
    lookup = sub.add_parser("lookup", help="how many leading pages of a chain the engine holds")
    lookup.add_argument("--socket", default=default_socket, help="the engine's IPC socket (default %(default)s)")
    lookup.add_argument("--model", required=True, help="the namespace's model id (and revision)")
    lookup.add_argument("--layout", required=True, help="the namespace's KV layout text")
    lookup.add_argument("--rank", type=int, default=0, help="the tensor-parallel rank (default 0)")
    lookup.add_argument("--salt", default="", help="the tenant salt (default none)")
    lookup.add_argument("--tokens", type=int, nargs="+", help="token ids, keyed as pages of --page-tokens")
    lookup.add_argument("--page-tokens", type=int, help="tokens per page, with --tokens")
    lookup.add_argument("--partial", action="store_true", help="also key a last partial page")
    lookup.add_argument("--sglang", nargs="+", metavar="HASH", help="SGLang page hashes (hex strings)")
    lookup.add_argument("--vllm", nargs="+", metavar="HEX[:GROUP]", help="vLLM block hashes in hex, with a group index")
    lookup.add_argument("--json", action="store_true", help="one JSON object")
    sub.add_parser("version", help="the package's version and the library it loads")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs one command; returns the exit code (see the module's doc)."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "stats":
            return _stats(args)
        if args.command == "lookup":
            return _lookup(args)
        from . import __version__
        print("kvtier %s, C client library %s" % (__version__, _client.library_path()))
        return 0
    except _Failure as e:
        print("kvtier: %s" % e, file=sys.stderr)
        return e.code
    except _client.KvtierError as e:
        print("kvtier: the engine failed the request: %s" % e, file=sys.stderr)
        return EXIT_ENGINE


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Two processes share a prefix: a writer process saves the pages of a long system prompt, then a
reader process, which never talked to the writer, computes the same keys from the same tokens and
gets hits, reading the writer's bytes in place.

    python3 shared_prefix.py --socket /dev/shm/kvtier.sock
Runs both processes itself; exit status 0 when the reader got every page with the writer's bytes."""

import argparse
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import kvtier_client as kv  # noqa: E402

TOKENS_PER_PAGE = 16
PAGES = 4


def page_bytes(n, size):
    seed = hashlib.sha256(b"system prompt page %d" % n).digest()
    return (seed * (size // len(seed) + 1))[:size]


def role(name, socket_path, salt):
    root = kv.namespace_root("example/model@1", "bytes/page%d" % TOKENS_PER_PAGE, 0, salt)
    system_prompt = list(range(7, 7 + PAGES * TOKENS_PER_PAGE))
    keys = kv.page_keys(root, system_prompt, TOKENS_PER_PAGE)
    with kv.Client(socket_path, namespaces=[root], max_keys=16) as client:
        if name == "writer":
            with client.reserved(keys) as r:
                for i, page in r.pages():
                    page[:] = page_bytes(i, client.page_size)
            print("writer (pid %d): committed %d pages" % (os.getpid(), r.commit_result.result_count))
            return 0 if r.commit_result.result_count == PAGES else 1
        hits = client.lookup(keys).pool_pages
        with client.pinned(keys) as pages:
            same = sum(bytes(p) == page_bytes(i, client.page_size) for i, p in enumerate(pages))
        print("reader (pid %d): %d of %d pages hit, %d with the writer's bytes" % (os.getpid(), hits, PAGES, same))
        return 0 if hits == PAGES and same == PAGES else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True, help="the engine's ipc socket (ipc.socket-path)")
    ap.add_argument("--role", choices=["writer", "reader"], help=argparse.SUPPRESS)
    ap.add_argument("--salt", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.role:
        return role(args.role, args.socket, args.salt)
    salt = "shared-prefix-%d" % os.getpid()  # this run's own namespace
    for name in ("writer", "reader"):
        rc = subprocess.call([sys.executable, os.path.abspath(__file__), "--socket", args.socket,
                              "--role", name, "--salt", salt])
        if rc != 0:
            print("FAILED: the %s exited with %d" % (name, rc))
            return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

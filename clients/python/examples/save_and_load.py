#!/usr/bin/env python3
"""An inference engine saves a request's KV pages into kvtier and loads them back on the next turn.

Turn 1: the prompt's pages are not in kvtier; the engine "computes" their KV bytes, reserves a page
per full page of tokens, writes the bytes in place in the shared pool and commits them.
Turn 2: the conversation grew; LOOKUP finds turn 1's pages, ACQUIRE pins them, the engine reads
them in place (and checks every byte against what it wrote), then computes and saves only the new
pages.

    python3 save_and_load.py --socket /dev/shm/kvtier.sock
Exit status 0 when every byte matched."""

import argparse
import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import kvtier_client as kv  # noqa: E402

TOKENS_PER_PAGE = 16


def kv_bytes(tokens, size):
    """Stand-in for the model's KV for one page of tokens: deterministic bytes of `size`."""
    seed = hashlib.sha256(repr(list(tokens)).encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


def save(client, keys, tokens, first_page):
    """Saves pages first_page.. of tokens; returns how many were written."""
    todo = keys[first_page:]
    if not todo:
        return 0
    written = 0
    with client.reserved(todo) as r:
        for i, page in r.pages():
            n = first_page + i
            page[:] = kv_bytes(tokens[n * TOKENS_PER_PAGE:(n + 1) * TOKENS_PER_PAGE], client.page_size)
            written += 1
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True, help="the engine's ipc socket (ipc.socket-path)")
    ap.add_argument("--model", default="example/model@1")
    args = ap.parse_args()

    root = kv.namespace_root(args.model, "bytes/page%d" % TOKENS_PER_PAGE, 0, "save-and-load-%d" % os.getpid())
    turn1 = list(range(1000, 1000 + 3 * TOKENS_PER_PAGE + 5))  # 3 full pages and 5 tokens
    turn2 = turn1 + list(range(5000, 5000 + 2 * TOKENS_PER_PAGE))

    with kv.Client(args.socket, namespaces=[root], max_keys=64) as client:
        keys1 = kv.page_keys(root, turn1, TOKENS_PER_PAGE)
        hit = client.lookup(keys1).pool_pages
        print("turn 1: %d pages, %d in kvtier" % (len(keys1), hit))
        print("turn 1: saved %d pages" % save(client, keys1, turn1, hit))

        keys2 = kv.page_keys(root, turn2, TOKENS_PER_PAGE)
        found = client.lookup(keys2)
        print("turn 2: %d pages, %d in the pool, %d in L3" % (len(keys2), found.pool_pages, found.l3_pages))
        bad = 0
        with client.pinned(keys2) as pages:
            for n, page in enumerate(pages):
                if bytes(page) != kv_bytes(turn2[n * TOKENS_PER_PAGE:(n + 1) * TOKENS_PER_PAGE], client.page_size):
                    bad += 1
            loaded = len(pages)
        print("turn 2: loaded %d pages, %d differ" % (loaded, bad))
        print("turn 2: saved %d new pages" % save(client, keys2, turn2, loaded))
        if loaded < len(keys1) or bad:
            print("FAILED: expected turn 1's %d pages back, byte for byte" % len(keys1))
            return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

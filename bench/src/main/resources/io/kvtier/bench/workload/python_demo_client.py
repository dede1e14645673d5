"""A kvtier demo client in Python: WorkloadClientProcess's pipe protocol over the Python binding.

Run by PythonWorkloadClient (kvtier demo --ipc --client python) with:
    binding_dir socket_path page_tokens model_id kv_layout
It attaches to the engine through clients/python (the binding of the C client), then serves the prompts its
parent writes on stdin in two round trips, exactly as the Java client process does: key the prompt,
LOOKUP_AND_LOCK (the cached prefix pinned, the rest reserved), check every byte of the pinned prefix
against the key's pattern (bench's PagePattern: SplitMix64 seeded by the key, little-endian), write the
reserved pages, then COMMIT_AND_RELEASE. Each answer is READY, the number of steps (8) and the
request's tally, big-endian, as RequestTally.writeTo writes it; the combined requests are clocked
under the steps acquire and commit, as the Java clients clock them.
"""
import struct
import sys
import time

sys.path.insert(0, sys.argv[1])
import kvtier_client as kv  # noqa: E402

try:
    import numpy as np
except ImportError:  # the pattern in pure Python: correct, only slower
    np = None

READY = 0x4B565452
FAILED = 0x4641494C
MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
# ClientStep order: keys, lookup, acquire, verify, release, reserve, fill, commit
KEYS, LOOKUP, ACQUIRE, VERIFY, RELEASE, RESERVE, FILL, COMMIT = range(8)


def pattern(key, length):
    """The bytes PagePattern.fill writes for this key: SplitMix64 from high ^ rotl(low, 17)."""
    high = int.from_bytes(key[0:8], "big")
    low = int.from_bytes(key[8:16], "big")
    state = (high ^ (((low << 17) | (low >> 47)) & MASK)) & MASK
    n = length // 8
    if np is not None:
        z = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GOLDEN) + np.uint64(state)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
        z = z ^ (z >> np.uint64(31))
        return z.astype("<u8").tobytes()
    out = []
    for _ in range(n):
        state = (state + GOLDEN) & MASK
        z = state
        z = ((z ^ (z >> 30)) * MIX1) & MASK
        z = ((z ^ (z >> 27)) * MIX2) & MASK
        out.append(z ^ (z >> 31))
    return struct.pack("<%dQ" % n, *out)


def read_exactly(stream, n):
    data = stream.read(n)
    if data is None or len(data) < n:
        return None
    return data


def main():
    binding, socket_path, page_tokens, model_id, kv_layout = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    out = sys.stdout.buffer
    stdin = sys.stdin.buffer
    try:
        root = kv.namespace_root(model_id, kv_layout)
        client = kv.Client(socket_path, namespaces=[root], max_keys=4096)
    except Exception as ex:  # noqa: BLE001 - reported to the parent, which names it
        fail(out, "cannot attach to the engine: %r" % (ex,))
        return
    with client:
        page_size = client.page_size
        lengths = [page_size] * client.max_keys
        out.write(struct.pack(">i", READY))
        out.flush()
        clock = time.perf_counter_ns
        while True:
            header = read_exactly(stdin, 4)
            if header is None:
                return
            (length,) = struct.unpack(">i", header)
            tokens = struct.unpack(">%di" % length, read_exactly(stdin, 4 * length)) if length else ()
            tokens = [t & 0xFFFFFFFF for t in tokens]
            steps = [0] * 8
            counts = dict(hit_l2=0, hit_l3=0, written=0, verified=0, corrupt=0, not_cached=0)
            try:
                t0 = clock()
                keys = kv.page_keys(root, tokens, page_tokens)
                n = len(keys)
                t = clock(); steps[KEYS] += t - t0
                if n:
                    # Two round trips a request, as the Java demo clients make them: LOOKUP_AND_LOCK pins the
                    # cached prefix and reserves the rest (clocked as acquire), COMMIT_AND_RELEASE publishes what
                    # was written and drops the pins (clocked as commit).
                    result = client.lookup_and_lock(keys)
                    t1 = clock(); steps[ACQUIRE] += t1 - t; t = t1
                    cached = result.result_count
                    counts["hit_l2"] += result.from_pool
                    counts["hit_l3"] += result.from_l3
                    for i in range(cached):
                        view = client.slot_view(i)
                        if view is not None and view.tobytes() == pattern(keys[i], page_size):
                            counts["verified"] += 1
                        else:
                            counts["corrupt"] += 1
                    t1 = clock(); steps[VERIFY] += t1 - t; t = t1
                    for i in range(cached, n):
                        status = client.slot_status(i)
                        if status == kv.PAGE_RESERVED:
                            view = client.slot_view(i)
                            if view is None:
                                raise RuntimeError("LOOKUP_AND_LOCK answered a reserved slot without a page")
                            view[:page_size] = pattern(keys[i], page_size)
                        elif status != kv.PAGE_EXISTS:
                            counts["not_cached"] += 1
                    t1 = clock(); steps[FILL] += t1 - t; t = t1
                    # the lengths are read only for reserved slots
                    counts["written"] += client.commit_and_release(0, lengths[:n]).result_count
                    steps[COMMIT] += clock() - t
                latency = clock() - t0
            except Exception as ex:  # noqa: BLE001 - reported to the parent
                fail(out, repr(ex))
                return
            out.write(struct.pack(">ii", READY, len(steps)))
            out.write(struct.pack(">8q", n, counts["hit_l2"], counts["hit_l3"], counts["written"], counts["verified"],
                                  counts["corrupt"], counts["not_cached"], latency))
            out.write(struct.pack(">8q", *steps))
            out.flush()


def fail(out, message):
    data = message.encode("utf-8")[:20000]
    out.write(struct.pack(">iH", FAILED, len(data)) + data)
    out.flush()


if __name__ == "__main__":
    main()

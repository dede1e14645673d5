"""A kvtier demo client in Python: WorkloadClientProcess's pipe protocol over the Python binding.

Run by PythonWorkloadClient (kvtier demo --ipc --client python) with:
    binding_dir socket_path page_tokens model_id kv_layout
It attaches to the engine through clients/python (the binding of the C client), then serves the prompts its
parent writes on stdin exactly as the Java client process does: key the prompt, LOOKUP, ACQUIRE and
check every byte of the pinned prefix against the key's pattern (bench's PagePattern: SplitMix64
seeded by the key, little-endian), RELEASE, then RESERVE, write and COMMIT the missing pages. Each
answer is READY and the request's tally, big-endian, as RequestTally.writeTo writes it.
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
                client.lookup(keys)
                t1 = clock(); steps[LOOKUP] += t1 - t; t = t1
                cached = 0
                if n:
                    with client.pinned(keys) as pages:
                        t1 = clock(); steps[ACQUIRE] += t1 - t; t = t1
                        cached = len(pages)
                        counts["hit_l2"] += pages.result.from_pool
                        counts["hit_l3"] += pages.result.from_l3
                        for i, view in enumerate(pages):
                            if view.tobytes() == pattern(keys[i], page_size):
                                counts["verified"] += 1
                            else:
                                counts["corrupt"] += 1
                        t1 = clock(); steps[VERIFY] += t1 - t; t = t1
                t1 = clock(); steps[RELEASE] += t1 - t; t = t1
                if cached < n:
                    with client.reserved(keys[cached:]) as reservation:
                        t1 = clock(); steps[RESERVE] += t1 - t; t = t1
                        mine = 0
                        for i in range(reservation.count):
                            status = reservation.status(i)
                            if status == kv.PAGE_RESERVED:
                                reservation.view(i)[:page_size] = pattern(keys[cached + i], page_size)
                                reservation.set_length(i, page_size)
                                mine += 1
                            elif status != kv.PAGE_EXISTS:
                                counts["not_cached"] += 1
                        t1 = clock(); steps[FILL] += t1 - t; t = t1
                    if mine:
                        counts["written"] += reservation.commit_result.result_count
                        steps[COMMIT] += clock() - t
                latency = clock() - t0
            except Exception as ex:  # noqa: BLE001 - reported to the parent
                fail(out, repr(ex))
                return
            out.write(struct.pack(">i", READY))
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

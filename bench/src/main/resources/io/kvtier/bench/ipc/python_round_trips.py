"""kvtier bench ipc: one-key LOOKUP round trips through the Python binding (clients/python).

Run by PythonRoundTrips with: binding_dir socket_path warmups iterations [wait]. Writes one page, times
lookups of its key with time.perf_counter_ns, and prints one line of figures for the Java side.
"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import kvtier_client as kv  # noqa: E402


def percentile(sorted_samples, p):
    index = min(len(sorted_samples) - 1, max(0, int(round(p / 100.0 * len(sorted_samples) + 0.5)) - 1))
    return sorted_samples[index]


def main():
    socket_path, warmups, iterations = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    wait = sys.argv[5] if len(sys.argv) > 5 else "backoff"
    root = kv.namespace_root("kvtier-bench/ipc-python", "bench/ipc")
    keys = kv.page_keys(root, [7], 1)
    with kv.Client(socket_path, namespaces=[root], max_keys=4, wait=wait) as client:
        with client.reserved(keys) as reservation:
            for i, page in reservation.pages():
                page[:8] = b"\x01" * 8
                reservation.set_length(i, 8)
        samples = []
        clock = time.perf_counter_ns
        for i in range(warmups + iterations):
            start = clock()
            found = client.lookup(keys).pool_pages
            elapsed = clock() - start
            if found != 1:
                raise SystemExit("the one-key lookup found %d pages, not 1" % found)
            if i >= warmups:
                samples.append(elapsed)
    samples.sort()
    print("kvtier-python-bench %d %d %d %d %d" % (len(samples), percentile(samples, 50), percentile(samples, 99),
                                                  percentile(samples, 99.9), samples[-1]))


if __name__ == "__main__":
    main()

"""kvtier's LMCache connector (kvtier.adapters.lmcache) driven as LMCache drives a native_plugin L2 connector: built by
the loader from an L2 adapter entry, its completions taken from its eventfd by the bridge, with LMCache's host memory
as memoryviews over torch tensors; two engine processes sharing a prefix, a third tenant finding nothing, a process
killed mid-store leaving nothing visible and nothing held, and the failure paths.

Run against an engine (EngineAdaptersTest sets KVTIER_SOCKET; see adapter_testing)."""
import ctypes
import hashlib
import json
import os
import select
import signal
import sys
import tempfile
import threading
import time
import unittest

import adapter_testing
from adapter_testing import engine_or_skip, run, spawn, torch_or_skip

import kvtier
from kvtier import keys
from kvtier.adapters import lmcache as adapter
from kvtier.contracts import lmcache as contract
from kvtier.drivers import lmcache as driver
from kvtier.drivers.workload import page_bytes

MODEL = "lmcache-test-model"

if contract.REAL:  # pragma: no cover - LMCache does not install on the build machines
    print("LMCache is importable: the loader tests also run through its own native_plugin factory")
else:
    print("LMCache is not importable here: the tests run against kvtier.contracts.lmcache, the project's restatement "
          "of its native_plugin loader and bridge")


def entry(socket, salt="", **extra):
    return driver.connector_entry(socket, MODEL, salt, layout="test/lmcache", **extra)


def chunk_tokens(label, i):
    """Two 32-bit tokens from a digest of (label, i): the same in every process, and distinct for every label and index
    the tests use. (One token of Python's per-process hash cut to 16 bits let two labels' first chunks share a key now
    and then, and a set of the second found the first's bytes stored under it, as a content-addressed cache should.)"""
    digest = hashlib.sha256(("%s/%d" % (label, i)).encode()).digest()
    return [int.from_bytes(digest[0:4], "little"), int.from_bytes(digest[4:8], "little")]


def chunk_keys(label, n, rank=0):
    return [keys.lmcache_chunk_key(MODEL, rank, h) for h in driver.chunk_hashes([chunk_tokens(label, i) for i in range(n)])]


def tensor_views(torch, tensors):
    """LMCache's host memory objects as it hands them to a native connector: a byte memoryview over each tensor's
    memory, through ctypes at its data pointer."""
    return [memoryview((ctypes.c_ubyte * (t.numel() * t.element_size())).from_address(t.data_ptr())) for t in tensors]


class _Connector:
    """A connector built by the loader and driven through the bridge; closed at the end of the test."""

    def __init__(self, test, socket, salt="", **extra):
        self.connector = contract.load_native_plugin(entry(socket, salt, **extra))
        self.bridge = contract.Bridge(self.connector)
        test.addCleanup(self.bridge.close)


class LoaderTest(unittest.TestCase):
    def test_the_loader_builds_it_from_an_l2_adapter_entry_and_finds_every_required_call(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket).connector
        self.assertIsInstance(c, adapter.KvtierL2Connector)
        for name in contract.REQUIRED_METHODS + contract.OPTIONAL_METHODS:
            self.assertTrue(callable(getattr(c, name)), name)
        self.assertIsInstance(c.event_fd(), int)
        if contract.REAL:  # pragma: no cover
            real = contract.real_loader()(entry(socket))
            real.close()

    def test_a_missing_or_bad_setting_is_an_error_naming_it(self):
        socket = engine_or_skip(self)
        for params, named in [({"kv_layout": "l"}, "model_id"), ({"model_id": "m"}, "kv_layout"),
                              ({"model_id": "m", "kv_layout": "l", "colour": "red"}, "unknown adapter_params colour"),
                              ({"model_id": "m", "kv_layout": "l", "mla": "perhaps"}, "mla must be true or false, not 'perhaps'"),
                              ({"model_id": "m", "kv_layout": "l", "tp_rank": -1}, "tp_rank must be an integer"),
                              ({"model_id": "m", "kv_layout": "l", "tenant_salt": 3}, "tenant_salt must be a string")]:
            params.setdefault("socket_path", socket)
            with self.assertRaisesRegex(ValueError, named):
                contract.load_native_plugin({"type": "native_plugin", "module_path": "kvtier.adapters.lmcache",
                                             "class_name": "KvtierL2Connector", "adapter_params": params})
        with self.assertRaisesRegex(ValueError, "adapter_params must be a dict"):
            contract.load_native_plugin({"module_path": "kvtier.adapters.lmcache", "class_name": "KvtierL2Connector",
                                         "adapter_params": []})
        saved = os.environ.pop("KVTIER_SOCKET")
        try:
            with self.assertRaisesRegex(ValueError, "socket_path is not set and neither is KVTIER_SOCKET"):
                adapter.KvtierL2Connector(model_id="m", kv_layout="l")
        finally:
            os.environ["KVTIER_SOCKET"] = saved

    def test_the_socket_falls_back_to_kvtier_socket(self):
        socket = engine_or_skip(self)
        c = adapter.KvtierL2Connector(model_id=MODEL, kv_layout="test/lmcache")
        self.addCleanup(c.close)
        self.assertEqual(c.socket_path, socket)

    def test_a_chunk_too_big_for_the_pool_fails_construction_naming_both_sizes(self):
        socket = engine_or_skip(self)
        with kvtier.Client(socket) as probe:
            page = probe.page_size
        with self.assertRaisesRegex(ValueError, r"a chunk of %d bytes .* pages of %d bytes" % (page + 1, page)):
            contract.load_native_plugin(entry(socket, chunk_bytes=page + 1))

    def test_the_plugin_type_loader_is_refused_naming_the_right_type(self):
        engine_or_skip(self)
        # LMCache's plugin type constructs cls(adapter_params) with the dict as one positional argument
        with self.assertRaisesRegex(TypeError, "configure type native_plugin"):
            adapter.KvtierL2Connector({"model_id": MODEL, "kv_layout": "l"})


class RoundTripTest(unittest.TestCase):
    def test_torch_chunks_stored_are_found_and_loaded_byte_exact(self):
        socket = engine_or_skip(self)
        torch = torch_or_skip(self)
        c = _Connector(self, socket)
        # a chunk of KV as LMCache holds it in host memory: (K/V, layers, tokens, hidden) in half precision
        torch.manual_seed(19)
        chunks = [torch.randn(2, 2, 16, 64, dtype=torch.float16) for _ in range(4)]
        ks = chunk_keys("torch", 4)
        stored = c.bridge.set(ks, tensor_views(torch, chunks))
        self.assertEqual((stored.ok, stored.results), (True, [True] * 4), stored.error)
        found = c.bridge.exists(ks + chunk_keys("torch-missing", 1))
        self.assertEqual(found.results, [True] * 4 + [False])
        targets = [torch.zeros_like(t) for t in chunks]
        loaded = c.bridge.get(ks, tensor_views(torch, targets))
        self.assertEqual((loaded.ok, loaded.results), (True, [True] * 4), loaded.error)
        for a, b in zip(chunks, targets):
            self.assertTrue(torch.equal(a, b))

    def test_a_batch_is_a_prefix_chain_the_first_miss_ends_it(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        ks = chunk_keys("chain", 4)
        views = [memoryview(bytearray(b"%d" % i * 100)) for i in range(4)]
        self.assertTrue(c.bridge.set([ks[0], ks[1], ks[3]], [views[0], views[1], views[3]]).ok)
        self.assertEqual(c.bridge.exists(ks).results, [True, True, False, False])
        out = [memoryview(bytearray(len(views[0]))) for _ in range(4)]
        loaded = c.bridge.get(ks, out)
        self.assertEqual(loaded.results, [True, True, False, False])
        self.assertFalse(loaded.ok)
        self.assertIn("key 2", loaded.error)
        self.assertEqual(bytes(out[1]), bytes(views[1]))
        self.assertEqual(bytes(out[3]), bytes(len(views[0])), "a key after the first miss is not copied")

    def test_a_page_of_another_length_is_a_miss_never_copied(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        ks = chunk_keys("length", 1)
        self.assertTrue(c.bridge.set(ks, [memoryview(b"x" * 100)]).ok)
        longer = memoryview(bytearray(200))
        loaded = c.bridge.get(ks, [longer])
        self.assertEqual((loaded.ok, loaded.results), (False, [False]))
        self.assertEqual(bytes(longer), bytes(200))

    def test_a_chunk_bigger_than_a_page_is_not_stored_and_the_reason_names_both_sizes(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        size = c.connector._client.page_size
        stored = c.bridge.set(chunk_keys("big", 1), [memoryview(bytearray(size + 1))])
        self.assertEqual(stored.results, [False])
        self.assertIn("a chunk of %d bytes does not fit a kvtier page of %d bytes" % (size + 1, size), stored.error)

    def test_batches_longer_than_a_session_s_slots_are_split_and_keep_their_order(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        n = c.connector._client.max_keys + 3
        ks = chunk_keys("long", n)
        views = [memoryview(i.to_bytes(4, "big") * 8) for i in range(n)]
        self.assertEqual(c.bridge.set(ks, views).results, [True] * n)
        out = [memoryview(bytearray(32)) for _ in range(n)]
        self.assertTrue(c.bridge.get(ks, out).ok)
        self.assertEqual([bytes(o) for o in out], [bytes(v) for v in views])

    def test_delete_drops_the_pool_copy(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        ks = chunk_keys("delete", 2)
        self.assertTrue(c.bridge.set(ks[:1], [memoryview(b"d" * 64)]).ok)
        self.assertEqual(c.bridge.delete(ks).results, [True, False])
        self.assertEqual(c.bridge.exists(ks[:1]).results, [False])

    def test_several_threads_submit_at_once_and_every_batch_completes_with_its_own_bytes(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        failures = []

        def work(t):
            try:
                for round_index in range(5):
                    ks = chunk_keys("thread-%d-%d" % (t, round_index), 3)
                    views = [memoryview(bytes([t, round_index, i]) * 50) for i in range(3)]
                    if not c.bridge.set(ks, views).ok:
                        failures.append("set %d/%d" % (t, round_index))
                    out = [memoryview(bytearray(150)) for _ in range(3)]
                    got = c.bridge.get(ks, out)
                    if not got.ok or [bytes(o) for o in out] != [bytes(v) for v in views]:
                        # what a failure was: a miss (which keys, and whether they exist now) or other bytes
                        failures.append("get %d/%d: ok %s, results %s, error %r, exists now %s, keys whose bytes differ %s" % (
                            t, round_index, got.ok, got.results, got.error, c.bridge.exists(ks).results,
                            [i for i in range(3) if bytes(out[i]) != bytes(views[i])]))
            except Exception as e:  # a thread's failure is the test's
                failures.append(repr(e))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(failures, [])

    def test_the_eventfd_is_readable_when_completions_wait_and_drained_after(self):
        socket = engine_or_skip(self)
        c = contract.load_native_plugin(entry(socket))
        self.addCleanup(c.close)
        fid = c.submit_batch_exists(chunk_keys("efd", 2))
        self.assertEqual(select.select([c.event_fd()], [], [], 30)[0], [c.event_fd()], "no completion was signalled")
        self.assertEqual(c.drain_completions(), [(fid, True, "", [False, False])])
        self.assertEqual(select.select([c.event_fd()], [], [], 0)[0], [], "the drain cleared the eventfd")
        self.assertEqual(c.drain_completions(), [])


class FailureTest(unittest.TestCase):
    def test_no_engine_answers_misses_with_a_named_reason_and_no_exception(self):
        engine_or_skip(self)
        missing = os.path.join(tempfile.mkdtemp(), "nothing.sock")
        c = _Connector(self, missing)
        found = c.bridge.exists(chunk_keys("gone", 2))
        self.assertEqual((found.ok, found.results), (False, [False, False]))
        self.assertIn("no kvtier engine at %s" % missing, found.error)
        stored = c.bridge.set(chunk_keys("gone", 1), [memoryview(b"x")])
        self.assertEqual((stored.ok, stored.results), (False, [False]))
        self.assertTrue(c.connector._worker.is_alive(), "the worker thread lives on")

    def test_a_lost_session_fails_one_batch_and_the_next_reconnects(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        ks = chunk_keys("reconnect", 1)
        self.assertTrue(c.bridge.set(ks, [memoryview(b"r" * 10)]).ok)
        # the session is gone under the connector (as when the engine restarts): the C client refuses calls on it
        kvtier.Client.close(c.connector._client)
        lost = c.bridge.exists(ks)
        self.assertEqual(lost.results, [False])
        self.assertIn("closed", lost.error)
        self.assertEqual(c.bridge.exists(ks).results, [True], "the next batch connected again")

    def test_unsupported_features_are_refused_naming_them_and_capabilities_say_why(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket).connector
        caps = c.capabilities()
        self.assertEqual(set(caps["unsupported"]), {"gpu_direct", "engine_copy", "lookup_lock", "l2_adapter_interface"})
        self.assertIn("submit_batch_get", caps["supported"])
        for feature in ("gpu_direct", "engine_copy"):
            with self.assertRaisesRegex(NotImplementedError, "does not support %s: " % feature):
                c.require(feature)
        c.require("submit_batch_set")
        for call in ("submit_store_task", "submit_lookup_and_lock_task", "submit_load_task", "submit_unlock"):
            with self.assertRaisesRegex(NotImplementedError, "L2AdapterInterface call %s" % call):
                getattr(c, call)([])
        p = spawn(["-m", "kvtier.drivers.lmcache", "bench", "--socket", socket, "--role", "set", "--copy", "engine", "--json"])
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 2, out + err)
        self.assertIn("does not support engine_copy", err)

    def test_bad_batches_are_refused_at_submit_naming_what_was_wrong(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket).connector
        with self.assertRaisesRegex(ValueError, "at least one key"):
            c.submit_batch_exists([])
        with self.assertRaisesRegex(ValueError, "2 keys came with 1 memoryviews"):
            c.submit_batch_set(chunk_keys("bad", 2), [memoryview(b"x")])
        with self.assertRaisesRegex(ValueError, r"must all be 2 bytes .*\[1, 2\]"):
            c.submit_batch_set(chunk_keys("bad", 2), [memoryview(b"xy"), memoryview(b"x")])
        with self.assertRaisesRegex(TypeError, "key 0 of a get batch must be a non-empty str"):
            c.submit_batch_get([b"k"], [memoryview(bytearray(1))])

    def test_close_is_idempotent_and_a_batch_after_it_is_refused(self):
        socket = engine_or_skip(self)
        c = contract.load_native_plugin(entry(socket))
        c.close()
        c.close()
        with self.assertRaisesRegex(RuntimeError, "connector is closed"):
            c.submit_batch_exists(chunk_keys("closed", 1))

    def test_an_mla_model_stores_from_rank_0_only_under_one_namespace(self):
        socket = engine_or_skip(self)
        rank0 = _Connector(self, socket, mla=True, tp_rank=0)
        rank1 = _Connector(self, socket, mla=True, tp_rank=1)
        self.assertEqual(rank0.connector.root, rank1.connector.root)
        ks = chunk_keys("mla", 1)
        refused = rank1.bridge.set(ks, [memoryview(b"m" * 8)])
        self.assertEqual(refused.results, [False])
        self.assertIn("rank 1 does not store", refused.error)
        self.assertTrue(rank0.bridge.set(ks, [memoryview(b"m" * 8)]).ok)
        self.assertEqual(rank1.bridge.exists(ks).results, [True], "rank 1 finds rank 0's copy")


class TwoEnginesTest(unittest.TestCase):
    def _play(self, socket, workload, instance, salt=""):
        args = ["-m", "kvtier.drivers.lmcache", "play", "--socket", socket, "--workload", workload, "--instance", instance,
                "--model", MODEL, "--json"]
        if salt:
            args += ["--salt", salt]
        return json.loads(run(args).stdout.strip().splitlines()[-1])

    def test_two_engine_processes_share_a_prefix_and_another_tenant_finds_none(self):
        socket = engine_or_skip(self)
        tokens = [int(time.time_ns() % 100000) + i for i in range(40)]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"page_tokens": 8, "page_bytes": 4096, "requests": [tokens]}, f)
        self.addCleanup(os.unlink, f.name)
        a = self._play(socket, f.name, "a")
        self.assertEqual((a["pages"], a["pages_hit"], a["pages_stored"]), (5, 0, 5), a)
        b = self._play(socket, f.name, "b")
        self.assertEqual((b["pages_hit"], b["pages_verified"], b["pages_corrupt"], b["pages_stored"]), (5, 5, 0, 0), b)
        c = self._play(socket, f.name, "c", salt="another-tenant")
        self.assertEqual((c["pages_hit"], c["pages_loaded"], c["pages_stored"]), (0, 0, 5), c)

    def test_another_process_loads_what_this_one_stored_byte_exact(self):
        socket = engine_or_skip(self)
        c = _Connector(self, socket)
        ks = chunk_keys("cross-%d" % os.getpid(), 3)
        data = [page_bytes([i, os.getpid()], 3000) for i in range(3)]
        self.assertTrue(c.bridge.set(ks, [memoryview(d) for d in data]).ok)
        script = ("import json, sys\n"
                  "from kvtier.contracts import lmcache as contract\n"
                  "from kvtier.drivers import lmcache as driver\n"
                  "ks, want = json.loads(sys.argv[1]), [bytes.fromhex(h) for h in json.loads(sys.argv[2])]\n"
                  "b = contract.Bridge(contract.load_native_plugin(driver.connector_entry(sys.argv[3], %r, '', layout='test/lmcache')))\n"
                  "found = b.exists(ks)\n"
                  "memory = driver.HostMemory(len(ks), len(want[0]))\n"
                  "loaded = b.get(ks, [memory.view(i) for i in range(len(ks))])\n"
                  "print(json.dumps([found.results, loaded.results, [bytes(memory.view(i)) == want[i] for i in range(len(ks))]]))\n"
                  "b.close()\n" % MODEL)
        out = run(["-c", script, json.dumps(ks), json.dumps([d.hex() for d in data]), socket]).stdout
        self.assertEqual(json.loads(out.strip().splitlines()[-1]), [[True] * 3, [True] * 3, [True] * 3])


class BenchTest(unittest.TestCase):
    def test_bench_set_then_get_from_another_process_prints_the_figures_of_both_copies(self):
        socket = engine_or_skip(self)
        seed = "bench-test-%d" % os.getpid()
        common = ["--socket", socket, "--pages", "4", "--page-bytes", "8192", "--rounds", "2", "--seed", seed, "--json"]
        for role in ("set", "get"):
            out = json.loads(run(["-m", "kvtier.drivers.lmcache", "bench", "--role", role] + common).stdout.strip().splitlines()[-1])
            self.assertEqual((out["engine"], out["role"], out["copy"], out["pages"], out["page_bytes"], out["rounds"]),
                             ("lmcache", role, "client", 4, 8192, 2))
            self.assertEqual((len(out["adapter_seconds"]), len(out["memmove_seconds"])), (2, 2))
            self.assertGreater(out["adapter_gb_s"], 0)
            self.assertGreater(out["memmove_gb_s"], 0)
            self.assertGreater(out["ratio"], 0)


class KilledMidStoreTest(unittest.TestCase):
    def _stats(self, client):
        """(pages in use, reservations open now): a reservation ends committed, aborted or expired."""
        s = client.stats_named()
        return s["pages_in_use"], s["pages_reserved"] - s["pages_committed"] - s["pages_aborted"] - s["reservations_expired"]

    def test_a_process_killed_between_write_and_commit_leaves_nothing_visible_and_nothing_held(self):
        socket = engine_or_skip(self)
        observer = _Connector(self, socket)
        counters = kvtier.Client(socket)
        self.addCleanup(counters.close)
        before = self._stats(counters)
        ks = chunk_keys("killed-%d" % os.getpid(), 4)
        script = ("import json, sys\n"
                  "from kvtier.contracts import lmcache as contract\n"
                  "from kvtier.drivers import lmcache as driver\n"
                  "b = contract.Bridge(contract.load_native_plugin(driver.connector_entry(sys.argv[2], %r, '', layout='test/lmcache')))\n"
                  "b.set(json.loads(sys.argv[1]), [memoryview(bytes([i]) * 5000) for i in range(4)], timeout=3600)\n" % MODEL)
        env = dict(os.environ)
        os.environ[adapter.PAUSE_BEFORE_COMMIT] = "1"
        try:
            p = spawn(["-c", script, json.dumps(ks), socket])
        finally:
            os.environ.clear()
            os.environ.update(env)
        try:
            line = p.stdout.readline()
            self.assertIn("paused before commit", line, p.stderr.read() if not line else line)
            self.assertEqual(self._stats(counters), (before[0] + 4, before[1] + 4), "the paused store holds its 4 reservations")
            os.kill(p.pid, signal.SIGKILL)
        finally:
            p.kill()
            p.communicate(timeout=30)
        self.assertEqual(observer.bridge.exists(ks).results, [False] * 4, "nothing of a killed store is visible")
        deadline = time.monotonic() + 30 * max(1.0, adapter_testing.LEASE_SECONDS)
        while self._stats(counters) != before and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(self._stats(counters), before, "(pages in use, open reservations) came back after the lease")
        self.assertEqual(observer.bridge.exists(ks).results, [False] * 4)


if __name__ == "__main__":
    unittest.main()

"""kvtier's SGLang HiCache backend (kvtier.adapters.sglang) driven through SGLang's storage contract as
SGLang drives it, against a running kvtier engine (KVTIER_SOCKET; the engine's EngineAdaptersTest
starts one with short leases), with real torch tensors for the host pool and the legacy calls.

The backend is built by SGLang's dynamic factory when SGLang is importable, else by the restatement in
kvtier.contracts.sglang (one line says which)."""
import json
import os
import signal
import sys
import tempfile
import threading
import time
import unittest

import adapter_testing as at
from kvtier import _client as kv
from kvtier.adapters import sglang as adapter
from kvtier.contracts import sglang as contract
from kvtier.drivers import sglang as driver
from kvtier.drivers import workload as wl


def setUpModule():
    if contract.REAL:
        print("sglang is importable: the backend is built by SGLang's own factory and subclasses its HiCacheStorage")
    else:
        print("sglang is not importable here: the tests drive the backend through kvtier.contracts.sglang, "
              "the project's restatement of SGLang's contract")


def unique(name):
    return "%s-%d-%d" % (name, os.getpid(), time.monotonic_ns())


class SglangAdapterTest(unittest.TestCase):

    def setUp(self):
        self.socket = at.engine_or_skip(self)
        self.torch = at.torch_or_skip(self)
        self.backends = []

    def tearDown(self):
        for b in self.backends:
            b.close()

    def backend(self, salt, pages=8, page_tokens=4, bytes_per_buffer=2048, buffers=2, mla=False, tp_rank=0, tp_size=1,
                socket=None, extra=None, dtype=None):
        pool = contract.HostPool(pages, page_tokens, bytes_per_buffer, buffers, use_torch=True,
                                 dtype=dtype if dtype is not None else self.torch.bfloat16)
        config = {"kvtier_socket": socket or self.socket, "kvtier_salt": salt, "kvtier_retry_seconds": 0}
        config.update(extra or {})
        b = contract.create_dynamic_backend(driver.storage_config("test-model", config, tp_rank, tp_size, mla), pool)
        self.backends.append(b)
        b.register_mem_pool_host(pool)
        return b, pool

    def fill(self, pool, page, seed):
        g = self.torch.Generator().manual_seed(seed)
        data = self.torch.randint(0, 256, (pool.page_bytes,), dtype=self.torch.uint8, generator=g)
        pool.write_page(page, bytes(data.tolist()))
        return pool.read_page(page)

    # -- loading --

    def test_the_dynamic_factory_loads_it_and_the_host_pool_registers(self):
        b, pool = self.backend(unique("load"))
        self.assertIsInstance(b, adapter.KvtierHiCacheStorage)
        self.assertIsInstance(b, contract.HiCacheStorage)
        self.assertEqual(b.page_bytes, pool.page_bytes)
        self.assertEqual(b.buffers_per_page, 2)
        config = driver.storage_config("m", {"kvtier_socket": self.socket})
        del config.extra_config["module_path"]
        with self.assertRaisesRegex(ValueError, "module_path"):
            contract.create_dynamic_backend(config, pool)

    def test_a_missing_or_bad_setting_is_an_error_naming_it(self):
        saved = os.environ.pop("KVTIER_SOCKET", None)
        try:
            with self.assertRaisesRegex(ValueError, "kvtier_socket"):
                contract.create_dynamic_backend(driver.storage_config("m", {}), None)
        finally:
            if saved is not None:
                os.environ["KVTIER_SOCKET"] = saved
        with self.assertRaisesRegex(ValueError, "kvtier_timeout_ms.*'soon'"):
            contract.create_dynamic_backend(driver.storage_config("m", {"kvtier_socket": self.socket, "kvtier_timeout_ms": "soon"}), None)
        config = driver.storage_config("", {"kvtier_socket": self.socket})
        config.model_name = None
        with self.assertRaisesRegex(ValueError, "kvtier_model"):
            contract.create_dynamic_backend(config, None)

    def test_a_page_too_big_for_the_pool_fails_registration_naming_both_sizes(self):
        b, _ = self.backend(unique("big"))
        with kv.Client(self.socket) as c:
            pool_page = c.page_size
        too_big = contract.HostPool(2, 4, pool_page // 2 + 64, 2, use_torch=True, dtype=self.torch.uint8)
        with self.assertRaises(ValueError) as e:
            b.register_mem_pool_host(too_big)
        self.assertIn(str(too_big.page_bytes), str(e.exception))
        self.assertIn(str(pool_page), str(e.exception))

    # -- the zero-copy calls --

    def test_batch_set_v1_then_batch_get_v1_into_another_host_pool_is_byte_exact(self):
        salt = unique("exact")
        writer, wpool = self.backend(salt)
        reader, rpool = self.backend(salt)
        hashes = contract.sglang_page_hashes(list(range(40)), 4)[:6]
        expected = [self.fill(wpool, p, p + 1) for p in range(6)]
        self.assertEqual(writer.batch_exists(hashes), 0)
        self.assertEqual(writer.batch_set_v1(hashes, wpool.indices(range(6))), [True] * 6)
        self.assertEqual(reader.batch_exists(hashes), 6)
        self.assertTrue(reader.exists(hashes[5]))
        slots = [7, 6, 5, 4, 3, 2]
        self.assertEqual(reader.batch_get_v1(hashes, rpool.indices(slots)), [True] * 6)
        self.assertEqual([rpool.read_page(s) for s in slots], expected)
        # the pages' tensors hold the same values as the writer's (compared as bytes: random bits make NaNs)
        self.assertTrue(self.torch.equal(rpool.kv_buffer[:, 7].view(self.torch.uint8), wpool.kv_buffer[:, 0].view(self.torch.uint8)))

    def test_batch_exists_counts_the_leading_run(self):
        salt = unique("run")
        b, pool = self.backend(salt)
        hashes = contract.sglang_page_hashes(list(range(24)), 4)
        for p in range(3):
            self.fill(pool, p, p)
        self.assertEqual(b.batch_set_v1(hashes[:3], pool.indices(range(3))), [True] * 3)
        self.assertEqual(b.batch_set_v1(hashes[4:5], pool.indices([4])), [True])
        self.assertEqual(b.batch_exists(hashes[:6]), 3)
        self.assertEqual(b.batch_exists(hashes[3:6]), 0)

    def test_a_batch_is_a_prefix_chain_the_first_false_ends_it(self):
        salt = unique("chain")
        b, pool = self.backend(salt)
        hashes = contract.sglang_page_hashes(list(range(16)), 4)
        for p in range(4):
            self.fill(pool, p, 10 + p)
        self.assertEqual(b.batch_set_v1([hashes[0], hashes[2]], pool.indices([0, 2])), [True, True])
        # get: hashes[1] is missing, so hashes[2] is not loaded though it is held
        sentinel = b"\x5a" * pool.page_bytes
        for p in (4, 5, 6):
            pool.write_page(p, sentinel)
        self.assertEqual(b.batch_get_v1(hashes[:3], pool.indices([4, 5, 6])), [True, False, False])
        self.assertEqual(pool.read_page(6), sentinel)
        # set: another writer holds hashes[1]'s reservation (BUSY), so hashes[3] after it is not stored
        with kv.Client(self.socket, namespaces=[b.root]) as other:
            other.reserve([b.key(hashes[1])])
            self.assertEqual(b.batch_set_v1(hashes[1:4], pool.indices([1, 2, 3])), [False, False, False])
            other.abort(0, 1)
        self.assertFalse(b.exists(hashes[3]))
        self.assertEqual(b.batch_set_v1(hashes[1:4], pool.indices([1, 2, 3])), [True, True, True])
        self.assertEqual(b.batch_exists(hashes), 4)

    def test_batches_longer_than_a_session_request_are_split_and_still_one_chain(self):
        salt = unique("long")
        b, pool = self.backend(salt, pages=140, page_tokens=1, bytes_per_buffer=64)
        hashes = contract.sglang_page_hashes(list(range(140)), 1)
        for p in range(140):
            pool.write_page(p, bytes([p % 251]) * pool.page_bytes)
        self.assertEqual(b.batch_set_v1(hashes, pool.indices(range(140))), [True] * 140)
        self.assertEqual(b.batch_exists(hashes), 140)
        for p in range(140):
            pool.write_page(p, b"\0" * pool.page_bytes)
        self.assertEqual(b.batch_get_v1(hashes, pool.indices(range(140))), [True] * 140)
        self.assertEqual([pool.read_page(p)[0] for p in range(140)], [p % 251 for p in range(140)])

    def test_a_page_of_another_length_is_a_miss_never_copied(self):
        salt = unique("length")
        b, pool = self.backend(salt)
        h = contract.sglang_page_hashes(list(range(4)), 4)[0]
        with kv.Client(self.socket, namespaces=[b.root]) as c:
            with c.reserved([b.key(h)]) as r:
                r.view(0)[:8] = b"shortpag"
                r.set_length(0, pool.page_bytes - 8)
        self.assertEqual(b.batch_exists([h]), 1)
        sentinel = b"\x33" * pool.page_bytes
        pool.write_page(0, sentinel)
        self.assertEqual(b.batch_get_v1([h], pool.indices([0])), [False])
        self.assertEqual(pool.read_page(0), sentinel)
        self.assertIsNone(b.get(h, pool.get_dummy_flat_data_page()))
        self.assertIn("bytes", b.last_error)

    # -- failures --

    def test_no_engine_answers_misses_naming_the_reason_then_reconnects(self):
        directory = tempfile.mkdtemp()
        link = os.path.join(directory, "kvtier.sock")
        b, pool = self.backend(unique("gone"), socket=link)
        h = contract.sglang_page_hashes(list(range(8)), 4)
        self.assertEqual(b.batch_exists(h), 0)
        self.assertEqual(b.batch_get_v1(h, pool.indices([0, 1])), [False, False])
        self.assertEqual(b.batch_set_v1(h, pool.indices([0, 1])), [False, False])
        self.assertFalse(b.exists(h[0]))
        self.assertIsNone(b.get(h[0]))
        self.assertFalse(b.set(h[0], pool.get_data_page(0)))
        self.assertIn(link, b.last_error)
        os.symlink(self.socket, link)   # the engine is back at that path: the next call reconnects
        try:
            self.fill(pool, 0, 1)
            self.fill(pool, 1, 2)
            self.assertEqual(b.batch_set_v1(h, pool.indices([0, 1])), [True, True])
            self.assertEqual(b.batch_exists(h), 2)
        finally:
            b.close()
            os.unlink(link)
            os.rmdir(directory)

    def test_a_failure_mid_batch_leaves_nothing_visible_and_answers_misses(self):
        salt = unique("midway")
        b, pool = self.backend(salt)
        h = contract.sglang_page_hashes(list(range(12)), 4)
        for p in range(3):
            self.fill(pool, p, p)
        self.assertEqual(b.batch_exists(h), 0)   # connected
        client = b._client
        real = client.slot_view
        calls = []

        def failing(slot):
            calls.append(slot)
            if len(calls) == 2:
                raise kv.KvtierError(kv.ERR_DISCONNECTED, "injected in the test")
            return real(slot)
        client.slot_view = failing
        self.assertEqual(b.batch_set_v1(h, pool.indices(range(3))), [False, False, False])
        self.assertIn("injected", b.last_error)
        self.assertEqual(b.batch_exists(h), 0)   # a new session: the first page's reservation was aborted, not committed
        self.assertEqual(b.batch_set_v1(h, pool.indices(range(3))), [True] * 3)

    def test_host_indices_it_cannot_use_answer_misses_not_an_exception_on_the_daemon_thread(self):
        b, pool = self.backend(unique("indices"))
        h = contract.sglang_page_hashes(list(range(8)), 4)
        for bad in (None, pool.indices([0]), pool.indices([0, 99]), "0123"):
            self.assertEqual(b.batch_get_v1(h, bad), [False, False], repr(bad))
            self.assertEqual(b.batch_set_v1(h, bad), [False, False], repr(bad))
        self.assertEqual(b.batch_exists(h), 0)

    # -- what it refuses --

    def test_unsupported_calls_are_named_refusals_never_none(self):
        b, pool = self.backend(unique("refuse"))
        with self.assertRaisesRegex(NotImplementedError, "clear"):
            b.clear()
        with self.assertRaisesRegex(NotImplementedError, "mamba"):
            b.register_mem_host_pool_v2(pool, contract.PoolName.MAMBA)
        caps = b.capabilities()
        self.assertIn("clear", caps["unsupported"])
        self.assertIn("gpu direct", caps["unsupported"])
        self.assertIn("hybrid pools", caps["unsupported"])
        h = contract.sglang_page_hashes(list(range(8)), 4)
        self.fill(pool, 0, 3)
        self.fill(pool, 1, 4)
        kv_transfer = contract.PoolTransfer(name=contract.PoolName.KV, host_indices=pool.indices([0, 1]), keys=h)
        mamba = contract.PoolTransfer(name=contract.PoolName.MAMBA, host_indices=pool.indices([2]), keys=h[1:])
        self.assertEqual(b.batch_set_v2([kv_transfer, mamba]), {"kv": [True, True], "mamba": [False]})
        result = b.batch_exists_v2(h, [kv_transfer])
        self.assertEqual(result.kv_hit_pages, 2)
        result = b.batch_exists_v2(h, [kv_transfer, mamba])
        self.assertEqual((result.kv_hit_pages, result.extra_pool_hit_pages), (0, {"mamba": 0}))
        got = b.batch_get_v2([contract.PoolTransfer(name=contract.PoolName.KV, host_indices=pool.indices([4, 5]), keys=h), mamba])
        self.assertEqual(got, {"kv": [True, True], "mamba": [False]})
        config = driver.storage_config("m", {"kvtier_socket": self.socket})
        config.should_split_heads = True
        with self.assertRaisesRegex(NotImplementedError, "should_split_heads"):
            contract.create_dynamic_backend(config, pool)
        self.assertIsInstance(b.get_stats(), contract.StorageMetrics)

    # -- MLA --

    def test_an_mla_model_stores_one_copy_that_every_rank_reads(self):
        salt = unique("mla")
        rank0, pool0 = self.backend(salt, mla=True, tp_rank=0, tp_size=2, buffers=1, bytes_per_buffer=4096)
        rank1, pool1 = self.backend(salt, mla=True, tp_rank=1, tp_size=2, buffers=1, bytes_per_buffer=4096)
        self.assertEqual(rank0.root, rank1.root)
        h = contract.sglang_page_hashes(list(range(8)), 4)
        self.fill(pool1, 0, 7)
        self.fill(pool1, 1, 8)
        self.assertEqual(rank1.batch_set_v1(h, pool1.indices([0, 1])), [True, True])
        self.assertEqual(rank1.batch_exists(h), 0)     # rank 1 wrote nothing
        expected = [self.fill(pool0, p, 20 + p) for p in (0, 1)]
        self.assertEqual(rank0.batch_set_v1(h, pool0.indices([0, 1])), [True, True])
        self.assertEqual(rank1.batch_get_v1(h, pool1.indices([2, 3])), [True, True])
        self.assertEqual([pool1.read_page(2), pool1.read_page(3)], expected)
        mha = self.backend(salt, mla=False, tp_rank=1, tp_size=2)[0]
        self.assertNotEqual(mha.root, rank1.root)

    # -- the legacy calls --

    def test_the_legacy_calls_take_and_give_tensors(self):
        salt = unique("legacy")
        b, pool = self.backend(salt)
        h = contract.sglang_page_hashes(list(range(12)), 4)
        pages = [self.fill(pool, p, 40 + p) for p in range(3)]
        self.assertTrue(b.set(h[0], pool.get_data_page(0)))
        self.assertTrue(b.batch_set(h[1:3], [pool.get_data_page(4), pool.get_data_page(8)]))
        targets = [pool.get_dummy_flat_data_page() for _ in range(3)]
        got = b.batch_get(h, targets)
        self.assertTrue(all(g is t for g, t in zip(got, targets)))
        for i, t in enumerate(got):
            pool.set_from_flat_data_page(4 * (4 + i), t)
            self.assertEqual(pool.read_page(4 + i), pages[i])
        plain = b.get(h[2])
        self.assertEqual(plain.dtype, self.torch.uint8)
        self.assertEqual(bytes(plain.tolist()), pages[2])
        self.assertEqual(b.batch_get([h[0], "absent", h[2]], None)[1:], [None, None])
        self.assertFalse(b.set("odd", self.torch.zeros(3, dtype=self.torch.uint8)))   # not a page's length

    # -- threads --

    def test_the_prefetch_and_backup_threads_may_call_at_once(self):
        salt = unique("threads")
        b, pool = self.backend(salt, pages=32, page_tokens=1, bytes_per_buffer=1024)
        errors = []

        def work(t):
            try:
                h = contract.sglang_page_hashes([t * 1000 + i for i in range(4)], 1)
                slots = range(t * 4, t * 4 + 4)
                for s in slots:
                    pool.write_page(s, bytes([t + 1]) * pool.page_bytes)
                for _ in range(5):
                    if b.batch_set_v1(h, pool.indices(slots)) != [True] * 4:
                        errors.append("set %d" % t)
                    if b.batch_exists(h) != 4:
                        errors.append("exists %d" % t)
                    if b.batch_get_v1(h, pool.indices(slots)) != [True] * 4:
                        errors.append("get %d" % t)
            except Exception as e:  # a thread's failure is the test's
                errors.append(repr(e))
        threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(errors, [])
        self.assertEqual([pool.read_page(s)[0] for s in range(24)], [s // 4 + 1 for s in range(24)])

    # -- processes --

    def test_two_engine_processes_share_a_prefix_and_another_tenant_sees_none(self):
        directory = tempfile.mkdtemp()
        path = os.path.join(directory, "workload.json")
        system = list(range(1000, 1064))
        requests = [system + [7000 + 100 * r + i for i in range(16 + 8 * r)] for r in range(4)]
        with open(path, "w") as f:
            json.dump({"page_tokens": 16, "page_bytes": 16384, "requests": requests}, f)
        salt = unique("share")

        def play(instance, tenant):
            out = at.run(["-m", "kvtier.drivers.sglang", "play", "--socket", self.socket, "--workload", path, "--instance",
                          instance, "--salt", tenant, "--json"]).stdout
            return json.loads(out.strip().splitlines()[-1])
        a = play("a", salt)
        pages = sum(len(r) // 16 for r in requests)
        self.assertEqual(a["pages"], pages)
        self.assertEqual(a["pages_hit"], 3 * 4)          # its own system prompt, from the second request on
        self.assertEqual(a["pages_stored"], pages - 12)
        b = play("b", salt)
        self.assertEqual((b["pages_hit"], b["pages_verified"], b["pages_corrupt"], b["pages_stored"]), (pages, pages, 0, 0))
        c = play("c", salt + "-other-tenant")
        self.assertEqual(c["pages_hit"], 3 * 4)          # only what it stored itself
        self.assertEqual(c["pages_corrupt"], 0)
        self.assertEqual(c["pages_stored"], pages - 12)

    def test_a_process_killed_mid_batch_set_v1_leaves_nothing_visible_and_nothing_held(self):
        salt = unique("kill")
        b, pool = self.backend(salt)
        h = contract.sglang_page_hashes(list(range(4 * 6)), 4)
        with kv.Client(self.socket) as c:
            before = c.stats_named()
        script = ("import sys; from kvtier.drivers import sglang as d; from kvtier.contracts import sglang as c\n"
                  "pool = d.host_pool(6, 4, %d); b = d.build(%r, 'test-model', %r, pool)\n"
                  "pool.write_page(0, b'x' * pool.page_bytes)\n"
                  "print('RESULT', b.batch_set_v1(%r, pool.indices(range(6))), flush=True)\n"
                  % (pool.page_bytes, self.socket, salt, h))
        env_key = adapter.PAUSE_BEFORE_COMMIT
        os.environ[env_key] = "120"
        try:
            p = at.spawn(["-c", script])
        finally:
            del os.environ[env_key]
        try:
            line = p.stdout.readline()
            self.assertIn("KVTIER_ADAPTER_PAUSED", line, p.stderr.read() if not line else line)
            self.assertEqual(b.batch_exists(h), 0)       # reserved and partly written: not visible
            with kv.Client(self.socket) as c:
                held = c.stats_named()
            self.assertGreaterEqual(held["pages_reserved"] - before["pages_reserved"], 6)
            os.kill(p.pid, signal.SIGKILL)
            p.wait(30)
        finally:
            if p.poll() is None:
                p.kill()
            p.stdout.close()
            p.stderr.close()
        deadline = time.monotonic() + 30 + 5 * at.LEASE_SECONDS
        while True:
            with kv.Client(self.socket) as c:
                after = c.stats_named()
            back = (after["pages_in_use"] == before["pages_in_use"]
                    and after["clients_attached"] == before["clients_attached"]
                    and after["reservations_expired"] + after["pages_aborted"] >= before["reservations_expired"] + before["pages_aborted"] + 6)
            if back or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertTrue(back, "the killed process's reservations never came back: before %s, after %s"
                        % ({k: before[k] for k in ("pages_in_use", "clients_attached", "reservations_expired", "pages_aborted")},
                           {k: after[k] for k in ("pages_in_use", "clients_attached", "reservations_expired", "pages_aborted")}))
        self.assertEqual(b.batch_exists(h), 0)
        for s in range(6):
            self.fill(pool, s, 60 + s)
        self.assertEqual(b.batch_set_v1(h, pool.indices(range(6))), [True] * 6)


if __name__ == "__main__":
    unittest.main()

"""kvtier's vLLM adapter (kvtier.adapters.vllm) driven as vLLM's tiering offloading spec drives a secondary
tier, against a running kvtier engine (KVTIER_SOCKET; the engine module's EngineAdaptersTest starts one).

vLLM's primary region is built as vLLM builds it: a file in /dev/shm mapped shared, wrapped by
torch.frombuffer as int8, viewed as (blocks, row bytes) and handed over as a numpy memoryview.
"""
import ctypes
import hashlib
import json
import logging
import mmap
import os
import select
import signal
import sys
import tempfile
import threading
import time
import unittest
import uuid

import adapter_testing
from adapter_testing import engine_or_skip, spawn, torch_or_skip

import kvtier as kv
from kvtier.adapters import vllm as adapter
from kvtier.contracts import vllm as contract
from kvtier.drivers import vllm as driver
from kvtier.drivers.workload import page_bytes

ROW = 16384  # one primary slot; the engine's pool pages must hold it
MODULE = "kvtier.adapters.vllm"

if not contract.REAL:
    print("vLLM is not importable here: the vLLM adapter runs against kvtier.contracts.vllm, the project's restatement "
          "of its SecondaryTierManager contract and module-path loader")


class Region:
    """vLLM's CPU primary region, made as vLLM makes it (a shared file, torch int8, a numpy memoryview)."""

    def __init__(self, torch, rows, row=ROW, shared=True):
        self.rows, self.row = rows, row
        self.path = None
        if shared:
            self.path = "/dev/shm/vllm_offload_test-%s.mmap" % uuid.uuid4().hex[:12]
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.ftruncate(fd, rows * row)
            self.mm = mmap.mmap(fd, rows * row, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
            os.close(fd)
        else:
            self.mm = mmap.mmap(-1, rows * row)  # anonymous memory: no file the kvtier engine could map
        self.base = torch.frombuffer(memoryview(self.mm), dtype=torch.int8)
        self.view = memoryview(self.base.view(rows, row).numpy())

    def write(self, slot, data):
        self.mm[slot * self.row:(slot + 1) * self.row] = data

    def read(self, slot):
        return self.mm[slot * self.row:(slot + 1) * self.row]

    def close(self):
        self.view.release()
        self.base = None
        self.mm.close()
        if self.path:
            os.unlink(self.path)


def chain(name, n):
    """n OffloadKeys of a chain (block hashes chained from a name), group 0."""
    parent, keys = hashlib.sha256(name.encode()).digest(), []
    for i in range(n):
        parent = hashlib.sha256(parent + i.to_bytes(4, "big")).digest()
        keys.append(contract.make_offload_key(parent, 0))
    return keys


def row_bytes(name, i, row=ROW):
    return page_bytes([i] + list(name.encode()), row)


class VllmAdapterTest(unittest.TestCase):

    def setUp(self):
        self.socket = engine_or_skip(self)
        self.torch = torch_or_skip(self)
        self.salt = "vllm-test-" + uuid.uuid4().hex
        self.closers = []

    def tearDown(self):
        for close in reversed(self.closers):
            close()

    def region(self, rows, row=ROW, shared=True):
        r = Region(self.torch, rows, row, shared)
        self.closers.append(r.close)
        return r

    def tier(self, region, **settings):
        config = {"type": "KvtierSecondaryTier", "module_path": MODULE, "socket": self.socket, "model": "test-model",
                  "tenant_salt": self.salt}
        config.update(settings)
        tier = contract.create_secondary_tier(config, region.view, contract.OffloadingSpecStandIn(engine_id="test"))
        self.closers.append(tier.shutdown)
        return tier

    def run_job(self, tier, kind, keys, rows, job_id=1):
        jobs = driver.Jobs(tier)
        jobs.next_id = job_id
        return jobs.run(kind, keys, rows, "req-%d" % job_id)

    def stats(self):
        with kv.Client(self.socket) as c:
            return c.stats_named()

    # -- loading --

    def test_vllm_s_loader_builds_the_tier_from_its_config_by_module_path(self):
        region = self.region(4)
        tier = self.tier(region)
        self.assertIsInstance(tier, contract.SecondaryTierManager)
        self.assertIsInstance(tier, adapter.KvtierSecondaryTier)
        self.assertEqual("KvtierSecondaryTier", tier.tier_type)
        self.assertEqual((4, ROW), (tier.num_blocks, tier.row_bytes))
        self.assertEqual("engine", tier.copy, "vLLM's primary region is a shared file: the engine copies")
        self.assertIs(contract.get_tier_class({"type": "KvtierSecondaryTier", "module_path": MODULE}), adapter.KvtierSecondaryTier)
        with self.assertRaisesRegex(ValueError, "module_path"):
            contract.get_tier_class({"type": "KvtierSecondaryTier"})

    # -- two engine processes, a third tenant --

    def test_two_vllm_processes_share_a_prefix_and_another_tenant_finds_none(self):
        requests = [[1000 + t for t in range(64)] + [t for t in range(i * 32, i * 32 + 40)] for i in range(4)]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"page_tokens": 16, "page_bytes": ROW, "requests": requests}, f)
        self.closers.append(lambda: os.unlink(f.name))
        summaries = {}
        for instance, salt in (("a", self.salt), ("b", self.salt), ("c", self.salt + "-other")):
            p = spawn(["-m", "kvtier.drivers.vllm", "play", "--socket", self.socket, "--workload", f.name, "--instance", instance,
                       "--model", "test-model", "--salt", salt, "--json"])
            out, err = p.communicate(timeout=120)
            self.assertEqual(0, p.returncode, "%s\n%s" % (out, err))
            summaries[instance] = json.loads(out)
        a, b, c = summaries["a"], summaries["b"], summaries["c"]
        pages = a["pages"]
        self.assertEqual(4 * 6, pages)
        self.assertEqual(3 * 4, a["pages_hit"], "A hits its own shared system prompt (4 pages) on requests 2..4")
        self.assertEqual(pages, b["pages_hit"], "B finds every page A stored")
        self.assertEqual(pages, b["pages_verified"])
        self.assertEqual(0, b["pages_stored"])
        self.assertEqual(a["pages_hit"], c["pages_hit"], "another tenant finds none of A's pages, only its own")
        for s in (a, b, c):
            self.assertEqual(0, s["pages_corrupt"])
            self.assertEqual([], s["refusals"])

    def test_the_driver_counts_a_loaded_page_with_other_bytes_as_corrupt_and_exits_5(self):
        tokens = list(range(7000, 7032))
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"page_tokens": 16, "page_bytes": ROW, "requests": [tokens]}, f)
        self.closers.append(lambda: os.unlink(f.name))
        root = kv.namespace_root("test-model", "vllm-row/%d" % ROW, 0, self.salt)
        keys = [kv.vllm_page_key(root, h, 0) for h in driver.block_hashes([tokens[:16], tokens[16:]])]
        with kv.Client(self.socket, namespaces=[root]) as c:
            with c.reserved(keys[:1]) as r:   # the first page, the right length, other bytes
                r.view(0)[:ROW] = b"\x01" * ROW
                r.set_length(0, ROW)
        p = spawn(["-m", "kvtier.drivers.vllm", "play", "--socket", self.socket, "--workload", f.name, "--instance", "x",
                   "--model", "test-model", "--salt", self.salt, "--json"])
        out, err = p.communicate(timeout=120)
        self.assertEqual(5, p.returncode, "%s\n%s" % (out, err))
        summary = json.loads(out)
        self.assertEqual((1, 0, 0), (summary["pages_corrupt"], summary["pages_verified"], summary["pages_hit"]))

    def check_shared(self, store_copy, load_copy):
        name = uuid.uuid4().hex
        keys = chain(name, 5)
        script = (
            "import sys, mmap, os\n"
            "from kvtier.drivers import vllm as d\n"
            "from kvtier.drivers.workload import page_bytes\n"
            "r = d.Region('store-%s', 5, %d)\n"
            "t = d.make_tier(%r, r, 'test-model', %r, copy=%r)\n"
            "keys = [bytes.fromhex(k) for k in %r]\n"
            "for i in range(5): r.write(i, page_bytes([i] + list(%r.encode()), %d))\n"
            "ok = d.Jobs(t).run('store', keys, list(range(5)), 'a')\n"
            "t.shutdown(); r.close(); sys.exit(0 if ok else 1)\n"
        ) % (name, ROW, self.socket, self.salt, store_copy, [k.hex() for k in keys], name, ROW)
        p = spawn(["-c", script])
        out, err = p.communicate(timeout=120)
        self.assertEqual(0, p.returncode, "%s\n%s" % (out, err))
        region = self.region(8)
        for i in range(8):
            region.write(i, b"\x5a" * ROW)
        tier = self.tier(region, copy=load_copy)
        self.assertEqual(load_copy, tier.copy)
        self.assertEqual([True] * 5, [tier.lookup(k, contract.ReqContext(req_id="b")) for k in keys])
        self.assertTrue(self.run_job(tier, "load", keys, [7, 1, 6, 2, 5]))
        for i, slot in enumerate([7, 1, 6, 2, 5]):
            self.assertEqual(row_bytes(name, i), region.read(slot), "row %d (key %d)" % (slot, i))
        for slot in (0, 3, 4):
            self.assertEqual(b"\x5a" * ROW, region.read(slot), "a slot not in the job is untouched")
        other = self.tier(self.region(2), copy=load_copy, tenant_salt=self.salt + "-other")
        self.assertEqual([False] * 5, [other.lookup(k) for k in keys])

    def test_a_prefix_stored_by_client_copy_loads_byte_exact_by_client_copy_in_another_process(self):
        self.check_shared("client", "client")

    def test_a_prefix_stored_by_engine_copy_loads_byte_exact_by_engine_copy_in_another_process(self):
        self.check_shared("engine", "engine")

    def test_engine_copied_and_client_copied_pages_are_the_same_bytes(self):
        self.check_shared("engine", "client")
        self.check_shared("client", "engine")

    def test_in_a_1_1_session_the_engine_copies_from_the_region_registered_by_path(self):
        region = self.region(3)
        for i in range(3):
            region.write(i, row_bytes("by-path", i))
        tier = self.tier(region, copy="engine", protocol_minor=1)
        self.assertEqual(1, tier._worker_client.session_minor, "HOST_FILE: the region named by its path")
        keys = chain(uuid.uuid4().hex, 3)
        self.assertTrue(self.run_job(tier, "store", keys, [0, 1, 2]))
        for i in range(3):
            region.write(i, bytes(ROW))
        self.assertTrue(self.run_job(tier, "load", keys, [2, 0, 1], job_id=2))
        self.assertEqual([row_bytes("by-path", i) for i in range(3)], [region.read(s) for s in (2, 0, 1)])

    # -- kill -9 mid-store --

    def check_kill_mid_store(self, copy):
        keys = chain(uuid.uuid4().hex, 6)
        before = self.stats()
        engine_id = "kill-" + uuid.uuid4().hex[:8]
        # a killed process cannot remove its region file: this test does
        self.closers.append(lambda: os.path.exists("/dev/shm/vllm_offload_%s.mmap" % engine_id)
                            and os.unlink("/dev/shm/vllm_offload_%s.mmap" % engine_id))
        script = (
            "import sys\n"
            "from kvtier.drivers import vllm as d\n"
            "r = d.Region(%r, 6, %d)\n"
            "t = d.make_tier(%r, r, 'test-model', %r, copy=%r)\n"
            "for i in range(6): r.write(i, bytes([i + 1]) * %d)\n"
            "d.Jobs(t).run('store', [bytes.fromhex(k) for k in %r], list(range(6)), 'a')\n"
        ) % (engine_id, ROW, self.socket, self.salt, copy, ROW, [k.hex() for k in keys])
        os.environ[adapter.PAUSE_ENV] = "1"   # spawn passes this process's environment on
        try:
            p = spawn(["-c", script])
        finally:
            del os.environ[adapter.PAUSE_ENV]
        try:
            deadline = time.monotonic() + 60
            line = ""
            while "paused before commit" not in line:
                if p.poll() is not None:
                    self.fail("the storing process ended before it paused: %s" % p.stderr.read())
                ready, _, _ = select.select([p.stdout], [], [], 1.0)
                if ready:
                    line = p.stdout.readline()
                self.assertLess(time.monotonic(), deadline, "the storing process never paused before its commit")
            self.assertEqual([kv.PAGE_BUSY] * 6, self.try_reserve(keys), "the paused store holds its 6 reservations")
            os.kill(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()
            p.stderr.close()
        tier = self.tier(self.region(6), copy="client")
        self.assertEqual([False] * 6, [tier.lookup(k) for k in keys], "nothing of the killed store is visible")
        deadline = time.monotonic() + 20 * adapter_testing.LEASE_SECONDS + 10
        while True:
            after = self.stats()
            if after["reservations_expired"] >= before["reservations_expired"] + 6:
                break
            self.assertLess(time.monotonic(), deadline, "the killed process's 6 reservations never lapsed: reservations_expired "
                            "%d -> %d" % (before["reservations_expired"], after["reservations_expired"]))
            time.sleep(0.05)
        self.assertEqual([False] * 6, [tier.lookup(k) for k in keys], "still nothing visible after the lease")
        self.assertEqual([kv.PAGE_RESERVED] * 6, self.try_reserve(keys), "nothing of the killed store is held any more")

    def try_reserve(self, keys):
        """The statuses another process gets reserving these keys (its reservations aborted at once)."""
        root = kv.namespace_root("test-model", "vllm-row/%d" % ROW, 0, self.salt)
        with kv.Client(self.socket, namespaces=[root]) as c:
            c.reserve([kv.vllm_offload_page_key(root, k) for k in keys])
            try:
                return [c.slot_status(i) for i in range(len(keys))]
            finally:
                c.abort(0, len(keys))

    def test_a_process_killed_mid_store_by_client_copy_leaves_nothing_visible_and_nothing_held(self):
        self.check_kill_mid_store("client")

    def test_a_process_killed_mid_store_by_engine_copy_leaves_nothing_visible_and_nothing_held(self):
        self.check_kill_mid_store("engine")

    # -- failures --

    def test_no_engine_at_the_socket_gives_misses_and_failed_jobs_with_the_reason(self):
        region = self.region(2)
        missing = "/dev/shm/kvtier-no-engine-%s.sock" % uuid.uuid4().hex[:8]
        with self.assertLogs("kvtier.adapters.vllm", logging.WARNING) as logs:
            tier = self.tier(region, socket=missing, reconnect_seconds=0)
            keys = chain("none", 2)
            self.assertIs(False, tier.lookup(keys[0]))
            self.assertIn(missing, tier.last_error)
            self.assertFalse(self.run_job(tier, "store", keys, [0, 1]))
            self.assertFalse(self.run_job(tier, "load", keys, [0, 1], job_id=2))
        self.assertTrue(any(missing in line for line in logs.output), logs.output)
        self.assertTrue(tier._thread.is_alive(), "the worker thread carries on")

    def test_a_session_that_went_away_is_reopened_on_a_later_call(self):
        region = self.region(2)
        for i in range(2):
            region.write(i, row_bytes("again", i))
        tier = self.tier(region, reconnect_seconds=0, copy="client")
        keys = chain(uuid.uuid4().hex, 2)
        self.assertTrue(self.run_job(tier, "store", keys, [0, 1]))
        tier._lookup_client.close()   # as if the engine had dropped the session
        tier._worker_client.close()
        self.assertIs(False, tier.lookup(keys[0]), "the call that finds the session gone misses")
        self.assertIn("closed", tier.last_error)
        self.assertIs(True, tier.lookup(keys[0]), "the next call reconnects")
        self.assertFalse(self.run_job(tier, "load", keys, [1, 0], job_id=2))
        self.assertTrue(self.run_job(tier, "load", keys, [1, 0], job_id=3))
        self.assertEqual(row_bytes("again", 0), region.read(1))

    def test_a_row_larger_than_the_pool_s_pages_is_refused_at_construction_naming_both_sizes(self):
        with kv.Client(self.socket) as c:
            page = c.page_size
        region = self.region(1, row=page + 4096)
        with self.assertRaises(adapter.PageTooSmall) as e:
            self.tier(region)
        self.assertIn(str(page), str(e.exception))
        self.assertIn(str(page + 4096), str(e.exception))

    def check_wrong_length_is_a_miss(self, copy):
        region = self.region(2)
        tier = self.tier(region, copy=copy)
        keys = chain(uuid.uuid4().hex, 2)
        kkeys = [kv.vllm_offload_page_key(tier.root, k) for k in keys]
        with kv.Client(self.socket, namespaces=[tier.root]) as c:
            with c.reserved(kkeys) as r:
                for i, page in r.pages():
                    page[:ROW] = b"\x11" * ROW
                    r.set_length(i, ROW if i == 0 else ROW - 1)
        region.write(0, b"\x5a" * ROW)
        region.write(1, b"\x5a" * ROW)
        self.assertEqual([True, True], [tier.lookup(k) for k in keys])
        self.assertFalse(self.run_job(tier, "load", keys, [0, 1]))
        self.assertIn("holds %d bytes" % (ROW - 1), tier.last_error)
        self.assertEqual(b"\x5a" * ROW, region.read(1), "a page of the wrong length is never copied")
        self.assertTrue(self.run_job(tier, "load", keys[:1], [0], job_id=2))
        self.assertEqual(b"\x11" * ROW, region.read(0))

    def test_a_page_of_the_wrong_length_is_a_miss_never_copied_by_the_client(self):
        self.check_wrong_length_is_a_miss("client")

    def test_a_page_of_the_wrong_length_is_a_miss_never_copied_by_the_engine(self):
        self.check_wrong_length_is_a_miss("engine")

    def test_a_block_id_outside_the_primary_region_fails_the_job_and_writes_nothing(self):
        region = self.region(2)
        tier = self.tier(region, copy="client")
        keys = chain(uuid.uuid4().hex, 2)
        self.assertFalse(self.run_job(tier, "store", keys, [0, 2]))
        self.assertIn("block id 2", tier.last_error)
        self.assertEqual([False, False], [tier.lookup(k) for k in keys])
        self.assertFalse(self.run_job(tier, "store", keys, [0], job_id=2))
        self.assertIn("2 keys for 1 block ids", tier.last_error)

    def test_a_key_another_process_is_writing_ends_the_store_chain_there(self):
        region = self.region(4)
        for i in range(4):
            region.write(i, row_bytes("busy", i))
        tier = self.tier(region, copy="client")
        keys = chain(uuid.uuid4().hex, 4)
        with kv.Client(self.socket, namespaces=[tier.root]) as other:
            other.reserve([kv.vllm_offload_page_key(tier.root, keys[2])])
            self.assertEqual(kv.PAGE_RESERVED, other.slot_status(0))
            self.assertFalse(self.run_job(tier, "store", keys, [0, 1, 2, 3]))
            self.assertIn("key 2 of 4", tier.last_error)
            self.assertEqual([True, True, False, False], [tier.lookup(k) for k in keys],
                             "the keys before the busy one are stored, none after it")
            other.abort(0, 1)

    def test_a_missing_key_ends_the_load_chain_and_later_rows_stay_untouched(self):
        region = self.region(3)
        tier = self.tier(region, copy="client")
        keys = chain(uuid.uuid4().hex, 3)
        for i in range(3):
            region.write(i, row_bytes("gap", i))
        self.assertTrue(self.run_job(tier, "store", [keys[0], keys[2]], [0, 2]))
        for i in range(3):
            region.write(i, b"\x5a" * ROW)
        self.assertFalse(self.run_job(tier, "load", keys, [0, 1, 2], job_id=2))
        self.assertIn("holds 1 of the 3 keys", tier.last_error)
        self.assertEqual(b"\x5a" * ROW, region.read(2), "a key after the missing one is not loaded")

    def test_unsupported_and_bad_settings_are_refused_naming_them(self):
        region = self.region(2)
        with self.assertRaisesRegex(contract.Unsupported, "gpu_direct"):
            self.tier(region, gpu_direct=True)
        anonymous = self.region(2, shared=False)
        with self.assertRaisesRegex(contract.Unsupported, "copy=engine"):
            self.tier(anonymous, copy="engine")
        tier = self.tier(anonymous)
        self.assertEqual("client", tier.copy, "auto falls back to the client copy, and says why")
        self.assertFalse(tier.capabilities()["engine_copy"]["supported"])
        self.assertFalse(tier.capabilities()["gpu_direct"]["supported"])
        with self.assertRaisesRegex(ValueError, "'copy' is 'gpu'"):
            self.tier(region, copy="gpu")
        with self.assertRaisesRegex(ValueError, r"unknown kvtier tier setting\(s\) \['sockett'\]"):
            self.tier(region, sockett="x")
        with self.assertRaisesRegex(ValueError, "'max_batch' is 0"):
            self.tier(region, max_batch=0)
        with self.assertRaisesRegex(ValueError, "'reconnect_seconds' is 'soon'"):
            self.tier(region, reconnect_seconds="soon")
        with self.assertRaisesRegex(ValueError, "'protocol_minor' is 'x'"):
            self.tier(region, protocol_minor="x")
        saved = os.environ.pop("KVTIER_SOCKET", None)
        try:
            with self.assertRaisesRegex(ValueError, "'socket' is missing and KVTIER_SOCKET"):
                self.tier(region, socket="")
        finally:
            if saved is not None:
                os.environ["KVTIER_SOCKET"] = saved
        with self.assertRaisesRegex(ValueError, "'model' is missing"):
            contract.create_secondary_tier({"type": "KvtierSecondaryTier", "module_path": MODULE, "socket": self.socket},
                                           region.view, object())

    # -- threads and shutdown --

    def test_lookups_from_several_threads_while_jobs_run_answer_their_type(self):
        region = self.region(16)
        for i in range(16):
            region.write(i, row_bytes("threads", i))
        tier = self.tier(region, copy="client", max_batch=4)
        keys = chain(uuid.uuid4().hex, 16)
        answers, errors = [], []

        def look():
            try:
                for _ in range(20):
                    for k in keys:
                        answers.append(tier.lookup(k))
            except Exception as e:  # any exception out of lookup is a defect
                errors.append(e)

        threads = [threading.Thread(target=look) for _ in range(3)]
        for t in threads:
            t.start()
        self.assertTrue(self.run_job(tier, "store", keys, list(range(16))))
        for t in threads:
            t.join()
        self.assertEqual([], errors)
        self.assertTrue(all(a in (True, False, None) for a in answers))
        self.assertEqual([True] * 16, [tier.lookup(k) for k in keys])

    def test_a_key_being_stored_answers_none_until_its_job_finishes(self):
        region = self.region(2)
        for i in range(2):
            region.write(i, row_bytes("inflight", i))
        tier = self.tier(region, copy="client")
        keys = chain(uuid.uuid4().hex, 2)
        with tier._worker_lock:   # holds the worker before it starts the job, as a slow store would
            tier.submit_store(contract.JobMetadata(job_id=5, keys=keys[:1], block_ids=[0], is_promotion=False,
                                                   req_context=contract.ReqContext(req_id="s")))
            self.assertIsNone(tier.lookup(keys[0]), "in flight: vLLM is to ask again")
            self.assertIs(False, tier.lookup(keys[1]))
        tier.drain_jobs()
        self.assertEqual([(5, True)], [(r.job_id, r.success) for r in tier.get_finished()])
        self.assertIs(True, tier.lookup(keys[0]))

    def test_against_a_vllm_whose_lookup_answers_its_enum_the_answers_map_to_it(self):
        import enum
        LookupResult = enum.Enum("LookupResult", "MISS HIT HIT_PENDING RETRY")
        region = self.region(1)
        region.write(0, row_bytes("enum", 0))
        tier = self.tier(region, copy="client")
        keys = chain(uuid.uuid4().hex, 2)
        self.assertTrue(self.run_job(tier, "store", keys[:1], [0]))
        saved, contract.LOOKUP_RESULT = contract.LOOKUP_RESULT, LookupResult
        try:
            self.assertIs(LookupResult.HIT, tier.lookup(keys[0]))
            self.assertIs(LookupResult.MISS, tier.lookup(keys[1]))
            with tier._worker_lock:
                tier.submit_store(contract.JobMetadata(job_id=2, keys=keys[1:], block_ids=[0], is_promotion=False,
                                                       req_context=contract.ReqContext(req_id="s")))
                self.assertIs(LookupResult.RETRY, tier.lookup(keys[1]))
            tier.drain_jobs()
        finally:
            contract.LOOKUP_RESULT = saved
        self.assertIs(True, tier.lookup(keys[1]))

    def test_shutdown_finishes_queued_jobs_and_lets_vllm_unmap_its_region(self):
        region = self.region(3)
        for i in range(3):
            region.write(i, row_bytes("shutdown", i))
        tier = self.tier(region)
        keys = chain(uuid.uuid4().hex, 3)
        tier.submit_store(contract.JobMetadata(job_id=9, keys=keys, block_ids=[0, 1, 2], is_promotion=False,
                                               req_context=contract.ReqContext(req_id="s")))
        tier.shutdown()
        self.assertEqual([(9, True)], [(r.job_id, r.success) for r in tier.get_finished()])
        self.assertIs(False, tier.lookup(keys[0]), "a shut-down tier answers misses")
        region.view.release()
        region.base = None
        region.mm.close()   # BufferError while the tier still held vLLM's view
        self.assertTrue(region.mm.closed)
        self.closers.remove(region.close)
        os.unlink(region.path)


if __name__ == "__main__":
    unittest.main()

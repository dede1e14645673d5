"""Tests of the Python binding: `python3 -m unittest discover -s clients/python`.

Keys and names need only the library. The end-to-end tests need a running engine with IPC on:
they run when $KVTIER_SOCKET names its socket (the Java test NativeClientEndToEndTest starts an
engine and sets it) and are skipped otherwise, saying so. EntriesTest also needs the engine to copy
every commit to an L3 tier (the engine's default write-through with a tier configured;
spec_engine.py does it in memory)."""

import mmap
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kvtier_client as kv  # noqa: E402

SOCKET = os.environ.get("KVTIER_SOCKET")
# set when the engine waits for the prefetch a LOOKUP of 4 or more L3 pages starts (policy.prefetch wait-complete)
PREFETCH_WAITS = os.environ.get("KVTIER_PREFETCH_WAITS") == "1"
NO_ENGINE = ("no engine here: set KVTIER_SOCKET to the ipc socket of a running `kvtier serve` (in ./mvnw verify, "
             "engine/.../ipc/NativeClientEndToEndTest runs these against a real engine)")


class KeysTest(unittest.TestCase):
    """The vectors of docs/keys.md, through the C library."""

    MODEL = "meta-llama/Llama-3.1-8B-Instruct"

    def check(self, root, keys, expected_root, expected_keys):
        self.assertEqual(root.hex(), expected_root)
        self.assertEqual([k.hex() for k in keys], expected_keys)

    def test_basic(self):
        root = kv.namespace_root(self.MODEL, "bf16/page16/layer-first/tp1", 0, "")
        self.check(root, kv.page_keys(root, range(40), 16, include_partial=True),
                   "0d8d5b6bec68e56e0fbbc9d39dcc0d8a",
                   ["a306ce302f3ed8d29a2b9b308d8a004e", "de9d1e0f01328e3c5d91aee32a7a6c74",
                    "8b6ea36129dca0a99cd04d48645f869d"])

    def test_tenant_salt(self):
        root = kv.namespace_root(self.MODEL, "bf16/page16/layer-first/tp1", 0, "tenant-a")
        self.check(root, kv.page_keys(root, range(40), 16, include_partial=True),
                   "02f0fbc3dbf959653fa7440cc0d3540b",
                   ["111b2ca5a20b5eb5192b6a75129009f1", "2308a94ef5b62283e4b1e317eb1599ab",
                    "3e693d53b1b9dc29970298f01a01e3d5"])

    def test_tp_rank(self):
        root = kv.namespace_root(self.MODEL, "bf16/page16/layer-first/tp2", 1)
        self.check(root, kv.page_keys(root, range(40), 16, include_partial=True),
                   "f6e18b73798c10bacc34f49cd4d8b89c",
                   ["b3a2734ccb8c8046474967b920b473fa", "fdeca7856aee0e9d83b1955a665d08dc",
                    "9bb1242cc2e1ab29b2150b676bfe5581"])

    def test_large_ids(self):
        keys = kv.compute_keys("Qwen/Qwen3-8B", "fp8/page4", 3, "", [0, 151643, 4294967295, 7, 9], 4,
                               include_partial=True)
        self.assertEqual([k.hex() for k in keys],
                         ["21d0ab516d55c6518418204168398d40", "59ea6f9fca8bf76b7bf844e318fcee24"])

    def test_partial_page_left_out_by_default(self):
        root = kv.namespace_root(self.MODEL, "bf16/page16/layer-first/tp1")
        self.assertEqual(len(kv.page_keys(root, range(40), 16)), 2)
        self.assertEqual(kv.page_keys(root, range(40), 16), kv.page_keys(root, range(40), 16, True)[:2])


class NamesAndErrorsTest(unittest.TestCase):

    def test_names(self):
        self.assertEqual(kv.error_name(kv.STALE_REQUEST_ID), "STALE_REQUEST_ID")
        self.assertEqual(kv.error_name(kv.NOT_ALLOWED), "NOT_ALLOWED")
        self.assertEqual(kv.page_status_name(kv.PAGE_PINNED_FROM_L3), "PINNED_FROM_L3")
        self.assertEqual(kv.page_status_name(kv.PAGE_LOADED), "LOADED")
        self.assertEqual(kv.page_status_name(kv.PAGE_COPIED), "COPIED")
        self.assertEqual(kv.register_detail_name(kv.REGISTER_TOO_SMALL), "TOO_SMALL")
        self.assertEqual(kv.register_detail_name(kv.REGISTER_PAGE_SIZE), "PAGE_SIZE")
        self.assertEqual(kv.register_detail_name(0), "UNKNOWN")

    def test_unsupported_and_fd_handle(self):
        self.assertEqual(kv.error_name(kv.ERR_UNSUPPORTED), "ERR_UNSUPPORTED")
        self.assertEqual(kv.fd_handle(7), b"\x07" + bytes(63))
        self.assertEqual(kv.fd_handle(0x01020304)[:4], b"\x04\x03\x02\x01")
        self.assertEqual(kv.PROTOCOL_MINOR, 3)

    def test_crc32c(self):
        # the check value, and iSCSI's vectors (RFC 3720, B.4)
        self.assertEqual(kv.crc32c(b"123456789"), 0xE3069283)
        self.assertEqual(kv.crc32c(bytes(32)), 0x8A9136AA)
        self.assertEqual(kv.crc32c(bytes(range(32))), 0x46DD794E)

    def test_kv_sizes(self):
        self.assertEqual(kv.slot_bytes((3, 2, 4, 2, 8, 2)), 4 * 2 * 8 * 2)
        self.assertEqual(kv.block_bytes((3, 2, 4, 2, 8, 2)), 3 * 2 * 128)
        self.assertEqual(kv.block_bytes((3, 0, 4, 2, 8, 2)), 0)

    def test_no_engine_at_the_socket(self):
        with self.assertRaises(kv.KvtierError) as caught:
            kv.Client("/nonexistent/kvtier.sock")
        self.assertEqual(caught.exception.code, kv.ERR_SYSTEM)
        self.assertIn("/nonexistent/kvtier.sock", str(caught.exception))

    def test_arguments_checked_before_connecting(self):
        with self.assertRaises(kv.KvtierError) as caught:
            kv.Client("/nonexistent/kvtier.sock", namespaces=[bytes(16)] * 17)
        self.assertEqual(caught.exception.code, kv.ERR_ARGUMENT)
        with self.assertRaises(kv.KvtierError) as caught:
            kv.Client("/nonexistent/kvtier.sock", minor_version=4)
        self.assertEqual(caught.exception.code, kv.ERR_ARGUMENT)
        self.assertIn("minor version 4", str(caught.exception))
        with self.assertRaises(ValueError):
            kv.Client("/nonexistent/kvtier.sock", namespaces=[b"short"])
        with self.assertRaises(ValueError) as refused:
            kv.Client("/nonexistent/kvtier.sock", wait="nap")
        self.assertIn("'nap' is none of backoff, awake", str(refused.exception))


@unittest.skipUnless(SOCKET, NO_ENGINE)
class EndToEndTest(unittest.TestCase):

    def setUp(self):
        # a namespace of this test's own: new keys even on an engine that served earlier runs
        self.root = kv.namespace_root("python-binding-test", "bytes/page4", 0, "%d-%d" % (os.getpid(), time.time_ns()))
        self.client = kv.Client(SOCKET, namespaces=[self.root], max_keys=32)

    def tearDown(self):
        self.client.close()

    def keys(self, first_token, pages):
        return kv.page_keys(self.root, range(first_token, first_token + 4 * pages), 4)

    def test_reserve_write_commit_acquire_bytes_equal(self):
        c = self.client
        keys = self.keys(100, 3)
        payloads = [bytes((i * 37 + j) % 251 for j in range(c.page_size)) for i in range(3)]
        with c.reserved(keys) as r:
            self.assertEqual(r.result.result_count, 3)
            for i, page in r.pages():
                page[:] = payloads[i]
        self.assertEqual(r.commit_result.result_count, 3)
        self.assertEqual([c.slot_status(i) for i in range(3)], [kv.PAGE_COMMITTED] * 3)

        self.assertEqual(c.lookup(keys, first_slot=8).pool_pages, 3)
        with c.pinned(keys, first_slot=8) as pages:
            self.assertEqual(pages.result.from_pool, 3)
            self.assertEqual([bytes(p) for p in pages], payloads)
            kept = pages[0]
        with self.assertRaises(ValueError):
            kept[0]  # released with the pins

    def test_awake_wait_round_trips_and_batches(self):
        # KVT_WAIT_AWAKE: spins while the engine is awake, then sleeps; every answer still arrives, one-key
        # round trips and batches alike, and after an idle spell in which the engine went to sleep
        c = kv.Client(SOCKET, namespaces=[self.root], max_keys=32, wait="awake")
        try:
            keys = self.keys(900, 8)
            payloads = [bytes((i * 11 + j) % 253 for j in range(c.page_size)) for i in range(8)]
            with c.reserved(keys) as r:
                self.assertEqual(r.result.result_count, 8)
                for i, page in r.pages():
                    page[:] = payloads[i]
            self.assertEqual(r.commit_result.result_count, 8)
            for round_trip in range(2000):
                self.assertEqual(c.lookup(keys[:1], first_slot=16).pool_pages, 1)
            time.sleep(0.2)  # past any engine's spin budget: its next answer comes after a sleep
            self.assertEqual(c.lookup(keys, first_slot=8).pool_pages, 8)
            with c.pinned(keys, first_slot=8) as pages:
                self.assertEqual([bytes(p) for p in pages], payloads)
        finally:
            c.close()

    def test_short_payload_and_abort(self):
        c = self.client
        keys = self.keys(200, 2)
        with c.reserved(keys) as r:
            r.view(0)[:5] = b"hello"
            r.set_length(0, 5)
            r.view(1)[:3] = b"abc"
            r.set_length(1, 3)
        with c.pinned(keys) as pages:
            self.assertEqual(bytes(pages[0][:5]), b"hello")
            self.assertEqual(bytes(pages[1][:3]), b"abc")

        aborted = self.keys(300, 1)
        with self.assertRaises(RuntimeError):
            with c.reserved(aborted) as r:
                r.view(0)[:4] = b"lost"
                raise RuntimeError("the model failed mid-write")
        self.assertEqual(c.lookup(aborted).pool_pages, 0)

    def test_stale_request_id_is_refused(self):
        c = self.client
        keys = self.keys(400, 2)
        c.lookup(keys)
        c.next_request_id = c.next_request_id - 1
        with self.assertRaises(kv.KvtierError) as caught:
            c.lookup(keys, first_slot=4)
        self.assertEqual(caught.exception.code, kv.STALE_REQUEST_ID)
        self.assertEqual(caught.exception.result.status, kv.STALE_REQUEST_ID)
        c.next_request_id = c.next_request_id + 1
        self.assertEqual(c.lookup(keys, first_slot=4).pool_pages, 0)

    def test_namespace_denied_and_slot_range(self):
        c = self.client
        keys = self.keys(500, 1)
        with self.assertRaises(kv.KvtierError) as caught:
            c.lookup(keys, ns=3)
        self.assertEqual(caught.exception.code, kv.NAMESPACE_DENIED)
        with self.assertRaises(kv.KvtierError) as caught:
            c.request(kv.OP_RELEASE, first_slot=c.max_keys, count=1)
        self.assertEqual(caught.exception.code, kv.SLOT_RANGE)

    # 3 layers of K and V, blocks of 4 tokens of 2 heads x 8 two-byte elements: S = 128, pages of 768 bytes
    SHAPE = (3, 2, 4, 2, 8, 2)
    BLOCKS, S, TOKEN = 6, 128, 32

    def kv_file(self, size):
        """A host KV buffer: a new file of this user's, mapped shared, at a path that fits the 64-byte handle."""
        directory = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="kvt-py-", suffix=".kv", dir=directory)
        self.addCleanup(lambda: os.path.exists(path) and os.unlink(path))
        os.ftruncate(fd, size)
        m = mmap.mmap(fd, size)
        os.close(fd)
        self.addCleanup(m.close)
        return path, m

    def test_device_save_then_load_bytes_equal(self):
        c = self.client
        S, n = self.S, self.BLOCKS
        # The writer's KV contiguous ((l x 2 + t) x n + b) x S from offset 128; the reader's interleaved,
        # one allocation per layer ((b x 2 + t) x S), the layers 64 bytes apart in one file.
        wpath, w = self.kv_file(128 + 6 * n * S)
        w[:] = bytes((i * 13 + 5) % 256 for i in range(len(w)))
        layer = 2 * n * S + 64
        rpath, r = self.kv_file(3 * layer)
        r[:] = b"\x5a" * len(r)
        expected = bytearray(r)

        writer = c.register_host_files(kv.ARRANGEMENT_CONTIGUOUS, self.SHAPE, n, [wpath], [128])
        with self.assertRaises(kv.KvtierError) as caught:  # one block more than the file holds
            c.register_host_files(kv.ARRANGEMENT_CONTIGUOUS, self.SHAPE, n + 1, [wpath], [128])
        self.assertEqual(caught.exception.code, kv.INVALID)
        self.assertEqual(caught.exception.detail, kv.REGISTER_TOO_SMALL)
        self.assertEqual(caught.exception.result.result_count, kv.REGISTER_TOO_SMALL)
        reader = c.register_host_files(kv.ARRANGEMENT_INTERLEAVED, self.SHAPE, n, [rpath] * 3, [i * layer for i in range(3)])
        self.assertEqual(reader, writer + 1)

        keys = self.keys(600, 2)
        self.assertEqual(c.reserve(keys, first_slot=0).result_count, 2)
        saved, valid = [4, 0], [4, 3]
        result = c.device_save(writer, 0, saved, valid)
        self.assertEqual(result.result_count, 2)
        self.assertEqual([c.slot_status(i) for i in range(2)], [kv.PAGE_COMMITTED] * 2)

        def writer_block(l, t, b, tokens):
            at = 128 + ((l * 2 + t) * n + b) * S
            return bytes(w[at:at + tokens * self.TOKEN])

        loaded = [2, 5]
        with c.pinned(keys, first_slot=4) as pages:
            self.assertEqual(len(pages), 2)
            for k, page in enumerate(pages):  # page-first: slot (l x 2 + t) at (l x 2 + t) x S, the rest zero
                for l in range(3):
                    for t in range(2):
                        slot = bytes(page[(l * 2 + t) * S:(l * 2 + t + 1) * S])
                        copied = valid[k] * self.TOKEN
                        self.assertEqual(slot[:copied], writer_block(l, t, saved[k], valid[k]))
                        self.assertEqual(slot[copied:], bytes(S - copied))
            result = c.device_load(reader, 4, loaded, valid)
            self.assertEqual(result.result_count, 2)
            self.assertEqual([c.slot_status(4 + i) for i in range(2)], [kv.PAGE_COPIED] * 2)
        for k in range(2):
            for l in range(3):
                for t in range(2):
                    at = l * layer + (loaded[k] * 2 + t) * S
                    expected[at:at + valid[k] * self.TOKEN] = writer_block(l, t, saved[k], valid[k])
        self.assertEqual(bytes(r), bytes(expected))

        with self.assertRaises(kv.KvtierError) as caught:  # a layout id never given
            c.device_load(reader + 5, 4, [0], [1])
        self.assertEqual((caught.exception.code, caught.exception.detail), (kv.INVALID, 0))

    def test_stats(self):
        self.assertGreater(len(self.client.stats()), 0)

    # -- protocol 1.3 --

    def test_lookup_and_lock_then_commit_and_release(self):
        c = self.client
        if c.session_minor < 3:  # an engine of 1.2 (spec_engine.py): the library refuses both before sending
            with self.assertRaises(kv.KvtierError) as caught:
                c.lookup_and_lock(self.keys(600, 2))
            self.assertEqual(caught.exception.code, kv.ERR_UNSUPPORTED)
            return
        keys = self.keys(600, 5)
        payloads = [bytes((i * 53 + j) % 241 for j in range(c.page_size)) for i in range(5)]
        with c.reserved(keys[:2]) as r:
            for i, page in r.pages():
                page[:] = payloads[i]

        locked = c.lookup_and_lock(keys, first_slot=8)
        self.assertEqual((locked.result_count, locked.pool_pages, locked.from_pool), (2, 3, 2))
        self.assertEqual([c.slot_status(8 + i) for i in range(5)], [kv.PAGE_PINNED] * 2 + [kv.PAGE_RESERVED] * 3)
        self.assertEqual([bytes(c.slot_view(8 + i)) for i in range(2)], payloads[:2])
        for i in range(2, 5):
            c.slot_view(8 + i)[:] = payloads[i]
        done = c.commit_and_release(8, [c.page_size] * 5)
        self.assertEqual((done.result_count, done.pool_pages), (3, 2))
        self.assertEqual([c.slot_status(8 + i) for i in range(5)], [kv.PAGE_NONE] * 2 + [kv.PAGE_COMMITTED] * 3)
        with c.pinned(keys, first_slot=16) as pages:
            self.assertEqual([bytes(p) for p in pages], payloads)

        limited = c.lookup_and_lock(self.keys(700, 3), first_slot=0, reserve_limit=1)
        self.assertEqual((limited.result_count, limited.pool_pages), (0, 1))
        self.assertEqual([c.slot_status(i) for i in range(3)], [kv.PAGE_RESERVED, kv.PAGE_MISS, kv.PAGE_MISS])
        with self.assertRaises(kv.KvtierError) as caught:  # the slot holds a reservation
            c.lookup_and_lock(None, first_slot=0, count=3)
        self.assertEqual(caught.exception.code, kv.ERR_ARGUMENT)
        self.assertEqual(c.abort(0, 3).result_count, 1)
        with self.assertRaises(kv.KvtierError) as caught:
            c.lookup_and_lock(self.keys(700, 3), reserve_limit=4)
        self.assertEqual(caught.exception.code, kv.ERR_ARGUMENT)

    # -- protocol 1.2 --

    def test_a_1_2_session_maps_the_welcomes_descriptors(self):
        c = self.client
        # 1.3 from kvtier's engine, 1.2 from spec_engine.py: descriptors either way
        self.assertIn(c.engine_minor, (2, 3))
        self.assertEqual((c.session_minor, c.descriptors_mapped), (c.engine_minor, True))
        self.assertEqual(c.ring_path, "")  # the ring has no name
        self.assertTrue(c.pool_path.startswith("/"))
        ring_bytes = -(-(4096 + 2 * c.ring_capacity) // mmap.PAGESIZE) * mmap.PAGESIZE  # as the kernel maps it
        with open("/proc/self/maps") as f:
            memfds = [line.split() for line in f if "/memfd:" in line]
        sizes = [int(end, 16) - int(start, 16) for start, end in (fields[0].split("-") for fields in memfds)]
        self.assertIn(ring_bytes, sizes, "no memfd_create mapping of the ring's %d bytes: %s" % (ring_bytes, memfds))

    def test_minor_1_opens_the_files_by_path(self):
        c = kv.Client(SOCKET, namespaces=[self.root], max_keys=8, minor_version=1)
        try:
            self.assertIn(c.engine_minor, (2, 3))
            self.assertEqual((c.session_minor, c.descriptors_mapped), (1, False))
            ring = c.ring_path
            st = os.stat(ring)
            self.assertEqual(st.st_mode & 0o777, 0o600, ring)
            keys = self.keys(700, 2)
            with c.reserved(keys) as r:
                for i, page in r.pages():
                    page[:6] = b"minor1"
                    r.set_length(i, 6)
            with c.pinned(keys) as pages:
                self.assertEqual([bytes(p[:6]) for p in pages], [b"minor1"] * 2)
                self.assertEqual([c.payload_length(i) for i in range(2)], [6, 6])
            fd = os.memfd_create("kvt-py")
            self.addCleanup(os.close, fd)
            with self.assertRaises(kv.KvtierError) as caught:
                c.send_descriptors([fd])
            self.assertEqual(caught.exception.code, kv.ERR_UNSUPPORTED)
            with self.assertRaises(kv.KvtierError) as caught:  # the engine refuses HOST_FD below 1.2
                c.register_kv(kv.HANDLE_HOST_FD, kv.ARRANGEMENT_CONTIGUOUS, self.SHAPE, 1, [(0, kv.fd_handle(0))])
            self.assertEqual((caught.exception.code, caught.exception.detail), (kv.INVALID, kv.REGISTER_HANDLE_KIND))
        finally:
            c.close()
        deadline = time.monotonic() + 10
        while os.path.exists(ring) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertFalse(os.path.exists(ring), "the engine unlinks a 1.1 client's ring file when it goes")

    def memfd(self, size):
        """A host KV buffer with no name: a memfd_create file, mapped shared."""
        fd = os.memfd_create("kvt-py-kv")
        self.addCleanup(os.close, fd)
        os.ftruncate(fd, size)
        m = mmap.mmap(fd, size)
        self.addCleanup(m.close)
        return fd, m

    def test_host_fd_save_then_load_every_byte(self):
        c = self.client
        S, n, T = self.S, self.BLOCKS, self.TOKEN
        wfd, w = self.memfd(256 + 6 * n * S)
        w[:] = bytes((i * 29 + 11) % 256 for i in range(len(w)))
        rfd, r = self.memfd(6 * (n * S + 64))
        r[:] = b"\xa5" * len(r)
        expected = bytearray(r)
        saved_before = c.stats_named()["device_blocks_saved"]
        writer = c.register_host_fds(kv.ARRANGEMENT_CONTIGUOUS, self.SHAPE, n, [wfd], [256])
        # the reader one tensor (l, t) after another, 64 bytes apart, all in one descriptor: one number
        bases = [i * (n * S + 64) for i in range(6)]
        reader = c.register_host_fds(kv.ARRANGEMENT_SEPARATE, self.SHAPE, n, [rfd] * 6, bases)
        self.assertEqual(reader, writer + 1)
        self.assertEqual(c.descriptors_pending, 0)

        keys = self.keys(800, 3)
        saved, valid, loaded = [3, 5, 1], [4, 4, 2], [2, 0, 4]
        self.assertEqual(c.reserve(keys).result_count, 3)
        self.assertEqual(c.device_save(writer, 0, saved, valid).result_count, 3)
        self.assertEqual(c.stats_named()["device_blocks_saved"] - saved_before, 3)

        def block(l, t, b):
            at = 256 + ((l * 2 + t) * n + b) * S
            return bytes(w[at:at + S])

        with c.pinned(keys, first_slot=4) as pages:
            for k, page in enumerate(pages):
                self.assertEqual(c.payload_length(4 + k), kv.block_bytes(self.SHAPE))
                want = b"".join(block(l, t, saved[k])[:valid[k] * T] + bytes(S - valid[k] * T) for l in range(3) for t in range(2))
                self.assertEqual(bytes(page[:len(want)]), want)
                self.assertEqual(bytes(page[len(want):]), bytes(c.page_size - len(want)))
            self.assertEqual(c.device_load(reader, 4, loaded, valid).result_count, 3)
        for k in range(3):
            for l in range(3):
                for t in range(2):
                    at = bases[l * 2 + t] + loaded[k] * S
                    expected[at:at + valid[k] * T] = block(l, t, saved[k])[:valid[k] * T]
        self.assertEqual(bytes(r), bytes(expected))

    def test_descriptor_numbers_are_taken_by_a_registration(self):
        c = self.client
        fd, _ = self.memfd(6 * self.BLOCKS * self.S)
        first = c.send_descriptors([fd, fd])
        self.assertEqual((c.send_descriptors([fd]), c.descriptors_pending), (first + 2, 3))
        with self.assertRaises(kv.KvtierError) as caught:  # refused SHAPE: the numbers it names are taken all the same
            c.register_kv(kv.HANDLE_HOST_FD, kv.ARRANGEMENT_CONTIGUOUS, (3, 3, 4, 2, 8, 2), self.BLOCKS, [(0, kv.fd_handle(first))])
        self.assertEqual(caught.exception.detail, kv.REGISTER_SHAPE)
        self.assertEqual(c.descriptors_pending, 2)
        with self.assertRaises(kv.KvtierError) as caught:
            c.register_kv(kv.HANDLE_HOST_FD, kv.ARRANGEMENT_CONTIGUOUS, self.SHAPE, self.BLOCKS, [(0, kv.fd_handle(first))])
        self.assertEqual(caught.exception.detail, kv.REGISTER_OPEN_FAILED)
        layout = c.register_kv(kv.HANDLE_HOST_FD, kv.ARRANGEMENT_CONTIGUOUS, self.SHAPE, self.BLOCKS, [(0, kv.fd_handle(first + 1))])
        self.assertGreaterEqual(layout, 1)
        self.assertEqual(c.descriptors_pending, 1)
        with self.assertRaises(kv.KvtierError) as caught:  # more than 64 sent and not named: refused before it is sent
            c.send_descriptors([fd] * 16)
            c.send_descriptors([fd] * 16)
            c.send_descriptors([fd] * 16)
            c.send_descriptors([fd] * 16)
        self.assertEqual(caught.exception.code, kv.ERR_ARGUMENT)
        self.assertEqual(c.descriptors_pending, 49)
        self.assertEqual(c.lookup(self.keys(900, 1)).result_count, 0)  # the client goes on

    def test_payload_length_and_trailer_of_a_pinned_page(self):
        c = self.client
        keys = self.keys(1000, 3)
        lengths = [1, 777, c.page_size]
        with c.reserved(keys) as r:
            for i, page in r.pages():
                page[:] = b"\xff" * c.page_size  # the engine zeroes what lies past the committed length
                r.set_length(i, lengths[i])
        with c.pinned(keys, first_slot=4) as pages:
            self.assertEqual([c.payload_length(4 + i) for i in range(3)], lengths)
            self.assertEqual([bytes(c.payload(4 + i)) for i in range(3)], [b"\xff" * n for n in lengths])
            self.assertEqual(bytes(pages[0][1:]), bytes(c.page_size - 1))
            tag = int.from_bytes(self.root[:8], "big") or 1
            for i in range(3):
                t = c.page_trailer(c.slot_page(4 + i))
                self.assertEqual((t.key, t.payload_length, t.namespace_tag, t.page_size, t.frame_version),
                                 (keys[i], lengths[i], tag, c.page_size, 2))
                self.assertEqual(t.payload_crc32c, kv.crc32c(b"\xff" * lengths[i]))
                self.assertTrue(c.verify_payload(c.slot_page(4 + i)))
        with self.assertRaises(kv.KvtierError) as caught:
            c.payload_length(4)  # released
        self.assertEqual(caught.exception.code, kv.ERR_ARGUMENT)

    def test_stats_values_named_by_the_counters_region(self):
        c = self.client
        values = c.stats()
        counters = {x.id: x for x in c.counters()}
        self.assertTrue(all(i in counters for i in range(len(values))), "every STATS value is named")
        self.assertTrue(all(x.type in (kv.COUNTER_GROWS, kv.COUNTER_GAUGE, kv.COUNTER_FACT) and x.name for x in counters.values()))
        before = c.stats_named()
        self.assertEqual(c.counter_id("pages_committed"), [i for i, x in counters.items() if x.name == "pages_committed"][0])
        with c.reserved(self.keys(1100, 2)):
            pass
        after = c.stats_named()
        self.assertEqual(after["pages_committed"] - before["pages_committed"], 2)
        self.assertGreater(after["requests"], before["requests"])
        self.assertEqual(c.counter_value(c.counter_id("pages_committed")), after["pages_committed"])
        with self.assertRaises(kv.KvtierError):
            c.counter_id("no such counter")

    def test_examples(self):
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")
        for example in ("save_and_load.py", "shared_prefix.py"):
            with self.subTest(example=example):
                run = subprocess.run([sys.executable, os.path.join(here, example), "--socket", SOCKET],
                                     capture_output=True, text=True, timeout=300)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


@unittest.skipUnless(SOCKET, NO_ENGINE)
class EntriesTest(unittest.TestCase):
    """Section 4: an OK answer has an entry for every slot of the request's range, written by that
    request (a pin PINNED or PINNED_FROM_L3, a reservation RESERVED, anything else the request's outcome
    with page -1 and generation 0), and each operation's Result Count."""

    def setUp(self):
        self.root = kv.namespace_root("python-entries-test", "bytes/page4", 0, "%d-%d" % (os.getpid(), time.time_ns()))
        self.c = kv.Client(SOCKET, namespaces=[self.root], max_keys=16)
        self.k = kv.page_keys(self.root, range(5000, 5032), 4)

    def tearDown(self):
        self.c.close()

    def check(self, what, result, first, statuses, result_count, with_page=()):
        c = self.c
        self.assertEqual((result.status, result.first_slot, result.entry_count, result.result_count),
                         (0, first, len(statuses), result_count), what)
        got = [c.slot_status(first + i) for i in range(len(statuses))]
        self.assertEqual([kv.page_status_name(s) for s in got], [kv.page_status_name(s) for s in statuses], what)
        for i, status in enumerate(statuses):
            page, gen = c.slot_page(first + i), c.slot_generation(first + i)
            if status in (kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3, kv.PAGE_RESERVED, kv.PAGE_COPIED) or i in with_page:
                self.assertGreaterEqual(page, 0, "%s: slot %d" % (what, first + i))
            else:
                self.assertEqual((page, gen), (-1, 0), "%s: slot %d" % (what, first + i))

    def test_every_operation(self):
        c, k = self.c, self.k
        N, P, L3, R, C, I, M = (kv.PAGE_NONE, kv.PAGE_PINNED, kv.PAGE_PINNED_FROM_L3, kv.PAGE_RESERVED, kv.PAGE_COMMITTED,
                                kv.PAGE_INVALID, kv.PAGE_MISS)
        self.check("LOOKUP of new keys", c.lookup(k[:4]), 0, [N] * 4, 0)
        self.check("RESERVE", c.reserve(k[:4]), 0, [R] * 4, 4)
        self.check("RESERVE of held reservations", c.reserve(k[:4]), 0, [R] * 4, 4)
        self.check("RESERVE of keys being written", c.reserve(k[:2], first_slot=8), 8, [kv.PAGE_BUSY] * 2, 0)
        for i in range(4):
            c.slot_view(i)[:] = bytes([i + 1]) * c.page_size
        self.check("COMMIT, one length 0", c.commit(0, [50, 60, 0, c.page_size]), 0, [C, C, I, C], 3)
        self.check("COMMIT again", c.commit(0, [1] * 4), 0, [N] * 4, 0)
        self.check("ABORT of nothing", c.abort(0, 4), 0, [N] * 4, 0)
        r = c.lookup(k[:4])
        self.check("LOOKUP: a prefix of 2", r, 0, [N] * 4, 2)
        self.assertEqual((r.pool_pages, r.l3_pages), (2, 0))
        r = c.acquire(k[:4], first_slot=4)
        self.check("ACQUIRE", r, 4, [P, P, M, M], 2)
        self.assertEqual((r.from_pool, r.from_l3), (2, 0))
        self.check("ACQUIRE of held pins", c.acquire(None, first_slot=4, count=4), 4, [P, P, M, M], 2)
        self.check("LOOKUP over held pins", c.lookup(None, first_slot=4, count=4), 4, [P, P, N, N], 2)
        c.reserve(k[4:5], first_slot=10)
        self.check("RELEASE", c.release(4, 4), 4, [N] * 4, 2)
        self.check("RELEASE of a reservation: kept", c.release(10, 2), 10, [R, N], 0)
        self.check("ABORT", c.abort(10, 2), 10, [N, N], 1)
        r = c.flush()
        self.assertEqual((r.result_count, r.entry_count), (0, 0))
        self.check("EVICT", c.evict(k[:2]), 0, [N, N], 2)
        r = c.lookup(k[:2])
        self.assertEqual((r.pool_pages, r.l3_pages, r.result_count), (0, 2, 2))
        r = c.acquire(k[:2], first_slot=4)
        self.check("ACQUIRE from L3", r, 4, [L3, L3], 2)
        self.assertEqual((r.from_pool, r.from_l3), (0, 2))
        self.assertEqual([c.payload_length(4), c.payload_length(5)], [50, 60])
        r = c.acquire(None, first_slot=4, count=2)
        self.check("ACQUIRE again: each load counted once", r, 4, [P, P], 2)
        self.assertEqual((r.from_pool, r.from_l3), (2, 0))
        c.release(4, 2)
        self.check("EVICT again", c.evict(k[:2]), 0, [N, N], 2)
        self.check("PREFETCH", c.prefetch(k[:2]), 0, [N, N], 2)
        deadline = time.monotonic() + 10
        while c.lookup(k[:2]).pool_pages < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        r = c.acquire(k[:2], first_slot=4)
        self.check("ACQUIRE after a PREFETCH", r, 4, [L3, L3], 2)
        self.assertEqual(r.from_l3, 2)
        r = c.backup(k[:2])
        self.assertLessEqual(r.result_count, 2)
        self.check("BACKUP", r, 0, [N, N], r.result_count)
        self.check("EVICT of pinned pages", c.evict(None, first_slot=4, count=2), 4, [P, P], 0)
        c.release(4, 2)
        c.acquire(k[1:2], first_slot=13)
        self.check("ACQUIRE whose prefix ends at once", c.acquire([k[7], k[1]], first_slot=12), 12, [M, M], 0)
        self.check("the later slot's pin went with it", c.release(13, 1), 13, [N], 0)
        with self.assertRaises(kv.KvtierError) as caught:
            c.lookup(k[:1], ns=9)
        self.assertEqual((caught.exception.result.entry_count, caught.exception.result.result_count), (0, 0))
        r = c.request(kv.OP_STATS)
        self.assertEqual((r.entry_count, r.result_count), (0, len(c.stats())))
        with self.assertRaises(kv.KvtierError) as caught:  # slots never given a key
            c.reserve(None, first_slot=14, count=2)
        self.assertEqual(caught.exception.code, kv.ERR_ARGUMENT)

        # device operations: a pin stays PINNED in a save; a load's pinned slot whose page is not a
        # block of the shape is INVALID with its page
        shape, blocks = EndToEndTest.SHAPE, EndToEndTest.BLOCKS
        fd = os.memfd_create("kvt-py-entries")
        self.addCleanup(os.close, fd)
        os.ftruncate(fd, 6 * blocks * EndToEndTest.S)
        layout = c.register_host_fds(kv.ARRANGEMENT_CONTIGUOUS, shape, blocks, [fd])
        c.acquire(k[3:4], first_slot=4)
        c.reserve(k[4:6], first_slot=5)
        self.check("DEVICE_SAVE", c.device_save(layout, 4, [0, 1, blocks, 2], [4] * 4), 4, [P, C, I, N], 1)
        c.acquire(k[4:5], first_slot=5)
        self.check("DEVICE_LOAD", c.device_load(layout, 4, [3, 4, 5], [4] * 3), 4, [I, kv.PAGE_COPIED, N], 1, with_page=(0,))
        c.release(4, 2)

    @unittest.skipUnless(PREFETCH_WAITS, "the engine does not wait for a LOOKUP's prefetch: set KVTIER_PREFETCH_WAITS=1 for one "
                                         "with policy.prefetch=wait-complete and an L3")
    def test_a_lookup_whose_prefetch_is_waited_for(self):
        c, k = self.c, self.k[:4]
        with c.reserved(k, first_slot=8):
            pass
        c.flush()
        self.assertEqual(c.evict(k).result_count, 4)
        r = c.lookup(k)
        self.check("LOOKUP whose prefetch was waited for", r, 0, [kv.PAGE_LOADED] * 4, 4)
        self.assertEqual((r.pool_pages, r.l3_pages), (4, 0))
        r = c.acquire(None, first_slot=0, count=4)
        self.check("ACQUIRE of what the LOOKUP loaded", r, 0, [kv.PAGE_PINNED_FROM_L3] * 4, 4)
        self.assertEqual(r.from_l3, 4)
        c.release(0, 4)


if __name__ == "__main__":
    unittest.main()

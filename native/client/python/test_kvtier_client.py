"""Tests of the Python binding: `python3 -m unittest discover -s native/client/python`.

Keys and names need only the library. The end-to-end tests need a running engine with IPC on:
they run when $KVTIER_SOCKET names its socket (the Java test IpcClientEndToEndTest starts an
engine and sets it) and are skipped otherwise, saying so."""

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
        with self.assertRaises(ValueError):
            kv.Client("/nonexistent/kvtier.sock", namespaces=[b"short"])


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

    def test_examples(self):
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")
        for example in ("save_and_load.py", "shared_prefix.py"):
            with self.subTest(example=example):
                run = subprocess.run([sys.executable, os.path.join(here, example), "--socket", SOCKET],
                                     capture_output=True, text=True, timeout=300)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main()

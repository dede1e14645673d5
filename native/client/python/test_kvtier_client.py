"""Tests of the Python binding: `python3 -m unittest discover -s native/client/python`.

Keys and names need only the library. The end-to-end tests need a running engine with IPC on:
they run when $KVTIER_SOCKET names its socket (the Java test IpcClientEndToEndTest starts an
engine and sets it) and are skipped otherwise, saying so."""

import os
import subprocess
import sys
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

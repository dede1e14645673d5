"""The C client and this binding against spec_engine.py, a scripted engine written from
docs/ipc-protocol.md alone (NOT kvtier's engine, which IpcClientEndToEndTest drives): the live paths
of the handshake, the mappings, both rings wrapping with padding, the doorbell and the futex, and
what the real engine cannot be made to do on demand (refuse a HELLO, disconnect a client)."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kvtier_client as kv  # noqa: E402

C_TEST = os.path.join(HERE, os.pardir, "build", "kvtier_client_test")


class SpecEngine:
    def __init__(self, *options):
        self.dir = tempfile.TemporaryDirectory(prefix="kvt-spec-")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "spec_engine.py"), self.dir.name, *options],
                                     stdout=subprocess.PIPE, text=True)
        self.socket = self.proc.stdout.readline().strip()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        self.dir.cleanup()


class SpecEngineTest(unittest.TestCase):

    def test_c_client_end_to_end_with_small_rings(self):
        # 1 KiB rings: requests and responses wrap with padding records every dozen requests, and a
        # REGISTER_KV of 6 allocations (512 bytes) still fits wherever the ring's position is
        with SpecEngine("--ring-bytes", "1024", "--clients", "2") as engine:
            run = subprocess.run([C_TEST, "--socket", engine.socket], capture_output=True, text=True, timeout=120)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertIn("end to end against", run.stdout)
            self.assertIn("device operations against", run.stdout)

    def test_python_end_to_end_and_examples(self):
        # rings of 1 KiB: room for a REGISTER_KV of 3 allocations (296 bytes) wherever the ring's position is
        with SpecEngine("--ring-bytes", "1024") as engine:
            env = dict(os.environ, KVTIER_SOCKET=engine.socket)
            run = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_kvtier_client.EndToEndTest"],
                                 cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertNotIn("skipped", run.stderr)

    def test_refused_hello_surfaces_its_code_and_message(self):
        with SpecEngine("--refuse", str(kv.NOT_ALLOWED)) as engine:
            with self.assertRaises(kv.KvtierError) as caught:
                kv.Client(engine.socket)
            self.assertEqual(caught.exception.code, kv.NOT_ALLOWED)
            self.assertIn("refused by the spec engine", str(caught.exception))

    def test_disconnect_reason_surfaces_and_the_client_stays_down(self):
        with SpecEngine("--disconnect-after", "2") as engine:
            c = kv.Client(engine.socket, max_keys=8)
            keys = kv.page_keys(kv.namespace_root("m", "l"), range(8), 4)
            c.lookup(keys)
            c.lookup(keys)
            with self.assertRaises(kv.KvtierError) as caught:
                c.lookup(keys)
            self.assertEqual(caught.exception.code, kv.TIMED_OUT)
            with self.assertRaises(kv.KvtierError) as caught:
                c.lookup(keys)
            self.assertEqual(caught.exception.code, kv.ERR_DISCONNECTED)
            c.close()  # sends nothing more; frees the client

    def test_an_engine_that_dies_mid_request_is_reported_gone(self):
        with SpecEngine("--die-on-request", "2") as engine:
            c = kv.Client(engine.socket, max_keys=8)
            keys = kv.page_keys(kv.namespace_root("m", "l"), range(8), 4)
            c.lookup(keys)
            with self.assertRaises(kv.KvtierError) as caught:
                c.lookup(keys)  # never answered: the engine's process ends
            self.assertEqual(caught.exception.code, kv.ERR_ENGINE_GONE)
            self.assertIn("closed the socket", str(caught.exception))
            with self.assertRaises(kv.KvtierError) as caught:
                c.lookup(keys)
            self.assertEqual(caught.exception.code, kv.ERR_DISCONNECTED)
            c.close()

    def test_ring_file_and_pool_mapped_zero_copy(self):
        with SpecEngine("--clients", "1") as engine:
            with kv.Client(engine.socket, max_keys=4) as c:
                keys = kv.page_keys(kv.namespace_root("m", "l"), range(4), 4)
                r = c.reserve(keys)
                self.assertEqual(r.result_count, 1)
                view = c.slot_view(0)
                view[:4] = b"zero"
                # the same bytes are in the pool file the engine created, at Data Offset + page x Frame
                with open(os.path.join(engine.dir.name, "pool"), "rb") as f:
                    f.seek(4096 + c.slot_page(0) * 4160)
                    self.assertEqual(f.read(4), b"zero")
                view.release()
                c.abort(0, 1)


if __name__ == "__main__":
    unittest.main()

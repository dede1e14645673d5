"""The C client and this binding against spec_engine.py, a scripted engine written from
docs/ipc-protocol.md alone (NOT kvtier's engine, which NativeClientEndToEndTest drives): the live paths
of the handshake (a 1.2 WELCOME's descriptors, and the paths of an engine before 1.2), the mappings,
both rings wrapping with padding, the doorbell and the futex, DESCRIPTORS and HOST_FD, the entries of
every operation, and what the real engine cannot be made to do on demand (refuse a HELLO, disconnect a
client, answer against section 4)."""

import mmap
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kvtier_client as kv  # noqa: E402
import spec_engine  # noqa: E402

C_TEST = os.path.join(HERE, os.pardir, "c", "build", "kvtier_client_test")


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

    def run_c(self, *args):
        run = subprocess.run([C_TEST, *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn(", 0 failed", run.stdout)
        return run.stdout

    def test_c_client_end_to_end(self):
        # 4 KiB rings: requests and responses wrap with padding records every few dozen requests, and a
        # REGISTER_KV of 8 allocations (656 bytes) fits the Max Message Length a quarter ring allows
        with SpecEngine("--ring-bytes", "4096", "--prefetch-waits") as engine:
            out = self.run_c("--socket", engine.socket, "--prefetch-waits")
            for scenario in ("end to end against", "files by descriptors", "device operations against", "HOST_FD buffers against",
                             "entries against", "a 1.1 session against", "combined requests against"):
                self.assertIn(scenario, out)

    def test_c_client_against_an_engine_before_1_2_opens_the_paths(self):
        with SpecEngine("--ring-bytes", "4096", "--engine-minor", "1") as engine:
            out = self.run_c("--socket", engine.socket, "--engine-minor", "1", "basic", "device")
            self.assertIn("session 1.1, files by paths", out)
            self.assertIn("device operations against", out)

    def test_python_end_to_end_and_examples(self):
        # rings of 1 KiB: room for a REGISTER_KV of 6 allocations (512 bytes, Max Message Length for 30 slots)
        with SpecEngine("--ring-bytes", "1024", "--prefetch-waits") as engine:
            env = dict(os.environ, KVTIER_SOCKET=engine.socket, KVTIER_PREFETCH_WAITS="1")
            run = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_kvtier_client.EndToEndTest",
                                  "test_kvtier_client.EntriesTest"],
                                 cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertNotIn("skipped", run.stderr)
            self.assertIn("test_every_operation", run.stderr)
            self.assertIn("test_a_lookup_whose_prefetch_is_waited_for", run.stderr)

    def test_python_against_an_engine_before_1_2(self):
        with SpecEngine("--engine-minor", "1", "--clients", "1") as engine:
            with kv.Client(engine.socket, max_keys=4) as c:
                self.assertEqual((c.engine_minor, c.session_minor, c.descriptors_mapped), (0, 1, False))
                self.assertTrue(os.path.exists(c.ring_path))
                keys = kv.page_keys(kv.namespace_root("m", "old"), range(4), 4)
                with c.reserved(keys) as r:
                    r.view(0)[:3] = b"old"
                    r.set_length(0, 3)
                with c.pinned(keys) as pages:
                    self.assertEqual((bytes(pages[0][:3]), c.payload_length(0)), (b"old", 3))
                with self.assertRaises(kv.KvtierError) as caught:
                    c.send_descriptors([0])
                self.assertEqual(caught.exception.code, kv.ERR_UNSUPPORTED)

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

    def test_an_answer_breaking_the_entry_rules_ends_the_client(self):
        with SpecEngine("--short-entries", "--clients", "1") as engine:
            c = kv.Client(engine.socket, max_keys=8)
            keys = kv.page_keys(kv.namespace_root("m", "short"), range(8), 4)
            with self.assertRaises(kv.KvtierError) as caught:
                c.lookup(keys)  # 2 keys, 1 entry
            self.assertEqual(caught.exception.code, kv.ERR_PROTOCOL)
            self.assertIn("section 4", str(caught.exception))
            with self.assertRaises(kv.KvtierError) as caught:
                c.lookup(keys)
            self.assertEqual(caught.exception.code, kv.ERR_DISCONNECTED)
            c.close()

    def test_pool_mapped_zero_copy_through_its_descriptor(self):
        with SpecEngine("--clients", "1") as engine:
            with kv.Client(engine.socket, max_keys=4) as c:
                self.assertTrue(c.descriptors_mapped)
                keys = kv.page_keys(kv.namespace_root("m", "l"), range(4), 4)
                r = c.reserve(keys)
                self.assertEqual(r.result_count, 1)
                view = c.slot_view(0)
                view[:4] = b"zero"
                # the same bytes are in the pool file the engine created, at Data Offset + page x Frame
                with open(os.path.join(engine.dir.name, "pool"), "rb") as f:
                    f.seek(spec_engine.DATA_OFFSET + c.slot_page(0) * spec_engine.FRAME)
                    self.assertEqual(f.read(4), b"zero")
                view.release()
                c.abort(0, 1)


class SpecEngineConformanceTest(unittest.TestCase):
    """The stand-in itself against section 2, over a raw socket: what the clients never send."""

    def hello(self, engine, minor=2):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(engine.socket)
        s.sendall(struct.pack("<IHHIIII", 0x4C4C4548, 1, minor, 8, 0, os.getpid(), 0))
        data, fds, _, _ = socket.recv_fds(s, 4096, 4)
        return s, data, fds

    def test_welcome_carries_three_descriptors_and_a_malformed_descriptors_message_ends_the_client(self):
        with SpecEngine("--clients", "1") as engine:
            s, data, fds = self.hello(engine)
            try:
                self.assertEqual(struct.unpack_from("<III", data, 60), (3, 3, 0))  # engine minor, descriptors, reserved
                self.assertEqual(len(fds), 3)
                self.assertEqual(struct.unpack_from("<I", data, 72 + 4 + len(engine.dir.name) + 5 + 4
                                                    + len(engine.dir.name) + 9)[0], 0, "the ring's path is empty")
                ring = mmap.mmap(fds[2], os.fstat(fds[2]).st_size)
                self.assertEqual(ring[0:8], b"KVTRING1")
                # Count 2 with one descriptor attached
                socket.send_fds(s, [struct.pack("<II", 0x4446564B, 2)], [fds[0]])
                deadline = time.monotonic() + 10
                while struct.unpack_from("<I", ring, 448)[0] == 0 and time.monotonic() < deadline:
                    time.sleep(0.01)
                self.assertEqual(struct.unpack_from("<I", ring, 448)[0], kv.MALFORMED)
                s.settimeout(10)
                self.assertEqual(s.recv(1), b"", "the engine closed the socket")
                ring.close()
            finally:
                s.close()
                for fd in fds:
                    os.close(fd)


if __name__ == "__main__":
    unittest.main()

"""What the adapter tests (test_adapter_*.py) share: the engine they run against, torch, and other
engine processes.

The engine's EngineAdaptersTest starts a kvtier engine with short leases and sets KVTIER_SOCKET (its
IPC socket), KVTIER_CLIENT_LIB, KVTIER_POOL (its pool file) and KVTIER_LEASE_MS. Without KVTIER_SOCKET
the tests that need an engine skip, saying so.
"""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

SOCKET = os.environ.get("KVTIER_SOCKET")
LEASE_SECONDS = int(os.environ.get("KVTIER_LEASE_MS", "1000")) / 1000.0


def engine_or_skip(test: unittest.TestCase) -> str:
    """The engine's socket, or a skip naming how to get one."""
    if not SOCKET:
        test.skipTest("no engine: KVTIER_SOCKET is not set (the engine module's EngineAdaptersTest sets it)")
    return SOCKET


def torch_or_skip(test: unittest.TestCase):
    """The torch module, or a skip naming the Debian package (it installs for /usr/bin/python3)."""
    try:
        import torch
        return torch
    except ImportError:
        test.skipTest("torch is not importable by %s: apt-get install python3-torch (then run /usr/bin/python3)" % sys.executable)


def spawn(args, **kwargs) -> subprocess.Popen:
    """Another engine process: this interpreter running ``args`` (e.g. ``["-m", "kvtier.drivers.sglang", ...]``)
    in clients/python, with this process's environment; its output piped."""
    env = dict(os.environ)
    env["PYTHONPATH"] = HERE + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.Popen([sys.executable] + list(args), cwd=HERE, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def run(args, timeout: float = 120) -> subprocess.CompletedProcess:
    """``spawn`` to completion; raises AssertionError with its output when it fails."""
    p = spawn(args)
    out, err = p.communicate(timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("%s exited %d\nstdout:\n%s\nstderr:\n%s" % (args, p.returncode, out, err))
    return subprocess.CompletedProcess(args, p.returncode, out, err)

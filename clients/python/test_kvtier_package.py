"""The package as a user installs it: `pip install --no-index ./clients/python` into a new virtual
environment with the project's own build backend (no index, pip's default build isolation), the C
library found beside the package, the version the project's; and `python -m kvtier` refusing clearly
when there is no engine. KVTIER_SOCKET (set by the engine's NativeClientEndToEndTest) adds
`python -m kvtier stats` and `lookup` from the installed package against a real engine."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
LIBRARY = os.path.join(ROOT, "clients", "c", "build", "libkvtier_client.so")
sys.path.insert(0, HERE)
from kvtier import _project  # noqa: E402

SOCKET = os.environ.get("KVTIER_SOCKET")


def _venv_or_skip(test, where):
    """A new virtual environment with pip in ``where``; skips naming the Debian package when venv or
    ensurepip is missing."""
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError:
        test.skipTest("python3 -m venv or ensurepip is missing: apt-get install python3-venv")
    run = subprocess.run([sys.executable, "-m", "venv", where], capture_output=True, text=True)
    if run.returncode != 0:
        test.skipTest("python3 -m venv failed (%s): apt-get install python3-venv" % run.stderr.strip()[-200:])
    return os.path.join(where, "bin", "python")


def _pip_install(python, source, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k not in ("KVTIER_CLIENT_LIB", "PYTHONPATH")}
    return subprocess.run([python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", source],
                          capture_output=True, text=True, cwd=cwd, env=env)


class VersionTest(unittest.TestCase):
    def test_maven_versions_become_pep440(self):
        self.assertEqual(_project.pep440_version("0.1.0-SNAPSHOT"), "0.1.0.dev0")
        self.assertEqual(_project.pep440_version("1.2.3"), "1.2.3")
        self.assertEqual(_project.pep440_version("1.0-rc2"), "1.0rc2")
        with self.assertRaisesRegex(ValueError, "'1.0-weird' has no PEP 440 form"):
            _project.pep440_version("1.0-weird")


@unittest.skipUnless(os.path.exists(LIBRARY), "the C client library is not built: make -C clients/c")
class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kvtier-pip-")
        cls.python = None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def _installed(self):
        if InstallTest.python is None:
            python = _venv_or_skip(self, os.path.join(self.tmp, "venv"))
            run = _pip_install(python, os.path.join(ROOT, "clients", "python"), self.tmp)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            InstallTest.python = python
        return InstallTest.python

    def _run(self, *args):
        env = {k: v for k, v in os.environ.items() if k not in ("KVTIER_CLIENT_LIB", "PYTHONPATH")}
        return subprocess.run([self._installed(), *args], capture_output=True, text=True, cwd=self.tmp, env=env)

    def test_installed_package_imports_with_its_own_library_and_the_project_version(self):
        run = self._run("-c", "import kvtier, kvtier.adapters, kvtier_client; "
                              "print(kvtier.__version__); print(kvtier.__file__); print(kvtier.library_path()); "
                              "kvtier.load_library(); print(kvtier_client is kvtier._client)")
        self.assertEqual(run.returncode, 0, run.stderr)
        version, package, library, same = run.stdout.split()
        self.assertEqual(version, _project.pom_version(os.path.join(ROOT, "pom.xml")))
        site = os.path.dirname(package)
        self.assertFalse(site.startswith(ROOT), "imported from the checkout, not the venv: " + package)
        self.assertEqual(library, os.path.join(site, "libkvtier_client.so"))
        self.assertEqual(same, "True")

    def test_installed_package_carries_the_engine_adapters_their_contracts_and_drivers(self):
        # The venv has no torch and no engine package: the adapters import all the same (torch is optional).
        run = self._run("-c", "import kvtier.adapters.sglang as s, kvtier.adapters.vllm as v, kvtier.adapters.lmcache as l; "
                              "import kvtier.contracts.sglang, kvtier.contracts.vllm, kvtier.contracts.lmcache; "
                              "import kvtier.drivers.sglang, kvtier.drivers.vllm, kvtier.drivers.lmcache; "
                              "print(s.KvtierHiCacheStorage.__name__, v.KvtierSecondaryTier.__name__, l.KvtierL2Connector.__name__); "
                              "print(s.__file__)")
        self.assertEqual(run.returncode, 0, run.stderr)
        names, where = run.stdout.split("\n")[:2]
        self.assertEqual(names, "KvtierHiCacheStorage KvtierSecondaryTier KvtierL2Connector")
        self.assertFalse(where.startswith(ROOT), "imported from the checkout, not the venv: " + where)
        for engine in ("sglang", "vllm", "lmcache"):
            helped = self._run("-m", "kvtier.drivers." + engine, "play", "--help")
            self.assertEqual(helped.returncode, 0, helped.stderr)
            self.assertIn("--workload", helped.stdout)

    def test_installed_cli_says_when_no_engine_is_there(self):
        run = self._run("-m", "kvtier", "stats", "--socket", os.path.join(self.tmp, "absent.sock"))
        self.assertEqual(run.returncode, 3, run.stdout + run.stderr)
        self.assertIn("no engine socket at " + os.path.join(self.tmp, "absent.sock"), run.stderr)

    @unittest.skipUnless(SOCKET, "no engine here: KVTIER_SOCKET names a running engine's socket (NativeClientEndToEndTest)")
    def test_installed_cli_reads_a_running_engines_stats_and_looks_up(self):
        run = self._run("-m", "kvtier", "stats", "--socket", SOCKET, "--json")
        self.assertEqual(run.returncode, 0, run.stderr)
        import json
        stats = json.loads(run.stdout)
        self.assertTrue(stats, "no counter named")
        self.assertTrue(all(isinstance(v, int) for v in stats.values()))
        model = "cli-check-%d" % os.getpid()
        lookup = ("-m", "kvtier", "lookup", "--socket", SOCKET, "--model", model, "--layout", "l", "--salt", "t",
                  "--sglang", "ab" * 32, "cd" * 32, "ef" * 32, "--json")
        run = self._run(*lookup)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual((json.loads(run.stdout)["pages"], json.loads(run.stdout)["pool_pages"]), (3, 0))
        # the installed package stores the first two pages under keys from SGLang's hashes; the CLI finds them
        store = ("import kvtier, sys\n"
                 "root = kvtier.keys.namespace_root(%r, 'l', 0, 't')\n"
                 "keys = [kvtier.sglang_page_key(root, h) for h in (%r, %r)]\n"
                 "with kvtier.Client(%r, namespaces=[root], max_keys=4) as c:\n"
                 "    with c.reserved(keys) as r:\n"
                 "        for i, page in r.pages():\n"
                 "            page[:5] = b'page%%d' %% i\n"
                 "            r.set_length(i, 5)\n" % (model, "ab" * 32, "cd" * 32, SOCKET))
        run = self._run("-c", store)
        self.assertEqual(run.returncode, 0, run.stderr)
        run = self._run(*lookup)
        self.assertEqual(run.returncode, 0, run.stderr)
        answer = json.loads(run.stdout)
        self.assertEqual((answer["pages"], answer["pool_pages"]), (3, 2), run.stdout)
        # another tenant's salt finds none of them
        other = list(lookup)
        other[other.index("--salt") + 1] = "u"
        run = self._run(*other)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(json.loads(run.stdout)["pool_pages"], 0)

    def test_install_without_the_built_library_fails_saying_how_to_build_it(self):
        # a copy of the checkout's layout (root pom.xml, clients/python) with no clients/c/build
        fake = os.path.join(self.tmp, "checkout")
        os.makedirs(fake)
        shutil.copy(os.path.join(ROOT, "pom.xml"), os.path.join(fake, "pom.xml"))
        shutil.copytree(os.path.join(ROOT, "clients", "python"), os.path.join(fake, "clients", "python"),
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        python = _venv_or_skip(self, os.path.join(self.tmp, "venv-fail"))
        run = _pip_install(python, os.path.join(fake, "clients", "python"), self.tmp)
        self.assertNotEqual(run.returncode, 0, run.stdout)
        self.assertIn("./mvnw -pl clients -am package", run.stdout + run.stderr)


class CliTest(unittest.TestCase):
    """``python -m kvtier`` from the checkout, without an engine."""

    def _run(self, *args):
        return subprocess.run([sys.executable, "-m", "kvtier", *args], capture_output=True, text=True, cwd=HERE)

    def test_missing_socket_is_named(self):
        run = self._run("stats", "--socket", "/nonexistent/kvtier.sock")
        self.assertEqual(run.returncode, 3)
        self.assertIn("no engine socket at /nonexistent/kvtier.sock", run.stderr)

    def test_a_path_that_is_not_a_socket_is_named(self):
        with tempfile.NamedTemporaryFile() as f:
            run = self._run("lookup", "--socket", f.name, "--model", "m", "--layout", "l", "--sglang", "ab")
        self.assertEqual(run.returncode, 3)
        self.assertIn(f.name + " is not a socket", run.stderr)

    def test_a_socket_nobody_answers_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "dead.sock")
            s = socket.socket(socket.AF_UNIX)
            s.bind(path)  # bound, never listening: the connect is refused
            try:
                run = self._run("stats", "--socket", path)
            finally:
                s.close()
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("no engine answered at " + path, run.stderr)

    def test_lookup_arguments_are_checked(self):
        base = ("lookup", "--socket", "/nonexistent", "--model", "m", "--layout", "l")
        run = self._run(*base)
        self.assertEqual(run.returncode, 2)
        self.assertIn("give exactly one of --tokens, --sglang or --vllm, not none", run.stderr)
        run = self._run(*base, "--tokens", "1", "2")
        self.assertEqual(run.returncode, 2)
        self.assertIn("--tokens needs --page-tokens", run.stderr)
        run = self._run(*base, "--vllm", "zz")
        self.assertEqual(run.returncode, 2)
        self.assertIn("--vllm 'zz': the block hash must be hex digits", run.stderr)


if __name__ == "__main__":
    unittest.main()

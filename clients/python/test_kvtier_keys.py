"""Keys from engines' own page ids (docs/keys.md): the published vectors through the package's pure
Python (kvtier.keys), the C library and docs/keys-reference.py, and what the scheme promises
(instances share, tenants stay apart, schemes never collide)."""

import ctypes
import hashlib
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kvtier  # noqa: E402
from kvtier import _client, keys  # noqa: E402

MODEL, LAYOUT = "meta-llama/Llama-3.1-8B-Instruct", "bf16/page16/layer-first/tp1"
SGLANG = [hashlib.sha256(b"sglang page 0").hexdigest(), hashlib.sha256(b"sglang page 1").hexdigest()]
VLLM = [(hashlib.sha256(b"vllm block 0").digest(), 0), (hashlib.sha256(b"vllm block 0").digest(), 1),
        (bytes.fromhex("00" * 30 + "04d2"), 0), (1234, 0), (-2, 3)]
LMCACHE = [("meta-llama/Llama-3.1-8B-Instruct", 0, hashlib.sha256(b"lmcache chunk 0").digest(), 0, ""),
           ("meta-llama/Llama-3.1-8B-Instruct", 1, hashlib.sha256(b"lmcache chunk 0").digest(), 0, ""),
           ("meta-llama/Llama-3.1-8B-Instruct", 0, hashlib.sha256(b"lmcache chunk 0").digest(), 2, "tenant-a")]
LMCACHE_CHUNK_KEYS = ["meta-llama/Llama-3.1-8B-Instruct@00000000@0@" + LMCACHE[0][2].hex(),
                      "meta-llama/Llama-3.1-8B-Instruct@00000001@0@" + LMCACHE[0][2].hex(),
                      "meta-llama/Llama-3.1-8B-Instruct@00000000@2@" + LMCACHE[0][2].hex() + "@tenant-a"]
# docs/keys.md, "engine page ids", LMCache lines
EXPECTED_LMCACHE = {
    "": ["3a77b2357c9ad307d95eb829622ab0f5", "5674d55f732e47be5380d7f872130f64", "97dfbb436421411378edc0a3377a1ddd"],
    "tenant-a": ["a98589aa6e67b5e421de58db1f247a64", "2af4dc74c0ecbf895209cbae95dfd045", "d3d4f6a797657ac7b1ea70ef29a68b73"],
}
# docs/keys.md, "engine page ids"
EXPECTED = {
    "": (["430f263b9dc95918deb7ee45953afe6b", "3d741f8f68f3c8b1a9af1d9007163394"],
         ["2009f7e3f4b58e370db07e4be8e7e603", "9f6c9bc89b440664847b82a50520fce3", "0bf1b92f2bc83a846866735f5b06bda9",
          "0bf1b92f2bc83a846866735f5b06bda9", "35bffc88ddf5e3b8d8cb7899c214912b"]),
    "tenant-a": (["3a89da3184daf12093d1754e399fc776", "5a1d17b21ad0e9169b7f5922cb8768f4"],
                 ["a56066e62a24a6b15f262df0a950d20d", "399fe0ccaac3384ec41a3ddc6e43dfbe", "e51ac7db86e30880ded7656160056e8f",
                  "e51ac7db86e30880ded7656160056e8f", "a4ae0bc3c5c6053df941b656bf3bd403"]),
}


def _reference():
    spec = importlib.util.spec_from_file_location("keys_reference", os.path.join(HERE, os.pardir, os.pardir, "docs",
                                                                                 "keys-reference.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class EngineKeyVectorsTest(unittest.TestCase):
    def test_package_matches_the_published_vectors(self):
        for salt, (sglang, vllm) in EXPECTED.items():
            root = keys.namespace_root(MODEL, LAYOUT, 0, salt)
            self.assertEqual([keys.sglang_page_key(root, h).hex() for h in SGLANG], sglang, salt)
            self.assertEqual([keys.vllm_page_key(root, b, g).hex() for b, g in VLLM], vllm, salt)
            self.assertEqual([keys.vllm_offload_page_key(root, keys.vllm_offload_key(b, g)).hex() for b, g in VLLM], vllm)

    def test_reference_matches_the_published_vectors(self):
        ref = _reference()
        for salt, (sglang, vllm) in EXPECTED.items():
            root = ref.namespace_root(MODEL, LAYOUT, 0, salt)
            self.assertEqual([ref.sglang_page_key(root, h).hex() for h in SGLANG], sglang)
            self.assertEqual([ref.vllm_page_key(root, ref.vllm_offload_key(b, g)).hex() for b, g in VLLM], vllm)

    def test_c_library_matches_the_published_vectors(self):
        try:
            lib = _client.load_library()
        except (OSError, FileNotFoundError) as e:
            self.skipTest("the C client library is not built (%s)" % e)
        for salt, (sglang, vllm) in EXPECTED.items():
            root = _client._Key.from_buffer_copy(keys.namespace_root(MODEL, LAYOUT, 0, salt))
            out = _client._Key()
            for h, want in zip(SGLANG, sglang):
                self.assertEqual(lib.kvt_sglang_page_key(ctypes.byref(root), h.encode(), len(h), ctypes.byref(out)), 0)
                self.assertEqual(bytes(out.bytes).hex(), want)
            for (b, g), want in zip(VLLM, vllm):
                data = keys.vllm_block_hash_bytes(b)
                self.assertEqual(lib.kvt_vllm_page_key(ctypes.byref(root), data, len(data), g, ctypes.byref(out)), 0)
                self.assertEqual(bytes(out.bytes).hex(), want)

    def test_pure_python_token_keys_match_the_c_library(self):
        try:
            _client.load_library()
        except (OSError, FileNotFoundError) as e:
            self.skipTest("the C client library is not built (%s)" % e)
        tokens = list(range(40))
        self.assertEqual(keys.namespace_root(MODEL, LAYOUT, 1, "s"), kvtier.namespace_root(MODEL, LAYOUT, 1, "s"))
        root = keys.namespace_root(MODEL, LAYOUT)
        self.assertEqual(keys.page_keys(root, tokens, 16, True), kvtier.page_keys(root, tokens, 16, True))
        self.assertEqual(keys.page_keys(root, tokens, 16)[0].hex(), "a306ce302f3ed8d29a2b9b308d8a004e")


class LmcacheKeyVectorsTest(unittest.TestCase):
    def test_package_matches_the_published_lmcache_vectors(self):
        self.assertEqual([keys.lmcache_chunk_key(*c) for c in LMCACHE], LMCACHE_CHUNK_KEYS)
        for salt, want in EXPECTED_LMCACHE.items():
            root = keys.namespace_root(MODEL, LAYOUT, 0, salt)
            self.assertEqual([keys.lmcache_page_key(root, k).hex() for k in LMCACHE_CHUNK_KEYS], want, salt)

    def test_reference_matches_the_published_lmcache_vectors(self):
        ref = _reference()
        self.assertEqual([ref.lmcache_chunk_key(*c) for c in LMCACHE], LMCACHE_CHUNK_KEYS)
        for salt, want in EXPECTED_LMCACHE.items():
            root = ref.namespace_root(MODEL, LAYOUT, 0, salt)
            self.assertEqual([ref.lmcache_page_key(root, k).hex() for k in LMCACHE_CHUNK_KEYS], want, salt)

    def test_lmcache_keys_stay_apart_from_the_other_schemes_and_between_tenants(self):
        root = keys.namespace_root(MODEL, LAYOUT)
        text = LMCACHE_CHUNK_KEYS[0]
        derived = {keys.lmcache_page_key(root, text), keys.sglang_page_key(root, text),
                   keys.vllm_page_key(root, text.encode(), 0)}
        self.assertEqual(len(derived), 3)
        self.assertNotEqual(keys.lmcache_page_key(keys.namespace_root(MODEL, LAYOUT, 0, "tenant-b"), text),
                            keys.lmcache_page_key(root, text))

    def test_bad_lmcache_ids_are_refused_naming_what_was_wrong(self):
        root = keys.namespace_root(MODEL, LAYOUT)
        with self.assertRaisesRegex(ValueError, "an LMCache chunk key must not be empty"):
            keys.lmcache_page_key(root, "")
        with self.assertRaisesRegex(TypeError, "an LMCache chunk key is a str, not bytes"):
            keys.lmcache_page_key(root, b"m@0")
        with self.assertRaisesRegex(ValueError, "no '@', not 'a@b'"):
            keys.lmcache_chunk_key("a@b", 0, b"h")
        with self.assertRaisesRegex(ValueError, "cache salt has no '@'"):
            keys.lmcache_chunk_key("m", 0, b"h", 0, "s@t")
        with self.assertRaisesRegex(ValueError, "chunk hash must not be empty"):
            keys.lmcache_chunk_key("m", 0, b"")
        with self.assertRaisesRegex(ValueError, r"KV rank must be in \[0, 2\*\*32\), not -1"):
            keys.lmcache_chunk_key("m", -1, b"h")


class PublishedVectorsTest(unittest.TestCase):
    def test_docs_keys_md_holds_every_line_the_reference_prints(self):
        import contextlib
        import io
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            _reference().main()
        with open(os.path.join(HERE, os.pardir, os.pardir, "docs", "keys.md"), encoding="utf-8") as f:
            published = f.read().splitlines()
        # a published line may add a remark after what the reference prints ("(pages of 16, 16 and 8 tokens)")
        missing = [line for line in printed.getvalue().splitlines()
                   if line and not any(p == line or p.startswith(line + " (") for p in published)]
        self.assertEqual(missing, [], "docs/keys.md lacks lines that docs/keys-reference.py prints")


class EngineKeyPropertiesTest(unittest.TestCase):
    def test_schemes_under_one_namespace_never_share_a_key(self):
        root = keys.namespace_root(MODEL, LAYOUT)
        # the same 32 bytes as an SGLang hex string, a vLLM block hash, and (as 8 tokens) a token page
        digest = hashlib.sha256(b"same id").digest()
        as_tokens = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 32, 4)]
        derived = {keys.sglang_page_key(root, digest.hex()), keys.vllm_page_key(root, digest, 0),
                   keys.page_keys(root, as_tokens, 8)[0]}
        self.assertEqual(len(derived), 3)

    def test_tenants_and_models_stay_apart_and_group_indexes_differ(self):
        h = SGLANG[0]
        a, b = keys.namespace_root(MODEL, LAYOUT, 0, "tenant-a"), keys.namespace_root(MODEL, LAYOUT, 0, "tenant-b")
        self.assertNotEqual(keys.sglang_page_key(a, h), keys.sglang_page_key(b, h))
        self.assertNotEqual(keys.sglang_page_key(a, h), keys.sglang_page_key(keys.namespace_root("other", LAYOUT, 0, "tenant-a"), h))
        self.assertNotEqual(keys.vllm_page_key(a, VLLM[0][0], 0), keys.vllm_page_key(a, VLLM[0][0], 1))

    def test_two_processes_compute_the_same_key(self):
        import subprocess
        code = ("import sys; sys.path.insert(0, %r); from kvtier import keys; "
                "print(keys.sglang_page_key(keys.namespace_root(%r, %r), %r).hex())" % (HERE, MODEL, LAYOUT, SGLANG[1]))
        out = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout.strip() for seed in (1, 2)}
        self.assertEqual(out, {EXPECTED[""][0][1]})

    def test_bad_ids_are_refused_naming_what_was_wrong(self):
        root = keys.namespace_root(MODEL, LAYOUT)
        with self.assertRaisesRegex(ValueError, "must not be empty"):
            keys.sglang_page_key(root, "")
        with self.assertRaisesRegex(TypeError, "is a str"):
            keys.sglang_page_key(root, b"ab")
        with self.assertRaisesRegex(ValueError, r"group index must be in \[0, 2\*\*32\), not -1"):
            keys.vllm_page_key(root, b"x", -1)
        with self.assertRaisesRegex(ValueError, "must be >= -2\\*\\*63"):
            keys.vllm_page_key(root, -(1 << 64))
        with self.assertRaisesRegex(ValueError, "must be < 2\\*\\*256"):
            keys.vllm_page_key(root, 1 << 256)
        with self.assertRaisesRegex(ValueError, "a namespace root is 16 bytes, not 3"):
            keys.sglang_page_key(b"abc", "00")
        with self.assertRaisesRegex(ValueError, "not 4 bytes"):
            keys.vllm_offload_page_key(root, b"\0\0\0\0")


if __name__ == "__main__":
    unittest.main()

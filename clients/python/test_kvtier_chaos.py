"""The chaos client's page pattern and request draws (kvtier.chaos_client) against values bench's Java
PagePattern and SplittableRandom produce (bench's ChaosClientVectorsTest asserts the same of the Java, and
clients/c's test of its own restatement), so a drift on any side fails a test."""

import hashlib
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kvtier import _client  # noqa: E402
from kvtier.chaos_client import SplitRandom, key_halves, pattern  # noqa: E402

# (high, low, word 0, word 1, word 2047, SHA-256 of the 16 KiB page)
PAGES = [
    (0, 0, 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x28b3bf5520dddf02,
     "b4f179edd8a88ae4fa68d7e5bf2e987c90d5d19f093bef2e0847487253b64678"),
    (0x0123456789abcdef, 0xfedcba9876543210, 0x1727f342e7bd80de, 0x73c5b0f22f84f43f, 0x9dee89a02a073577,
     "8184e86c166376dcf455fb168813c507e264b5b3143a01835367a69de77e067c"),
    (0xffffffffffffffff, 0, 0xe4d971771b652c20, 0xe99ff867dbf682c9, 0xfda5fa35cc1123d6,
     "486814438291a8bcb51808a4289d46438bb59a0064f2299098b634b40b2cae57"),
    (0x4c1475d89b15738a, 0x68acd1ba4cb6e331, 0x57cd2f6528f45cec, 0xe1fad11b3700e0a1, 0x69e53abd02ef4df4,
     "814dd13727b2a33a27617123ce1b44caabd3a0b7697e2661b6699a822f323ab1"),
]
# nextInt(8), nextInt(16), nextInt(3) in turn, twelve times, from each seed
DRAWS = {
    20000061: [2, 2, 0, 7, 13, 1, 3, 0, 2, 0, 3, 2, 4, 11, 2, 3, 5, 2, 7, 13, 2, 0, 4, 2, 6, 15, 2, 7, 14, 1, 3, 8, 2, 3, 7, 2],
    -7: [2, 1, 1, 5, 11, 1, 1, 0, 2, 3, 7, 0, 5, 10, 0, 5, 10, 1, 5, 13, 0, 2, 8, 1, 7, 15, 1, 7, 15, 1, 7, 15, 2, 6, 12, 0],
}


def word(page: bytes, i: int) -> int:
    return int.from_bytes(page[8 * i:8 * i + 8], "little")


class PatternTest(unittest.TestCase):

    def test_pages_are_the_java_page_pattern(self):
        for high, low, w0, w1, wlast, sha in PAGES:
            page = pattern(high, low, 16384)
            self.assertEqual(len(page), 16384)
            self.assertEqual((word(page, 0), word(page, 1), word(page, 2047)), (w0, w1, wlast), "key %016x%016x" % (high, low))
            self.assertEqual(hashlib.sha256(page).hexdigest(), sha, "key %016x%016x" % (high, low))

    def test_draws_are_java_splittable_random(self):
        for seed, expected in DRAWS.items():
            r = SplitRandom(seed)
            got = [r.next_bounded((8, 16, 3)[i % 3]) for i in range(len(expected))]
            self.assertEqual(got, expected, "seed %d" % seed)

    @unittest.skipUnless(os.path.exists(_client.library_path()), "the C client library is not built: make -C clients/c (needs gcc and make)")
    def test_the_key_chain_gives_the_key_the_java_chain_gives(self):
        tokens = list(range(16)) + [50_000_000 + 3 * 100_003 + i for i in range(16)]
        keys = _client.page_keys(_client.namespace_root("chaos", "chaos-page16", 0, ""), tokens, 16)
        self.assertEqual(len(keys), 2)
        self.assertEqual(key_halves(keys[1]), PAGES[3][:2])


if __name__ == "__main__":
    unittest.main()

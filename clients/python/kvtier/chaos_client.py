"""One honest client of a ``kvtier chaos`` campaign in Python: the twin of bench's ChaosClientProcess
(io.kvtier.bench.chaos), speaking exactly its protocol, over this package's binding of the C client.

Run by the campaign as ``python3 -m kvtier.chaos_client socket_path seed ack_file model_id [wrong-writer]``.
It attaches with the namespace (model_id, "chaos-page16", rank 0, no salt) and 64 slots, then serves
requests drawn from its seed (``SplitRandom``: java.util.SplittableRandom's draws, so the same seed makes
the same requests as the Java client): a prefix shared by every client (a system prompt) and one
conversation's turns so far. For each it pins the cached prefix and checks every pinned page against the
bytes derived from its key (``pattern``: bench's PagePattern), reserves, writes and commits the rest, and
every fourth request FLUSHes, EVICTs the request's pages and LOOKUPs each key alone: the keys the engine
then holds in L3 and not in the pool go to the acknowledgement file as ``<epoch ms> <key hex>`` lines.

Stdout, one line each: ``READY``; after every request ``T verified wrong committed acked requests
refused`` (this process's totals); ``W <key hex>`` for each wrong page; ``PAUSED <point>``; ``LATE <n>``.
Stdin: ``PAUSE pins``, ``PAUSE write``, ``GO``, ``POISON`` (after a pause at write: poison the reserved
pages and try to commit them, then exit 3 when nothing landed, 4 when something did). The end of stdin
ends the process (exit 0); it exits 3 when it cannot attach or the engine drops it.

Where it differs from the Java: a pinned page's payload length comes from ``Client.payload_length``,
which also checks the trailer's magic, CRC32C and key (the Java client reads the length alone); a trailer
failing those counts the page wrong, with the reason on stderr. Each key's expected bytes are computed
once and kept (about 2,100 keys of 16 KiB): Python is too slow to derive 2,048 words per page read.
"""

import os
import queue
import sys
import threading
import time
from array import array

from . import _client as kv

MAX_KEYS = 64
PAGE_TOKENS = 16
LAYOUT = "chaos-page16"
POISON = 0xDEADBEEFDEADBEEF

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_LITTLE = sys.byteorder == "little"


def key_halves(key: bytes):
    """A key's ``high`` and ``low`` as docs/keys.md reads them: bytes 0..7 and 8..15, big-endian."""
    return int.from_bytes(key[:8], "big"), int.from_bytes(key[8:16], "big")


def pattern(high: int, low: int, length: int) -> bytes:
    """PagePattern.fill's bytes: SplitMix64 from ``high ^ rotl(low, 17)``, ``length // 8`` words,
    each little-endian as the Java writes them (its native order on the machines the engine runs on)."""
    high &= _MASK
    low &= _MASK
    state = high ^ (((low << 17) | (low >> 47)) & _MASK)
    words = array("Q", bytes(8 * (length // 8)))
    for i in range(length // 8):
        state = (state + _GAMMA) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        words[i] = z ^ (z >> 31)
    if not _LITTLE:
        words.byteswap()
    return words.tobytes()


class SplitRandom:
    """java.util.SplittableRandom from one seed, as far as the chaos client draws from it."""

    def __init__(self, seed: int):
        self.seed = seed & _MASK

    def next_int(self) -> int:
        """nextInt(): SplittableRandom's mix32 of the next seed, as a signed 32-bit int."""
        self.seed = (self.seed + _GAMMA) & _MASK
        z = self.seed
        z = ((z ^ (z >> 33)) * 0x62A9D9ED799705F5) & _MASK
        r = (((z ^ (z >> 28)) * 0xCB24D0A5C88C35B3) & _MASK) >> 32
        return r - (1 << 32) if r >= 1 << 31 else r

    def next_bounded(self, bound: int) -> int:
        """nextInt(bound), bound > 0, as the JDK bounds it: a mask for a power of two, else a
        rejection loop on the upper 31 bits (Java's ``u + m - r < 0`` is an int overflow)."""
        m = bound - 1
        u = self.next_int() & 0xFFFFFFFF
        if bound & m == 0:
            return u & m
        u >>= 1
        while True:
            r = u % bound
            if u + m - r < 1 << 31:
                return r
            u = (self.next_int() & 0xFFFFFFFF) >> 1


def _is_dropped(code: int) -> bool:
    """Whether a refused COMMIT means the engine dropped this client (ChaosClientProcess.isDropped)."""
    return code not in (kv.INVALID, kv.SLOT_HELD, kv.SLOT_RANGE, kv.NAMESPACE_DENIED, kv.UNKNOWN_TYPE, kv.MALFORMED)


class _Dropped(Exception):
    """The engine dropped this client, or went away."""


class ChaosClient:
    """The client's state: its connection, draws, totals and the campaign's commands."""

    def __init__(self, client, root: bytes, seed: int, out, acks: int, wrong_writer: bool):
        self.client = client
        self.root = root
        self.random = SplitRandom(seed)
        self.out = out
        self.acks = acks
        self.wrong_writer = wrong_writer
        self.page_size = client.page_size
        self.turns = [0] * 16
        self.expected = {}
        self.commands = queue.Queue()
        self.pause_lock = threading.Lock()
        self.pause_at = ""
        self.verified = self.wrong = self.committed = self.acked = self.requests = self.refused = 0

    def say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def read_commands(self) -> None:
        """Reads the campaign's commands on a thread of its own; the end of stdin ends the process."""
        def read():
            for line in sys.stdin:
                line = line.rstrip("\r\n")
                if line.startswith("PAUSE "):
                    with self.pause_lock:
                        self.pause_at = line[6:]
                else:
                    self.commands.put(line)
            # The campaign is gone: so is the point of this client.
            os._exit(0)
        threading.Thread(target=read, name="chaos-client-stdin", daemon=True).start()

    def pause(self, point: str):
        """The campaign's next command once this client stopped at ``point``, else None."""
        with self.pause_lock:
            if self.pause_at != point:
                return None
            self.pause_at = ""
        self.say("PAUSED " + point)
        return self.commands.get()

    def next_request(self):
        """The next request's tokens (ChaosClientProcess.nextRequest)."""
        # A prefix of 4 to 11 pages shared by every client (one of 8 system prompts), then one of 16
        # conversations' turns so far, which grows by a page each time it is drawn and starts over at 16.
        group = self.random.next_bounded(8)
        prefix_pages = 4 + group
        conversation = self.random.next_bounded(len(self.turns))
        self.turns[conversation] = self.turns[conversation] % 16 + 1
        tokens = [group * 1_000_003 + i for i in range(prefix_pages * PAGE_TOKENS)]
        tokens += [50_000_000 + conversation * 100_003 + i for i in range(self.turns[conversation] * PAGE_TOKENS)]
        return tokens

    def bytes_of(self, key: bytes) -> bytes:
        """The key's page bytes, derived once and kept."""
        found = self.expected.get(key)
        if found is None:
            found = pattern(*key_halves(key), self.page_size)
            self.expected[key] = found
        return found

    def call(self, what: str, fn, *args):
        """A request whose failure means the engine dropped this client (the Java client throws then)."""
        try:
            return fn(*args)
        except kv.KvtierError as ex:
            raise _Dropped("%s: %s" % (what, ex)) from ex

    def serve_one(self) -> None:
        """One request: pin and check the cached prefix, write and commit the rest, every fourth time acknowledge."""
        c = self.client
        keys = kv.page_keys(self.root, self.next_request(), PAGE_TOKENS)
        n = len(keys)
        cached = self.call("ACQUIRE", c.acquire, keys).result_count
        for i in range(cached):
            try:
                length = c.payload_length(i)
            except kv.KvtierError as ex:
                sys.stderr.write("chaos client: slot %d: %s\n" % (i, ex))
                length = -1
            view = c.slot_view(i)
            right = length == self.page_size and view is not None and bytes(view) == self.bytes_of(keys[i])
            if view is not None:
                view.release()
            if right:
                self.verified += 1
            else:
                self.wrong += 1
                self.say("W " + keys[i].hex())
        command = self.pause("pins")
        if command is not None and command != "GO":
            raise RuntimeError("unexpected command while holding pins: " + command)
        if cached > 0:
            self.call("RELEASE", c.release, 0, n)
        if cached < n:
            fresh = keys[cached:]
            self.call("RESERVE", c.reserve, fresh)
            mine = 0
            for i in range(len(fresh)):
                if c.slot_status(i) == kv.PAGE_RESERVED:
                    # The wrong writer fills a page with the next key's bytes: sealed and committed, the
                    # engine has no way to tell, and only a reader's check can.
                    key = keys[cached + i + 1] if self.wrong_writer and cached + i + 1 < n else keys[cached + i]
                    view = c.slot_view(i)
                    view[:] = self.bytes_of(key)
                    view.release()
                    mine += 1
            # A slot without a reservation is answered NONE whatever its length; send a valid one.
            lengths = [self.page_size] * len(fresh)
            command = self.pause("write")
            if command == "POISON":
                self.poison_and_commit(len(fresh), lengths)
            if mine > 0:
                try:
                    self.committed += c.commit(0, lengths).result_count
                except kv.KvtierError as ex:
                    self.refused += 1
                    if _is_dropped(ex.code):
                        raise _Dropped("COMMIT: %s" % ex) from ex
                    # Refused: what is still reserved is given back (the Java lease's close aborts it).
                    self.call("ABORT", c.abort, 0, len(fresh))
        self.requests += 1
        if self.requests % 4 == 0:
            self.acknowledge(keys)
        self.say("T %d %d %d %d %d %d" % (self.verified, self.wrong, self.committed, self.acked, self.requests, self.refused))

    def poison_and_commit(self, count: int, lengths) -> None:
        """The late writer: woken past its lease, it writes poison into its reserved pages and tries to
        commit them. The engine must refuse (the client was dropped); the pages are never served."""
        poison = array("Q", [POISON]) * (self.page_size // 8)
        for i in range(count):
            if self.client.slot_status(i) == kv.PAGE_RESERVED:
                view = self.client.slot_view(i)
                view[:] = poison.tobytes()
                view.release()
        try:
            landed = self.client.commit(0, lengths).result_count
        except kv.KvtierError:
            landed = 0
        self.say("LATE %d" % landed)
        os._exit(3 if landed == 0 else 4)

    def acknowledge(self, keys) -> None:
        """FLUSH, EVICT of the request's pages, then a LOOKUP of each key alone: those in L3 and not in
        the pool are appended to the acknowledgement file."""
        c = self.client
        self.call("FLUSH", c.flush)
        self.call("EVICT", c.evict, keys)
        # One key at a time: a LOOKUP's L3 Pages counts the prefix past the pool's run, pool pages after
        # the first L3 one included, so only a lookup of the key alone says the engine holds it in L3 and
        # not in the pool (where a backup may still be failing).
        lines = []
        for key in keys:
            where = self.call("LOOKUP", c.lookup, [key])
            if where.pool_pages == 0 and where.l3_pages == 1:
                lines.append("%d %s\n" % (int(time.time() * 1000), key.hex()))
        record = "".join(lines).encode("ascii")
        while record:
            record = record[os.write(self.acks, record):]
        self.acked += len(lines)


def main(argv=None) -> int:
    """socket path, seed, acknowledgement file, namespace model id, and ``wrong-writer`` to commit wrong
    bytes on purpose (a broken writer, for the test that proves the check can fail)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 4:
        sys.stderr.write("usage: python3 -m kvtier.chaos_client socket_path seed ack_file model_id [wrong-writer]\n")
        return 2
    # The protocol's lines go to the real stdout alone; anything else printed goes to stderr.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    sys.stdout = sys.stderr
    try:
        seed = int(args[1])
    except ValueError:
        sys.stderr.write("chaos client: seed %r is not a 64-bit integer\n" % args[1])
        return 2
    try:
        root = kv.namespace_root(args[3], LAYOUT, 0, "")
        client = kv.Client(args[0], namespaces=[root], max_keys=MAX_KEYS)
    except (kv.KvtierError, OSError) as ex:
        sys.stderr.write("chaos client: cannot attach: %s\n" % ex)
        return 3
    acks = os.open(args[2], os.O_CREAT | os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC, 0o644)
    process = ChaosClient(client, root, seed, out, acks, len(args) > 4 and args[4] == "wrong-writer")
    process.read_commands()
    process.say("READY")
    try:
        while True:
            process.serve_one()
    except _Dropped as ex:
        sys.stderr.write("chaos client: the engine dropped this client: %s\n" % ex)
        return 3


if __name__ == "__main__":
    sys.exit(main())

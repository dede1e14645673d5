#!/usr/bin/env python3
"""A scripted stand-in for kvtier's engine, written from docs/ipc-protocol.md alone, for testing
the C client and this binding where the real engine cannot be made to misbehave (a refused HELLO,
a disconnect, a response ring that wraps, an engine older than 1.2). It is NOT kvtier's engine: a
thread per client, dictionaries for an index and for an "L3", no leases. It speaks version 1.3:

- the handshake of section 2: a 1.2 session gets the pool, the control file and its ring (a sealed
  memfd_create file with no name) as three descriptors on the WELCOME's first byte; a session below
  1.2 opens them by path, which only the engine's own user may (NOT_ALLOWED otherwise);
- DESCRIPTORS messages on the socket, numbered from 0 across messages, at most 64 sent and not yet
  named, a malformed one ending the client (MALFORMED);
- every rule of section 4 in the engine's order (reserved fields, flags, framing faults), and the
  entries every operation writes with its Result Count;
- the pool file of section 11: its header, each committed page's trailer (key, payload length,
  CRC32C, namespace tag) and the counters region naming the values STATS answers;
- the device operations of section 10 for HOST_FILE and HOST_FD buffers (CUDA_IPC is refused
  NO_DEVICE), copied with Python slices; a buffer shrunk under its mapping fails the request with
  INTERNAL_ERROR as a faulting copy would;
- the combined requests of 1.3 (section 4): LOOKUP_AND_LOCK as an ACQUIRE then a RESERVE of at most its
  Reserve Limit keys after the prefix, COMMIT_AND_RELEASE as a RELEASE then a COMMIT.

Committed pages are copied to an in-memory "L3" at once (write-through), so EVICT, LOOKUP's L3 Pages,
ACQUIRE's PINNED_FROM_L3 and PREFETCH have something to do. The real engine is tested end to end by
engine/.../NativeClientEndToEndTest.

    spec_engine.py DIR [--refuse CODE] [--disconnect-after N] [--ring-bytes B] [--clients N]
                   [--die-on-request N] [--engine-minor 1|2|3] [--prefetch-waits] [--short-entries]
prints the socket path on its first line of stdout once it listens, then serves clients (a refusal
or a disconnect ends it after that client; --clients N after N clients; else until killed)."""

import argparse
import ctypes
import fcntl
import mmap
import os
import socket
import stat
import struct
import sys
import threading
import time

PAGE_SIZE, PAGE_COUNT = 4096, 64
COUNTERS_OFFSET = 4096
COUNTER_RECORDS, COUNTER_RECORD, COUNTERS_MAX = 4096, 256, 512
COUNTERS_LENGTH = COUNTER_RECORDS + COUNTERS_MAX * COUNTER_RECORD
DATA_OFFSET = COUNTERS_OFFSET + COUNTERS_LENGTH          # a multiple of 4096
TRAILER = 68
FRAME = PAGE_SIZE + 128                                   # the page, its 68-byte trailer, padding
POOL_BYTES = DATA_OFFSET + PAGE_COUNT * FRAME
EPOCH = 0x1122334455667788
TIMEOUT_MS = 30000
MAX_KEYS = 1024

# status codes (section 6) and page statuses (section 4)
OK, INVALID, INTERNAL_ERROR = 0, 3, 4
MALFORMED, UNKNOWN_TYPE, STALE, SLOT_RANGE, SLOT_HELD, NS_DENIED, TOO_LONG = 16, 17, 18, 19, 20, 21, 22
VERSION, NOT_ALLOWED, BAD_HELLO = 32, 33, 35
NONE, PINNED, PINNED_FROM_L3, RESERVED, COMMITTED, EXISTS, BUSY, POOL_FULL, MISS = range(9)
PAGE_INVALID, LOADED, COPIED = 10, 12, 13
PREFETCH_THRESHOLD = 4  # L3 pages a LOOKUP's prefix must have before it prefetches them (--prefetch-waits)

LOOKUP, ACQUIRE, RELEASE, RESERVE, COMMIT, ABORT, PREFETCH, BACKUP, FLUSH, EVICT = range(2, 12)
CLOSE, STATS, REGISTER_KV, DEVICE_LOAD, DEVICE_SAVE = 13, 14, 15, 16, 17
LOOKUP_AND_LOCK, COMMIT_AND_RELEASE = 18, 19  # version 1.3
KEYED = (LOOKUP, ACQUIRE, RESERVE, PREFETCH, BACKUP, EVICT, LOOKUP_AND_LOCK)
NO_SLOTS = (FLUSH, CLOSE, STATS, REGISTER_KV)
DEVICE = (REGISTER_KV, DEVICE_LOAD, DEVICE_SAVE)

# the counters this engine keeps (section 11): id -> (name, type, description); STATS answers 0..n-1
COUNTERS = {
    0: ("requests", 1, "Requests handled, every client."),
    1: ("pages_reserved", 1, "Pages reserved by RESERVE."),
    2: ("pages_committed", 1, "Pages committed by COMMIT or DEVICE_SAVE."),
    3: ("pages_evicted", 1, "Pages dropped from the pool by EVICT or to make room."),
    4: ("l3_pages_loaded", 1, "Pages loaded from the in-memory L3 into the pool."),
    5: ("device_blocks_saved", 1, "Blocks DEVICE_SAVE copied into pages."),
    6: ("device_blocks_loaded", 1, "Blocks DEVICE_LOAD copied out of pages."),
    7: ("pages_in_use", 2, "Pages reserved or holding a committed page."),
    8: ("clients_attached", 2, "Clients connected now."),
    448: ("tier_memory", 3, "the spec engine's in-memory L3: a dictionary, lost at exit"),
}
STATS_COUNT = 9
C_REQUESTS, C_RESERVED, C_COMMITTED, C_EVICTED, C_L3_LOADED, C_SAVED, C_LOADED, C_IN_USE, C_CLIENTS = range(9)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
SYS_futex = {"x86_64": 202, "aarch64": 98, "riscv64": 98}.get(os.uname().machine, 202)
FUTEX_WAIT, FUTEX_WAKE = 0, 1
F_ADD_SEALS, F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW = 1033, 1, 2, 4


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def futex_wait(word, value, ns):
    ts = Timespec(ns // 1000000000, ns % 1000000000)
    _libc.syscall(ctypes.c_long(SYS_futex), ctypes.c_void_p(ctypes.addressof(word)), FUTEX_WAIT, value,
                  ctypes.byref(ts), None, 0)


def futex_wake(word):
    _libc.syscall(ctypes.c_long(SYS_futex), ctypes.c_void_p(ctypes.addressof(word)), FUTEX_WAKE, 1, None, None, 0)


def align8(n):
    return (n + 7) & ~7


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def shared_file(path, size):
    """A new file of `size` bytes, mode 0600, with its descriptor (kept, to pass it) and its mapping."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    os.ftruncate(fd, size)
    return fd, mmap.mmap(fd, size)


class Disconnect(Exception):
    """The client is dropped with this code (section 6)."""

    def __init__(self, code, why):
        super().__init__(why)
        self.code = code


class Engine:
    def __init__(self, args):
        self.args = args
        d = args.dir
        self.pool_path, self.control_path = os.path.join(d, "pool"), os.path.join(d, "pool.ipc")
        self.socket_path = os.path.join(d, "pool.sock")
        self.cap = args.ring_bytes
        self.minor = args.engine_minor
        self.pool_fd, self.pool = shared_file(self.pool_path, POOL_BYTES)
        self.write_pool_header()
        self.control_fd, self.control = shared_file(self.control_path, 4096)
        self.control[0:8] = b"KVTIPC01"
        struct.pack_into("<HH", self.control, 8, 1, self.minor)
        struct.pack_into("<QQ", self.control, 16, EPOCH, os.getpid())
        ctypes.c_uint32.from_buffer(self.control, 12).value = 1  # State OPEN, last
        self.heartbeat = ctypes.c_uint64.from_buffer(self.control, 64)
        self.doorbell = ctypes.c_uint32.from_buffer(self.control, 128)
        self.free = list(range(PAGE_COUNT))
        self.generation = [0] * PAGE_COUNT
        self.index = {}           # (tag, key) -> page, committed and visible
        self.page_of = {}         # page -> (tag, key), committed
        self.pins = {}            # page -> count
        self.reserving = {}       # (tag, key) -> page, reserved by some client
        self.prefetched = set()   # pages a prefetch loaded that no request has pinned since
        self.l3 = {}              # (tag, key) -> the frame's bytes (page and trailer)
        self.order = []           # committed pages, oldest first: whom to evict for room
        self.lock = threading.Lock()

    def write_pool_header(self):
        p = self.pool
        p[0:8] = b"KVTPOOL1"
        struct.pack_into("<I", p, 12, 1)  # Pool State open
        struct.pack_into("<QQ", p, 16, PAGE_SIZE, FRAME)
        struct.pack_into("<Q", p, 64, DATA_OFFSET)
        struct.pack_into("<QQ", p, 80, COUNTERS_OFFSET, COUNTERS_LENGTH)
        struct.pack_into("<Q", p, 112, EPOCH)
        for i, (name, typ, description) in COUNTERS.items():
            at = COUNTERS_OFFSET + COUNTER_RECORDS + COUNTER_RECORD * i
            n, d = name.encode(), description.encode()
            struct.pack_into("<II", p, at + 4, typ, len(n))
            p[at + 12:at + 12 + len(n)] = n
            struct.pack_into("<I", p, at + 64, len(d))
            p[at + 68:at + 68 + len(d)] = d
            struct.pack_into("<I", p, at, 1)  # Record State, written last
        struct.pack_into("<I", p, 8, 3)  # Layout Version, written last

    def count(self, counter, n=1):
        at = COUNTERS_OFFSET + 8 * counter
        struct.pack_into("<q", self.pool, at, struct.unpack_from("<q", self.pool, at)[0] + n)

    def set_gauge(self, counter, value):
        struct.pack_into("<q", self.pool, COUNTERS_OFFSET + 8 * counter, value)

    def stats(self):
        self.set_gauge(C_IN_USE, PAGE_COUNT - len(self.free))
        return struct.unpack_from("<%dq" % STATS_COUNT, self.pool, COUNTERS_OFFSET)

    # -- pages --

    def frame(self, page):
        return DATA_OFFSET + page * FRAME

    def take_page(self):
        """A free page, evicting the oldest unpinned committed page when none is free; None if all are held."""
        if not self.free:
            for page in self.order:
                if not self.pins.get(page):
                    self.drop(page)
                    self.count(C_EVICTED)
                    break
        if not self.free:
            return None
        page = self.free.pop(0)
        self.generation[page] += 1
        return page

    def drop(self, page):
        """Takes a committed page out of the pool (its L3 copy stays)."""
        ident = self.page_of.pop(page)
        del self.index[ident]
        self.order.remove(page)
        self.prefetched.discard(page)
        self.free.append(page)

    def seal(self, page, tag, key, length):
        """COMMIT: zeroes the page past the payload, writes the trailer, makes the page visible, copies
        it to L3 (write-through)."""
        at = self.frame(page)
        p = self.pool
        p[at + length:at + PAGE_SIZE] = bytes(PAGE_SIZE - length)
        t = at + PAGE_SIZE
        p[t:t + 8] = b"KVTPAGE1"
        struct.pack_into("<QQQIIQQQ", p, t + 8, int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big"), length,
                         crc32c(p[at:at + length]), 2, PAGE_SIZE, int(time.time() * 1000), tag)
        struct.pack_into("<I", p, t + 64, crc32c(p[t:t + 64]))
        self.reserving.pop((tag, key), None)
        self.index[(tag, key)] = page
        self.page_of[page] = (tag, key)
        self.order.append(page)
        self.l3[(tag, key)] = bytes(p[at:at + PAGE_SIZE + TRAILER])
        self.count(C_COMMITTED)

    def give_back(self, page, tag, key):
        """A reservation ends unwritten."""
        self.reserving.pop((tag, key), None)
        self.free.append(page)

    def load(self, ident):
        """Loads a page from L3 into the pool: its page, or None when there is no room."""
        page = self.take_page()
        if page is None:
            return None
        frame = self.l3[ident]
        self.pool[self.frame(page):self.frame(page) + len(frame)] = frame
        self.index[ident] = page
        self.page_of[page] = ident
        self.order.append(page)
        self.count(C_L3_LOADED)
        return page

    def serve(self):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(self.socket_path)
        srv.listen(8)
        print(self.socket_path, flush=True)
        client_id = 0
        while True:
            conn, _ = srv.accept()
            client_id += 1
            t = threading.Thread(target=Session(self).serve, args=(conn, client_id), daemon=True)
            t.start()
            if self.args.refuse or self.args.disconnect_after or client_id == self.args.clients:
                t.join()
                return


class Slot:
    """What a client's slot holds: its key (all zero until a request writes one), and a pin or a
    reservation (state "pin" or "res") of a page, with the page's generation and, reserved, its tag."""

    __slots__ = ("key", "page", "gen", "state", "tag")

    def __init__(self):
        self.key, self.page, self.gen, self.state, self.tag = bytes(16), -1, 0, None, 0


class Session:
    """One client: its ring, its slots, the descriptors it sent, its thread."""

    def __init__(self, engine):
        self.e = engine

    # -- handshake (section 2) --

    def serve(self, conn, client_id):
        self.conn, self.client_id = conn, client_id
        self.last_id, self.requests = 0, 0
        self.layouts = {}       # layout id -> Layout
        self.received = {}      # descriptor number -> fd, sent and not yet named
        self.fd_next = 0
        self.sock_partial = b""
        self.ring_path = None
        self.peer_uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        head = self.recv(24)
        magic, major, minor, max_keys, n_ns, pid, reserved = struct.unpack("<IHHIIII", head)
        roots = [self.recv(16) for _ in range(n_ns if 0 <= n_ns <= 16 else 0)]
        if self.e.args.refuse:
            return self.refuse(self.e.args.refuse, "refused by the spec engine")
        if magic != 0x4C4C4548:
            return self.refuse(BAD_HELLO, "wrong magic")
        if major != 1:
            return self.refuse(VERSION, "major version %d; this engine speaks 1" % major)
        if not 1 <= max_keys <= 65536 or not 0 <= n_ns <= 16 or reserved != 0:
            return self.refuse(BAD_HELLO, "max keys %d, namespaces %d, reserved %d" % (max_keys, n_ns, reserved))
        self.minor = min(minor, self.e.minor)
        if self.minor < 2 and self.peer_uid != os.getuid():
            return self.refuse(NOT_ALLOWED, "uid %d is not the engine's and announced minor version %d" % (self.peer_uid, minor))
        # a tag per namespace (section 8): the root's first 8 bytes big-endian, 1 if those are 0
        self.tags = [int.from_bytes(r[:8], "big") or 1 for r in roots]
        self.n_ns = n_ns
        cap = self.e.cap
        # every request and every response naming all slots fits half a ring
        self.max_keys = min(max_keys, MAX_KEYS, (cap // 2 - 32) // 16, (cap // 2 - 48) // 12)
        self.max_message = max(32 + 16 * self.max_keys, min(80 + 72 * 512, cap // 4))
        size = 4096 + 2 * cap
        if self.minor >= 2:
            ring_fd = os.memfd_create("spec-engine-client-%d" % client_id, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            os.ftruncate(ring_fd, size)
            fcntl.fcntl(ring_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
        else:
            self.ring_path = os.path.join(self.e.args.dir, "pool.client-%d-%x" % (client_id, os.getpid()))
            ring_fd = os.open(self.ring_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            os.ftruncate(ring_fd, size)
        self.ring = mmap.mmap(ring_fd, size)
        self.ring[0:8] = b"KVTRING1"
        struct.pack_into("<IIQ", self.ring, 8, client_id, cap, EPOCH)
        self.req_tail, self.req_head = (ctypes.c_uint64.from_buffer(self.ring, o) for o in (64, 128))
        self.resp_tail, self.resp_head = (ctypes.c_uint64.from_buffer(self.ring, o) for o in (192, 256))
        self.sleeping = ctypes.c_uint32.from_buffer(self.ring, 320)
        self.disconnect = ctypes.c_uint32.from_buffer(self.ring, 448)
        self.slots = [Slot() for _ in range(self.max_keys)]
        descriptors = 3 if self.minor >= 2 else 0
        engine_minor = self.e.minor if self.e.minor >= 2 else 0  # an engine before 1.2 writes 0 there
        welcome = struct.pack("<IIIIQIIQQIIIIII", 0x43574C45, 0, client_id, self.max_keys, EPOCH, PAGE_SIZE, PAGE_COUNT,
                              DATA_OFFSET, FRAME, cap, TIMEOUT_MS, self.max_message, engine_minor, descriptors, 0)
        for p in (self.e.pool_path, self.e.control_path, self.ring_path or ""):
            welcome += struct.pack("<I", len(p)) + p.encode()
        if descriptors:
            socket.send_fds(conn, [welcome], [self.e.pool_fd, self.e.control_fd, ring_fd])
        else:
            conn.sendall(welcome)
        os.close(ring_fd)
        with self.e.lock:
            self.e.count(C_CLIENTS)
        conn.setblocking(False)
        try:
            self.loop()
        except Disconnect as d:
            self.disconnect.value = d.code
            self.wake()
        with self.e.lock:
            self.e.count(C_CLIENTS, -1)
            for s in self.slots:
                if s.state == "pin":
                    self.e.pins[s.page] -= 1
                elif s.state == "res":
                    self.e.give_back(s.page, s.tag, s.key)
        for fd in self.received.values():
            os.close(fd)
        conn.close()
        if self.ring_path:
            os.unlink(self.ring_path)

    def refuse(self, code, message):
        m = message.encode()
        self.conn.sendall(struct.pack("<II", 0x43574C45, code) + bytes(64) + struct.pack("<I", len(m)) + m)
        self.conn.close()

    def recv(self, n):
        b = b""
        while len(b) < n:
            chunk = self.conn.recv(n - len(b))
            if not chunk:
                raise SystemExit("client went away during HELLO")
            b += chunk
        return b

    # -- the socket after the WELCOME: DESCRIPTORS (section 2) --

    def read_socket(self):
        """Reads whatever the client wrote on its socket; False once it has closed it. Messages are read
        8 bytes at a time from their first byte, so each message's descriptors come with it."""
        while True:
            try:
                data, fds, flags, _ = socket.recv_fds(self.conn, 8 - len(self.sock_partial), 64)
            except BlockingIOError:
                return True
            except ConnectionResetError:
                return False
            if not data:
                for fd in fds:
                    os.close(fd)
                return False
            if self.minor < 2:  # read whatever comes and ignore it; descriptors sent with it are closed
                for fd in fds:
                    os.close(fd)
                continue
            if fds and self.sock_partial:
                self.close_all(fds)
                raise Disconnect(MALFORMED, "descriptors in the middle of a DESCRIPTORS message")
            if flags & socket.MSG_CTRUNC:
                self.close_all(fds)
                raise Disconnect(MALFORMED, "more descriptors than a message carries")
            if not self.sock_partial:
                self.sock_fds = fds
            self.sock_partial += data
            if len(self.sock_partial) < 8:
                continue
            magic, count = struct.unpack("<II", self.sock_partial)
            fds, self.sock_partial, self.sock_fds = self.sock_fds, b"", []
            if magic != 0x4446564B or not 1 <= count <= 16 or count != len(fds) or len(self.received) + count > 64:
                self.close_all(fds)
                raise Disconnect(MALFORMED, "DESCRIPTORS magic %#x count %d with %d descriptors (%d unnamed)"
                                 % (magic, count, len(fds), len(self.received)))
            for fd in fds:
                self.received[self.fd_next] = fd
                self.fd_next += 1

    @staticmethod
    def close_all(fds):
        for fd in fds:
            os.close(fd)

    # -- the request ring (section 4) --

    def loop(self):
        cap, data = self.e.cap, 4096
        while True:
            self.e.heartbeat.value += 1
            if not self.read_socket():
                return  # the client's socket closed: it is gone
            head, tail = self.req_head.value, self.req_tail.value
            if head == tail:
                self.e.doorbell.value = 1
                if self.req_tail.value == head:
                    futex_wait(self.e.doorbell, 1, 20000000)
                self.e.doorbell.value = 0  # the sleeper resets its word after every wait (section 5)
                continue
            at = head % cap
            if tail - head > cap or tail - head < 8:
                raise Disconnect(TOO_LONG, "Tail %d, Head %d" % (tail, head))
            length, typ = struct.unpack_from("<ii", self.ring, data + at)
            if length < 8:
                raise Disconnect(MALFORMED, "a record of Length %d" % length)
            if typ == 0:
                if length != cap - at:
                    raise Disconnect(MALFORMED, "padding of %d bytes at %d" % (length, at))
                self.req_head.value = head + length
                continue
            if at + length > cap or align8(length) > tail - head or length > self.max_message:
                raise Disconnect(TOO_LONG, "a record of %d bytes at %d" % (length, at))
            rec = bytes(self.ring[data + at:data + at + length])  # the engine acts on its own copy
            self.req_head.value = head + align8(length)
            self.requests += 1
            if self.e.args.die_on_request and self.requests == self.e.args.die_on_request:
                os._exit(9)  # as a killed engine: no answer, no Disconnect Reason, the socket ends
            if self.e.args.disconnect_after and self.requests > self.e.args.disconnect_after:
                raise Disconnect(24, "told to drop the client")  # TIMED_OUT
            if not self.read_socket():  # DESCRIPTORS sent before this request are read before it is handled
                return
            with self.e.lock:
                self.e.count(C_REQUESTS)
                going_on = self.handle(rec)
            if not going_on:
                return

    def wake(self):
        if self.sleeping.value == 1:
            self.sleeping.value = 0  # a waker that finds 1 stores 0 before FUTEX_WAKE (section 5)
            futex_wake(self.sleeping)

    def respond(self, typ, rid, status, count=0, first=0, entries=(), counters=(0, 0, 0, 0), body=b""):
        rec = struct.pack("<iiQiiiiiiii", 0, typ, rid, status, count, first, len(entries), *counters)
        rec += b"".join(struct.pack("<iii", *e) for e in entries) + body
        rec = struct.pack("<i", len(rec)) + rec[4:]
        tail = self.resp_tail.value
        at = tail % self.e.cap
        need = align8(len(rec))
        pad = self.e.cap - at if at + need > self.e.cap else 0
        while tail - self.resp_head.value + pad + need > self.e.cap:
            time.sleep(0.0005)
        data = 4096 + self.e.cap
        if pad:
            struct.pack_into("<ii", self.ring, data + at, pad, 0)
            at = 0
        self.ring[data + at:data + at + len(rec)] = rec
        self.resp_tail.value = tail + pad + need
        self.wake()
        return True

    def fail(self, typ, rid, status, count=0):
        return self.respond(typ, rid, status, count=count)

    def known(self, typ):
        return typ in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14) or (typ in DEVICE and self.minor >= 1) \
            or (typ in (LOOKUP_AND_LOCK, COMMIT_AND_RELEASE) and self.minor >= 3)

    def handle(self, rec):
        """Checks the request in section 4's order, then does it. False when the client ends."""
        length, typ = struct.unpack_from("<ii", rec)
        rid = struct.unpack_from("<Q", rec, 8)[0] if len(rec) >= 16 else 0
        if length < 32:
            return self.fail(typ, rid, MALFORMED)
        _, _, _, first, count, ns, flags, reserved = struct.unpack_from("<iiQiiHHI", rec)
        if not self.known(typ):
            return self.fail(typ, rid, UNKNOWN_TYPE)
        keyed = typ in KEYED
        if flags & ~3 or (flags & 1 and not keyed) or (flags & 2 and typ != COMMIT_AND_RELEASE):
            return self.fail(typ, rid, MALFORMED)
        if first < 0 or count < 0 or first + count > self.max_keys or (typ in NO_SLOTS and (first or count)):
            return self.fail(typ, rid, SLOT_RANGE)
        if keyed:
            expected = 32 if flags & 1 else 32 + 16 * count
        elif typ in (COMMIT, COMMIT_AND_RELEASE):
            expected = 32 + 4 * count
        elif typ == REGISTER_KV:
            allocations = struct.unpack_from("<i", rec, 72)[0] if length >= 80 else -1
            expected = 80 + 72 * allocations if 0 <= allocations <= 512 else -1
        elif typ in (DEVICE_LOAD, DEVICE_SAVE):
            expected = 40 + 8 * count
        else:
            expected = 32
        if length != expected:
            return self.fail(typ, rid, MALFORMED)
        limit = struct.unpack_from("<i", rec, 28)[0]  # a LOOKUP_AND_LOCK's Reserve Limit; reserved for every other Type
        if (reserved and typ != LOOKUP_AND_LOCK) or (typ == REGISTER_KV and (struct.unpack_from("<H", rec, 42)[0] or struct.unpack_from("<I", rec, 76)[0])) \
                or (typ in (DEVICE_LOAD, DEVICE_SAVE) and struct.unpack_from("<I", rec, 36)[0]):
            return self.fail(typ, rid, MALFORMED)
        if rid <= self.last_id:
            return self.fail(typ, rid, STALE)
        if ns >= max(1, self.n_ns):
            return self.fail(typ, rid, NS_DENIED)
        if typ == LOOKUP_AND_LOCK and not -1 <= limit <= count:
            return self.fail(typ, rid, INVALID)
        slots = [self.slots[s] for s in range(first, first + count)]
        keys = None
        if keyed:
            keys = [s.key for s in slots] if flags & 1 else [rec[32 + 16 * i:48 + 16 * i] for i in range(count)]
            for s, k in zip(slots, keys):
                if s.state and s.key != k:
                    return self.fail(typ, rid, SLOT_HELD)
                if (typ == RESERVE and s.state == "pin") or (typ in (ACQUIRE, LOOKUP_AND_LOCK) and s.state == "res"):
                    return self.fail(typ, rid, SLOT_HELD)
        self.last_id = rid
        if keys is not None:
            for s, k in zip(slots, keys):
                s.key = k
        tag = self.tags[ns] if self.n_ns else 0
        if typ == REGISTER_KV:
            return self.register_kv(rec, rid)
        if typ in (DEVICE_LOAD, DEVICE_SAVE):
            return self.device_copy(typ, rec, rid, first, slots)
        if typ == STATS:
            values = self.e.stats()
            return self.respond(typ, rid, OK, count=len(values), body=struct.pack("<I%dq" % len(values), len(values), *values))
        if typ == CLOSE:
            self.respond(typ, rid, OK)
            return False
        if typ == FLUSH:
            return self.respond(typ, rid, OK)  # write-through: no backup is ever in flight
        self.limit = limit
        n, counters, outcome = getattr(self, "op_%d" % typ)(slots, keys, tag, rec)
        entries = self.entries(slots, outcome)
        if self.e.args.short_entries and entries:
            entries = entries[:-1]  # breaks section 4 on purpose: a client must not trust such an answer
        return self.respond(typ, rid, OK, n, first, entries, counters)

    @staticmethod
    def entries(slots, outcome):
        """Section 4: a slot holding a pin is PINNED (or the status this request gave it), one holding a
        reservation RESERVED, with their page and generation; any other slot its outcome (NONE by
        default) with Page Id -1 and Generation 0."""
        out = []
        for i, s in enumerate(slots):
            if s.state == "pin":
                out.append((s.page, s.gen, outcome.get(i, PINNED)))
            elif s.state == "res":
                out.append((s.page, s.gen, RESERVED))
            else:
                out.append((-1, 0, outcome.get(i, NONE)))
        return out

    def visible(self, tag, key):
        """The pool page of that key under that namespace's tag, or None (section 8)."""
        return self.e.index.get((tag, key))

    def op_2(self, slots, keys, tag, rec):  # LOOKUP
        pool = 0
        while pool < len(keys) and self.visible(tag, keys[pool]) is not None:
            pool += 1
        l3 = 0
        while pool + l3 < len(keys) and (tag, keys[pool + l3]) in self.e.l3:
            l3 += 1
        outcome = {}
        if self.e.args.prefetch_waits and l3 >= PREFETCH_THRESHOLD:
            # the engine prefetches the L3 part and waits: those keys are LOADED and count in the pool
            while l3 and (page := self.e.load((tag, keys[pool]))) is not None:
                self.e.prefetched.add(page)
                outcome[pool] = LOADED
                pool, l3 = pool + 1, l3 - 1
        return pool + l3, (pool, l3, 0, 0), outcome

    def op_3(self, slots, keys, tag, rec):  # ACQUIRE
        outcome, from_pool, from_l3, ended = {}, 0, 0, False
        for i, (s, k) in enumerate(zip(slots, keys)):
            page = None if ended else self.visible(tag, k)
            loaded = False
            if page is None and not ended and (tag, k) in self.e.l3:
                page = self.e.load((tag, k))
                loaded = page is not None
            if page is None:
                ended = True
                if s.state == "pin":  # the prefix ended before it: it holds nothing now
                    self.e.pins[s.page] -= 1
                    s.page, s.gen, s.state = -1, 0, None
                outcome[i] = MISS
                continue
            if s.state == "pin" and s.page == page:
                outcome[i] = PINNED
                from_pool += 1
                continue
            if s.state == "pin":
                self.e.pins[s.page] -= 1
            self.e.pins[page] = self.e.pins.get(page, 0) + 1
            s.page, s.gen, s.state = page, self.e.generation[page], "pin"
            if loaded or page in self.e.prefetched:  # each load from L3 counted once, by its first pin
                self.e.prefetched.discard(page)
                outcome[i] = PINNED_FROM_L3
                from_l3 += 1
            else:
                outcome[i] = PINNED
                from_pool += 1
        return from_pool + from_l3, (0, 0, from_pool, from_l3), outcome

    def op_18(self, slots, keys, tag, rec):  # LOOKUP_AND_LOCK: ACQUIRE, then RESERVE of up to the limit's keys after the prefix
        pinned, (_, _, from_pool, from_l3), outcome = self.op_3(slots, keys, tag, rec)
        end = len(slots) if self.limit < 0 else min(len(slots), pinned + self.limit)
        reserved, _, more = self.op_5(slots[pinned:end], keys[pinned:end], tag, rec)
        for i in range(pinned, end):
            outcome.pop(i, None)  # the reserve's outcome, or RESERVED for a slot it reserved
        outcome.update({pinned + i: o for i, o in more.items()})
        return pinned, (reserved, 0, from_pool, from_l3), outcome

    def op_19(self, slots, keys, tag, rec):  # COMMIT_AND_RELEASE: RELEASE, then COMMIT (write-through: BACKUP has nothing to add)
        released, _, _ = self.op_4(slots, keys, tag, rec)
        committed, _, outcome = self.op_6(slots, keys, tag, rec)
        return committed, (released, 0, 0, 0), outcome

    def op_4(self, slots, keys, tag, rec):  # RELEASE
        n = 0
        for s in slots:
            if s.state == "pin":
                self.e.pins[s.page] -= 1
                s.page, s.gen, s.state = -1, 0, None
                n += 1
        return n, (0, 0, 0, 0), {}

    def op_5(self, slots, keys, tag, rec):  # RESERVE
        outcome, n = {}, 0
        for i, (s, k) in enumerate(zip(slots, keys)):
            if s.state == "res":
                n += 1
                continue
            if self.visible(tag, k) is not None:
                outcome[i] = EXISTS
            elif (tag, k) in self.e.reserving or any(ident[1] == k for ident in self.e.index):
                outcome[i] = BUSY  # being written, or another namespace's (never EXISTS: section 8)
            else:
                page = self.e.take_page()
                if page is None:
                    outcome[i] = POOL_FULL
                    continue
                self.e.reserving[(tag, k)] = page
                s.page, s.gen, s.state, s.tag = page, self.e.generation[page], "res", tag
                self.e.count(C_RESERVED)
                n += 1
        return n, (0, 0, 0, 0), outcome

    def op_6(self, slots, keys, tag, rec):  # COMMIT
        outcome, n = {}, 0
        lengths = struct.unpack_from("<%di" % len(slots), rec, 32)
        for i, (s, length) in enumerate(zip(slots, lengths)):
            if s.state != "res":
                continue
            if 1 <= length <= PAGE_SIZE:
                self.e.seal(s.page, s.tag, s.key, length)
                outcome[i] = COMMITTED
                n += 1
            else:
                self.e.give_back(s.page, s.tag, s.key)
                outcome[i] = PAGE_INVALID
            s.page, s.gen, s.state = -1, 0, None
        return n, (0, 0, 0, 0), outcome

    def op_7(self, slots, keys, tag, rec):  # ABORT
        n = 0
        for s in slots:
            if s.state == "res":
                self.e.give_back(s.page, s.tag, s.key)
                s.page, s.gen, s.state = -1, 0, None
                n += 1
        return n, (0, 0, 0, 0), {}

    def op_8(self, slots, keys, tag, rec):  # PREFETCH: the L3 part of the prefix into the pool
        i = 0
        while i < len(keys) and self.visible(tag, keys[i]) is not None:
            i += 1
        n = 0
        while i < len(keys) and (tag, keys[i]) in self.e.l3:
            page = self.e.load((tag, keys[i]))
            if page is None:
                break
            self.e.prefetched.add(page)
            n += 1
            i += 1
        return n, (0, 0, 0, 0), {}

    def op_9(self, slots, keys, tag, rec):  # BACKUP: pool pages not yet in L3
        n = 0
        for k in keys:
            page = self.visible(tag, k)
            if page is not None and (tag, k) not in self.e.l3:
                at = self.e.frame(page)
                self.e.l3[(tag, k)] = bytes(self.e.pool[at:at + PAGE_SIZE + TRAILER])
                n += 1
        return n, (0, 0, 0, 0), {}

    def op_11(self, slots, keys, tag, rec):  # EVICT: unpinned pages of those keys
        n = 0
        for k in keys:
            page = self.visible(tag, k)
            if page is not None and not self.e.pins.get(page):
                self.e.drop(page)
                self.e.count(C_EVICTED)
                n += 1
        return n, (0, 0, 0, 0), {}

    # -- device operations (section 10) --

    def register_kv(self, rec, rid):
        kind, device, arrangement, _, *shape = struct.unpack_from("<IiHH9i", rec, 32)
        layers, tensors, tokens, heads, dim, elem, blocks, count, _ = shape
        numbers = set()
        if kind == 3 and self.minor >= 2:
            numbers = {struct.unpack_from("<I", rec, 88 + 72 * i)[0] for i in range(count)}

        def answer(status, result):
            # the registration takes every descriptor it names, accepted or not (section 2)
            for number in numbers:
                fd = self.received.pop(number, None)
                if fd is not None:
                    os.close(fd)
            return self.respond(REGISTER_KV, rid, status, count=result)

        refuse = lambda detail: answer(INVALID, detail)  # noqa: E731
        # the order of section 10: TOO_MANY_LAYOUTS, HANDLE_KIND, ARRANGEMENT, SHAPE, ALLOCATION_COUNT,
        # PAGE_SIZE, TOO_SMALL for a negative Offset; then each allocation's handle and size
        if len(self.layouts) >= 8:
            return refuse(8)
        if kind not in (1, 2, 3) or (kind == 3 and self.minor < 2):
            return refuse(3)
        if arrangement not in (1, 2, 3):
            return refuse(2)
        if min(layers, tensors, tokens, heads, dim, elem, blocks) <= 0 or tensors not in (1, 2):
            return refuse(1)
        layout = Layout(arrangement, layers, tensors, tokens, heads * dim * elem, blocks)
        if layout.page_bytes * blocks >= 2 ** 63:
            return refuse(1)
        if count != {1: layers * tensors, 2: 1, 3: layers}[arrangement]:
            return refuse(4)
        if layout.page_bytes > PAGE_SIZE:
            return refuse(9)
        offsets = [struct.unpack_from("<q", rec, 80 + 72 * i)[0] for i in range(count)]
        if min(offsets, default=0) < 0:
            return refuse(7)
        need = {1: blocks * layout.slot, 2: layout.page_bytes * blocks, 3: blocks * tensors * layout.slot}[arrangement]
        maps = {}  # path or number -> mmap: allocations naming one file share its mapping
        try:
            for i in range(count):
                handle = rec[88 + 72 * i:152 + 72 * i]
                if kind == 1:
                    return refuse(5)  # NO_DEVICE: this engine has no CUDA
                name = handle.split(b"\0")[0] if kind == 2 else struct.unpack_from("<I", handle)[0]
                if name not in maps:
                    m = self.open_path(handle) if kind == 2 else self.open_fd(name)
                    if m is None:
                        return refuse(6)  # OPEN_FAILED
                    maps[name] = m
                if offsets[i] + need > len(maps[name]):
                    return refuse(7)  # TOO_SMALL
                layout.bases.append((maps[name], offsets[i]))
        finally:
            if len(layout.bases) != count:
                for m in maps.values():
                    m.close()
        layout_id = len(self.layouts) + 1
        self.layouts[layout_id] = layout
        return answer(OK, layout_id)

    def open_path(self, handle):
        """HOST_FILE: an absolute path with no symbolic link on it, a regular file of the peer's, which its
        owner may read and write, with no set-id bit; opened once, then checked on the descriptor."""
        if b"\0" not in handle:
            return None
        path = handle.split(b"\0")[0]
        if not path.startswith(b"/") or os.path.realpath(path) != os.path.normpath(path):
            return None
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or st.st_uid != self.peer_uid or st.st_mode & 0o600 != 0o600
                    or st.st_mode & (stat.S_ISUID | stat.S_ISGID) or st.st_size == 0):
                return None
            return mmap.mmap(fd, st.st_size)
        finally:
            os.close(fd)

    def open_fd(self, number):
        """HOST_FD: a descriptor received and not named before, a regular file opened read-write."""
        fd = self.received.get(number)
        if fd is None:
            return None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDWR or st.st_size == 0:
            return None
        return mmap.mmap(fd, st.st_size)

    def device_copy(self, typ, rec, rid, first, slots):
        layout_id = struct.unpack_from("<i", rec, 32)[0]
        layout = self.layouts.get(layout_id)
        if layout is None:
            return self.respond(typ, rid, INVALID)
        if layout.shrunk():
            # a copy would fault (section 10): the request fails as a whole; a save's reservations go back
            if typ == DEVICE_SAVE:
                for s in slots:
                    if s.state == "res":
                        self.e.give_back(s.page, s.tag, s.key)
                        s.page, s.gen, s.state = -1, 0, None
            return self.respond(typ, rid, INTERNAL_ERROR)
        pool, outcome, n, named = self.e.pool, {}, 0, set()
        for i, s in enumerate(slots):
            block, valid = struct.unpack_from("<ii", rec, 40 + 8 * i)
            in_range = 0 <= block < layout.blocks and 1 <= valid <= layout.tokens
            frame = self.e.frame(s.page)
            copied = valid * layout.token_bytes
            if typ == DEVICE_LOAD:
                if s.state != "pin":
                    continue
                length = struct.unpack_from("<Q", pool, frame + PAGE_SIZE + 24)[0]
                # a block counts as named only once an earlier slot is copied into it
                if not in_range or block in named or length != layout.page_bytes:
                    outcome[i] = PAGE_INVALID
                    continue
                named.add(block)
                for slot, (m, at) in layout.slots(block):
                    m[at:at + copied] = pool[frame + slot:frame + slot + copied]
                outcome[i] = COPIED
                self.e.count(C_LOADED)
                n += 1
            elif s.state == "res":
                if not in_range:
                    self.e.give_back(s.page, s.tag, s.key)
                    outcome[i] = PAGE_INVALID
                else:
                    pool[frame:frame + layout.page_bytes] = bytes(layout.page_bytes)
                    for slot, (m, at) in layout.slots(block):
                        pool[frame + slot:frame + slot + copied] = m[at:at + copied]
                    self.e.seal(s.page, s.tag, s.key, layout.page_bytes)
                    self.e.count(C_SAVED)
                    outcome[i] = COMMITTED
                    n += 1
                s.page, s.gen, s.state = -1, 0, None
        return self.respond(typ, rid, OK, n, first, self.entries(slots, outcome))


class Layout:
    """A registered layout: where block b of tensor (l, t) is, by section 10's arrangement table."""

    def __init__(self, arrangement, layers, tensors, tokens, token_bytes, blocks):
        self.arrangement, self.layers, self.tensors, self.tokens = arrangement, layers, tensors, tokens
        self.token_bytes, self.blocks = token_bytes, blocks
        self.slot = tokens * token_bytes
        self.page_bytes = layers * tensors * self.slot
        self.bases = []  # (mmap, offset) per allocation

    def shrunk(self):
        """True when a buffer's file is now shorter than its mapping (a copy would fault)."""
        return any(m.size() < len(m) for m, _ in self.bases)

    def slots(self, block):
        """(offset of the slot in a page-first page, (mmap, offset of the block)) for each (l, t)."""
        T, S, n = self.tensors, self.slot, self.blocks
        for l in range(self.layers):
            for t in range(T):
                index, offset = {1: (l * T + t, block * S), 2: (0, ((l * T + t) * n + block) * S),
                                 3: (l, (block * T + t) * S)}[self.arrangement]
                m, base = self.bases[index]
                yield (l * T + t) * S, (m, base + offset)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--refuse", type=int, default=0)
    ap.add_argument("--disconnect-after", type=int, default=0)
    ap.add_argument("--ring-bytes", type=int, default=4096)
    ap.add_argument("--die-on-request", type=int, default=0, help="exit at once on the client's Nth request")
    ap.add_argument("--clients", type=int, default=0, help="serve this many clients, one after another (0: for ever)")
    ap.add_argument("--engine-minor", type=int, default=3, choices=(1, 2, 3),
                    help="1: an engine before 1.2 (Engine Minor Version 0 in the WELCOME, paths, no descriptors)")
    ap.add_argument("--prefetch-waits", action="store_true",
                    help="a LOOKUP whose prefix has 4 or more L3 pages loads them and waits (policy.prefetch wait-complete)")
    ap.add_argument("--short-entries", action="store_true",
                    help="answer every keyed or slot request with one entry too few (a broken engine)")
    Engine(ap.parse_args()).serve()


if __name__ == "__main__":
    sys.exit(main())

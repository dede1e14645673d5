#!/usr/bin/env python3
"""A scripted stand-in for kvtier's engine, written from docs/ipc-protocol.md alone, for testing
the C client and this binding where the real engine cannot be made to misbehave (a refused HELLO,
a disconnect, a response ring that wraps). It is NOT kvtier's engine: a thread per client, a
dictionary for an index, no L3, no CRC, no leases. It speaks version 1.1: the device operations of
section 10 for HOST_FILE buffers (CUDA_IPC registrations are refused NO_DEVICE), copied with Python
slices. The real engine is tested end to end by
engine/.../IpcClientEndToEndTest.

    spec_engine.py DIR [--refuse CODE] [--disconnect-after N] [--ring-bytes B] [--clients N]
                   [--die-on-request N]
prints the socket path on its first line of stdout once it listens, then serves clients one after
another (a refusal or a disconnect ends it)."""

import argparse
import ctypes
import mmap
import os
import socket
import stat
import struct
import sys
import threading
import time

PAGE_SIZE, PAGE_COUNT, DATA_OFFSET, FRAME = 4096, 64, 4096, 4160
EPOCH = 0x1122334455667788
MAX_MESSAGE = 32 + 16 * 1024
TIMEOUT_MS = 30000

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
SYS_futex = {"x86_64": 202, "aarch64": 98, "riscv64": 98}.get(os.uname().machine, 202)
FUTEX_WAIT, FUTEX_WAKE = 0, 1


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def futex_wait(word, value, ns):
    ts = Timespec(ns // 1000000000, ns % 1000000000)
    _libc.syscall(ctypes.c_long(SYS_futex), ctypes.c_void_p(ctypes.addressof(word)), FUTEX_WAIT, value,
                  ctypes.byref(ts), None, 0)


def futex_wake(word):
    _libc.syscall(ctypes.c_long(SYS_futex), ctypes.c_void_p(ctypes.addressof(word)), FUTEX_WAKE, 1, None, None, 0)


def shared(path, size):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.ftruncate(fd, size)
    m = mmap.mmap(fd, size)
    os.close(fd)
    return m


def align8(n):
    return (n + 7) & ~7


class Engine:
    def __init__(self, args):
        self.args = args
        d = args.dir
        self.pool_path, self.control_path = os.path.join(d, "pool"), os.path.join(d, "pool.ipc")
        self.socket_path = os.path.join(d, "pool.sock")
        self.cap = args.ring_bytes
        self.pool = shared(self.pool_path, DATA_OFFSET + PAGE_COUNT * FRAME)
        self.control = shared(self.control_path, 4096)
        self.control[0:8] = b"KVTIPC01"
        struct.pack_into("<HH", self.control, 8, 1, 1)
        struct.pack_into("<QQ", self.control, 16, EPOCH, os.getpid())
        ctypes.c_uint32.from_buffer(self.control, 12).value = 1  # State OPEN, last
        self.heartbeat = ctypes.c_uint64.from_buffer(self.control, 64)
        self.doorbell = ctypes.c_uint32.from_buffer(self.control, 128)
        self.free = list(range(PAGE_COUNT))
        self.index = {}           # key -> page
        self.pins = {}            # page -> count
        self.lengths = {}         # page -> payload length, as committed
        self.lock = threading.Lock()

    def serve(self):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(self.socket_path)
        srv.listen(1)
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


class Session:
    """One client: its ring, its slots, its thread."""

    def __init__(self, engine):
        self.e = engine

    def serve(self, conn, client_id):
        # slot -> [key, page, state], state "pin", "res" or None
        self.slots, self.last_id, self.requests = {}, 0, 0
        self.layouts = {}  # layout id -> Layout
        self.peer_uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[1]
        self.ring_path = os.path.join(self.e.args.dir, "pool.client-%d-%x" % (client_id, os.getpid()))
        head = self.recv(conn, 24)
        magic, major, minor, max_keys, n_ns, pid, _ = struct.unpack("<IHHIIII", head)
        self.namespaces, self.minor = n_ns, minor
        self.recv(conn, 16 * n_ns)
        if self.e.args.refuse:
            msg = b"refused by the spec engine"
            conn.sendall(struct.pack("<II", 0x43574C45, self.e.args.refuse) + bytes(64) + struct.pack("<I", len(msg)) + msg)
            conn.close()
            return
        if magic != 0x4C4C4548 or major != 1:
            conn.sendall(struct.pack("<II", 0x43574C45, 35 if magic != 0x4C4C4548 else 32) + bytes(64) + struct.pack("<I", 0))
            return
        self.max_keys = min(max_keys, 1024)
        self.ring = shared(self.ring_path, 4096 + 2 * self.e.cap)
        self.ring[0:8] = b"KVTRING1"
        struct.pack_into("<IIQ", self.ring, 8, client_id, self.e.cap, EPOCH)
        self.req_tail, self.req_head = (ctypes.c_uint64.from_buffer(self.ring, o) for o in (64, 128))
        self.resp_tail, self.resp_head = (ctypes.c_uint64.from_buffer(self.ring, o) for o in (192, 256))
        self.sleeping = ctypes.c_uint32.from_buffer(self.ring, 320)
        self.disconnect = ctypes.c_uint32.from_buffer(self.ring, 448)
        welcome = struct.pack("<IIIIQIIQQIIIIQ", 0x43574C45, 0, client_id, self.max_keys, EPOCH, PAGE_SIZE, PAGE_COUNT,
                              DATA_OFFSET, FRAME, self.e.cap, TIMEOUT_MS, MAX_MESSAGE, 0, 0)
        for p in (self.e.pool_path, self.e.control_path, self.ring_path):
            welcome += struct.pack("<I", len(p)) + p.encode()
        conn.sendall(welcome)
        conn.setblocking(False)
        self.loop(conn)
        with self.e.lock:
            for page in [s[1] for s in self.slots.values() if s[2] == "pin"]:
                self.e.pins[page] -= 1
            self.e.free += [s[1] for s in self.slots.values() if s[2] == "res"]
        conn.close()
        os.unlink(self.ring_path)

    @staticmethod
    def recv(conn, n):
        b = b""
        while len(b) < n:
            chunk = conn.recv(n - len(b))
            if not chunk:
                raise SystemExit("client went away during HELLO")
            b += chunk
        return b

    def loop(self, conn):
        while True:
            self.e.heartbeat.value += 1
            head, tail = self.req_head.value, self.req_tail.value
            if head == tail:
                try:
                    if conn.recv(1) == b"":
                        return  # the client's socket closed: it is gone
                except BlockingIOError:
                    pass
                self.e.doorbell.value = 1
                if self.req_tail.value == head:
                    futex_wait(self.e.doorbell, 1, 20000000)
                self.e.doorbell.value = 0
                continue
            data = 4096
            at = head % self.e.cap
            length, typ = struct.unpack_from("<ii", self.ring, data + at)
            if typ == 0:
                self.req_head.value = head + align8(length)
                continue
            rec = bytes(self.ring[data + at:data + at + length])
            self.req_head.value = head + align8(length)
            self.requests += 1
            if self.e.args.die_on_request and self.requests == self.e.args.die_on_request:
                os._exit(9)  # as a killed engine: no answer, no Disconnect Reason, the socket ends
            if self.e.args.disconnect_after and self.requests > self.e.args.disconnect_after:
                self.disconnect.value = 24  # TIMED_OUT
                self.wake()
                return
            with self.e.lock:
                going_on = self.handle(rec)
            if not going_on:
                return

    def wake(self):
        if self.sleeping.value == 1:
            self.sleeping.value = 0
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

    def handle(self, rec):
        length, typ, rid, first, count, ns, flags = struct.unpack_from("<iiQiiHH", rec)
        body = rec[32:]
        keyed = typ in (2, 3, 5, 8, 9, 11)
        expected = 32 + (16 * count if keyed and not flags & 1 else 4 * count if typ == 6 else 0)
        device = typ in (15, 16, 17)
        if typ == 15:
            allocations = struct.unpack_from("<i", rec, 72)[0] if length >= 80 else -1
            expected = 80 + 72 * allocations if 0 <= allocations <= 512 else -1
        elif device:
            expected = 40 + 8 * count
        if typ not in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14) and not (device and self.minor >= 1):
            self.respond(typ, rid, 17)
            return True
        if length != expected or (device and flags != 0):
            self.respond(typ, rid, 16)
            return True
        if rid <= self.last_id:
            self.respond(typ, rid, 18)
            return True
        self.last_id = rid
        if first < 0 or count < 0 or first + count > self.max_keys or (typ == 15 and (first or count)):
            self.respond(typ, rid, 19)
            return True
        if typ == 15:
            self.register_kv(rec, rid)
            return True
        if device:
            self.device_copy(typ, rec, rid, first, count)
            return True
        if keyed and ns >= max(1, self.namespaces):
            self.respond(typ, rid, 21)
            return True
        slots = range(first, first + count)
        if keyed:
            keys = ([body[16 * i:16 * i + 16] for i in range(count)] if not flags & 1
                    else [self.slots.get(s, [None])[0] for s in slots])
            for s, k in zip(slots, keys):
                held = self.slots.get(s)
                if held and held[2] and held[0] != k:
                    self.respond(typ, rid, 20)
                    return True
            for s, k in zip(slots, keys):
                self.slots.setdefault(s, [k, -1, None])[0] = k
        entries, n, counters = [], 0, [0, 0, 0, 0]
        if typ == 2:  # LOOKUP
            for k in keys:
                if k not in self.e.index:
                    break
                n += 1
            counters[0] = n
            entries = [(-1, 0, 1 if i < n else 8) for i in range(count)]
        elif typ == 3:  # ACQUIRE
            missed = False
            for s, k in zip(slots, keys):
                page = None if missed else self.e.index.get(k)
                if page is None:
                    missed = True
                    entries.append((-1, 0, 8))
                    continue
                if self.slots[s][2] != "pin":
                    self.e.pins[page] = self.e.pins.get(page, 0) + 1
                self.slots[s][1:] = [page, "pin"]
                entries.append((page, 1, 1))
                n += 1
            counters[2] = n
        elif typ == 5:  # RESERVE
            for s, k in zip(slots, keys):
                if k in self.e.index:
                    entries.append((-1, 0, 5))
                elif self.slots[s][2] == "res":
                    entries.append((self.slots[s][1], 1, 3))
                    n += 1
                elif self.e.free:
                    page = self.e.free.pop(0)
                    self.slots[s][1:] = [page, "res"]
                    entries.append((page, 1, 3))
                    n += 1
                else:
                    entries.append((-1, 0, 7))
        elif typ in (4, 6, 7):  # RELEASE, COMMIT, ABORT
            lengths = struct.unpack_from("<%di" % count, body) if typ == 6 else [0] * count
            for s, ln in zip(slots, lengths):
                held = self.slots.get(s)
                state = held[2] if held else None
                if typ == 4 and state == "pin":
                    self.e.pins[held[1]] -= 1
                    held[1:] = [-1, None]
                    n += 1
                    entries.append((-1, 0, 0))
                elif typ == 6 and state == "res":
                    if not 1 <= ln <= PAGE_SIZE:
                        self.respond(typ, rid, 3)
                        return True
                    self.e.index[held[0]] = held[1]
                    self.e.lengths[held[1]] = ln
                    entries.append((held[1], 1, 4))
                    held[1:] = [-1, None]
                    n += 1
                elif typ == 7 and state == "res":
                    self.e.free.append(held[1])
                    held[1:] = [-1, None]
                    n += 1
                    entries.append((-1, 0, 0))
                else:
                    entries.append((held[1] if held else -1, 0, 0))
        elif typ == 14:  # STATS
            values = [self.requests, len(self.e.index), len(self.e.free)]
            self.respond(typ, rid, 0, body=struct.pack("<I%dq" % len(values), len(values), *values))
            return True
        elif typ == 13:  # CLOSE
            self.respond(typ, rid, 0)
            return False
        else:  # PREFETCH, BACKUP, FLUSH, EVICT: nothing to do without L3
            entries = [(-1, 0, 0)] * count
        self.respond(typ, rid, 0, n, first, entries, counters)
        return True


    # -- device operations (section 10) --

    def register_kv(self, rec, rid):
        kind, device, arrangement, _, *shape = struct.unpack_from("<IiHH9i", rec, 32)
        layers, tensors, tokens, heads, dim, elem, blocks, count, _ = shape
        refuse = lambda detail: self.respond(15, rid, 3, count=detail)  # noqa: E731
        if min(layers, tensors, tokens, heads, dim, elem, blocks) <= 0 or tensors not in (1, 2):
            return refuse(1)  # SHAPE
        layout = Layout(arrangement, layers, tensors, tokens, heads * dim * elem, blocks)
        if layout.page_bytes * blocks >= 2 ** 63:
            return refuse(1)
        if arrangement not in (1, 2, 3):
            return refuse(2)  # ARRANGEMENT
        if kind not in (1, 2):
            return refuse(3)  # HANDLE_KIND
        if count != {1: layers * tensors, 2: 1, 3: layers}[arrangement]:
            return refuse(4)  # ALLOCATION_COUNT
        if kind == 1:
            return refuse(5)  # NO_DEVICE: this engine has no CUDA
        if len(self.layouts) >= 8:
            return refuse(8)  # TOO_MANY_LAYOUTS
        if layout.page_bytes > PAGE_SIZE:
            return refuse(9)  # PAGE_SIZE
        need = {1: blocks * layout.slot, 2: layout.page_bytes * blocks, 3: blocks * tensors * layout.slot}[arrangement]
        maps = {}  # path -> mmap: allocations naming one file share its mapping
        try:
            for i in range(count):
                offset = struct.unpack_from("<q", rec, 80 + 72 * i)[0]
                handle = rec[88 + 72 * i:152 + 72 * i]
                path = handle.split(b"\0")[0]
                if b"\0" not in handle or not path.startswith(b"/"):
                    return refuse(6)  # OPEN_FAILED
                if path not in maps:
                    try:
                        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
                    except OSError:
                        return refuse(6)
                    try:
                        st = os.fstat(fd)
                        if not stat.S_ISREG(st.st_mode) or st.st_uid != self.peer_uid or st.st_size == 0:
                            return refuse(6)
                        maps[path] = mmap.mmap(fd, st.st_size)
                    finally:
                        os.close(fd)
                if offset < 0 or offset + need > len(maps[path]):
                    return refuse(7)  # TOO_SMALL
                layout.bases.append((maps[path], offset))
        finally:
            if len(layout.bases) != count:
                for m in maps.values():
                    m.close()
        layout_id = len(self.layouts) + 1
        self.layouts[layout_id] = layout
        self.respond(15, rid, 0, count=layout_id)

    def device_copy(self, typ, rec, rid, first, count):
        layout_id = struct.unpack_from("<i", rec, 32)[0]
        layout = self.layouts.get(layout_id)
        if layout is None:
            self.respond(typ, rid, 3)
            return
        pool, entries, n, named = self.e.pool, [], 0, set()
        for i, s in enumerate(range(first, first + count)):
            block, valid = struct.unpack_from("<ii", rec, 40 + 8 * i)
            held = self.slots.get(s)
            state = held[2] if held else None
            in_range = 0 <= block < layout.blocks and 1 <= valid <= layout.tokens
            page = held[1] if held else -1
            frame = DATA_OFFSET + page * FRAME
            copied = valid * layout.token_bytes
            if typ == 16:  # DEVICE_LOAD
                # Section 10: a block counts as named only once an earlier slot is copied into it.
                if state != "pin":
                    entries.append((-1, 0, 0))
                elif not in_range or block in named or self.e.lengths.get(page) != layout.page_bytes:
                    entries.append((page, 1, 10))
                else:
                    named.add(block)
                    for slot, (m, at) in layout.slots(block):
                        m[at:at + copied] = pool[frame + slot:frame + slot + copied]
                    entries.append((page, 1, 13))
                    n += 1
            elif state != "res":  # DEVICE_SAVE without a reservation
                entries.append((page, 0, 0))
            elif not in_range:
                self.e.free.append(page)
                held[1:] = [-1, None]
                entries.append((-1, 0, 10))
            else:
                pool[frame:frame + layout.page_bytes] = bytes(layout.page_bytes)
                for slot, (m, at) in layout.slots(block):
                    pool[frame + slot:frame + slot + copied] = m[at:at + copied]
                self.e.index[held[0]] = page
                self.e.lengths[page] = layout.page_bytes
                held[1:] = [-1, None]
                entries.append((page, 1, 4))
                n += 1
        self.respond(typ, rid, 0, n, first, entries)


class Layout:
    """A registered layout: where block b of tensor (l, t) is, by section 10's arrangement table."""

    def __init__(self, arrangement, layers, tensors, tokens, token_bytes, blocks):
        self.arrangement, self.layers, self.tensors, self.tokens = arrangement, layers, tensors, tokens
        self.token_bytes, self.blocks = token_bytes, blocks
        self.slot = tokens * token_bytes
        self.page_bytes = layers * tensors * self.slot
        self.bases = []  # (mmap, offset) per allocation

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
    Engine(ap.parse_args()).serve()


if __name__ == "__main__":
    sys.exit(main())

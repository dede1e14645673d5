/*
 * kvtier C client: attaches to a running `kvtier serve` over the IPC protocol of
 * docs/ipc-protocol.md (version 1.2) and reads and writes KV page bytes in place in the
 * mapped page pool, or has the engine copy them between the pool and the caller's own KV buffers
 * (the device operations of section 10: kvt_register_kv, kvt_device_load, kvt_device_save).
 *
 * Version 1.2: the HELLO announces minor version 2, and the engine passes the pool, the control file
 * and the client's ring as descriptors with its WELCOME, which the client maps (it opens no path, so a
 * process of another user than the engine's may attach); against an engine before 1.2 (or with
 * kvt_connect_minor(..., 1, ...)) the client opens the three paths instead, which only the engine's
 * own user can. kvt_send_descriptors() and kvt_register_host_fds() pass KV buffers as descriptors
 * (HOST_FD); kvt_read_page_trailer() and kvt_slot_payload_length() read a pinned page's trailer, and
 * kvt_counter() names the values kvt_stats() returns (section 11).
 *
 * Model (protocol section 1): a client has `max_keys` slots. A request writes keys into a run of
 * slots [first, first + count); the engine's answer for each key (the page it pinned or reserved,
 * that page's generation and a page status) stays in that slot until a later request changes it.
 * kvt_slot_page() / kvt_slot_addr() read that answer back.
 *
 * Threads: a kvt_client is used by one thread at a time (callers serialise). Each client runs
 * one background thread of its own that bumps its Client Heartbeat (protocol section 7).
 *
 * Errors: every call that talks to the engine returns a value >= 0 on success (the response's
 * Result Count where there is one) and -1 on failure; kvt_last_error() then gives the code:
 * the protocol's status and error codes (section 6: 1..35) or one of the client's own codes
 * (KVT_ERR_*, 100 and above). kvt_error_name() names any code; kvt_last_error_message() says more.
 */
#ifndef KVTIER_CLIENT_H
#define KVTIER_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- keys (docs/keys.md) ------------------------------------------------------------------ */

/** A page key or namespace root: the 16 digest bytes in order (bytes 0..7 are `high`). */
typedef struct kvt_key {
    uint8_t bytes[16];
} kvt_key;

/** root = SHA-256("kvtier:ns:v1" || field(model) || field(layout) || u32le(rank) || field(salt))[0:16].
 *  Strings are NUL-terminated UTF-8; salt may be NULL or "" for none. */
void kvt_namespace_root(const char *model_id, const char *kv_layout, uint32_t tp_rank,
                        const char *tenant_salt, kvt_key *root_out);

/** Keys of the pages of `tokens` under `root`, `tokens_per_page` tokens per page, chained as in
 *  keys.md. A last page with fewer tokens is keyed only when `include_partial` is non-zero.
 *  Writes at most `max_keys` keys and returns how many pages there are (which may exceed
 *  max_keys: call again with more room), or -1 when tokens_per_page is 0. */
int64_t kvt_page_keys(const kvt_key *root, const uint32_t *tokens, size_t n_tokens,
                      uint32_t tokens_per_page, int include_partial, kvt_key *keys_out,
                      size_t max_keys);

/** kvt_namespace_root() then kvt_page_keys(). */
int64_t kvt_compute_keys(const char *model_id, const char *kv_layout, uint32_t tp_rank,
                         const char *tenant_salt, const uint32_t *tokens, size_t n_tokens,
                         uint32_t tokens_per_page, int include_partial, kvt_key *keys_out,
                         size_t max_keys);

/** The key of a page SGLang names by `page_hash` (its chained SHA-256 hex string, `len` bytes of
 *  UTF-8, taken as is) under `root` (docs/keys.md, "Keys from an engine's own page ids").
 *  Returns 0, or -1 when the hash is empty or NULL. */
int kvt_sglang_page_key(const kvt_key *root, const char *page_hash, size_t len, kvt_key *key_out);

/** The key of a block vLLM names by `block_hash` (`len` bytes) in KV cache group `group_index`
 *  under `root`: the hash of vLLM's OffloadKey (block hash || u32be(group_index)). An int block hash
 *  is 32 bytes big-endian (docs/keys.md). Returns 0, or -1 when the hash is empty or NULL. */
int kvt_vllm_page_key(const kvt_key *root, const uint8_t *block_hash, size_t len, uint32_t group_index,
                      kvt_key *key_out);

/** The key's text form: 32 lowercase hex digits and a NUL into `out` (33 bytes). */
void kvt_key_hex(const kvt_key *key, char out[33]);

/* ---- codes (protocol section 6, then the client's own) ------------------------------------ */

enum {
    KVT_OK = 0,
    KVT_LEASE_EXPIRED = 1,
    KVT_CLOSED = 2,
    KVT_INVALID = 3,
    KVT_INTERNAL_ERROR = 4,
    KVT_MALFORMED = 16,
    KVT_UNKNOWN_TYPE = 17,
    KVT_STALE_REQUEST_ID = 18,
    KVT_SLOT_RANGE = 19,
    KVT_SLOT_HELD = 20,
    KVT_NAMESPACE_DENIED = 21,
    KVT_TOO_LONG = 22,
    KVT_NOT_READING = 23,
    KVT_TIMED_OUT = 24,
    KVT_VERSION = 32,
    KVT_NOT_ALLOWED = 33,
    KVT_TOO_MANY_CLIENTS = 34,
    KVT_BAD_HELLO = 35,
    /* the client's own codes: never sent on the wire */
    KVT_ERR_SYSTEM = 100,       /* a system call failed (the message names it and errno) */
    KVT_ERR_PROTOCOL = 101,     /* the engine sent something the protocol does not allow */
    KVT_ERR_ARGUMENT = 102,     /* the caller's arguments (slot range, NULL, too many keys) */
    KVT_ERR_ENGINE_GONE = 103,  /* control State CLOSED, heartbeat stopped or epoch changed */
    KVT_ERR_DISCONNECTED = 104, /* this client was disconnected earlier or has closed */
    KVT_ERR_TIMEOUT = 105,      /* no response within the client's response timeout */
    KVT_ERR_UNSUPPORTED = 106   /* the session's minor version (or the pool's layout) lacks what the call needs */
};

/** The code's name ("OK", "STALE_REQUEST_ID", "ERR_SYSTEM", ...), "UNKNOWN" for others. */
const char *kvt_error_name(int code);

/** Page statuses of a slot (protocol section 4, Response entries). */
enum {
    KVT_PAGE_NONE = 0,
    KVT_PAGE_PINNED = 1,
    KVT_PAGE_PINNED_FROM_L3 = 2,
    KVT_PAGE_RESERVED = 3,
    KVT_PAGE_COMMITTED = 4,
    KVT_PAGE_EXISTS = 5,
    KVT_PAGE_BUSY = 6,
    KVT_PAGE_POOL_FULL = 7,
    KVT_PAGE_MISS = 8,
    KVT_PAGE_EXPIRED = 9,
    KVT_PAGE_INVALID = 10,
    KVT_PAGE_LOADED = 12,
    KVT_PAGE_COPIED = 13 /* DEVICE_LOAD: the page's KV is in the block (version 1.1) */
};

/** The page status's name ("PINNED", ...), "UNKNOWN" for others. */
const char *kvt_page_status_name(int status);

/* ---- connection ----------------------------------------------------------------------------- */

typedef struct kvt_client kvt_client;

/** The header fields of the last response (protocol section 4, Response). */
typedef struct kvt_result {
    int32_t status;       /* 0 OK, else a section 6 code */
    int32_t result_count; /* pages pinned, reserved, committed, ... */
    int32_t first_slot;
    int32_t entry_count;
    int32_t pool_pages;   /* LOOKUP: leading pages found in the pool; LOOKUP_AND_LOCK: pages reserved;
                           * COMMIT_AND_RELEASE: pins dropped (1.3) */
    int32_t l3_pages;     /* LOOKUP: pages found in L3 after them */
    int32_t from_pool;    /* ACQUIRE: pages that were in the pool */
    int32_t from_l3;      /* ACQUIRE: pages loaded from L3 and verified */
} kvt_result;

/** The protocol version this library speaks: 1.3 (section 9). */
#define KVT_PROTOCOL_MAJOR 1
#define KVT_PROTOCOL_MINOR 3

/** Connects to the engine listening on `socket_path` (ipc.socket-path, by default
 *  `<pool.path>.sock`), sends HELLO (minor version 3) with `namespaces[0..ns_count)` (0..16 roots)
 *  and asks for `max_keys` slots (1..65536), then maps the pool, control and ring files: the three
 *  descriptors the WELCOME carries in a 1.2 session, or the three paths it names when the engine is
 *  older (its WELCOME says Descriptors 0).
 *  Returns the client or NULL; on NULL, `*error_out` (if not NULL) gets the code (a WELCOME
 *  status such as KVT_NOT_ALLOWED, or a KVT_ERR_*) and `message_out` (if not NULL) a message of
 *  at most `message_len` bytes including the NUL. */
kvt_client *kvt_connect(const char *socket_path, const kvt_key *namespaces, uint32_t ns_count,
                        uint32_t max_keys, int *error_out, char *message_out, size_t message_len);

/** kvt_connect() announcing `minor_version` (0 to 3) in the HELLO. Below 2 the session opens the
 *  three files by the paths the WELCOME names, which the engine allows only to its own user (section 2:
 *  a process that cannot receive descriptors announces 1); the operations of a later minor version
 *  are answered UNKNOWN_TYPE (0: no device operations; below 3: no LOOKUP_AND_LOCK, COMMIT_AND_RELEASE).
 *  A minor version above 3 is refused (KVT_ERR_ARGUMENT): this library speaks no more than 1.3. */
kvt_client *kvt_connect_minor(const char *socket_path, const kvt_key *namespaces, uint32_t ns_count,
                              uint32_t max_keys, uint16_t minor_version, int *error_out, char *message_out,
                              size_t message_len);

/** Sends CLOSE (when still connected), waits for its answer, stops the heartbeat thread,
 *  unmaps everything and frees the client. Every pin and reservation is given back by the
 *  engine. Returns 0, or -1 when the CLOSE could not be exchanged (the client is freed anyway). */
int kvt_close(kvt_client *client);

/** The code and message of the last failed call on this client (KVT_OK after a success). */
int kvt_last_error(const kvt_client *client);
const char *kvt_last_error_message(const kvt_client *client);

/** What WELCOME granted. */
uint32_t kvt_client_id(const kvt_client *client);
uint32_t kvt_max_keys(const kvt_client *client);
uint64_t kvt_epoch(const kvt_client *client);
uint32_t kvt_page_size(const kvt_client *client);
uint32_t kvt_page_count(const kvt_client *client);
uint32_t kvt_ring_capacity(const kvt_client *client);
uint32_t kvt_client_timeout_ms(const kvt_client *client);
/** The WELCOME's Max Message Length: the longest request record the engine takes. */
uint32_t kvt_max_message_length(const kvt_client *client);

/** The engine's minor version (WELCOME offset 60): 3 for a 1.3 engine, 2 for 1.2, 0 from an engine before 1.2. */
uint32_t kvt_engine_minor(const kvt_client *client);
/** The session's minor version: the lower of the HELLO's and the engine's (section 2); with an engine
 *  before 1.2 (Engine Minor Version 0) the lower of the HELLO's and 1. */
uint32_t kvt_session_minor(const kvt_client *client);
/** 1 when the three files came as descriptors with the WELCOME (a 1.2 session), 0 when they were
 *  opened by path. */
int kvt_descriptors_mapped(const kvt_client *client);

/** The WELCOME's paths, for messages: which is KVT_FILE_POOL, KVT_FILE_CONTROL or KVT_FILE_RING.
 *  In a 1.2 session the ring has no name and its path is "" (an anonymous memory file). */
enum { KVT_FILE_POOL = 0, KVT_FILE_CONTROL = 1, KVT_FILE_RING = 2 };
const char *kvt_file_path(const kvt_client *client, int which);

/** How long a call waits for its response before failing with KVT_ERR_TIMEOUT. By default (0) it
 *  waits as long as the engine lives: it fails only when the engine's heartbeat stops for Client
 *  Timeout, its State becomes CLOSED or it disconnects this client, so an ACQUIRE loading from a slow
 *  L3 or a long FLUSH is not cut short. A timed-out client is unusable: the answer may still come. */
void kvt_set_response_timeout_ms(kvt_client *client, uint32_t ms);

/** How a call waits for its response (docs/ipc-protocol.md section 5).
 *  KVT_WAIT_BACKOFF (the default): 200 spins, 200 sched_yield calls, then sleeps on the futex word Client
 *  Sleeping until the engine wakes it.
 *  KVT_WAIT_AWAKE: spins (with the CPU's pause instruction) for as long as the engine is awake (its
 *  Doorbell reads 0), whether or not it has taken the request, for a budget of twice the waits this
 *  client has seen (20 to 500 microseconds), then sleeps as above. It sleeps as soon as the engine is
 *  seen asleep twice in a row, and it never yields. On a busy host a yield hands the core to another
 *  process for its time slice, and this client would miss the answer of an engine back on its core.
 *  A request of 64 slots or more waits as KVT_WAIT_BACKOFF does: the engine's work for it is long, and
 *  spinning through it would hold a core the engine may need. */
enum { KVT_WAIT_BACKOFF = 0, KVT_WAIT_AWAKE = 1 };
/** Sets how the client waits for responses. Returns 0, or -1 with KVT_ERR_ARGUMENT naming the kind
 *  when `kind` is none of the KVT_WAIT_ values. */
int kvt_set_wait(kvt_client *client, int kind);

/* ---- requests --------------------------------------------------------------------------------
 * Keys go into slots [first_slot, first_slot + count) under namespace `ns` (an index into the
 * HELLO's namespaces; 0 when none were given). keys == NULL sends the request with flag
 * KEYS_IN_SLOTS: the keys already in those slots are used (every slot of the range must hold a key an
 * earlier accepted request of this client wrote: KVT_ERR_ARGUMENT otherwise). `result` may be NULL.
 * An answer with Status 0 has an entry for every slot of the range (section 4): a slot holding a pin
 * reads PINNED (or PINNED_FROM_L3), one holding a reservation RESERVED, any other the request's outcome
 * for its key (NONE, MISS, EXISTS, COMMITTED, ...) with page -1; what an earlier answer said of those
 * slots is gone. An answer breaking that rule ends the client with KVT_ERR_PROTOCOL.
 * Each returns the response's Result Count, or -1 (kvt_last_error()). */

int kvt_lookup(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
               kvt_result *result);
int kvt_acquire(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                kvt_result *result);
int kvt_release(kvt_client *c, int32_t first_slot, int32_t count, kvt_result *result);
int kvt_reserve(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                kvt_result *result);
/** lengths[i] (1..page size) is how many bytes were written into slot first_slot + i's page. */
int kvt_commit(kvt_client *c, int32_t first_slot, int32_t count, const int32_t *lengths,
               kvt_result *result);
int kvt_abort(kvt_client *c, int32_t first_slot, int32_t count, kvt_result *result);
int kvt_prefetch(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                 kvt_result *result);
int kvt_backup(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
               kvt_result *result);
int kvt_flush(kvt_client *c, kvt_result *result);
int kvt_evict(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
              kvt_result *result);
/** LOOKUP_AND_LOCK (1.3): pins the longest prefix of the keys as kvt_acquire() does, then reserves pages
 *  for keys after it as kvt_reserve() does, at most `reserve_limit` of them (0..count, or KVT_RESERVE_ALL
 *  for every one), in one round trip. Returns the prefix pinned; result->pool_pages is the pages reserved,
 *  and the slots say which holds what (PINNED, RESERVED, EXISTS, BUSY, POOL_FULL, MISS). A slot of the
 *  range that holds a reservation is refused (KVT_ERR_ARGUMENT, as the engine would answer SLOT_HELD);
 *  KVT_ERR_UNSUPPORTED in a session below 1.3. */
#define KVT_RESERVE_ALL (-1)
int kvt_lookup_and_lock(kvt_client *c, uint16_t ns, int32_t first_slot, const kvt_key *keys, int32_t count,
                        int32_t reserve_limit, kvt_result *result);
/** COMMIT_AND_RELEASE (1.3): drops the pins of the slots, then commits their reservations with these
 *  lengths (read only for reserved slots), in one round trip; `backup` non-zero copies each committed page
 *  to L3. Returns the pages committed; result->pool_pages is the pins dropped. */
int kvt_commit_and_release(kvt_client *c, int32_t first_slot, int32_t count, const int32_t *lengths, int backup,
                           kvt_result *result);
/** The engine's counters 0..n-1: writes min(n, capacity) values and returns n, or -1. Value i is the
 *  counter with id i, which kvt_counter() names. */
int kvt_stats(kvt_client *c, int64_t *values, uint32_t capacity);

/** Operation types (protocol section 4) for kvt_request(). */
enum {
    KVT_OP_LOOKUP = 2, KVT_OP_ACQUIRE = 3, KVT_OP_RELEASE = 4, KVT_OP_RESERVE = 5,
    KVT_OP_COMMIT = 6, KVT_OP_ABORT = 7, KVT_OP_PREFETCH = 8, KVT_OP_BACKUP = 9,
    KVT_OP_FLUSH = 10, KVT_OP_EVICT = 11, KVT_OP_CLOSE = 13, KVT_OP_STATS = 14,
    KVT_OP_REGISTER_KV = 15, KVT_OP_DEVICE_LOAD = 16, KVT_OP_DEVICE_SAVE = 17,
    KVT_OP_LOOKUP_AND_LOCK = 18, KVT_OP_COMMIT_AND_RELEASE = 19
};

/** Any request, as it goes on the wire: `body` of `body_len` bytes after the 32-byte header.
 *  The client checks nothing of it (the engine does); used by the others and by tests. */
int kvt_request(kvt_client *c, int32_t type, uint16_t ns, uint16_t flags, int32_t first_slot,
                int32_t count, const void *body, uint32_t body_len, kvt_result *result);

/** The Request Id the next request carries (ids start at 1 and grow by 1). Setting it to one
 *  already used makes the engine answer STALE_REQUEST_ID; for tests of that rule. */
uint64_t kvt_next_request_id(const kvt_client *c);
void kvt_set_next_request_id(kvt_client *c, uint64_t id);

/* ---- device operations (protocol section 10, version 1.1) -----------------------------------
 * The engine copies KV between the pool and the client's own KV buffers, so the client never
 * touches a page byte: kvt_register_kv() once per set of buffers, then kvt_device_save() (blocks
 * into reserved pages, committed) and kvt_device_load() (pinned pages into blocks). A page saved
 * this way holds one block page-first: slot (l x T + t) at offset (l x T + t) x S, S being
 * kvt_kv_slot_bytes(), its first valid tokens copied and the rest of each slot zero. */

/** Handle kinds: a cudaIpcMemHandle_t; the absolute path of a host file mapped MAP_SHARED; or (1.2) a
 *  host file passed as a descriptor (kvt_send_descriptors), named by its number (kvt_fd_handle). */
enum { KVT_HANDLE_CUDA_IPC = 1, KVT_HANDLE_HOST_FILE = 2, KVT_HANDLE_HOST_FD = 3 };

/** Where block b of tensor (l, t) lives; base[i] is allocation i's memory plus its offset.
 *  SEPARATE: L x T allocations (0,K), (0,V), (1,K), ...; block at base[l*T + t] + b*S.
 *  CONTIGUOUS: 1 allocation; block at base[0] + ((l*T + t)*blocks + b)*S.
 *  INTERLEAVED: L allocations; block at base[l] + (b*T + t)*S. */
enum { KVT_ARRANGEMENT_SEPARATE = 1, KVT_ARRANGEMENT_CONTIGUOUS = 2, KVT_ARRANGEMENT_INTERLEAVED = 3 };

/** What a REGISTER_KV answered INVALID refused (its Result Count): kvt_last_detail(). */
enum {
    KVT_REGISTER_SHAPE = 1,            /* a shape field not positive, T not 1 or 2, sizes overflow */
    KVT_REGISTER_ARRANGEMENT = 2,      /* not 1, 2 or 3 */
    KVT_REGISTER_HANDLE_KIND = 3,      /* not 1, 2 or 3 (3 only in a 1.2 session) */
    KVT_REGISTER_ALLOCATION_COUNT = 4, /* count does not match the arrangement (L x T, 1, L) */
    KVT_REGISTER_NO_DEVICE = 5,        /* CUDA_IPC, but no CUDA device of that ordinal */
    KVT_REGISTER_OPEN_FAILED = 6,      /* handle not opened; path not absolute, missing, a symlink, not ours;
                                          a descriptor number never received or named before, not a
                                          regular file, not open read-write */
    KVT_REGISTER_TOO_SMALL = 7,        /* an allocation smaller than the layout needs from its offset */
    KVT_REGISTER_TOO_MANY_LAYOUTS = 8, /* the client already has 8 layouts */
    KVT_REGISTER_PAGE_SIZE = 9         /* a block of this shape (L x T x S) is larger than a page */
};

/** The detail's name ("TOO_SMALL", ...), "UNKNOWN" for others (0 included). */
const char *kvt_register_detail_name(int detail);

#define KVT_HANDLE_BYTES 64
#define KVT_MAX_ALLOCATIONS 512
#define KVT_MAX_LAYOUTS 8

/** The layout's shape: L layers of T tensors (2: K and V; 1: an MLA latent), each block
 *  block_tokens tokens of [heads][head_dim] elements of element_bytes bytes. */
typedef struct kvt_kv_shape {
    int32_t layers;
    int32_t tensors;
    int32_t block_tokens;
    int32_t heads;
    int32_t head_dim;
    int32_t element_bytes;
} kvt_kv_shape;

/** S = block_tokens x heads x head_dim x element_bytes: one block of one tensor, and one slot of a
 *  saved page; 0 when a field is not positive or the product overflows. */
uint64_t kvt_kv_slot_bytes(const kvt_kv_shape *shape);
/** L x T x S: the payload of a page DEVICE_SAVE writes (at most the pool's page size); 0 as above. */
uint64_t kvt_kv_block_bytes(const kvt_kv_shape *shape);

/** One allocation: `offset` bytes into the memory `handle` names (a cudaIpcMemHandle_t's 64 bytes,
 *  a NUL-terminated absolute path, or a descriptor number made by kvt_fd_handle()) is where its tensor
 *  (SEPARATE), all of them (CONTIGUOUS) or its layer (INTERLEAVED) starts. */
typedef struct kvt_kv_allocation {
    uint64_t offset;
    uint8_t handle[KVT_HANDLE_BYTES];
} kvt_kv_allocation;

/** REGISTER_KV: tells the engine where the client's `blocks` blocks per tensor are and how they
 *  are laid out. `device` is the CUDA ordinal for KVT_HANDLE_CUDA_IPC (0 for host files). Once it is
 *  answered (a Layout Id or INVALID) the descriptor numbers a KVT_HANDLE_HOST_FD registration names are
 *  taken: kvt_descriptors_pending() no longer counts them.
 *  Returns the Layout Id (1, 2, ... in order of registration; at most 8 per client, each lasting
 *  as long as the client), or -1: kvt_last_error() KVT_INVALID with kvt_last_detail() saying
 *  what was refused (and `result->result_count` the same), or any other code. A refused
 *  registration changes nothing and the client carries on. The client checks only what it must
 *  to encode the request (count 0..512, NULL pointers); the engine checks the rest. */
int kvt_register_kv(kvt_client *c, uint32_t handle_kind, int32_t device, uint16_t arrangement,
                    const kvt_kv_shape *shape, int32_t blocks, const kvt_kv_allocation *allocations,
                    int32_t count, kvt_result *result);

/** kvt_register_kv() of KVT_HANDLE_HOST_FILE buffers: allocation i is `offsets[i]` (NULL: all 0)
 *  into the file at `paths[i]`, an absolute path of at most 63 bytes to a regular file (not
 *  reached through a symbolic link) owned by this process's user and mapped MAP_SHARED by it. The
 *  engine maps it too and checks its size; the file may be unlinked once this returns. */
int kvt_register_host_files(kvt_client *c, uint16_t arrangement, const kvt_kv_shape *shape, int32_t blocks,
                            const char *const *paths, const uint64_t *offsets, int32_t count,
                            kvt_result *result);

/* ---- descriptors (protocol 1.2: section 2's DESCRIPTORS message, section 10's HOST_FD) ----------
 * The engine numbers the descriptors a client passes from 0, in the order they arrive, across
 * messages; a REGISTER_KV naming a number takes that descriptor (the engine closes it once the
 * registration is answered, accepted or not), so each number is named once. At most 64 may be sent
 * and not yet named: more ends the client (MALFORMED), so the client refuses to send them. */

#define KVT_DESCRIPTORS_PER_MESSAGE 16
#define KVT_DESCRIPTORS_PENDING_MAX 64

/** Sends `count` (1..16) descriptors in one DESCRIPTORS message (sendmsg, SCM_RIGHTS). The engine gets
 *  its own copies: the caller may close its descriptors once this returns. Returns the number the
 *  engine gives the first of them (the others follow in order), or -1: KVT_ERR_UNSUPPORTED in a
 *  session below 1.2, KVT_ERR_ARGUMENT for a count outside 1..16 or one that would leave more than 64
 *  descriptors sent and not yet named. */
int64_t kvt_send_descriptors(kvt_client *c, const int *fds, uint32_t count);

/** Descriptors sent and not yet named by an answered REGISTER_KV. */
uint32_t kvt_descriptors_pending(const kvt_client *c);

/** A HOST_FD handle: the descriptor number as a u32, the other 60 bytes 0. */
void kvt_fd_handle(uint32_t number, uint8_t handle[KVT_HANDLE_BYTES]);

/** kvt_register_kv() of KVT_HANDLE_HOST_FD buffers (a 1.2 session): allocation i is `offsets[i]`
 *  (NULL: all 0) into the file open read-write at `fds[i]` (a regular file: a memfd_create file, or
 *  one under /dev/shm; the caller maps it MAP_SHARED). The distinct descriptors are sent first
 *  (kvt_send_descriptors), allocations naming one descriptor share its number and the engine's
 *  mapping. The engine never resolves a path; the caller keeps its descriptors and may close them once
 *  this returns. Returns the Layout Id or -1 as kvt_register_kv() (KVT_ERR_UNSUPPORTED below 1.2). */
int kvt_register_host_fds(kvt_client *c, uint16_t arrangement, const kvt_kv_shape *shape, int32_t blocks,
                          const int *fds, const uint64_t *offsets, int32_t count, kvt_result *result);

/** The detail (KVT_REGISTER_*) of the last call when it was a REGISTER_KV answered INVALID; else 0. */
int kvt_last_detail(const kvt_client *c);

/** DEVICE_LOAD: for each slot first_slot + i that holds a pin, the page's first valid_tokens[i]
 *  tokens of every slot are copied into block blocks[i] of layout `layout_id`; the slot keeps its
 *  pin (release it when done). Returns the number of KVT_PAGE_COPIED slots; each slot's status is
 *  COPIED, NONE (no pin), INVALID (block or valid tokens out of range, a block named by an earlier
 *  slot, or a page that is not a block of this shape) or EXPIRED (the pin was taken back: the
 *  block's bytes are not the page's). Tokens past valid_tokens and other blocks are left as they
 *  were. A layout id never given fails as a whole with KVT_INVALID, nothing copied. */
int kvt_device_load(kvt_client *c, int32_t layout_id, int32_t first_slot, const int32_t *blocks,
                    const int32_t *valid_tokens, int32_t count, kvt_result *result);

/** DEVICE_SAVE: for each slot that holds a reservation, block blocks[i]'s first valid_tokens[i]
 *  tokens are copied into the page page-first (the rest zero), then committed as a COMMIT of
 *  kvt_kv_block_bytes() bytes would be. Returns the number of KVT_PAGE_COMMITTED slots; the others
 *  are EXPIRED, NONE (no reservation) or INVALID (block or valid tokens out of range: the
 *  reservation is given back unwritten). The same block may be saved under several keys. */
int kvt_device_save(kvt_client *c, int32_t layout_id, int32_t first_slot, const int32_t *blocks,
                    const int32_t *valid_tokens, int32_t count, kvt_result *result);

/* ---- slots and pages ------------------------------------------------------------------------ */

/** What the last response said of `slot`: page id (-1 for none), generation, page status.
 *  Out-of-range slots read as -1 / 0 / KVT_PAGE_NONE. */
int32_t kvt_slot_page(const kvt_client *c, int32_t slot);
int32_t kvt_slot_generation(const kvt_client *c, int32_t slot);
int32_t kvt_slot_status(const kvt_client *c, int32_t slot);

/** Address of the first byte of page `page_id` in the mapped pool (page size bytes), or NULL
 *  for an id outside [0, page count). Read it while pinned; write it while reserved. */
void *kvt_page_addr(const kvt_client *c, int32_t page_id);

/** kvt_page_addr(kvt_slot_page(slot)): NULL when the slot holds no page. */
void *kvt_slot_addr(const kvt_client *c, int32_t slot);

/* ---- reading the pool file (protocol section 11) ---------------------------------------------- */

/** A page frame's trailer, right after the page's bytes: what its writer committed. */
typedef struct kvt_page_trailer {
    uint64_t key_high, key_low;  /* the page's key: bytes 0..7 and 8..15 read big-endian (keys.md) */
    uint64_t payload_length;     /* the bytes the writer committed; the rest of the page is zero */
    uint32_t payload_crc32c;     /* CRC32C (Castagnoli) of the first payload_length bytes */
    uint32_t frame_version;      /* 2 */
    uint64_t page_size;
    uint64_t commit_time_ms;     /* epoch milliseconds */
    uint64_t namespace_tag;      /* 0: no namespace */
    uint32_t trailer_crc32c;     /* CRC32C of the trailer's bytes 0..63 */
} kvt_page_trailer;

/** Reads page `page_id`'s trailer into `out`: 0, or -1 with KVT_ERR_ARGUMENT for an id outside the pool,
 *  KVT_ERR_PROTOCOL when its magic is not "KVTPAGE1" or its Trailer CRC32C does not match its bytes
 *  (a page never committed, or one being rewritten), KVT_ERR_UNSUPPORTED when the pool's layout
 *  version is not 3. It is stable only while a slot of this client holds the page's pin. */
int kvt_read_page_trailer(kvt_client *c, int32_t page_id, kvt_page_trailer *out);

/** The payload length of the page slot `slot` holds pinned (PINNED, PINNED_FROM_L3, or after a
 *  DEVICE_LOAD COPIED), read from its trailer, which must name the key this client put in the slot:
 *  the length, or -1 (KVT_ERR_ARGUMENT when the slot holds no pinned page, KVT_ERR_PROTOCOL when the
 *  trailer is not intact or names another key, as kvt_read_page_trailer). */
int64_t kvt_slot_payload_length(kvt_client *c, int32_t slot);

/** 1 when page `page_id`'s first Payload Length bytes have the trailer's Payload CRC32C, 0 when not,
 *  -1 as kvt_read_page_trailer(). Reads the whole payload: for checks, not for every read. */
int kvt_page_verify_payload(kvt_client *c, int32_t page_id);

/** CRC32C (Castagnoli, reflected, initial and final value 0xFFFFFFFF) of `n` bytes, as the engine
 *  computes a page's and a trailer's. */
uint32_t kvt_crc32c(const void *data, size_t n);

/** What the pool's counters region says of counter `id` (0..511): the name, type and meaning of STATS
 *  value `id`. */
#define KVT_COUNTERS_MAX 512
enum { KVT_COUNTER_GROWS = 1, KVT_COUNTER_GAUGE = 2, KVT_COUNTER_FACT = 3 };
typedef struct kvt_counter_info {
    int32_t id;
    uint32_t type;          /* KVT_COUNTER_GROWS, KVT_COUNTER_GAUGE or KVT_COUNTER_FACT (its value stays 0) */
    char name[53];          /* UTF-8, NUL-terminated (at most 52 bytes) */
    char description[189];  /* UTF-8, NUL-terminated (at most 188 bytes) */
} kvt_counter_info;

/** Reads counter `id`'s record: 1 when the counter exists (out filled), 0 when no counter has that id,
 *  -1 (KVT_ERR_ARGUMENT for an id outside 0..511; KVT_ERR_PROTOCOL for a record whose lengths run
 *  past their fields; KVT_ERR_UNSUPPORTED for a pool whose layout version is not 3). */
int kvt_counter(kvt_client *c, int32_t id, kvt_counter_info *out);

/** The id of the counter named `name`, or -1 (kvt_last_error() KVT_ERR_ARGUMENT when none has it). */
int32_t kvt_counter_id(kvt_client *c, const char *name);

/** Counter `id`'s value as the pool holds it now (what STATS would answer for it), or 0 for an id
 *  outside 0..511 or a pool whose layout version is not 3. */
int64_t kvt_counter_value(const kvt_client *c, int32_t id);

#ifdef __cplusplus
}
#endif

#endif

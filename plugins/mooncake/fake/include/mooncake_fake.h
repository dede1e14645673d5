/*
 * The kvtier project's Mooncake Store test double (plugins/mooncake/fake): our own declarations of the
 * Store's C ABI as the tier binds it (the 19 mooncake_store_* functions, their argument and result
 * conventions, the error codes the tier maps), the wire between the double's library and its master,
 * and the fault switches tests use. Not Mooncake: nothing here is taken from it; the facts it imitates are
 * the ones the project observed (docs/plugins/mooncake.md, "Behaviours and how the tier handles them").
 */
#ifndef KVTIER_MOONCAKE_FAKE_H
#define KVTIER_MOONCAKE_FAKE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The Store's C ABI, as the tier calls it ---------------------------------------------------- */

typedef void *mooncake_store_t;

/* 32 bytes on x86_64 and aarch64: replica count, two pin flags, preferred segment names. */
typedef struct
{
    size_t replica_num;
    int with_soft_pin;
    int with_hard_pin;
    const char **preferred_segments;
    size_t preferred_segments_count;
} mooncake_replicate_config_t;

mooncake_store_t mooncake_store_create(void);
void mooncake_store_destroy(mooncake_store_t store);
int mooncake_store_setup(mooncake_store_t store, const char *local_hostname, const char *metadata_server,
                         uint64_t global_segment_size, uint64_t local_buffer_size, const char *protocol,
                         const char *device_name, const char *master_server_addr);
int mooncake_store_init_all(mooncake_store_t store, const char *protocol, const char *device_name, uint64_t mount_segment_size);
int mooncake_store_health_check(mooncake_store_t store);
int mooncake_store_put(mooncake_store_t store, const char *key, const void *value, size_t size,
                       const mooncake_replicate_config_t *config);
int mooncake_store_put_from(mooncake_store_t store, const char *key, void *buffer, size_t size,
                            const mooncake_replicate_config_t *config);
int mooncake_store_batch_put_from(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count,
                                  const mooncake_replicate_config_t *config, int *results_out);
int64_t mooncake_store_get_into(mooncake_store_t store, const char *key, void *buffer, size_t size);
int mooncake_store_batch_get_into(mooncake_store_t store, const char **keys, void **buffers, const size_t *sizes, size_t count,
                                  int64_t *results_out);
int mooncake_store_is_exist(mooncake_store_t store, const char *key);
int mooncake_store_batch_is_exist(mooncake_store_t store, const char **keys, size_t count, int *results_out);
int64_t mooncake_store_get_size(mooncake_store_t store, const char *key);
int mooncake_store_get_hostname(mooncake_store_t store, char *buf_out, size_t buf_len);
int mooncake_store_remove(mooncake_store_t store, const char *key, int force);
int64_t mooncake_store_remove_by_regex(mooncake_store_t store, const char *pattern, int force);
int64_t mooncake_store_remove_all(mooncake_store_t store, int force);
int mooncake_store_register_buffer(mooncake_store_t store, void *buffer, size_t size);
int mooncake_store_unregister_buffer(mooncake_store_t store, void *buffer);

/* The Store's error codes the double answers with (negative; 0 is success). */
#define MC_INTERNAL_ERROR (-1)
#define MC_NO_AVAILABLE_HANDLE (-200)
#define MC_INVALID_PARAMS (-600)
#define MC_OBJECT_NOT_FOUND (-704)
#define MC_OBJECT_HAS_LEASE (-706)
#define MC_RPC_FAIL (-900)

/* ---- Fault injection (the double only) ------------------------------------------------------------ */

/* Operations a fault applies to; a batch call counts one operation per key. */
#define MOONCAKE_FAKE_OP_ANY 0
#define MOONCAKE_FAKE_OP_PUT 1    /* put, put_from, batch_put_from */
#define MOONCAKE_FAKE_OP_GET 2    /* get_into, batch_get_into */
#define MOONCAKE_FAKE_OP_EXIST 3  /* is_exist, batch_is_exist, get_size */
#define MOONCAKE_FAKE_OP_REMOVE 4 /* remove, remove_by_regex, remove_all */
#define MOONCAKE_FAKE_OP_SETUP 5  /* setup: each connection attempt */
#define MOONCAKE_FAKE_OP_UNMOUNT 6 /* a set-up client's destroy: its unmount (DELAY only, never OP_ANY's) */

/* Fault kinds. */
#define MOONCAKE_FAKE_FAIL 1        /* the operation returns `arg` (a negative code) without reaching the master */
#define MOONCAKE_FAKE_DELAY 2       /* the operation waits `arg` milliseconds, then runs */
#define MOONCAKE_FAKE_SHORT 3       /* a get copies and reports half the object's bytes */
#define MOONCAKE_FAKE_CORRUPT 4     /* a get delivers the object with one byte flipped, reporting its full size */
#define MOONCAKE_FAKE_UNREACHABLE 5 /* the master cannot be reached: RPC_FAIL (-900); a setup attempt fails */

/*
 * Arms a fault: of the next operations of kind `op`, `skip` pass untouched, then `count` get fault `kind`
 * (arg: the code for FAIL, milliseconds for DELAY). Up to 16 faults are armed at once; an operation meets
 * the first armed one that matches. Returns 0, or -1 for a bad argument or too many faults. The
 * environment variable KVTIER_MOONCAKE_FAKE_FAULTS arms faults at mooncake_store_create as
 * "op:kind:skip:count:arg" entries separated by commas (numbers as above), for processes a test starts.
 */
int mooncake_fake_inject(int op, int kind, int64_t skip, int64_t count, int64_t arg);

/* Disarms every fault. */
void mooncake_fake_reset(void);

/* Faults met so far (operations that a fault changed), since the process started or the last reset. */
int64_t mooncake_fake_faults_met(void);

/* ---- The wire between the library and the master (both ends are the double's) ------------------- */

/*
 * Every message is a little-endian u32 length followed by that many bytes. A request's first byte is an
 * operation below; a reply starts with an i64 result. Strings are a u32 length and the bytes, no NUL.
 */
#define MCF_MOUNT 1   /* u64 segment size, str local hostname -> result, str segment name */
#define MCF_PUT 2     /* str key, u32 n, n x str preferred segment, bytes value -> result */
#define MCF_GET 3     /* str key, u64 capacity -> result (size or code), bytes when result >= 0 */
#define MCF_EXIST 4   /* str key -> 1 or 0 */
#define MCF_SIZE 5    /* str key -> size or code */
#define MCF_REMOVE 6  /* str key, u32 force -> result */
#define MCF_REGEX 7   /* str pattern, u32 force -> objects removed or code */
#define MCF_ALL 8     /* u32 force -> objects removed */
#define MCF_PING 9    /* -> 0 */
#define MCF_UNMOUNT 10 /* -> 0: the connection's segment and the objects in it are gone */

#define MCF_MAX_MESSAGE (UINT32_C(1) << 31)

#ifdef __cplusplus
}
#endif

#endif

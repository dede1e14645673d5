/*
 * kvtier chaos client in C: one honest client of a `kvtier chaos` campaign, the C twin of bench's
 * ChaosClientProcess (io.kvtier.bench.chaos), speaking exactly its protocol. Run by the campaign as
 *     kvtier_chaos_client socket_path seed ack_file model_id [wrong-writer]
 * it attaches over IPC with the namespace (model_id, "chaos-page16", rank 0, no salt) and 64 slots,
 * then serves requests drawn from its seed (SplittableRandom's draws, so the same seed makes the same
 * requests as the Java client): a prefix shared by every client (a system prompt) and one
 * conversation's turns so far. For each it pins the cached prefix and checks every pinned page against
 * the bytes derived from its key (bench's PagePattern, chaos/page_pattern.h), reserves, writes and
 * commits the rest, and every fourth request FLUSHes, EVICTs the request's pages and LOOKUPs each key
 * alone: the keys the engine then holds in L3 and not in the pool go to the acknowledgement file as
 * "<epoch ms> <key hex>" lines.
 *
 * Stdout, one line each: READY; after every request "T verified wrong committed acked requests
 * refused" (this process's totals); "W <key hex>" for each wrong page; "PAUSED <point>"; "LATE <n>".
 * Stdin: "PAUSE pins" (stop next while holding pins), "PAUSE write" (stop next while holding
 * reservations, the pages written), "GO", "POISON" (after a pause at write: write poison into the
 * reserved pages and try to commit them, then exit 3 when nothing landed, 4 when something did).
 * The end of stdin ends the process (exit 0). It exits 3 when it cannot attach or the engine drops it.
 *
 * Where it differs from the Java: a pinned page's payload length comes from kvt_slot_payload_length,
 * which also checks the trailer's magic, CRC32C and key (the Java client reads the length alone); a
 * trailer failing those counts the page wrong, with the library's reason on stderr.
 */
#include "kvtier_client.h"
#include "page_pattern.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_KEYS 64
#define PAGE_TOKENS 16
#define TURNS 16
#define POISON 0xDEADBEEFDEADBEEFull
#define LAYOUT "chaos-page16"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static char pause_at[32];
/* The campaign's commands other than PAUSE, oldest first. */
static char *queue[64];
static int queued;

static kvt_client *client;
static kvt_key root;
static kvt_key keys[MAX_KEYS];
static uint32_t tokens[MAX_KEYS * PAGE_TOKENS];
static int turns[TURNS];
static kvt_split_random draws;
static int ack_fd;
static int wrong_writer;
static uint32_t page_size;
static long long verified, wrong, committed, acked, requests, refused;

/* The engine dropped this client, or went away: the campaign starts another. */
static void dropped(const char *call)
{
    fprintf(stderr, "chaos client: the engine dropped this client: %s: %s (%s)\n", call, kvt_error_name(kvt_last_error(client)),
            kvt_last_error_message(client));
    exit(3);
}

/* Reads the campaign's commands; the end of stdin ends the process, as the campaign is gone. */
static void *read_commands(void *unused)
{
    (void)unused;
    char *line = NULL;
    size_t room = 0;
    ssize_t n;
    while ((n = getline(&line, &room, stdin)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
            line[--n] = '\0';
        }
        pthread_mutex_lock(&lock);
        if (strncmp(line, "PAUSE ", 6) == 0) {
            snprintf(pause_at, sizeof pause_at, "%s", line + 6);
        } else if (queued < (int)(sizeof queue / sizeof queue[0])) {
            queue[queued++] = strdup(line);
            pthread_cond_signal(&arrived);
        }
        pthread_mutex_unlock(&lock);
    }
    _exit(0);
}

/* The campaign's next command once this client stopped at `point` (the caller frees it), else NULL. */
static char *pause_here(const char *point)
{
    pthread_mutex_lock(&lock);
    if (strcmp(pause_at, point) != 0) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    pause_at[0] = '\0';
    printf("PAUSED %s\n", point);
    fflush(stdout);
    while (queued == 0) {
        pthread_cond_wait(&arrived, &lock);
    }
    char *command = queue[0];
    memmove(queue, queue + 1, sizeof queue[0] * (size_t)--queued);
    pthread_mutex_unlock(&lock);
    return command;
}

/* The next request's tokens (ChaosClientProcess.nextRequest): returns how many. */
static size_t next_request(void)
{
    /* A prefix of 4 to 11 pages shared by every client (one of 8 system prompts), then one of 16
     * conversations' turns so far, which grows by a page each time it is drawn and starts over at 16. */
    int group = kvt_random_next_bounded(&draws, 8);
    int prefix_pages = 4 + group;
    int conversation = kvt_random_next_bounded(&draws, TURNS);
    turns[conversation] = turns[conversation] % 16 + 1;
    size_t at = 0;
    for (int i = 0; i < prefix_pages * PAGE_TOKENS; i++) {
        tokens[at++] = (uint32_t)(group * 1000003 + i);
    }
    for (int i = 0; i < turns[conversation] * PAGE_TOKENS; i++) {
        tokens[at++] = (uint32_t)(50000000 + conversation * 100003 + i);
    }
    return at;
}

static uint64_t high(int i) { return kvt_pattern_be64(keys[i].bytes); }
static uint64_t low(int i) { return kvt_pattern_be64(keys[i].bytes + 8); }

/* Whether a refused COMMIT means the engine dropped this client (ChaosClientProcess.isDropped). */
static int is_dropped(int code)
{
    switch (code) {
    case KVT_INVALID:
    case KVT_SLOT_HELD:
    case KVT_SLOT_RANGE:
    case KVT_NAMESPACE_DENIED:
    case KVT_UNKNOWN_TYPE:
    case KVT_MALFORMED:
        return 0;
    default:
        return 1;
    }
}

/* The late writer: woken past its lease, it writes poison into its reserved pages and tries to commit
 * them. The engine must refuse (the client was dropped); the pages, in quarantine, are never served. */
static void poison_and_commit(int count, const int32_t *lengths)
{
    for (int i = 0; i < count; i++) {
        if (kvt_slot_status(client, i) == KVT_PAGE_RESERVED) {
            uint8_t *page = kvt_slot_addr(client, i);
            for (size_t at = 0; at < page_size; at += 8) {
                kvt_pattern_put(page, at, POISON);
            }
        }
    }
    int landed = kvt_commit(client, 0, count, lengths, NULL);
    if (landed < 0) {
        landed = 0;
    }
    printf("LATE %d\n", landed);
    fflush(stdout);
    exit(landed == 0 ? 3 : 4);
}

/* FLUSH, EVICT of the request's pages, then a LOOKUP of each key alone: those in L3 and not in the
 * pool are appended to the acknowledgement file. */
static void acknowledge(int n)
{
    if (kvt_flush(client, NULL) < 0) {
        dropped("FLUSH");
    }
    if (kvt_evict(client, 0, 0, keys, n, NULL) < 0) {
        dropped("EVICT");
    }
    /* One key at a time: a LOOKUP's L3 Pages counts the prefix past the pool's run, pool pages after
     * the first L3 one included, so only a lookup of the key alone says the engine holds it in L3 and
     * not in the pool (where a backup may still be failing). */
    char lines[MAX_KEYS * 64];
    size_t used = 0;
    int in_l3 = 0;
    for (int i = 0; i < n; i++) {
        kvt_result where;
        if (kvt_lookup(client, 0, 0, &keys[i], 1, &where) < 0) {
            dropped("LOOKUP");
        }
        if (where.pool_pages == 0 && where.l3_pages == 1) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            char hex[33];
            kvt_key_hex(&keys[i], hex);
            used += (size_t)snprintf(lines + used, sizeof lines - used, "%lld %s\n",
                                     (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, hex);
            in_l3++;
        }
    }
    for (size_t off = 0; off < used;) {
        ssize_t w = write(ack_fd, lines + off, used - off);
        if (w < 0 && errno != EINTR) {
            fprintf(stderr, "chaos client: cannot write the acknowledgement file: %s\n", strerror(errno));
            exit(1);
        }
        off += w > 0 ? (size_t)w : 0;
    }
    acked += in_l3;
}

/* One request: pin and check the cached prefix, write and commit the rest, every fourth time acknowledge. */
static void serve_one(void)
{
    size_t token_count = next_request();
    int n = (int)kvt_page_keys(&root, tokens, token_count, PAGE_TOKENS, 0, keys, MAX_KEYS);
    int cached = kvt_acquire(client, 0, 0, keys, n, NULL);
    if (cached < 0) {
        dropped("ACQUIRE");
    }
    for (int i = 0; i < cached; i++) {
        int64_t length = kvt_slot_payload_length(client, i);
        if (length < 0) {
            fprintf(stderr, "chaos client: slot %d: %s\n", i, kvt_last_error_message(client));
        }
        if (length == (int64_t)page_size && kvt_pattern_matches(kvt_slot_addr(client, i), high(i), low(i), page_size)) {
            verified++;
        } else {
            char hex[33];
            kvt_key_hex(&keys[i], hex);
            wrong++;
            printf("W %s\n", hex);
        }
    }
    char *command = pause_here("pins");
    if (command != NULL && strcmp(command, "GO") != 0) {
        fprintf(stderr, "chaos client: unexpected command while holding pins: %s\n", command);
        exit(1);
    }
    free(command);
    if (cached > 0 && kvt_release(client, 0, n, NULL) < 0) {
        dropped("RELEASE");
    }
    if (cached < n) {
        int count = n - cached;
        int reserved = kvt_reserve(client, 0, 0, keys + cached, count, NULL);
        if (reserved < 0) {
            dropped("RESERVE");
        }
        int32_t lengths[MAX_KEYS];
        int mine = 0;
        for (int i = 0; i < count; i++) {
            /* A slot without a reservation is answered NONE whatever its length; send a valid one. */
            lengths[i] = (int32_t)page_size;
            if (kvt_slot_status(client, i) == KVT_PAGE_RESERVED) {
                /* The wrong writer fills a page with the next key's bytes: sealed and committed, the
                 * engine has no way to tell, and only a reader's check can. */
                int key = wrong_writer && cached + i + 1 < n ? cached + i + 1 : cached + i;
                kvt_pattern_fill(kvt_slot_addr(client, i), high(key), low(key), page_size);
                mine++;
            }
        }
        command = pause_here("write");
        if (command != NULL && strcmp(command, "POISON") == 0) {
            poison_and_commit(count, lengths);
        }
        free(command);
        if (mine > 0) {
            int done = kvt_commit(client, 0, count, lengths, NULL);
            if (done >= 0) {
                committed += done;
            } else {
                refused++;
                if (is_dropped(kvt_last_error(client))) {
                    dropped("COMMIT");
                }
                /* Refused: what is still reserved is given back (the Java lease's close aborts it). */
                if (kvt_abort(client, 0, count, NULL) < 0) {
                    dropped("ABORT");
                }
            }
        }
    }
    requests++;
    if (requests % 4 == 0) {
        acknowledge(n);
    }
    printf("T %lld %lld %lld %lld %lld %lld\n", verified, wrong, committed, acked, requests, refused);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s socket_path seed ack_file model_id [wrong-writer]\n", argv[0]);
        return 2;
    }
    char *end;
    errno = 0;
    long long seed = strtoll(argv[2], &end, 10);
    if (errno != 0 || *end != '\0' || end == argv[2]) {
        fprintf(stderr, "chaos client: seed '%s' is not a 64-bit integer\n", argv[2]);
        return 2;
    }
    draws.seed = (uint64_t)seed;
    setvbuf(stdout, NULL, _IOLBF, 0);
    wrong_writer = argc > 5 && strcmp(argv[5], "wrong-writer") == 0;
    kvt_namespace_root(argv[4], LAYOUT, 0, "", &root);
    int error = 0;
    char message[512];
    client = kvt_connect(argv[1], &root, 1, MAX_KEYS, &error, message, sizeof message);
    if (client == NULL) {
        fprintf(stderr, "chaos client: cannot attach: %s: %s\n", kvt_error_name(error), message);
        return 3;
    }
    page_size = kvt_page_size(client);
    ack_fd = open(argv[3], O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
    if (ack_fd < 0) {
        fprintf(stderr, "chaos client: cannot open the acknowledgement file %s: %s\n", argv[3], strerror(errno));
        return 1;
    }
    pthread_t reader;
    if (pthread_create(&reader, NULL, read_commands, NULL) != 0) {
        fprintf(stderr, "chaos client: cannot start the thread reading stdin\n");
        return 1;
    }
    printf("READY\n");
    fflush(stdout);
    for (;;) {
        serve_one();
    }
}

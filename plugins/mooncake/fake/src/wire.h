/*
 * Framing shared by the double's library and master: a growable buffer to build a message in, a cursor to
 * read one, and whole-message socket I/O. Little-endian on the wire, as both ends run on one machine kind.
 */
#ifndef KVTIER_MOONCAKE_FAKE_WIRE_H
#define KVTIER_MOONCAKE_FAKE_WIRE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "mooncake_fake.h"

typedef struct
{
    uint8_t *data;
    size_t len;
    size_t cap;
    int failed; /* an allocation failed: the message must not be sent */
} mcf_buf;

typedef struct
{
    const uint8_t *data;
    size_t len;
    size_t pos;
    int bad; /* read past the end: the message is malformed */
} mcf_cursor;

static inline void mcf_buf_init(mcf_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = 0;
}

static inline void mcf_buf_free(mcf_buf *b)
{
    free(b->data);
    mcf_buf_init(b);
}

/* Reserves room for the u32 length the message starts with; mcf_send fills it in. */
static inline uint8_t *mcf_reserve(mcf_buf *b, size_t n)
{
    if (b->failed)
    {
        return NULL;
    }
    if (b->len + n > b->cap)
    {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
        {
            cap *= 2;
        }
        uint8_t *grown = realloc(b->data, cap);
        if (grown == NULL)
        {
            b->failed = 1;
            return NULL;
        }
        b->data = grown;
        b->cap = cap;
    }
    uint8_t *at = b->data + b->len;
    b->len += n;
    return at;
}

static inline void mcf_put_bytes(mcf_buf *b, const void *bytes, size_t n)
{
    uint8_t *at = mcf_reserve(b, n);
    if (at != NULL && n > 0)
    {
        memcpy(at, bytes, n);
    }
}

static inline void mcf_put_u8(mcf_buf *b, uint8_t v)
{
    mcf_put_bytes(b, &v, 1);
}

static inline void mcf_put_u32(mcf_buf *b, uint32_t v)
{
    mcf_put_bytes(b, &v, 4);
}

static inline void mcf_put_u64(mcf_buf *b, uint64_t v)
{
    mcf_put_bytes(b, &v, 8);
}

static inline void mcf_put_str(mcf_buf *b, const char *s)
{
    const size_t n = strlen(s);
    mcf_put_u32(b, (uint32_t)n);
    mcf_put_bytes(b, s, n);
}

/* Starts a message: the length placeholder. */
static inline void mcf_begin(mcf_buf *b)
{
    b->len = 0;
    b->failed = 0;
    mcf_put_u32(b, 0);
}

static inline int mcf_take(mcf_cursor *c, void *out, size_t n)
{
    if (c->bad || c->len - c->pos < n)
    {
        c->bad = 1;
        return -1;
    }
    memcpy(out, c->data + c->pos, n);
    c->pos += n;
    return 0;
}

static inline uint8_t mcf_u8(mcf_cursor *c)
{
    uint8_t v = 0;
    mcf_take(c, &v, 1);
    return v;
}

static inline uint32_t mcf_u32(mcf_cursor *c)
{
    uint32_t v = 0;
    mcf_take(c, &v, 4);
    return v;
}

static inline uint64_t mcf_u64(mcf_cursor *c)
{
    uint64_t v = 0;
    mcf_take(c, &v, 8);
    return v;
}

/* A string of the message, copied and NUL-terminated (free it), or NULL when malformed or out of memory. */
static inline char *mcf_str(mcf_cursor *c)
{
    const uint32_t n = mcf_u32(c);
    if (c->bad || c->len - c->pos < n)
    {
        c->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (s == NULL)
    {
        c->bad = 1;
        return NULL;
    }
    memcpy(s, c->data + c->pos, n);
    s[n] = '\0';
    c->pos += n;
    return s;
}

static inline int mcf_write_full(int fd, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0)
    {
        const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
        {
            continue;
        }
        if (w <= 0)
        {
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static inline int mcf_read_full(int fd, void *data, size_t n)
{
    uint8_t *p = data;
    while (n > 0)
    {
        const ssize_t r = recv(fd, p, n, 0);
        if (r < 0 && errno == EINTR)
        {
            continue;
        }
        if (r <= 0)
        {
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Sends the message built in b (its length filled in). */
static inline int mcf_send(int fd, mcf_buf *b)
{
    if (b->failed || b->len - 4 > MCF_MAX_MESSAGE)
    {
        return -1;
    }
    const uint32_t body = (uint32_t)(b->len - 4);
    memcpy(b->data, &body, 4);
    return mcf_write_full(fd, b->data, b->len);
}

/* Reads one message's body into a fresh allocation (free it); -1 on a closed or broken connection. */
static inline int mcf_receive(int fd, uint8_t **body, size_t *len)
{
    uint32_t n = 0;
    if (mcf_read_full(fd, &n, 4) != 0 || n > MCF_MAX_MESSAGE)
    {
        return -1;
    }
    uint8_t *data = malloc(n ? n : 1);
    if (data == NULL)
    {
        return -1;
    }
    if (mcf_read_full(fd, data, n) != 0)
    {
        free(data);
        return -1;
    }
    *body = data;
    *len = n;
    return 0;
}

#endif

/* store_proto.h — upstream TCPStore's wire protocol (c10d TCPStoreBackend), shared by our
 * server and client, and a small growable byte buffer to build and parse messages.
 *
 * Every message is a one-byte query type followed by its arguments in host byte order
 * (little-endian on every platform upstream ships): strings and byte vectors are a
 * uint64 length then the bytes; counts are uint64; ADD's delta and integer replies are
 * int64. A new connection must first send VALIDATE + uint32 magic; the client then
 * PINGs with a uint32 nonce that the server echoes. The C++ client prefixes user keys
 * with "/" (TCPStore::keyPrefix_), the worker count lives under "init/".
 *
 * Plain C11; no Python. */
#ifndef TN_DIST_STORE_PROTO_H
#define TN_DIST_STORE_PROTO_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

enum {
    TN_STORE_Q_VALIDATE = 0,
    TN_STORE_Q_SET,
    TN_STORE_Q_COMPARE_SET,
    TN_STORE_Q_GET,
    TN_STORE_Q_ADD,
    TN_STORE_Q_CHECK,
    TN_STORE_Q_WAIT,
    TN_STORE_Q_GETNUMKEYS,
    TN_STORE_Q_DELETE_KEY,
    TN_STORE_Q_APPEND,
    TN_STORE_Q_MULTI_GET,
    TN_STORE_Q_MULTI_SET,
    TN_STORE_Q_CANCEL_WAIT,
    TN_STORE_Q_PING,
    TN_STORE_Q_QUEUE_PUSH,
    TN_STORE_Q_QUEUE_POP,
    TN_STORE_Q_QUEUE_LEN,
    TN_STORE_Q_LIST_KEYS,   /* reply: int64 count, then each key as a string */
    TN_STORE_Q_BARRIER,     /* key, int64 world size; STOP_WAITING once world size arrived */
    TN_STORE_Q_COUNT_
};

enum { TN_STORE_CHECK_READY = 0, TN_STORE_CHECK_NOT_READY = 1 };
enum { TN_STORE_WAIT_STOP_WAITING = 0, TN_STORE_WAIT_CANCELED = 1 };

#define TN_STORE_MAGIC 0x3C85F7CEu
#define TN_STORE_KEY_PREFIX "/"
#define TN_STORE_INIT_KEY "init/"

/* Growable byte buffer (owned memory; free with tn_buf_free). */
typedef struct tn_buf {
    uint8_t *p;
    size_t n, cap;
} tn_buf;

static inline int tn_buf_reserve(tn_buf *b, size_t extra) {
    if (b->n + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}
static inline int tn_buf_put(tn_buf *b, const void *data, size_t n) {
    if (tn_buf_reserve(b, n)) return -1;
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
    return 0;
}
static inline int tn_buf_u8(tn_buf *b, uint8_t v) { return tn_buf_put(b, &v, 1); }
static inline int tn_buf_u32(tn_buf *b, uint32_t v) { return tn_buf_put(b, &v, 4); }
static inline int tn_buf_u64(tn_buf *b, uint64_t v) { return tn_buf_put(b, &v, 8); }
static inline int tn_buf_bytes(tn_buf *b, const void *data, size_t n) {
    return tn_buf_u64(b, n) || tn_buf_put(b, data, n);
}
static inline void tn_buf_free(tn_buf *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* Read cursor over received bytes: each reader returns 0 when the data is not all there
 * yet (the caller waits for more and re-parses from the start). */
typedef struct tn_rd {
    const uint8_t *p;
    size_t n, off;
} tn_rd;

static inline int tn_rd_take(tn_rd *r, void *out, size_t n) {
    if (r->n - r->off < n) return 0;
    if (out && n) memcpy(out, r->p + r->off, n);
    r->off += n;
    return 1;
}
static inline int tn_rd_bytes(tn_rd *r, const uint8_t **data, uint64_t *len) {
    uint64_t l;
    size_t save = r->off;
    if (!tn_rd_take(r, &l, 8)) return 0;
    if (r->n - r->off < l) {
        r->off = save;
        return 0;
    }
    *data = r->p + r->off;
    *len = l;
    r->off += l;
    return 1;
}

#endif

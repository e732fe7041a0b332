/* tcpstore_client.c — a TCPStore client speaking upstream's wire protocol: one blocking
 * connection, one request in flight (mutex), every reply read before the timeout. */
#include "dist/store.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/net.h"
#include "dist/store_proto.h"

struct tn_store_client {
    int fd;
    int broken;              /* protocol state lost (a reply went missing): refuse further use */
    pthread_mutex_t mu;
    int64_t timeout_ms;
    char who[300];
};

static tn_status oom(void) { return tn_error(TN_ERR_NO_MEMORY, "out of memory in the TCPStore client"); }

static int64_t op_deadline(tn_store_client *c) { return tn_net_deadline(c->timeout_ms); }

static tn_status send_buf(tn_store_client *c, tn_buf *b) {
    if (!b->p && b->n) return oom();
    tn_status st = tn_net_send_all(c->fd, b->p, b->n, op_deadline(c), c->who);
    tn_buf_free(b);
    if (st != TN_OK) {
        c->broken = 1;
        return tn_dist_fail(TN_DIST_ERR_NETWORK, "%s", tn_error_message());
    }
    return TN_OK;
}

static tn_status recv_exact(tn_store_client *c, void *p, size_t n, int64_t deadline) {
    tn_status st = tn_net_recv_all(c->fd, p, n, deadline, c->who, NULL);
    if (st != TN_OK) {
        c->broken = 1;
        return tn_dist_fail(TN_DIST_ERR_STORE, "%s", tn_error_message());
    }
    return TN_OK;
}

static tn_status recv_bytes(tn_store_client *c, uint8_t **v, size_t *vlen) {
    uint64_t n;
    TN_TRY(recv_exact(c, &n, 8, op_deadline(c)));
    uint8_t *p = malloc(n ? n : 1);
    if (!p) {
        c->broken = 1;
        return oom();
    }
    tn_status st = recv_exact(c, p, n, op_deadline(c));
    if (st != TN_OK) {
        free(p);
        return st;
    }
    *v = p;
    *vlen = n;
    return TN_OK;
}

static void put_key(tn_buf *b, const char *key, size_t klen) {
    size_t pl = strlen(TN_STORE_KEY_PREFIX);
    tn_buf_u64(b, pl + klen);
    tn_buf_put(b, TN_STORE_KEY_PREFIX, pl);
    tn_buf_put(b, key, klen);
}

static tn_status lock(tn_store_client *c) {
    pthread_mutex_lock(&c->mu);
    if (c->broken) {
        pthread_mutex_unlock(&c->mu);
        return tn_dist_fail(TN_DIST_ERR_STORE, "the connection to the TCPStore at %s failed earlier", c->who);
    }
    return TN_OK;
}
#define LOCKED(expr)                    \
    do {                                \
        TN_TRY(lock(c));                \
        tn_status st_ = (expr);         \
        pthread_mutex_unlock(&c->mu);   \
        return st_;                     \
    } while (0)

/* ---- connect ------------------------------------------------------------------------ */
tn_status tn_store_client_connect(const char *host, int port, int64_t timeout_ms, tn_store_client **out) {
    tn_store_client *c = calloc(1, sizeof *c);
    if (!c) return oom();
    c->fd = -1;
    c->timeout_ms = timeout_ms;
    snprintf(c->who, sizeof c->who, "[%s]:%d", host, port);
    pthread_mutex_init(&c->mu, NULL);
    tn_status st = tn_net_connect(host, port, tn_net_deadline(timeout_ms), &c->fd);
    if (st != TN_OK) goto error;
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_VALIDATE);
    tn_buf_u32(&b, TN_STORE_MAGIC);
    uint32_t nonce = (uint32_t)getpid();
    tn_buf_u8(&b, TN_STORE_Q_PING);
    tn_buf_u32(&b, nonce);
    st = send_buf(c, &b);
    if (st != TN_OK) goto error;
    uint32_t echo = 0;
    st = recv_exact(c, &echo, 4, op_deadline(c));
    if (st != TN_OK) goto error;
    if (echo != nonce) {
        st = tn_dist_fail(TN_DIST_ERR_STORE, "Ping failed, invalid nonce returned by %s", c->who);
        goto error;
    }
    *out = c;
    return TN_OK;
error:
    tn_store_client_free(c);
    return st;
}

void tn_store_client_free(tn_store_client *c) {
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void tn_store_client_set_timeout(tn_store_client *c, int64_t timeout_ms) { c->timeout_ms = timeout_ms; }
int64_t tn_store_client_timeout(const tn_store_client *c) { return c->timeout_ms; }

/* ---- operations (called with the lock held) ----------------------------------------- */
static tn_status do_wait(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                         int raw_key, int64_t timeout_ms) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_WAIT);
    tn_buf_u64(&b, n);
    for (size_t i = 0; i < n; i++) {
        if (raw_key) tn_buf_bytes(&b, keys[i], klens[i]);
        else put_key(&b, keys[i], klens[i]);
    }
    TN_TRY(send_buf(c, &b));
    int64_t deadline = tn_net_deadline(timeout_ms);
    int r = tn_net_wait_readable(c->fd, deadline);
    uint8_t resp;
    if (r != 0) {
        TN_TRY(recv_exact(c, &resp, 1, op_deadline(c)));
        if (resp != TN_STORE_WAIT_STOP_WAITING) {
            c->broken = 1;
            return tn_dist_fail(TN_DIST_ERR_STORE, "Stop_waiting response is expected");
        }
        return TN_OK;
    }
    /* timed out: cancel, then drain the (possibly racing) stop-waiting reply */
    tn_buf_u8(&b, TN_STORE_Q_CANCEL_WAIT);
    TN_TRY(send_buf(c, &b));
    TN_TRY(recv_exact(c, &resp, 1, op_deadline(c)));
    if (resp == TN_STORE_WAIT_STOP_WAITING) TN_TRY(recv_exact(c, &resp, 1, op_deadline(c)));
    if (resp != TN_STORE_WAIT_CANCELED) {
        c->broken = 1;
        return tn_dist_fail(TN_DIST_ERR_STORE, "wait_canceled response is expected");
    }
    char list[512];
    size_t off = 0;
    list[0] = 0;
    for (size_t i = 0; i < n && off + 8 < sizeof list; i++) {
        int w = snprintf(list + off, sizeof list - off, "%s%s%.*s", i ? ", " : "", raw_key ? "" : TN_STORE_KEY_PREFIX,
                         (int)klens[i], keys[i]);
        if (w < 0) break;
        off += (size_t)w;
        if (off >= sizeof list) off = sizeof list - 1;
    }
    return tn_dist_fail(TN_DIST_ERR_STORE, "wait timeout after %" PRId64 "ms, keys: %s", timeout_ms, list);
}

static tn_status do_add(tn_store_client *c, const char *key, size_t klen, int raw, int64_t delta, int64_t *out) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_ADD);
    if (raw) tn_buf_bytes(&b, key, klen);
    else put_key(&b, key, klen);
    tn_buf_u64(&b, (uint64_t)delta);
    TN_TRY(send_buf(c, &b));
    return recv_exact(c, out, 8, op_deadline(c));
}

static tn_status do_get(tn_store_client *c, const char *key, size_t klen, int raw, uint8_t **v, size_t *vlen) {
    TN_TRY(do_wait(c, 1, &key, &klen, raw, c->timeout_ms));
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_GET);
    if (raw) tn_buf_bytes(&b, key, klen);
    else put_key(&b, key, klen);
    TN_TRY(send_buf(c, &b));
    return recv_bytes(c, v, vlen);
}

static tn_status wait_workers(tn_store_client *c, int64_t world_size, int is_server) {
    int64_t cnt;
    const char *k = TN_STORE_INIT_KEY;
    TN_TRY(do_add(c, k, strlen(k), 1, 1, &cnt));
    if (!is_server) return TN_OK;
    int64_t start = tn_net_now_ms();
    for (;;) {
        uint8_t *v;
        size_t vl;
        TN_TRY(do_get(c, k, strlen(k), 1, &v, &vl));
        char tmp[32] = {0};
        memcpy(tmp, v, vl < 31 ? vl : 31);
        free(v);
        long long done = strtoll(tmp, NULL, 10);
        if (done >= world_size) return TN_OK;
        int64_t el = tn_net_now_ms() - start;
        if (c->timeout_ms > 0 && el > c->timeout_ms)
            return tn_dist_fail(TN_DIST_ERR_STORE,
                                "Timed out after %" PRId64 " seconds waiting for clients. %lld/%" PRId64
                                " clients joined.",
                                el / 1000, done, world_size);
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

tn_status tn_store_client_wait_workers(tn_store_client *c, int64_t world_size, int is_server) {
    LOCKED(wait_workers(c, world_size, is_server));
}

static tn_status op_set(tn_store_client *c, uint8_t q, const char *key, size_t klen, const uint8_t *v, size_t vlen) {
    tn_buf b = {0};
    tn_buf_u8(&b, q);
    put_key(&b, key, klen);
    tn_buf_bytes(&b, v, vlen);
    return send_buf(c, &b);
}

tn_status tn_store_client_set(tn_store_client *c, const char *key, size_t klen, const uint8_t *v, size_t vlen) {
    LOCKED(op_set(c, TN_STORE_Q_SET, key, klen, v, vlen));
}

tn_status tn_store_client_append(tn_store_client *c, const char *key, size_t klen, const uint8_t *v, size_t vlen) {
    LOCKED(op_set(c, TN_STORE_Q_APPEND, key, klen, v, vlen));
}

tn_status tn_store_client_queue_push(tn_store_client *c, const char *key, size_t klen, const uint8_t *v,
                                     size_t vlen) {
    LOCKED(op_set(c, TN_STORE_Q_QUEUE_PUSH, key, klen, v, vlen));
}

tn_status tn_store_client_get(tn_store_client *c, const char *key, size_t klen, uint8_t **v, size_t *vlen) {
    LOCKED(do_get(c, key, klen, 0, v, vlen));
}

tn_status tn_store_client_add(tn_store_client *c, const char *key, size_t klen, int64_t delta, int64_t *out) {
    LOCKED(do_add(c, key, klen, 0, delta, out));
}

static tn_status op_compare_set(tn_store_client *c, const char *key, size_t klen, const uint8_t *exp, size_t elen,
                                const uint8_t *des, size_t dlen, uint8_t **v, size_t *vlen) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_COMPARE_SET);
    put_key(&b, key, klen);
    tn_buf_bytes(&b, exp, elen);
    tn_buf_bytes(&b, des, dlen);
    TN_TRY(send_buf(c, &b));
    return recv_bytes(c, v, vlen);
}

tn_status tn_store_client_compare_set(tn_store_client *c, const char *key, size_t klen, const uint8_t *exp,
                                      size_t elen, const uint8_t *des, size_t dlen, uint8_t **v, size_t *vlen) {
    LOCKED(op_compare_set(c, key, klen, exp, elen, des, dlen, v, vlen));
}

static tn_status op_keys(tn_store_client *c, uint8_t q, size_t n, const char *const *keys, const size_t *klens) {
    tn_buf b = {0};
    tn_buf_u8(&b, q);
    tn_buf_u64(&b, n);
    for (size_t i = 0; i < n; i++) put_key(&b, keys[i], klens[i]);
    return send_buf(c, &b);
}

static tn_status op_check(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens, int *ready) {
    TN_TRY(op_keys(c, TN_STORE_Q_CHECK, n, keys, klens));
    uint8_t r;
    TN_TRY(recv_exact(c, &r, 1, op_deadline(c)));
    if (r != TN_STORE_CHECK_READY && r != TN_STORE_CHECK_NOT_READY) {
        c->broken = 1;
        return tn_dist_fail(TN_DIST_ERR_STORE, "ready or not_ready response expected");
    }
    *ready = r == TN_STORE_CHECK_READY;
    return TN_OK;
}

tn_status tn_store_client_check(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                                int *ready) {
    LOCKED(op_check(c, n, keys, klens, ready));
}

tn_status tn_store_client_wait(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                               int64_t timeout_ms) {
    LOCKED(do_wait(c, n, keys, klens, 0, timeout_ms < 0 ? c->timeout_ms : timeout_ms));
}

static tn_status op_delete(tn_store_client *c, const char *key, size_t klen, int *deleted) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_DELETE_KEY);
    put_key(&b, key, klen);
    TN_TRY(send_buf(c, &b));
    int64_t n;
    TN_TRY(recv_exact(c, &n, 8, op_deadline(c)));
    *deleted = n == 1;
    return TN_OK;
}

tn_status tn_store_client_delete(tn_store_client *c, const char *key, size_t klen, int *deleted) {
    LOCKED(op_delete(c, key, klen, deleted));
}

static tn_status op_num_keys(tn_store_client *c, int64_t *out) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_GETNUMKEYS);
    TN_TRY(send_buf(c, &b));
    return recv_exact(c, out, 8, op_deadline(c));
}

tn_status tn_store_client_num_keys(tn_store_client *c, int64_t *out) { LOCKED(op_num_keys(c, out)); }

static tn_status op_multi_get(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                              uint8_t **vals, size_t *vlens) {
    TN_TRY(do_wait(c, n, keys, klens, 0, c->timeout_ms));
    TN_TRY(op_keys(c, TN_STORE_Q_MULTI_GET, n, keys, klens));
    for (size_t i = 0; i < n; i++) {
        tn_status st = recv_bytes(c, &vals[i], &vlens[i]);
        if (st != TN_OK) {
            for (size_t j = 0; j < i; j++) free(vals[j]);
            return st;
        }
    }
    return TN_OK;
}

tn_status tn_store_client_multi_get(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                                    uint8_t **vals, size_t *vlens) {
    LOCKED(op_multi_get(c, n, keys, klens, vals, vlens));
}

static tn_status op_multi_set(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                              const uint8_t *const *vals, const size_t *vlens) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_MULTI_SET);
    tn_buf_u64(&b, n);
    for (size_t i = 0; i < n; i++) {
        put_key(&b, keys[i], klens[i]);
        tn_buf_bytes(&b, vals[i], vlens[i]);
    }
    return send_buf(c, &b);
}

tn_status tn_store_client_multi_set(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                                    const uint8_t *const *vals, const size_t *vlens) {
    LOCKED(op_multi_set(c, n, keys, klens, vals, vlens));
}

static tn_status op_queue_pop(tn_store_client *c, const char *key, size_t klen, int block, uint8_t **v,
                              size_t *vlen) {
    if (block) TN_TRY(do_wait(c, 1, &key, &klen, 0, c->timeout_ms));
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_QUEUE_POP);
    put_key(&b, key, klen);
    TN_TRY(send_buf(c, &b));
    int64_t size;
    TN_TRY(recv_exact(c, &size, 8, op_deadline(c)));
    if (size <= 0) return tn_dist_fail(TN_DIST_ERR_QUEUE_EMPTY, "queue %.*s is empty", (int)klen, key);
    return recv_bytes(c, v, vlen);
}

tn_status tn_store_client_queue_pop(tn_store_client *c, const char *key, size_t klen, int block, uint8_t **v,
                                    size_t *vlen) {
    LOCKED(op_queue_pop(c, key, klen, block, v, vlen));
}

static tn_status op_queue_len(tn_store_client *c, const char *key, size_t klen, int64_t *out) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_QUEUE_LEN);
    put_key(&b, key, klen);
    TN_TRY(send_buf(c, &b));
    return recv_exact(c, out, 8, op_deadline(c));
}

tn_status tn_store_client_queue_len(tn_store_client *c, const char *key, size_t klen, int64_t *out) {
    LOCKED(op_queue_len(c, key, klen, out));
}

static tn_status op_list_keys(tn_store_client *c, char ***keys, size_t **lens, size_t *n) {
    tn_buf b = {0};
    tn_buf_u8(&b, TN_STORE_Q_LIST_KEYS);
    TN_TRY(send_buf(c, &b));
    int64_t cnt;
    TN_TRY(recv_exact(c, &cnt, 8, op_deadline(c)));
    if (cnt < 0 || cnt > (1 << 24)) {
        c->broken = 1;
        return tn_dist_fail(TN_DIST_ERR_STORE, "list_keys: bad key count %lld", (long long)cnt);
    }
    *keys = calloc((size_t)cnt + 1, sizeof **keys);
    *lens = calloc((size_t)cnt + 1, sizeof **lens);
    if (!*keys || !*lens) {
        free(*keys);
        free(*lens);
        c->broken = 1;
        return oom();
    }
    for (int64_t i = 0; i < cnt; i++) {
        uint8_t *v;
        tn_status st = recv_bytes(c, &v, &(*lens)[i]);
        if (st != TN_OK) {
            for (int64_t j = 0; j < i; j++) free((*keys)[j]);
            free(*keys);
            free(*lens);
            return st;
        }
        (*keys)[i] = (char *)v;
    }
    *n = (size_t)cnt;
    return TN_OK;
}

tn_status tn_store_client_list_keys(tn_store_client *c, char ***keys, size_t **lens, size_t *n) {
    LOCKED(op_list_keys(c, keys, lens, n));
}

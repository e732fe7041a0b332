/* tcpstore_server.c — the TCPStore master daemon: one thread polling the listening socket
 * and every client, answering upstream's wire protocol (store_proto.h) so that upstream
 * clients and ours can share it. Waiters are parked per client and woken on updates. */
#include "dist/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dist/kvmap.h"
#include "dist/net.h"
#include "dist/store_proto.h"

typedef struct srv_client {
    int fd;
    int validated;
    int dead;
    tn_buf in;
    size_t nwait;           /* keys this client waits for (0 = not waiting) */
    char **wkeys;
    size_t *wklens;
    char *bkey;             /* barrier this client waits in (NULL = none) */
    size_t bklen;
} srv_client;

struct tn_store_server {
    int lfd, port;
    int wake[2];
    pthread_t thread;
    int refs;
    int multi_tenant;
    tn_kvmap map;
    srv_client **clients;
    size_t nclients, cap;
    struct tn_store_server *next; /* multi-tenant registry */
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static tn_store_server *registry;

/* ---- helpers ------------------------------------------------------------------------ */
static void client_clear_wait(srv_client *c) {
    free(c->bkey);
    c->bkey = NULL;
    c->bklen = 0;
    for (size_t i = 0; i < c->nwait; i++) free(c->wkeys[i]);
    free(c->wkeys);
    free(c->wklens);
    c->wkeys = NULL;
    c->wklens = NULL;
    c->nwait = 0;
}

static void client_free(srv_client *c) {
    client_clear_wait(c);
    tn_buf_free(&c->in);
    close(c->fd);
    free(c);
}

static void reply(srv_client *c, const void *p, size_t n) {
    if (c->dead) return;
    if (tn_net_send_all(c->fd, p, n, tn_net_deadline(30000), "store client") != TN_OK) c->dead = 1;
}

static int key_present(tn_kvmap *m, const char *k, size_t kl) {
    tn_kv_entry *e = tn_kvmap_find(m, k, kl, 0);
    return e && (e->has_val || e->qlen > 0);
}

static int client_ready(tn_store_server *s, srv_client *c) {
    for (size_t i = 0; i < c->nwait; i++)
        if (!key_present(&s->map, c->wkeys[i], c->wklens[i])) return 0;
    return 1;
}

static int client_waits_on(srv_client *c, const char *k, size_t kl) {
    for (size_t i = 0; i < c->nwait; i++)
        if (c->wklens[i] == kl && memcmp(c->wkeys[i], k, kl) == 0) return 1;
    return 0;
}

/* After key k changed: wake every waiter now satisfied (one only for a queue push, so a
 * single element does not release several blocked poppers). */
static void wake(tn_store_server *s, const char *k, size_t kl, int only_one) {
    for (size_t i = 0; i < s->nclients; i++) {
        srv_client *c = s->clients[i];
        if (!c->nwait || !client_waits_on(c, k, kl) || !client_ready(s, c)) continue;
        client_clear_wait(c);
        uint8_t r = TN_STORE_WAIT_STOP_WAITING;
        reply(c, &r, 1);
        if (only_one) return;
    }
}

/* Parses a list of `count` keys; returns 0 if incomplete. */
static int read_keys(tn_rd *r, uint64_t *count, const uint8_t ***keys, uint64_t **lens) {
    if (!tn_rd_take(r, count, 8)) return 0;
    if (*count > (1u << 20)) return -1;
    *keys = calloc(*count ? *count : 1, sizeof **keys);
    *lens = calloc(*count ? *count : 1, sizeof **lens);
    if (!*keys || !*lens) return -1;
    for (uint64_t i = 0; i < *count; i++)
        if (!tn_rd_bytes(r, &(*keys)[i], &(*lens)[i])) return 0;
    return 1;
}

/* Handles one complete command at the head of c->in. Returns bytes consumed, 0 when the
 * command is incomplete, -1 on a protocol error (the client is dropped). */
static long handle_one(tn_store_server *s, srv_client *c) {
    tn_rd r = {c->in.p, c->in.n, 0};
    uint8_t q;
    if (!tn_rd_take(&r, &q, 1)) return 0;
    if (!c->validated) {
        uint32_t magic;
        if (q != TN_STORE_Q_VALIDATE) return -1;
        if (!tn_rd_take(&r, &magic, 4)) return 0;
        if (magic != TN_STORE_MAGIC) return -1;
        c->validated = 1;
        return (long)r.off;
    }
    const uint8_t *k = NULL, *v = NULL, *v2 = NULL;
    uint64_t kl = 0, vl = 0, vl2 = 0;
    tn_buf out = {0};
    long rc = (long)0;
    switch (q) {
    case TN_STORE_Q_VALIDATE: {
        uint32_t magic;
        if (!tn_rd_take(&r, &magic, 4)) return 0;
        return magic == TN_STORE_MAGIC ? (long)r.off : -1;
    }
    case TN_STORE_Q_PING: {
        uint32_t nonce;
        if (!tn_rd_take(&r, &nonce, 4)) return 0;
        reply(c, &nonce, 4);
        return (long)r.off;
    }
    case TN_STORE_Q_SET:
    case TN_STORE_Q_APPEND:
    case TN_STORE_Q_QUEUE_PUSH: {
        if (!tn_rd_bytes(&r, &k, &kl) || !tn_rd_bytes(&r, &v, &vl)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 1);
        if (!e) return -1;
        int bad = q == TN_STORE_Q_SET      ? tn_kvmap_set(&s->map, e, v, vl)
                  : q == TN_STORE_Q_APPEND ? tn_kvmap_append(&s->map, e, v, vl)
                                           : tn_kvmap_qpush(e, v, vl);
        if (bad) return -1;
        wake(s, (const char *)k, kl, q == TN_STORE_Q_QUEUE_PUSH);
        return (long)r.off;
    }
    case TN_STORE_Q_COMPARE_SET: {
        if (!tn_rd_bytes(&r, &k, &kl) || !tn_rd_bytes(&r, &v, &vl) || !tn_rd_bytes(&r, &v2, &vl2)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 1);
        if (!e) return -1;
        if (!e->has_val) {
            /* upstream: a missing key is created only when `expected` is empty; else the
             * reply is `expected` itself */
            if (vl == 0) {
                if (tn_kvmap_set(&s->map, e, v2, vl2)) return -1;
                tn_buf_bytes(&out, v2, vl2);
            } else {
                tn_buf_bytes(&out, v, vl);
            }
        } else {
            if (e->vlen == vl && (vl == 0 || memcmp(e->val, v, vl) == 0))
                if (tn_kvmap_set(&s->map, e, v2, vl2)) return -1;
            tn_buf_bytes(&out, e->val, e->vlen);
        }
        wake(s, (const char *)k, kl, 0);
        break;
    }
    case TN_STORE_Q_GET: {
        if (!tn_rd_bytes(&r, &k, &kl)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 0);
        if (e && e->has_val) tn_buf_bytes(&out, e->val, e->vlen);
        else tn_buf_u64(&out, 0);
        break;
    }
    case TN_STORE_Q_ADD: {
        int64_t delta;
        if (!tn_rd_bytes(&r, &k, &kl) || !tn_rd_take(&r, &delta, 8)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 1);
        if (!e) return -1;
        if (e->has_val) {
            char tmp[32];
            if (e->vlen == 0 || e->vlen >= sizeof tmp) return -1;
            memcpy(tmp, e->val, e->vlen);
            tmp[e->vlen] = 0;
            char *end;
            errno = 0;
            long long cur = strtoll(tmp, &end, 10);
            if (errno || end == tmp) return -1; /* upstream's std::stoll throws */
            delta += cur;
        }
        char num[32];
        int nl = snprintf(num, sizeof num, "%" PRId64, delta);
        if (tn_kvmap_set(&s->map, e, (const uint8_t *)num, (size_t)nl)) return -1;
        tn_buf_u64(&out, (uint64_t)delta);
        reply(c, out.p, out.n);
        tn_buf_free(&out);
        wake(s, (const char *)k, kl, 0);
        return (long)r.off;
    }
    case TN_STORE_Q_CHECK:
    case TN_STORE_Q_WAIT:
    case TN_STORE_Q_MULTI_GET: {
        uint64_t n;
        const uint8_t **keys = NULL;
        uint64_t *lens = NULL;
        int ok = read_keys(&r, &n, &keys, &lens);
        if (ok <= 0) {
            free(keys);
            free(lens);
            return ok;
        }
        if (q == TN_STORE_Q_MULTI_GET) {
            for (uint64_t i = 0; i < n; i++) {
                tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)keys[i], lens[i], 0);
                if (e && e->has_val) tn_buf_bytes(&out, e->val, e->vlen);
                else tn_buf_u64(&out, 0);
            }
        } else {
            int all = 1;
            for (uint64_t i = 0; i < n && all; i++) all = key_present(&s->map, (const char *)keys[i], lens[i]);
            if (q == TN_STORE_Q_CHECK) {
                tn_buf_u8(&out, all ? TN_STORE_CHECK_READY : TN_STORE_CHECK_NOT_READY);
            } else if (all) {
                tn_buf_u8(&out, TN_STORE_WAIT_STOP_WAITING);
            } else {
                client_clear_wait(c);
                c->wkeys = calloc(n, sizeof *c->wkeys);
                c->wklens = calloc(n, sizeof *c->wklens);
                if (!c->wkeys || !c->wklens) ok = -1;
                for (uint64_t i = 0; ok > 0 && i < n; i++) {
                    c->wkeys[i] = malloc(lens[i] + 1);
                    if (!c->wkeys[i]) {
                        ok = -1;
                        break;
                    }
                    memcpy(c->wkeys[i], keys[i], lens[i]);
                    c->wklens[i] = lens[i];
                    c->nwait = i + 1;
                }
            }
        }
        free(keys);
        free(lens);
        if (ok < 0) return -1;
        break;
    }
    case TN_STORE_Q_MULTI_SET: {
        uint64_t n;
        if (!tn_rd_take(&r, &n, 8)) return 0;
        /* parse everything first: a partial command must not apply half of its sets */
        size_t start = r.off;
        for (uint64_t i = 0; i < n; i++)
            if (!tn_rd_bytes(&r, &k, &kl) || !tn_rd_bytes(&r, &v, &vl)) return 0;
        r.off = start;
        for (uint64_t i = 0; i < n; i++) {
            tn_rd_bytes(&r, &k, &kl);
            tn_rd_bytes(&r, &v, &vl);
            tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 1);
            if (!e || tn_kvmap_set(&s->map, e, v, vl)) return -1;
            wake(s, (const char *)k, kl, 0);
        }
        return (long)r.off;
    }
    case TN_STORE_Q_GETNUMKEYS:
        tn_buf_u64(&out, (uint64_t)s->map.nvals);
        break;
    case TN_STORE_Q_DELETE_KEY: {
        if (!tn_rd_bytes(&r, &k, &kl)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 0);
        tn_buf_u64(&out, (uint64_t)tn_kvmap_delete(&s->map, e));
        break;
    }
    case TN_STORE_Q_CANCEL_WAIT:
        client_clear_wait(c);
        tn_buf_u8(&out, TN_STORE_WAIT_CANCELED);
        break;
    case TN_STORE_Q_QUEUE_POP: {
        if (!tn_rd_bytes(&r, &k, &kl)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 0);
        tn_buf_u64(&out, (uint64_t)(e ? e->qlen : 0));
        tn_kv_qitem *it = e ? tn_kvmap_qpop(e) : NULL;
        if (it) {
            tn_buf_bytes(&out, it->data, it->len);
            free(it);
        }
        break;
    }
    case TN_STORE_Q_LIST_KEYS: {
        tn_buf_u64(&out, (uint64_t)s->map.nvals);
        for (size_t i = 0; i < s->map.nbuckets; i++)
            for (tn_kv_entry *e = s->map.buckets[i]; e; e = e->next)
                if (e->has_val) tn_buf_bytes(&out, e->key, e->klen);
        break;
    }
    case TN_STORE_Q_BARRIER: {
        int64_t world;
        if (!tn_rd_bytes(&r, &k, &kl) || !tn_rd_take(&r, &world, 8)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 1);
        if (!e) return -1;
        long long count = 1;
        if (e->has_val && e->vlen && e->vlen < 31) {
            char tmp[32] = {0};
            memcpy(tmp, e->val, e->vlen);
            count = strtoll(tmp, NULL, 10) + 1;
        }
        char num[32];
        int nl = snprintf(num, sizeof num, "%lld", count);
        if (tn_kvmap_set(&s->map, e, (const uint8_t *)num, (size_t)nl)) return -1;
        if (count >= world) {
            uint8_t stop = TN_STORE_WAIT_STOP_WAITING;
            for (size_t i = 0; i < s->nclients; i++) {
                srv_client *o = s->clients[i];
                if (o->bkey && o->bklen == kl && memcmp(o->bkey, k, kl) == 0) {
                    client_clear_wait(o);
                    reply(o, &stop, 1);
                }
            }
            tn_buf_u8(&out, TN_STORE_WAIT_STOP_WAITING);
        } else {
            client_clear_wait(c);
            c->bkey = malloc(kl + 1);
            if (!c->bkey) return -1;
            memcpy(c->bkey, k, kl);
            c->bklen = kl;
        }
        wake(s, (const char *)k, kl, 0);
        break;
    }
    case TN_STORE_Q_QUEUE_LEN: {
        if (!tn_rd_bytes(&r, &k, &kl)) return 0;
        tn_kv_entry *e = tn_kvmap_find(&s->map, (const char *)k, kl, 0);
        tn_buf_u64(&out, (uint64_t)(e ? e->qlen : 0));
        break;
    }
    default:
        return -1;
    }
    if (out.n) reply(c, out.p, out.n);
    tn_buf_free(&out);
    rc = (long)r.off;
    return rc;
}

static void client_readable(tn_store_server *s, srv_client *c) {
    for (;;) {
        if (tn_buf_reserve(&c->in, 65536)) {
            c->dead = 1;
            return;
        }
        ssize_t n = recv(c->fd, c->in.p + c->in.n, c->in.cap - c->in.n, MSG_DONTWAIT);
        if (n > 0) {
            c->in.n += (size_t)n;
            if ((size_t)n < c->in.cap - c->in.n + (size_t)n) break; /* drained the socket */
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        c->dead = 1; /* EOF or error */
        return;
    }
    size_t off = 0;
    while (!c->dead && off < c->in.n) {
        tn_buf view = {c->in.p + off, c->in.n - off, c->in.n - off};
        tn_buf saved = c->in;
        c->in = view;
        long used = handle_one(s, c);
        c->in = saved;
        if (used < 0) {
            c->dead = 1;
            return;
        }
        if (used == 0) break;
        off += (size_t)used;
    }
    if (off) {
        memmove(c->in.p, c->in.p + off, c->in.n - off);
        c->in.n -= off;
    }
}

static void *server_main(void *arg) {
    tn_store_server *s = arg;
    struct pollfd *pfd = NULL;
    size_t pcap = 0;
    for (;;) {
        size_t np = 2 + s->nclients;
        if (np > pcap) {
            struct pollfd *p = realloc(pfd, np * 2 * sizeof *p);
            if (!p) break;
            pfd = p;
            pcap = np * 2;
        }
        pfd[0] = (struct pollfd){s->lfd, POLLIN, 0};
        pfd[1] = (struct pollfd){s->wake[0], POLLIN, 0};
        for (size_t i = 0; i < s->nclients; i++) pfd[2 + i] = (struct pollfd){s->clients[i]->fd, POLLIN, 0};
        int r = poll(pfd, np, -1);
        if (r < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (pfd[1].revents) break;
        for (size_t i = 0; i < s->nclients; i++)
            if (pfd[2 + i].revents) client_readable(s, s->clients[i]);
        /* drop dead clients (their waits die with them) */
        size_t j = 0;
        for (size_t i = 0; i < s->nclients; i++) {
            if (s->clients[i]->dead) client_free(s->clients[i]);
            else s->clients[j++] = s->clients[i];
        }
        s->nclients = j;
        if (pfd[0].revents) {
            int fd = accept(s->lfd, NULL, NULL);
            if (fd >= 0) {
                srv_client *c = calloc(1, sizeof *c);
                if (s->nclients == s->cap) {
                    size_t cap = s->cap ? s->cap * 2 : 16;
                    srv_client **cl = realloc(s->clients, cap * sizeof *cl);
                    if (cl) {
                        s->clients = cl;
                        s->cap = cap;
                    }
                }
                if (!c || s->nclients == s->cap) {
                    free(c);
                    close(fd);
                } else {
                    int one = 1;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    c->fd = fd;
                    s->clients[s->nclients++] = c;
                }
            }
        }
    }
    free(pfd);
    return NULL;
}

/* ---- lifecycle ---------------------------------------------------------------------- */
static tn_status server_start(int port, tn_store_server **out) {
    tn_store_server *s = calloc(1, sizeof *s);
    if (!s) return tn_error(TN_ERR_NO_MEMORY, "out of memory starting the store server");
    tn_status st = tn_net_listen(port, &s->lfd, &s->port);
    if (st != TN_OK) {
        free(s);
        return st;
    }
    if (pipe(s->wake) < 0) {
        close(s->lfd);
        free(s);
        return tn_dist_fail(TN_DIST_ERR_STORE, "pipe() failed: %s", strerror(errno));
    }
    fcntl(s->lfd, F_SETFL, fcntl(s->lfd, F_GETFL) | O_NONBLOCK);
    tn_kvmap_init(&s->map);
    s->refs = 1;
    if (pthread_create(&s->thread, NULL, server_main, s) != 0) {
        close(s->lfd);
        close(s->wake[0]);
        close(s->wake[1]);
        tn_kvmap_clear(&s->map);
        free(s);
        return tn_dist_fail(TN_DIST_ERR_STORE, "could not start the store server thread");
    }
    *out = s;
    return TN_OK;
}

tn_status tn_store_server_acquire(int port, int multi_tenant, tn_store_server **out) {
    pthread_mutex_lock(&registry_mu);
    if (multi_tenant && port > 0) {
        for (tn_store_server *s = registry; s; s = s->next)
            if (s->port == port && s->multi_tenant) {
                s->refs++;
                *out = s;
                pthread_mutex_unlock(&registry_mu);
                return TN_OK;
            }
    }
    tn_status st = server_start(port, out);
    if (st == TN_OK) {
        (*out)->multi_tenant = multi_tenant;
        (*out)->next = registry;
        registry = *out;
    }
    pthread_mutex_unlock(&registry_mu);
    return st;
}

int tn_store_server_port(const tn_store_server *s) { return s->port; }

void tn_store_server_release(tn_store_server *s) {
    if (!s) return;
    pthread_mutex_lock(&registry_mu);
    int last = --s->refs == 0;
    if (last)
        for (tn_store_server **p = &registry; *p; p = &(*p)->next)
            if (*p == s) {
                *p = s->next;
                break;
            }
    pthread_mutex_unlock(&registry_mu);
    if (!last) return;
    ssize_t w = write(s->wake[1], "x", 1);
    (void)w;
    pthread_join(s->thread, NULL);
    for (size_t i = 0; i < s->nclients; i++) client_free(s->clients[i]);
    free(s->clients);
    close(s->lfd);
    close(s->wake[0]);
    close(s->wake[1]);
    tn_kvmap_clear(&s->map);
    free(s);
}

/* pg.c — process-group transport: mesh setup, per-peer receiver threads that match
 * messages to posted receives, tagged sends, and the in-order worker thread. */
#include "dist/pg.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/net.h"
#include "dist/shm.h"

#define PG_MAGIC 0x544e5047u /* "TNPG" */
#define HELLO_MAGIC 0x544e4845u

typedef struct msg_hdr {
    uint32_t magic;
    uint16_t kind;
    uint16_t meta;
    uint64_t seq;
    uint32_t sub;
    uint32_t pad;
    uint64_t nbytes;
} msg_hdr;

enum { REQ_POSTED = 0, REQ_RECEIVING, REQ_DONE, REQ_FAILED };

struct tn_pg_req {
    tn_pg_req *next;
    int src, kind;
    uint64_t seq;
    uint32_t sub;
    uint16_t meta;
    void *buf;
    size_t cap;
    int state;
    int got_src;
    char err[512];
};

typedef struct umsg {
    struct umsg *next;
    int src, kind;
    uint64_t seq;
    uint32_t sub;
    uint16_t meta;
    size_t n;
    uint8_t *data;
} umsg;

typedef struct aborted {
    struct aborted *next;
    uint64_t seq;
    char msg[512];
} aborted;

struct tn_pg_work {
    tn_pg_work *next;
    tn_pg_work_fn fn;
    void *ctx;
    void (*ctx_free)(void *);
    atomic_int refs;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    tn_status st;
    tn_dist_err kind;
    char msg[1024];
};

typedef struct peer {
    tn_conn *conn;
    pthread_t thread;
    int has_thread;
    pthread_mutex_t send_mu;
    int dead;
    char err[512];
} peer;

struct tn_pg {
    int rank, size;
    int64_t timeout_ms;
    uint64_t seq;
    int lfd;
    peer *peers;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tn_pg_req *posted;
    umsg *unexpected, *unexpected_tail;
    aborted *aborts;
    int stopping;
    /* worker */
    pthread_t worker;
    int has_worker;
    tn_pg_work *qhead, *qtail;
    /* cached scratch for reductions (fresh multi-MB mallocs cost page faults each call) */
    void *scratch;
    size_t scratch_n;
    /* shared memory with the peers when all are on this host (shm.h), else NULL */
    tn_shm *shm;
    /* finished collectives: every seq < done_below, plus the out-of-order ones in done[] */
    uint64_t done_below;
    uint64_t *done;
    size_t ndone, done_cap;
};

typedef struct rx_arg {
    tn_pg *pg;
    int p;
} rx_arg;

static void abs_ts(int64_t deadline, struct timespec *ts) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t left = deadline - tn_net_now_ms();
    if (left < 0) left = 0;
    int64_t ns = now.tv_nsec + (left % 1000) * 1000000;
    ts->tv_sec = now.tv_sec + left / 1000 + ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
}

/* ---- matching (pg->mu held) -------------------------------------------------------- */
static int req_matches(const tn_pg_req *r, int src, int kind, uint64_t seq, uint32_t sub) {
    return (r->src == src || r->src == TN_PG_ANY_SOURCE) && r->kind == kind && r->seq == seq && r->sub == sub;
}

static const char *find_abort(tn_pg *pg, uint64_t seq) {
    for (aborted *a = pg->aborts; a; a = a->next)
        if (a->seq == seq) return a->msg;
    return NULL;
}

static void req_fail(tn_pg_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void req_fail(tn_pg_req *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->state = REQ_FAILED;
}

static void check_size(tn_pg *pg, tn_pg_req *r, int src, uint16_t meta, size_t n) {
    if (n != r->cap)
        req_fail(r,
                 "Mismatched sizes across ranks: rank %d expected %zu bytes from rank %d but received %zu "
                 "(every rank must pass tensors of the same size and dtype)",
                 pg->rank, r->cap, src, n);
    else if (meta != r->meta)
        req_fail(r,
                 "Mismatched collective arguments across ranks: rank %d and rank %d disagree on the dtype or "
                 "reduce op (code %u vs %u)",
                 pg->rank, src, r->meta, meta);
}

/* ---- receiver threads --------------------------------------------------------------- */
static void peer_died(tn_pg *pg, int p, const char *why) {
    pthread_mutex_lock(&pg->mu);
    if (!pg->peers[p].dead) {
        pg->peers[p].dead = 1;
        snprintf(pg->peers[p].err, sizeof pg->peers[p].err, "%s", why);
    }
    for (tn_pg_req *r = pg->posted; r; r = r->next)
        if (r->src == p && r->state == REQ_POSTED) req_fail(r, "%s", pg->peers[p].err);
    pthread_cond_broadcast(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
}

static void *rx_main(void *arg) {
    rx_arg *a = arg;
    tn_pg *pg = a->pg;
    int p = a->p;
    free(a);
    tn_conn *c = pg->peers[p].conn;
    char why[512];
    for (;;) {
        msg_hdr h;
        int eof = 0;
        if (tn_conn_recv(c, &h, sizeof h, -1, &eof) != TN_OK) {
            snprintf(why, sizeof why, "Connection closed by peer rank %d %s", p, c->peer);
            break;
        }
        if (h.magic != PG_MAGIC) {
            snprintf(why, sizeof why, "Protocol error on the connection to rank %d (bad magic)", p);
            break;
        }
        int64_t dl = tn_net_deadline(pg->timeout_ms);
        if (h.kind == TN_PG_KIND_ABORT) {
            aborted *ab = calloc(1, sizeof *ab);
            char text[400] = {0};
            size_t n = h.nbytes < sizeof text - 1 ? h.nbytes : sizeof text - 1;
            if (tn_conn_recv(c, text, n, dl, NULL) != TN_OK) {
                free(ab);
                snprintf(why, sizeof why, "Connection closed by peer rank %d %s", p, c->peer);
                break;
            }
            for (uint64_t left = h.nbytes - n; left; left--) {
                char sink;
                if (tn_conn_recv(c, &sink, 1, dl, NULL) != TN_OK) break;
            }
            if (!ab) continue;
            ab->seq = h.seq;
            snprintf(ab->msg, sizeof ab->msg, "rank %d failed in the same collective: %s", p, text);
            pthread_mutex_lock(&pg->mu);
            ab->next = pg->aborts;
            pg->aborts = ab;
            for (tn_pg_req *r = pg->posted; r; r = r->next)
                if (r->kind == TN_PG_KIND_COLL && r->seq == h.seq && r->state == REQ_POSTED) req_fail(r, "%s", ab->msg);
            pthread_cond_broadcast(&pg->cv);
            pthread_mutex_unlock(&pg->mu);
            continue;
        }
        pthread_mutex_lock(&pg->mu);
        tn_pg_req *r = pg->posted;
        while (r && !(r->state == REQ_POSTED && req_matches(r, p, h.kind, h.seq, h.sub))) r = r->next;
        if (r) {
            check_size(pg, r, p, h.meta, h.nbytes);
            int ok = r->state == REQ_POSTED;
            if (ok) r->state = REQ_RECEIVING;
            r->got_src = p;
            pthread_mutex_unlock(&pg->mu);
            tn_status st = TN_OK;
            if (ok) {
                st = tn_conn_recv(c, r->buf, h.nbytes, dl, NULL);
            } else {
                uint8_t sink[4096];
                for (uint64_t left = h.nbytes; left && st == TN_OK;) {
                    size_t k = left < sizeof sink ? left : sizeof sink;
                    st = tn_conn_recv(c, sink, k, dl, NULL);
                    left -= k;
                }
            }
            pthread_mutex_lock(&pg->mu);
            if (ok) {
                if (st == TN_OK) r->state = REQ_DONE;
                else req_fail(r, "Connection closed by peer rank %d %s while receiving", p, c->peer);
            }
            pthread_cond_broadcast(&pg->cv);
            pthread_mutex_unlock(&pg->mu);
            if (st != TN_OK) {
                snprintf(why, sizeof why, "Connection closed by peer rank %d %s", p, c->peer);
                break;
            }
            continue;
        }
        pthread_mutex_unlock(&pg->mu);
        umsg *m = calloc(1, sizeof *m);
        uint8_t *data = malloc(h.nbytes ? h.nbytes : 1);
        if (!m || !data) {
            free(m);
            free(data);
            snprintf(why, sizeof why, "out of memory receiving %" PRIu64 " bytes from rank %d", h.nbytes, p);
            break;
        }
        if (tn_conn_recv(c, data, h.nbytes, dl, NULL) != TN_OK) {
            free(m);
            free(data);
            snprintf(why, sizeof why, "Connection closed by peer rank %d %s", p, c->peer);
            break;
        }
        *m = (umsg){NULL, p, h.kind, h.seq, h.sub, h.meta, h.nbytes, data};
        pthread_mutex_lock(&pg->mu);
        /* a receive may have been posted while the payload arrived */
        r = pg->posted;
        while (r && !(r->state == REQ_POSTED && req_matches(r, p, h.kind, h.seq, h.sub))) r = r->next;
        if (r) {
            check_size(pg, r, p, h.meta, h.nbytes);
            if (r->state == REQ_POSTED) {
                if (h.nbytes) memcpy(r->buf, data, h.nbytes);
                r->state = REQ_DONE;
            }
            r->got_src = p;
            free(data);
            free(m);
        } else {
            if (pg->unexpected_tail) pg->unexpected_tail->next = m;
            else pg->unexpected = m;
            pg->unexpected_tail = m;
        }
        pthread_cond_broadcast(&pg->cv);
        pthread_mutex_unlock(&pg->mu);
    }
    peer_died(pg, p, why);
    return NULL;
}

/* ---- worker ------------------------------------------------------------------------- */
static void work_finish(tn_pg_work *w, tn_status st, tn_dist_err kind, const char *msg) {
    pthread_mutex_lock(&w->mu);
    w->st = st;
    w->kind = kind;
    snprintf(w->msg, sizeof w->msg, "%s", msg ? msg : "");
    w->done = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void *worker_main(void *arg) {
    tn_pg *pg = arg;
    for (;;) {
        pthread_mutex_lock(&pg->mu);
        while (!pg->qhead && !pg->stopping) pthread_cond_wait(&pg->cv, &pg->mu);
        tn_pg_work *w = pg->qhead;
        if (!w) {
            pthread_mutex_unlock(&pg->mu);
            return NULL;
        }
        pg->qhead = w->next;
        if (!pg->qhead) pg->qtail = NULL;
        int stopping = pg->stopping;
        pthread_mutex_unlock(&pg->mu);
        if (stopping) {
            work_finish(w, TN_ERR_RUNTIME, TN_DIST_ERR_BACKEND, "the process group was destroyed");
        } else {
            tn_dist_clear();
            tn_status st = w->fn(pg, w->ctx);
            work_finish(w, st, st == TN_OK ? TN_DIST_ERR_NONE : tn_dist_error_kind(),
                        st == TN_OK ? "" : tn_error_message());
        }
        tn_pg_work_release(w);
    }
}

static tn_pg_work *work_new(tn_pg_work_fn fn, void *ctx, void (*ctx_free)(void *)) {
    tn_pg_work *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->fn = fn;
    w->ctx = ctx;
    w->ctx_free = ctx_free;
    atomic_init(&w->refs, 1);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    return w;
}

tn_status tn_pg_enqueue(tn_pg *pg, tn_pg_work_fn fn, void *ctx, void (*ctx_free)(void *), tn_pg_work **out) {
    tn_pg_work *w = work_new(fn, ctx, ctx_free);
    if (!w) {
        if (ctx_free) ctx_free(ctx);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory queueing a collective");
    }
    atomic_fetch_add(&w->refs, 1); /* the queue's reference */
    pthread_mutex_lock(&pg->mu);
    if (pg->qtail) pg->qtail->next = w;
    else pg->qhead = w;
    pg->qtail = w;
    pthread_cond_broadcast(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
    *out = w;
    return TN_OK;
}

tn_pg_work *tn_pg_work_completed(tn_status st, void *ctx, void (*ctx_free)(void *)) {
    tn_pg_work *w = work_new(NULL, ctx, ctx_free);
    if (!w) {
        if (ctx_free) ctx_free(ctx);
        return NULL;
    }
    w->done = 1;
    w->st = st;
    w->kind = st == TN_OK ? TN_DIST_ERR_NONE : tn_dist_error_kind();
    if (st != TN_OK) snprintf(w->msg, sizeof w->msg, "%s", tn_error_message());
    return w;
}

tn_status tn_pg_work_wait(tn_pg_work *w, int64_t timeout_ms) {
    int64_t deadline = tn_net_deadline(timeout_ms);
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (deadline < 0) {
            pthread_cond_wait(&w->cv, &w->mu);
        } else {
            struct timespec ts;
            abs_ts(deadline, &ts);
            if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT && !w->done) {
                pthread_mutex_unlock(&w->mu);
                return tn_dist_fail(TN_DIST_ERR_BACKEND, "Timed out waiting %" PRId64 "ms for the work to complete",
                                    timeout_ms);
            }
        }
    }
    tn_status st = w->st;
    if (st != TN_OK) {
        tn_error(st, "%s", w->msg);
        tn_dist_set_kind(w->kind);
    }
    pthread_mutex_unlock(&w->mu);
    return st;
}

int tn_pg_work_done(tn_pg_work *w) {
    pthread_mutex_lock(&w->mu);
    int d = w->done;
    pthread_mutex_unlock(&w->mu);
    return d;
}

void *tn_pg_work_ctx(tn_pg_work *w) { return w->ctx; }

void tn_pg_work_release(tn_pg_work *w) {
    if (!w || atomic_fetch_sub(&w->refs, 1) != 1) return;
    if (w->ctx_free) w->ctx_free(w->ctx);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

/* ---- lifetime ----------------------------------------------------------------------- */
tn_status tn_pg_new(int rank, int size, int64_t timeout_ms, tn_pg **out) {
    if (size < 1 || rank < 0 || rank >= size)
        return tn_error(TN_ERR_VALUE, "invalid rank %d for a group of size %d", rank, size);
    tn_pg *pg = calloc(1, sizeof *pg);
    if (!pg || !(pg->peers = calloc((size_t)size, sizeof *pg->peers))) {
        free(pg);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory creating a process group");
    }
    pg->rank = rank;
    pg->size = size;
    pg->timeout_ms = timeout_ms;
    pg->lfd = -1;
    pg->done_below = 1;
    pthread_mutex_init(&pg->mu, NULL);
    pthread_cond_init(&pg->cv, NULL);
    for (int i = 0; i < size; i++) pthread_mutex_init(&pg->peers[i].send_mu, NULL);
    *out = pg;
    return TN_OK;
}

void tn_pg_set_peer(tn_pg *pg, int peer, tn_conn *c) { pg->peers[peer].conn = c; }

tn_status tn_pg_start(tn_pg *pg) {
    for (int p = 0; p < pg->size; p++) {
        if (p == pg->rank) continue;
        if (!pg->peers[p].conn) return tn_error(TN_ERR_RUNTIME, "no connection to rank %d", p);
        rx_arg *a = malloc(sizeof *a);
        if (!a) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        *a = (rx_arg){pg, p};
        if (pthread_create(&pg->peers[p].thread, NULL, rx_main, a) != 0) {
            free(a);
            return tn_error(TN_ERR_RUNTIME, "could not start a receiver thread");
        }
        pg->peers[p].has_thread = 1;
    }
    if (pthread_create(&pg->worker, NULL, worker_main, pg) != 0)
        return tn_error(TN_ERR_RUNTIME, "could not start the worker thread");
    pg->has_worker = 1;
    return TN_OK;
}

tn_status tn_pg_setup_shm(tn_pg *pg, int64_t deadline) {
    if (pg->size == 1) return TN_OK;
    tn_conn **conns = calloc((size_t)pg->size, sizeof *conns);
    if (!conns) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int p = 0; p < pg->size; p++) conns[p] = pg->peers[p].conn;
    tn_status st = tn_shm_setup(pg->rank, pg->size, conns, deadline, &pg->shm);
    free(conns);
    return st;
}

tn_status tn_pg_tcp_listen(tn_pg *pg, int *port) { return tn_net_listen(0, &pg->lfd, port); }

tn_status tn_pg_tcp_connect(tn_pg *pg, const char *const *hosts, const int *ports, uint64_t nonce) {
    int64_t deadline = tn_net_deadline(pg->timeout_ms);
    char who[96];
    for (int p = 0; p < pg->rank; p++) {
        int fd;
        TN_TRY(tn_net_connect(hosts[p], ports[p], deadline, &fd));
        uint32_t hello[4] = {HELLO_MAGIC, (uint32_t)pg->rank, (uint32_t)nonce, (uint32_t)(nonce >> 32)};
        snprintf(who, sizeof who, "([%s]:%d)", hosts[p], ports[p]);
        tn_status st = tn_net_send_all(fd, hello, sizeof hello, deadline, who);
        if (st != TN_OK) {
            close(fd);
            return st;
        }
        tn_conn *c = tn_conn_tcp_new(fd, who);
        if (!c) {
            close(fd);
            return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        }
        pg->peers[p].conn = c;
    }
    for (int need = pg->size - 1 - pg->rank; need > 0;) {
        int fd;
        tn_status st = tn_net_accept(pg->lfd, deadline, &fd);
        if (st != TN_OK)
            return tn_dist_fail(TN_DIST_ERR_BACKEND,
                                "Timed out after %" PRId64 "ms waiting for %d higher rank(s) to connect to rank %d",
                                pg->timeout_ms, need, pg->rank);
        uint32_t hello[4];
        if (tn_net_recv_all(fd, hello, sizeof hello, deadline, "incoming rank", NULL) != TN_OK ||
            hello[0] != HELLO_MAGIC || hello[1] <= (uint32_t)pg->rank || hello[1] >= (uint32_t)pg->size ||
            (hello[2] | ((uint64_t)hello[3] << 32)) != nonce || pg->peers[hello[1]].conn) {
            close(fd); /* a stray or stale connection: keep waiting for the real one */
            continue;
        }
        snprintf(who, sizeof who, "(connection accepted from rank %u)", hello[1]);
        tn_conn *c = tn_conn_tcp_new(fd, who);
        if (!c) {
            close(fd);
            return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        }
        pg->peers[hello[1]].conn = c;
        need--;
    }
    close(pg->lfd);
    pg->lfd = -1;
    TN_TRY(tn_pg_setup_shm(pg, deadline));
    return tn_pg_start(pg);
}

void tn_pg_free(tn_pg *pg) {
    if (!pg) return;
    pthread_mutex_lock(&pg->mu);
    pg->stopping = 1;
    pthread_cond_broadcast(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
    /* connections first: a collective still running on the worker then fails at once
     * (its receives see the peers die, its sends see the sockets shut) instead of
     * holding the join until the group's timeout */
    for (int p = 0; p < pg->size; p++)
        if (pg->peers[p].conn) pg->peers[p].conn->vt->shutdown(pg->peers[p].conn);
    if (pg->has_worker) pthread_join(pg->worker, NULL);
    for (int p = 0; p < pg->size; p++)
        if (pg->peers[p].has_thread) pthread_join(pg->peers[p].thread, NULL);
    for (int p = 0; p < pg->size; p++) {
        if (pg->peers[p].conn) pg->peers[p].conn->vt->close(pg->peers[p].conn);
        pthread_mutex_destroy(&pg->peers[p].send_mu);
    }
    if (pg->lfd >= 0) close(pg->lfd);
    while (pg->unexpected) {
        umsg *m = pg->unexpected;
        pg->unexpected = m->next;
        free(m->data);
        free(m);
    }
    while (pg->aborts) {
        aborted *a = pg->aborts;
        pg->aborts = a->next;
        free(a);
    }
    free(pg->scratch);
    tn_shm_free(pg->shm);
    free(pg->done);
    pthread_mutex_destroy(&pg->mu);
    pthread_cond_destroy(&pg->cv);
    free(pg->peers);
    free(pg);
}

void *tn_pg_scratch_take(tn_pg *pg, size_t n) {
    pthread_mutex_lock(&pg->mu);
    void *p = NULL;
    if (pg->scratch && pg->scratch_n >= n) {
        p = pg->scratch;
        pg->scratch = NULL;
    }
    pthread_mutex_unlock(&pg->mu);
    return p ? p : malloc(n ? n : 1);
}

void tn_pg_scratch_give(tn_pg *pg, void *p, size_t n) {
    if (!p) return;
    pthread_mutex_lock(&pg->mu);
    if (!pg->scratch || pg->scratch_n < n) {
        void *old = pg->scratch;
        pg->scratch = p;
        pg->scratch_n = n;
        p = old;
    }
    pthread_mutex_unlock(&pg->mu);
    free(p);
}

int tn_pg_rank(const tn_pg *pg) { return pg->rank; }
int tn_pg_size(const tn_pg *pg) { return pg->size; }
int64_t tn_pg_timeout(const tn_pg *pg) { return pg->timeout_ms; }
void tn_pg_set_timeout(tn_pg *pg, int64_t timeout_ms) { pg->timeout_ms = timeout_ms; }
uint64_t tn_pg_next_seq(tn_pg *pg) { return ++pg->seq; }
tn_shm *tn_pg_shm(const tn_pg *pg) { return pg->shm; }

void tn_pg_seq_done(tn_pg *pg, uint64_t seq) {
    pthread_mutex_lock(&pg->mu);
    if (seq == pg->done_below) {
        pg->done_below++;
        /* absorb the out-of-order completions that now join the prefix */
        for (int moved = 1; moved;) {
            moved = 0;
            for (size_t i = 0; i < pg->ndone; i++)
                if (pg->done[i] == pg->done_below) {
                    pg->done[i] = pg->done[--pg->ndone];
                    pg->done_below++;
                    moved = 1;
                    break;
                }
        }
    } else if (seq > pg->done_below) {
        if (pg->ndone == pg->done_cap) {
            size_t cap = pg->done_cap ? 2 * pg->done_cap : 16;
            uint64_t *d = realloc(pg->done, cap * sizeof *d);
            if (d) {
                pg->done = d;
                pg->done_cap = cap;
            }
        }
        if (pg->ndone < pg->done_cap) pg->done[pg->ndone++] = seq;
    }
    pthread_cond_broadcast(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
}

/* pg->mu held; peer < 0: no peer's connection is checked */
static tn_status faults_locked(tn_pg *pg, uint64_t seq, int peer, char *msg, size_t n) {
    if (pg->stopping) {
        snprintf(msg, n, "the process group was destroyed");
        return TN_ERR_RUNTIME;
    }
    if (peer >= 0 && peer != pg->rank && pg->peers[peer].dead) {
        snprintf(msg, n, "%s", pg->peers[peer].err);
        return TN_ERR_RUNTIME;
    }
    const char *ab = find_abort(pg, seq);
    if (ab) {
        snprintf(msg, n, "%s", ab);
        return TN_ERR_RUNTIME;
    }
    return TN_OK;
}

tn_status tn_pg_check_faults(tn_pg *pg, uint64_t seq, int peer) {
    char msg[600];
    pthread_mutex_lock(&pg->mu);
    tn_status st = faults_locked(pg, seq, peer, msg, sizeof msg);
    pthread_mutex_unlock(&pg->mu);
    return st == TN_OK ? TN_OK : tn_dist_fail(TN_DIST_ERR_BACKEND, "%s", msg);
}

tn_status tn_pg_wait_turn(tn_pg *pg, uint64_t seq) {
    int64_t deadline = tn_net_deadline(pg->timeout_ms);
    char msg[600];
    tn_status st = TN_OK;
    pthread_mutex_lock(&pg->mu);
    while (pg->done_below < seq) {
        if ((st = faults_locked(pg, seq, -1, msg, sizeof msg)) != TN_OK) break;
        if (deadline >= 0 && tn_net_now_ms() >= deadline) {
            snprintf(msg, sizeof msg,
                     "Timed out waiting %" PRId64 "ms for collective %" PRIu64 " to finish on rank %d before "
                     "collective %" PRIu64,
                     pg->timeout_ms, pg->done_below, pg->rank, seq);
            st = TN_ERR_RUNTIME;
            break;
        }
        struct timespec ts;
        abs_ts(deadline < 0 ? tn_net_now_ms() + 1000 : deadline, &ts);
        pthread_cond_timedwait(&pg->cv, &pg->mu, &ts);
    }
    pthread_mutex_unlock(&pg->mu);
    return st == TN_OK ? TN_OK : tn_dist_fail(TN_DIST_ERR_BACKEND, "%s", msg);
}

/* ---- send / receive ----------------------------------------------------------------- */
tn_status tn_pg_send(tn_pg *pg, int dst, int kind, uint64_t seq, uint32_t sub, uint16_t meta, const void *buf,
                     size_t n) {
    /* RuntimeError as upstream's gloo (a send to oneself included) */
    if (dst < 0 || dst >= pg->size || dst == pg->rank)
        return tn_error(TN_ERR_RUNTIME, "invalid destination rank %d (group size %d, own rank %d)", dst, pg->size,
                        pg->rank);
    peer *pe = &pg->peers[dst];
    pthread_mutex_lock(&pg->mu);
    int dead = pe->dead;
    char err[512];
    snprintf(err, sizeof err, "%s", pe->err);
    pthread_mutex_unlock(&pg->mu);
    if (dead) return tn_dist_fail(TN_DIST_ERR_BACKEND, "%s", err);
    msg_hdr h = {PG_MAGIC, (uint16_t)kind, meta, seq, sub, 0, n};
    int64_t dl = tn_net_deadline(pg->timeout_ms);
    pthread_mutex_lock(&pe->send_mu);
    tn_status st = tn_conn_send(pe->conn, &h, sizeof h, dl);
    if (st == TN_OK && n) st = tn_conn_send(pe->conn, buf, n, dl);
    pthread_mutex_unlock(&pe->send_mu);
    if (st != TN_OK)
        return tn_dist_fail(TN_DIST_ERR_BACKEND, "Failed to send to rank %d %s: %s", dst, pe->conn->peer,
                            tn_error_message());
    return TN_OK;
}

tn_status tn_pg_post_recv(tn_pg *pg, int src, int kind, uint64_t seq, uint32_t sub, uint16_t meta, void *buf,
                          size_t n, tn_pg_req **out) {
    if (src != TN_PG_ANY_SOURCE && (src < 0 || src >= pg->size || src == pg->rank))
        return tn_error(TN_ERR_RUNTIME, "invalid source rank %d (group size %d, own rank %d)", src, pg->size,
                        pg->rank);
    tn_pg_req *r = calloc(1, sizeof *r);
    if (!r) return tn_error(TN_ERR_NO_MEMORY, "out of memory posting a receive");
    *r = (tn_pg_req){NULL, src, kind, seq, sub, meta, buf, n, REQ_POSTED, -1, {0}};
    pthread_mutex_lock(&pg->mu);
    umsg *prev = NULL, *m = pg->unexpected;
    while (m && !req_matches(r, m->src, m->kind, m->seq, m->sub)) {
        prev = m;
        m = m->next;
    }
    const char *ab;
    if (m) {
        if (prev) prev->next = m->next;
        else pg->unexpected = m->next;
        if (pg->unexpected_tail == m) pg->unexpected_tail = prev;
        check_size(pg, r, m->src, m->meta, m->n);
        if (r->state == REQ_POSTED) {
            if (m->n) memcpy(buf, m->data, m->n);
            r->state = REQ_DONE;
        }
        r->got_src = m->src;
        free(m->data);
        free(m);
    } else if (src != TN_PG_ANY_SOURCE && pg->peers[src].dead) {
        req_fail(r, "%s", pg->peers[src].err);
    } else if (kind == TN_PG_KIND_COLL && (ab = find_abort(pg, seq))) {
        req_fail(r, "%s", ab);
    }
    r->next = pg->posted;
    pg->posted = r;
    pthread_mutex_unlock(&pg->mu);
    *out = r;
    return TN_OK;
}

static void unlink_req(tn_pg *pg, tn_pg_req *r) {
    for (tn_pg_req **pp = &pg->posted; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            return;
        }
}

int tn_pg_req_test(tn_pg *pg, tn_pg_req *r) {
    pthread_mutex_lock(&pg->mu);
    int d = r->state >= REQ_DONE;
    pthread_mutex_unlock(&pg->mu);
    return d;
}

tn_status tn_pg_req_wait(tn_pg *pg, tn_pg_req *r, int64_t deadline, int *src_out) {
    if (deadline < 0) deadline = tn_net_deadline(pg->timeout_ms);
    pthread_mutex_lock(&pg->mu);
    while (r->state < REQ_DONE) {
        if (r->state == REQ_POSTED && pg->stopping) {
            req_fail(r, "the process group was destroyed");
            break;
        }
        if (r->state == REQ_POSTED && r->src != TN_PG_ANY_SOURCE && pg->peers[r->src].dead) {
            req_fail(r, "%s", pg->peers[r->src].err);
            break;
        }
        if (deadline < 0 || r->state == REQ_RECEIVING) {
            /* a payload being written into the buffer is bounded by the reader's deadline */
            if (deadline < 0) pthread_cond_wait(&pg->cv, &pg->mu);
            else {
                struct timespec ts;
                abs_ts(tn_net_now_ms() + 100, &ts);
                pthread_cond_timedwait(&pg->cv, &pg->mu, &ts);
            }
            continue;
        }
        struct timespec ts;
        abs_ts(deadline, &ts);
        if (pthread_cond_timedwait(&pg->cv, &pg->mu, &ts) == ETIMEDOUT && r->state == REQ_POSTED) {
            if (r->src == TN_PG_ANY_SOURCE)
                req_fail(r, "Timed out waiting %" PRId64 "ms for recv operation to complete (rank %d, any source)",
                         pg->timeout_ms, pg->rank);
            else
                req_fail(r, "Timed out waiting %" PRId64 "ms for recv operation to complete (rank %d from rank %d)",
                         pg->timeout_ms, pg->rank, r->src);
        }
    }
    unlink_req(pg, r);
    pthread_mutex_unlock(&pg->mu);
    tn_status st = TN_OK;
    if (r->state == REQ_FAILED) st = tn_dist_fail(TN_DIST_ERR_BACKEND, "%s", r->err);
    if (src_out) *src_out = r->got_src;
    free(r);
    return st;
}

void tn_pg_req_cancel(tn_pg *pg, tn_pg_req *r) {
    pthread_mutex_lock(&pg->mu);
    /* a payload already being written into the buffer is bounded by the reader's deadline */
    while (r->state == REQ_RECEIVING) pthread_cond_wait(&pg->cv, &pg->mu);
    unlink_req(pg, r);
    pthread_mutex_unlock(&pg->mu);
    free(r);
}

void tn_pg_abort_seq(tn_pg *pg, uint64_t seq, const char *msg) {
    size_t n = strlen(msg);
    for (int p = 0; p < pg->size; p++) {
        if (p == pg->rank) continue;
        peer *pe = &pg->peers[p];
        pthread_mutex_lock(&pg->mu);
        int dead = pe->dead;
        pthread_mutex_unlock(&pg->mu);
        if (dead || !pe->conn) continue;
        msg_hdr h = {PG_MAGIC, TN_PG_KIND_ABORT, 0, seq, 0, 0, n};
        int64_t dl = tn_net_deadline(2000);
        pthread_mutex_lock(&pe->send_mu);
        if (tn_conn_send(pe->conn, &h, sizeof h, dl) == TN_OK) tn_conn_send(pe->conn, msg, n, dl);
        pthread_mutex_unlock(&pe->send_mu);
    }
}

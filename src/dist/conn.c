/* conn.c — the two tn_conn implementations: TCP sockets and an in-process loopback
 * (two byte queues guarded by a mutex) used by the C unit tests. */
#include "dist/conn.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dist/net.h"

/* ---- TCP ---------------------------------------------------------------------------- */
typedef struct {
    tn_conn base;
    int fd;
} tcp_conn;

static tn_status tcp_send(tn_conn *c, const void *buf, size_t n, int64_t deadline) {
    return tn_net_send_all(((tcp_conn *)c)->fd, buf, n, deadline, c->peer);
}
static tn_status tcp_recv(tn_conn *c, void *buf, size_t n, int64_t deadline, int *eof) {
    return tn_net_recv_all(((tcp_conn *)c)->fd, buf, n, deadline, c->peer, eof);
}
static void tcp_shutdown(tn_conn *c) { shutdown(((tcp_conn *)c)->fd, SHUT_RDWR); }
static void tcp_close(tn_conn *c) {
    close(((tcp_conn *)c)->fd);
    free(c);
}
static const tn_conn_vtable tcp_vt = {tcp_send, tcp_recv, tcp_shutdown, tcp_close};

tn_conn *tn_conn_tcp_new(int fd, const char *peer) {
    tcp_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->base.vt = &tcp_vt;
    c->fd = fd;
    strncpy(c->base.peer, peer, sizeof c->base.peer - 1);
    return &c->base;
}

/* ---- loopback ----------------------------------------------------------------------- */
typedef struct {
    uint8_t *p;
    size_t head, n, cap;
    int closed;
} lq;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    lq q[2];   /* q[i]: bytes travelling towards end i */
    int refs;
} lshared;

typedef struct {
    tn_conn base;
    lshared *sh;
    int side;
} loop_conn;

static void deadline_ts(int64_t deadline, struct timespec *ts) {
    struct timespec now_rt;
    clock_gettime(CLOCK_REALTIME, &now_rt);
    int64_t left = deadline - tn_net_now_ms();
    if (left < 0) left = 0;
    int64_t ns = now_rt.tv_nsec + (left % 1000) * 1000000;
    ts->tv_sec = now_rt.tv_sec + left / 1000 + ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
}

static tn_status loop_send(tn_conn *c, const void *buf, size_t n, int64_t deadline) {
    loop_conn *l = (loop_conn *)c;
    lq *q = &l->sh->q[1 - l->side];
    pthread_mutex_lock(&l->sh->mu);
    if (q->closed) {
        pthread_mutex_unlock(&l->sh->mu);
        return tn_dist_fail(TN_DIST_ERR_BACKEND, "Connection closed by peer %s", c->peer);
    }
    if (q->head + q->n + n > q->cap) {
        if (q->n) memmove(q->p, q->p + q->head, q->n); /* q->p is NULL until the first send */
        q->head = 0;
        if (q->n + n > q->cap) {
            size_t cap = q->cap ? q->cap : 4096;
            while (cap < q->n + n) cap *= 2;
            uint8_t *p = realloc(q->p, cap);
            if (!p) {
                pthread_mutex_unlock(&l->sh->mu);
                return tn_error(TN_ERR_NO_MEMORY, "out of memory in the loopback transport");
            }
            q->p = p;
            q->cap = cap;
        }
    }
    if (n) memcpy(q->p + q->head + q->n, buf, n);
    q->n += n;
    pthread_cond_broadcast(&l->sh->cv);
    pthread_mutex_unlock(&l->sh->mu);
    return TN_OK;
}

static tn_status loop_recv(tn_conn *c, void *buf, size_t n, int64_t deadline, int *eof) {
    loop_conn *l = (loop_conn *)c;
    lq *q = &l->sh->q[l->side];
    size_t got = 0;
    if (eof) *eof = 0;
    pthread_mutex_lock(&l->sh->mu);
    while (got < n) {
        if (q->n) {
            size_t k = q->n < n - got ? q->n : n - got;
            memcpy((uint8_t *)buf + got, q->p + q->head, k);
            q->head += k;
            q->n -= k;
            got += k;
            continue;
        }
        if (q->closed) {
            if (eof && got == 0) *eof = 1;
            pthread_mutex_unlock(&l->sh->mu);
            return tn_dist_fail(TN_DIST_ERR_BACKEND, "Connection closed by peer %s", c->peer);
        }
        if (deadline < 0) {
            pthread_cond_wait(&l->sh->cv, &l->sh->mu);
        } else {
            struct timespec ts;
            deadline_ts(deadline, &ts);
            if (pthread_cond_timedwait(&l->sh->cv, &l->sh->mu, &ts) == ETIMEDOUT && !q->n && !q->closed) {
                pthread_mutex_unlock(&l->sh->mu);
                return tn_dist_fail(TN_DIST_ERR_BACKEND, "Timed out receiving from %s", c->peer);
            }
        }
    }
    pthread_mutex_unlock(&l->sh->mu);
    return TN_OK;
}

static void loop_shutdown(tn_conn *c) {
    loop_conn *l = (loop_conn *)c;
    pthread_mutex_lock(&l->sh->mu);
    l->sh->q[0].closed = l->sh->q[1].closed = 1;
    pthread_cond_broadcast(&l->sh->cv);
    pthread_mutex_unlock(&l->sh->mu);
}

static void loop_close(tn_conn *c) {
    loop_conn *l = (loop_conn *)c;
    lshared *sh = l->sh;
    loop_shutdown(c);
    pthread_mutex_lock(&sh->mu);
    int last = --sh->refs == 0;
    pthread_mutex_unlock(&sh->mu);
    if (last) {
        free(sh->q[0].p);
        free(sh->q[1].p);
        pthread_mutex_destroy(&sh->mu);
        pthread_cond_destroy(&sh->cv);
        free(sh);
    }
    free(l);
}

static const tn_conn_vtable loop_vt = {loop_send, loop_recv, loop_shutdown, loop_close};

tn_status tn_conn_loopback_pair(tn_conn **a, tn_conn **b) {
    lshared *sh = calloc(1, sizeof *sh);
    loop_conn *x = calloc(1, sizeof *x), *y = calloc(1, sizeof *y);
    if (!sh || !x || !y) {
        free(sh);
        free(x);
        free(y);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory creating a loopback connection");
    }
    pthread_mutex_init(&sh->mu, NULL);
    pthread_cond_init(&sh->cv, NULL);
    sh->refs = 2;
    x->base.vt = y->base.vt = &loop_vt;
    x->sh = y->sh = sh;
    x->side = 0;
    y->side = 1;
    strcpy(x->base.peer, "loopback peer");
    strcpy(y->base.peer, "loopback peer");
    *a = &x->base;
    *b = &y->base;
    return TN_OK;
}

/* conn.h — a point-to-point byte connection behind a small vtable, so the process group
 * runs over TCP sockets in production and over an in-process loopback in C unit tests.
 *
 * Contract: send/recv move exactly n bytes or fail (status + message naming the peer)
 * before `deadline` (absolute monotonic ms, -1 = none); recv sets *eof when the other end
 * closed cleanly before the first byte. shutdown() makes a blocked or later recv/send
 * fail promptly (used to stop receiver threads); close() frees the connection.
 * One thread may send while another receives; concurrent senders need outside locking.
 *
 * Plain C11 + POSIX; no Python. */
#ifndef TN_DIST_CONN_H
#define TN_DIST_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

typedef struct tn_conn tn_conn;

typedef struct tn_conn_vtable {
    tn_status (*send)(tn_conn *c, const void *buf, size_t n, int64_t deadline);
    tn_status (*recv)(tn_conn *c, void *buf, size_t n, int64_t deadline, int *eof);
    void (*shutdown)(tn_conn *c);
    void (*close)(tn_conn *c);
} tn_conn_vtable;

struct tn_conn {
    const tn_conn_vtable *vt;
    char peer[96]; /* "rank 1 ([127.0.0.1]:4567)" — used in error messages */
};

/* Wraps a connected TCP socket (takes ownership of fd). NULL when out of memory. */
tn_conn *tn_conn_tcp_new(int fd, const char *peer);
/* Two connected in-memory endpoints (each end owned by the caller). */
tn_status tn_conn_loopback_pair(tn_conn **a, tn_conn **b);

static inline tn_status tn_conn_send(tn_conn *c, const void *buf, size_t n, int64_t deadline) {
    return c->vt->send(c, buf, n, deadline);
}
static inline tn_status tn_conn_recv(tn_conn *c, void *buf, size_t n, int64_t deadline, int *eof) {
    return c->vt->recv(c, buf, n, deadline, eof);
}

#endif

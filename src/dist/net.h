/* net.h — plain TCP socket helpers for the distributed layer (store and process-group
 * transport) plus the error kinds the binding maps to upstream's torch.distributed
 * exception classes. Deadlines are absolute CLOCK_MONOTONIC milliseconds; -1 = none.
 *
 * Plain C11 + POSIX; no Python. */
#ifndef TN_DIST_NET_H
#define TN_DIST_NET_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Which upstream exception a failed distributed call should raise. The status returned
 * is always TN_ERR_RUNTIME (every class below derives from RuntimeError upstream). */
typedef enum tn_dist_err {
    TN_DIST_ERR_NONE = 0,    /* plain RuntimeError (or whatever tn_status says) */
    TN_DIST_ERR_GENERIC,     /* torch.distributed.DistError */
    TN_DIST_ERR_STORE,       /* DistStoreError: store timeouts and store failures */
    TN_DIST_ERR_NETWORK,     /* DistNetworkError: connect/listen failures */
    TN_DIST_ERR_BACKEND,     /* DistBackendError: collective failures (peer died, ...) */
    TN_DIST_ERR_QUEUE_EMPTY, /* DistQueueEmptyError */
} tn_dist_err;

/* Records `kind` for this thread and the message (tn_error), returns TN_ERR_RUNTIME. */
tn_status tn_dist_fail(tn_dist_err kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Kind recorded by the last tn_dist_fail on this thread (reset by tn_dist_clear). */
tn_dist_err tn_dist_error_kind(void);
void tn_dist_clear(void);
/* Sets this thread's error kind without touching the message (used to re-raise an error
 * captured on another thread). */
void tn_dist_set_kind(tn_dist_err kind);

/* Monotonic clock in milliseconds. */
int64_t tn_net_now_ms(void);
/* Deadline `timeout_ms` from now; timeout_ms <= 0 means no deadline (-1). */
int64_t tn_net_deadline(int64_t timeout_ms);

/* Listens on `port` (0 = any) on every local address (IPv6 dual stack, else IPv4).
 * Sets *fd and the bound port. Fails with DistNetworkError naming the port. */
tn_status tn_net_listen(int port, int *fd, int *bound_port);
/* Accepts one connection before `deadline` (DistNetworkError on timeout). */
tn_status tn_net_accept(int lfd, int64_t deadline, int *fd);
/* Connects to host:port, retrying refused connections until `deadline` (the server may
 * not be up yet). DistNetworkError naming the address on timeout. */
tn_status tn_net_connect(const char *host, int port, int64_t deadline, int *fd);
/* Sends all n bytes before deadline; errors name `who`. */
tn_status tn_net_send_all(int fd, const void *buf, size_t n, int64_t deadline, const char *who);
/* Receives exactly n bytes before deadline. *eof (optional) is set to 1 when the peer
 * closed the connection before the first byte. */
tn_status tn_net_recv_all(int fd, void *buf, size_t n, int64_t deadline, const char *who, int *eof);
/* Waits until fd is readable: 1 readable, 0 timed out, <0 error. */
int tn_net_wait_readable(int fd, int64_t deadline);
/* "host:port" of the local end of a connected socket (for advertising an address). */
tn_status tn_net_local_host(int fd, char *buf, size_t buflen);

#endif

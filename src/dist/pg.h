/* pg.h — the process group under backend="gloo": a full mesh of connections between the
 * ranks (conn.h), one receiver thread per peer that matches incoming messages to posted
 * receives (or parks them as unexpected), an in-order worker thread for asynchronous
 * work, and the collectives (coll.c) written on tagged send/receive.
 *
 * Messages carry (kind, seq, sub, meta): collectives are numbered by a per-group
 * sequence taken in program order (identical on every rank), `sub` tells the steps of one
 * collective apart, `meta` encodes dtype and reduce op so that mismatched calls fail
 * instead of mixing bytes. Point-to-point messages use the user's tag as seq.
 *
 * Faults: a peer whose connection drops is marked dead; every receive from it (and every
 * collective that needs it) fails naming the rank. A rank whose collective fails sends
 * ABORT for that collective to all peers, so mismatches raise on every rank at once.
 * Every wait is bounded by the group's timeout.
 *
 * Plain C11 + POSIX; no Python. */
#ifndef TN_DIST_PG_H
#define TN_DIST_PG_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/status.h"
#include "dist/conn.h"

typedef struct tn_pg tn_pg;

/* Reduce ops, numbered as upstream's ReduceOp.RedOpType. */
typedef enum tn_redop {
    TN_REDOP_SUM = 0,
    TN_REDOP_AVG,
    TN_REDOP_PRODUCT,
    TN_REDOP_MIN,
    TN_REDOP_MAX,
    TN_REDOP_BAND,
    TN_REDOP_BOR,
    TN_REDOP_BXOR,
    TN_REDOP_PREMUL_SUM,
} tn_redop;

enum { TN_PG_KIND_COLL = 1, TN_PG_KIND_P2P = 2, TN_PG_KIND_ABORT = 3 };
#define TN_PG_ANY_SOURCE (-1)

/* ---- lifetime and mesh -------------------------------------------------------------- */
/* A group of `size` ranks seen from `rank`; no connections yet. */
tn_status tn_pg_new(int rank, int size, int64_t timeout_ms, tn_pg **out);
/* Installs the connection to `peer` (ownership moves to the group). */
void tn_pg_set_peer(tn_pg *pg, int peer, tn_conn *c);
/* Shared memory with the peers when all are on this host (shm.h): the handshake on the
 * connections, before tn_pg_start (every rank at once; tn_pg_tcp_connect calls it). */
tn_status tn_pg_setup_shm(tn_pg *pg, int64_t deadline);
/* Starts receiver and worker threads once every peer is set. */
tn_status tn_pg_start(tn_pg *pg);
/* TCP mesh, step 1: listen on a free port (the caller publishes it through the store). */
tn_status tn_pg_tcp_listen(tn_pg *pg, int *port);
/* TCP mesh, step 2: connect to every lower rank at hosts[r]:ports[r], accept every higher
 * rank (hello = magic, rank, `nonce` so stale groups are told apart), then start. */
tn_status tn_pg_tcp_connect(tn_pg *pg, const char *const *hosts, const int *ports, uint64_t nonce);
/* Stops threads, fails queued work, closes connections, frees. */
void tn_pg_free(tn_pg *pg);
int tn_pg_rank(const tn_pg *pg);
int tn_pg_size(const tn_pg *pg);
int64_t tn_pg_timeout(const tn_pg *pg);
void tn_pg_set_timeout(tn_pg *pg, int64_t timeout_ms);
/* Borrows a scratch buffer of at least n bytes (the group's cached one when it is free
 * and large enough, else fresh memory); give it back with tn_pg_scratch_give, which
 * keeps the largest buffer cached for the next collective. NULL when out of memory. */
void *tn_pg_scratch_take(tn_pg *pg, size_t n);
void tn_pg_scratch_give(tn_pg *pg, void *p, size_t n);
/* Next collective sequence number (call in program order, on the caller's thread). */
uint64_t tn_pg_next_seq(tn_pg *pg);
/* Records that collective seq has finished on this rank (every collective does, once). */
void tn_pg_seq_done(tn_pg *pg, uint64_t seq);
/* Waits until every collective numbered below seq has finished on this rank (the
 * shared-memory path runs its collectives one at a time, in order); fails on a dead
 * peer, an abort of seq, the group's destruction or its timeout. */
tn_status tn_pg_wait_turn(tn_pg *pg, uint64_t seq);
/* DistBackendError when rank `peer`'s connection dropped (peer < 0: none checked), a
 * peer aborted collective seq, or the group is being destroyed; TN_OK otherwise. (A peer
 * that has already done its part may exit: only the peers still awaited count.) */
tn_status tn_pg_check_faults(tn_pg *pg, uint64_t seq, int peer);
/* The group's shared memory with its peers (shm.h), NULL when it runs on TCP only. */
struct tn_shm *tn_pg_shm(const tn_pg *pg);

/* ---- point to point ----------------------------------------------------------------- */
typedef struct tn_pg_req tn_pg_req;
/* Sends n bytes to dst (blocking until handed to the transport; the peer's receiver
 * thread always drains, so sends never wait for a matching receive). */
tn_status tn_pg_send(tn_pg *pg, int dst, int kind, uint64_t seq, uint32_t sub, uint16_t meta, const void *buf,
                     size_t n);
/* Posts a receive of exactly n bytes (src may be TN_PG_ANY_SOURCE). */
tn_status tn_pg_post_recv(tn_pg *pg, int src, int kind, uint64_t seq, uint32_t sub, uint16_t meta, void *buf,
                          size_t n, tn_pg_req **out);
/* Waits for a posted receive (deadline < 0: the group timeout from now), frees it, and
 * returns its status; *src_out (optional) gets the sender. */
tn_status tn_pg_req_wait(tn_pg *pg, tn_pg_req *r, int64_t deadline, int *src_out);
/* Withdraws a receive nobody will wait for (its buffer is never written after this
 * returns; a payload already arriving is let finish) and frees it. */
void tn_pg_req_cancel(tn_pg *pg, tn_pg_req *r);
/* 1 when the receive has completed (successfully or not). */
int tn_pg_req_test(tn_pg *pg, tn_pg_req *r);
/* Tells every peer that collective `seq` failed here (their receives for it fail). */
void tn_pg_abort_seq(tn_pg *pg, uint64_t seq, const char *msg);

/* ---- asynchronous work (in order, on the group's worker thread) ------------------- */
typedef struct tn_pg_work tn_pg_work;
typedef tn_status (*tn_pg_work_fn)(tn_pg *pg, void *ctx);
/* Queues fn(pg, ctx); ctx_free(ctx) runs when the work is released by both sides. The
 * returned handle holds one reference (tn_pg_work_release). */
tn_status tn_pg_enqueue(tn_pg *pg, tn_pg_work_fn fn, void *ctx, void (*ctx_free)(void *), tn_pg_work **out);
/* A work that is already finished with status st (message from this thread's slot). */
tn_pg_work *tn_pg_work_completed(tn_status st, void *ctx, void (*ctx_free)(void *));
/* Waits (timeout_ms <= 0: forever) and returns the work's status, re-raising its error
 * message and kind on this thread. */
tn_status tn_pg_work_wait(tn_pg_work *w, int64_t timeout_ms);
int tn_pg_work_done(tn_pg_work *w);
void *tn_pg_work_ctx(tn_pg_work *w);
void tn_pg_work_release(tn_pg_work *w);

/* ---- collectives (coll.c): run on the calling thread, seq from tn_pg_next_seq ------- */
/* acc = acc (op) src elementwise, for every dtype gloo reduces; AVG and PREMUL_SUM are
 * handled by the caller (sum, then scale). */
tn_status tn_dist_reduce_into(void *acc, const void *src, size_t count, tn_dtype dt, tn_redop op);
/* Checks that gloo can reduce dt with op (upstream's messages). */
tn_status tn_dist_check_reduce(tn_dtype dt, tn_redop op);
/* Upstream gloo's ring chunk boundaries (elements) for count elements of itemsize isz at
 * n ranks: chunk c is [start[c], start[c+1]); start holds n + 1 entries. */
void tn_dist_gloo_chunks(size_t count, size_t isz, int n, size_t *start);
/* dst[0..count) = the fold of xs[0..n)[0..count) for elements of gloo ring chunk c:
 * x_{c-1}, then x_{c-j} (op) acc for j = 2..n (dst may be one of the xs). */
tn_status tn_dist_fold_chunk(void *dst, const uint8_t *const *xs, int n, int c, size_t count, tn_dtype dt,
                             tn_redop op);
/* Folds the n contributions xs[0..n) (count elements each) into out in the order gloo's
 * ring allreduce combines elements offset..offset+count of a buffer of `total` elements. */
tn_status tn_dist_fold_gloo_order(void *out, const uint8_t *const *xs, size_t count, size_t total, size_t offset,
                                  int n, tn_dtype dt, tn_redop op);

/* Every collective: every rank calls it with the same seq and matching arguments; a
 * failure on one rank (peer gone, size/dtype mismatch, timeout) is reported to the
 * others, so all ranks return an error. Buffers are never written after return. */
/* root's nbytes at buf are copied to every rank's buf. */
tn_status tn_pg_broadcast(tn_pg *pg, uint64_t seq, void *buf, size_t nbytes, int root);
/* buf (count elements of dt) becomes the reduction over ranks, bitwise identical on
 * every rank and to upstream gloo's (AVG and PREMUL_SUM reduce as SUM: the caller
 * scales). */
tn_status tn_pg_allreduce(tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op);
/* As allreduce, the result on root only; other ranks' buf keep partial reductions (as
 * upstream's). */
tn_status tn_pg_reduce(tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op, int root);
/* outs[r] receives rank r's `in` (out_n[r] bytes; mismatched sizes fail). */
tn_status tn_pg_allgather(tn_pg *pg, uint64_t seq, const void *in, size_t n, void *const *outs, const size_t *out_n);
/* outs used on root only. */
tn_status tn_pg_gather(tn_pg *pg, uint64_t seq, const void *in, size_t n, void *const *outs, const size_t *out_n,
                       int root);
/* ins used on root only. */
tn_status tn_pg_scatter(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *in_n, void *out, size_t n,
                        int root);
/* ins[r] goes to rank r; outs[r] comes from rank r. */
tn_status tn_pg_alltoall(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *in_n, void *const *outs,
                         const size_t *out_n);
/* ins[r] (counts[r] elements) is this rank's contribution to rank r's result; out gets
 * the reduction over ranks of every rank's ins[rank], combined in the order upstream's
 * gloo produces: as an allreduce of each ins[r] on its own (flat = 0, reduce_scatter of
 * a list) or of the whole concatenated input (flat = 1, reduce_scatter_tensor). */
tn_status tn_pg_reduce_scatter(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *counts, void *out,
                               tn_dtype dt, tn_redop op, int flat);
/* Returns once every rank has entered. */
tn_status tn_pg_barrier(tn_pg *pg, uint64_t seq);
/* Rank 0 waits timeout_ms for every other rank and reports the ones that did not arrive
 * (all of them when wait_all, else the first); then releases the others. */
tn_status tn_pg_monitored_barrier(tn_pg *pg, uint64_t seq, int64_t timeout_ms, int wait_all);

#endif

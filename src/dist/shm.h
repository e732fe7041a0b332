/* shm.h — shared memory between the ranks of a process group that share a host: the
 * handshake that decides whether every rank is on this host (over the group's own
 * connections, before its receiver threads start), one segment mapped by every rank,
 * barriers on C11 atomics in the segment with futex waits, and the all_reduce and
 * broadcast that run through it in bounded slices.
 *
 * Results are bitwise those of the TCP ring (and so of upstream gloo): all_reduce folds
 * every element in gloo's order for its ring chunk (coll.c's tn_dist_gloo_chunks).
 *
 * Faults: every wait is bounded by the group's timeout and checks, between futex waits,
 * whether a peer's connection dropped or a peer aborted the collective (pg.c); a failure
 * that leaves the ranks out of step marks the segment broken, so every later shared-memory
 * collective on any rank fails naming it. Argument mismatches (count, dtype, op, root,
 * collective) are found from a header every rank publishes, by every rank alike, and
 * leave the group usable.
 *
 * TN_DIST_SHM=0 keeps every group on TCP; TN_DIST_SHM_LOG=1 prints the decision at group
 * creation and, at destruction, how many collectives went through the segment (stderr).
 *
 * Plain C11 + POSIX (Linux futex); no Python. */
#ifndef TN_DIST_SHM_H
#define TN_DIST_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/status.h"
#include "dist/conn.h"
#include "dist/pg.h"

typedef struct tn_shm tn_shm;

/* Larger groups stay on TCP. */
#define TN_SHM_MAX_RANKS 64

/* The handshake at group creation: each rank sends rank 0 its host identity (boot id,
 * host name, /dev/shm's device and inode, IPC and mount namespaces) and whether it allows
 * shared memory; when all agree rank 0 creates the segment, every rank maps it, and rank
 * 0 unlinks its name once all have mapped it (nothing is left in /dev/shm). conns[p] is the
 * connection to rank p (conns[rank] unused); no receiver thread may run yet. *out is NULL
 * when the group stays on TCP; an error only when a connection fails. */
tn_status tn_shm_setup(int rank, int size, tn_conn *const *conns, int64_t deadline, tn_shm **out);
void tn_shm_free(tn_shm *s);

/* Whether all_reduce of `count` elements of dt goes through the segment. */
int tn_shm_takes_allreduce(const tn_shm *s, size_t count, tn_dtype dt);
/* Whether broadcast of nbytes goes through the segment (up to 64 KB; TCP's chain above). */
int tn_shm_takes_broadcast(const tn_shm *s, size_t nbytes);

/* The collectives (coll.c calls them; the caller reports failures to the peers). Each
 * first waits until every earlier collective of the group has finished on this rank, so
 * concurrent collectives (async work next to blocking calls) use the segment in order. */
tn_status tn_shm_allreduce(tn_shm *s, tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op);
tn_status tn_shm_broadcast(tn_shm *s, tn_pg *pg, uint64_t seq, void *buf, size_t nbytes, int root);

#endif

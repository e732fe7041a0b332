/* shm.c — shared memory between the ranks of a process group on one host: handshake,
 * segment, futex barriers, and the all_reduce / broadcast through the segment (shm.h).
 *
 * Segment layout: a header page (sizes, the futex word, the broken flag and its message),
 * one 128-byte control line per rank (its barrier count and the arguments of its current
 * collective, double-buffered by slice parity as the slots are), then two sets of `size` slots of `slot` bytes each. Slice j of every
 * collective uses set j % 2 (j counts slices over the group's life), and every slice
 * has a barrier between its writes and its reads, so a rank writing slice j + 2 has
 * passed a barrier that every rank reaches only after reading slice j.
 *
 * all_reduce, per slice of `slot` bytes: each rank copies its slice into its slot; barrier;
 * each rank folds 1/size of the slice in gloo's order (for chunk c: x_{c-1}, then
 * x_{c-j} op acc for j = 2..size, as gloo's ring) and writes the result into slot c;
 * barrier; every rank copies the slice out. Slices up to `small` bytes
 * (16 KB) skip the second barrier: every rank folds the whole slice into its own buffer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dist/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dist/net.h"

#define SEG_MAGIC 0x544e53484d543031ull /* "TNSHMT01" */
#define HS_MAGIC 0x544e5348u
#define HDR_BYTES 4096
#define CTL_BYTES 128
#define IDENT_BYTES 320
#define NAME_BYTES 64
#define DEFAULT_SLOT ((size_t)1 << 20)
#define DEFAULT_SMALL ((size_t)16 << 10) /* slices up to this: one barrier, folded by every rank */
#define SPINS 256
#define WAIT_NS 2000000 /* futex wait between checks of the peers and the deadline */

enum { KIND_ALLREDUCE = 1, KIND_BROADCAST = 2 };

typedef struct seg_hdr {
    uint64_t magic;
    uint32_t size, pad0;
    uint64_t slot, total, small;
    _Atomic uint32_t wake;    /* futex word: bumped by every arrival */
    _Atomic uint32_t waiters; /* ranks inside FUTEX_WAIT (arrivals wake only when > 0) */
    _Atomic int32_t broken;   /* 0, or 1 + the rank that left the ranks out of step */
    char broken_msg[600];     /* written before `broken` is set (release) */
} seg_hdr;

typedef struct seg_args {
    uint32_t kind, meta;
    int32_t root, pad;
    uint64_t seq, count;
} seg_args;

typedef struct seg_ctl {
    _Atomic uint32_t arrived; /* barriers this rank has entered */
    uint32_t pad;
    seg_args args[2]; /* the arguments of the collective whose first slice has this parity */
} seg_ctl;

struct tn_shm {
    int rank, size;
    uint8_t *base;
    size_t total, slot, small;
    seg_hdr *hdr;
    uint8_t *data;
    uint32_t bar;    /* barriers entered (same on every rank while in step) */
    uint64_t slices; /* slices run (picks the set) */
    uint64_t n_allreduce, n_broadcast;
    int log;
};

_Static_assert(sizeof(seg_ctl) <= CTL_BYTES, "control line");
_Static_assert(sizeof(seg_hdr) <= HDR_BYTES, "header page");

static seg_ctl *ctl(tn_shm *s, int p) { return (seg_ctl *)(s->base + HDR_BYTES + (size_t)p * CTL_BYTES); }
static uint8_t *slot_of(tn_shm *s, uint64_t slice, int p) {
    return s->data + ((size_t)(slice & 1) * (size_t)s->size + (size_t)p) * s->slot;
}

/* ---- futex -------------------------------------------------------------------------- */
static void futex_wait(_Atomic uint32_t *w, uint32_t v, long ns) {
    struct timespec ts = {0, ns};
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, v, &ts, NULL, 0);
}
static void futex_wake_all(_Atomic uint32_t *w) { syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0); }

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- barriers ----------------------------------------------------------------------- */
/* The first rank that has not entered barrier k, or -1 when all have. */
static int first_missing(tn_shm *s, uint32_t k) {
    for (int p = 0; p < s->size; p++)
        if ((int32_t)(atomic_load_explicit(&ctl(s, p)->arrived, memory_order_acquire) - k) < 0) return p;
    return -1;
}

/* Marks the segment broken (the ranks are out of step) and wakes every waiter. */
static void set_broken(tn_shm *s, const char *msg) {
    int32_t zero = 0;
    seg_hdr *h = s->hdr;
    /* claim first, then publish: only the first failure's message is kept */
    static const int32_t claiming = -1;
    if (atomic_compare_exchange_strong(&h->broken, &zero, claiming)) {
        snprintf(h->broken_msg, sizeof h->broken_msg, "%s", msg);
        atomic_store_explicit(&h->broken, 1 + s->rank, memory_order_release);
    }
    atomic_fetch_add(&h->wake, 1);
    futex_wake_all(&h->wake);
}

static tn_status broken_error(tn_shm *s) {
    int32_t b = atomic_load_explicit(&s->hdr->broken, memory_order_acquire);
    if (b == 0) return TN_OK;
    if (b < 0) return tn_dist_fail(TN_DIST_ERR_BACKEND, "a rank failed in a shared-memory collective");
    return tn_dist_fail(TN_DIST_ERR_BACKEND, "rank %d failed in a shared-memory collective: %s", b - 1,
                        s->hdr->broken_msg);
}

/* Fails the collective on this rank after the ranks fell out of step: the segment is
 * marked broken so that no rank trusts it again. */
static tn_status fail_broken(tn_shm *s, tn_status st) {
    if (st == TN_OK) return st;
    char msg[600];
    snprintf(msg, sizeof msg, "%s", tn_error_message());
    tn_dist_err kind = tn_dist_error_kind();
    if (!strstr(msg, "failed in a shared-memory collective")) set_broken(s, msg);
    tn_error(st, "%s", msg);
    tn_dist_set_kind(kind);
    return st;
}

static tn_status barrier(tn_shm *s, tn_pg *pg, uint64_t seq, const char *what) {
    seg_hdr *h = s->hdr;
    uint32_t k = ++s->bar;
    atomic_store_explicit(&ctl(s, s->rank)->arrived, k, memory_order_release);
    atomic_fetch_add(&h->wake, 1);
    if (atomic_load(&h->waiters)) futex_wake_all(&h->wake);
    for (int i = 0; i < SPINS; i++) {
        if (first_missing(s, k) < 0) return TN_OK;
        cpu_relax();
    }
    int64_t deadline = tn_net_deadline(tn_pg_timeout(pg));
    for (;;) {
        int miss = first_missing(s, k);
        if (miss < 0) return TN_OK;
        TN_TRY(fail_broken(s, broken_error(s)));
        /* only the ranks still awaited: one that has passed this barrier and then exited
         * (its last collective done) is no fault */
        for (int p = miss; p < s->size; p++)
            if ((int32_t)(atomic_load_explicit(&ctl(s, p)->arrived, memory_order_acquire) - k) < 0)
                TN_TRY(fail_broken(s, tn_pg_check_faults(pg, seq, p)));
        if (deadline >= 0 && tn_net_now_ms() >= deadline)
            return fail_broken(s, tn_dist_fail(TN_DIST_ERR_BACKEND,
                                               "Timed out waiting %" PRId64 "ms for the shared-memory %s to complete "
                                               "(rank %d waiting for rank %d)",
                                               tn_pg_timeout(pg), what, s->rank, miss));
        uint32_t g = atomic_load(&h->wake);
        atomic_fetch_add(&h->waiters, 1);
        if (first_missing(s, k) >= 0) futex_wait(&h->wake, g, WAIT_NS);
        atomic_fetch_sub(&h->waiters, 1);
    }
}

/* Publishes this rank's arguments for the collective starting at the next slice (read
 * by the others after that slice's barrier; double-buffered like the slots, so a rank
 * already starting its next collective does not overwrite what the others still read). */
static void publish(tn_shm *s, uint64_t seq, uint32_t kind, uint64_t count, uint32_t meta, int32_t root) {
    seg_args *a = &ctl(s, s->rank)->args[s->slices & 1];
    a->seq = seq;
    a->kind = kind;
    a->count = count;
    a->meta = meta;
    a->root = root;
}

/* After the first barrier: every rank compares every rank's arguments, so all reach the
 * same verdict and the group stays in step (and usable) after a mismatch. */
static tn_status check_args(tn_shm *s, uint64_t slice, const char *what) {
    int par = (int)(slice & 1);
    seg_args *me = &ctl(s, s->rank)->args[par];
    for (int p = 0; p < s->size; p++) {
        seg_args *c = &ctl(s, p)->args[par];
        if (c->seq != me->seq || c->kind != me->kind)
            return fail_broken(s, tn_dist_fail(TN_DIST_ERR_BACKEND,
                                               "Mismatched collectives across ranks: rank %d runs collective %" PRIu64
                                               " (%s), rank %d collective %" PRIu64 " (kind %u)",
                                               s->rank, me->seq, what, p, c->seq, c->kind));
    }
    for (int p = 0; p < s->size; p++) {
        seg_args *c = &ctl(s, p)->args[par], *c0 = &ctl(s, 0)->args[par];
        if (c->count != c0->count)
            return tn_dist_fail(TN_DIST_ERR_BACKEND,
                                "Mismatched sizes across ranks: rank 0 passes %" PRIu64 " %s and rank %d passes %" PRIu64
                                " (every rank must pass tensors of the same size and dtype)",
                                c0->count, me->kind == KIND_ALLREDUCE ? "elements" : "bytes", p, c->count);
        if (c->meta != c0->meta || c->root != c0->root)
            return tn_dist_fail(TN_DIST_ERR_BACKEND,
                                "Mismatched collective arguments across ranks: rank 0 and rank %d disagree on the %s "
                                "(code %u/%d vs %u/%d)",
                                p, me->kind == KIND_ALLREDUCE ? "dtype or reduce op" : "root", c0->meta, c0->root,
                                c->meta, c->root);
    }
    return TN_OK;
}

/* ---- all_reduce --------------------------------------------------------------------- */
int tn_shm_takes_allreduce(const tn_shm *s, size_t count, tn_dtype dt) {
    (void)dt;
    return s && count > 0;
}

/* Broadcast through the segment only up to SMALL_BCAST bytes (one slice, one barrier).
 * Above, it was not shown faster than TCP's chain: the slices move in lockstep (the root
 * waits at every slice for the slowest reader), and a 256 MB broadcast at 2 ranks took
 * 1.5-3.9 s through the segment against 0.7-1.8 s on TCP in a later run at similar load
 * (not side by side; docs/DISTRIBUTED.md). */
#define SMALL_BCAST ((size_t)64 << 10)
int tn_shm_takes_broadcast(const tn_shm *s, size_t nbytes) { return s && nbytes > 0 && nbytes <= SMALL_BCAST; }

static tn_status allreduce_impl(tn_shm *s, tn_pg *pg, uint64_t seq, uint8_t *buf, size_t count, tn_dtype dt,
                                tn_redop op) {
    int n = s->size, r = s->rank;
    size_t isz = (size_t)tn_dtype_itemsize(dt);
    size_t per = s->slot / isz; /* elements per slice */
    size_t start[TN_SHM_MAX_RANKS + 1];
    tn_dist_gloo_chunks(count, isz, n, start);
    publish(s, seq, KIND_ALLREDUCE, count, (uint32_t)dt | (uint32_t)op << 8, 0);
    const uint8_t *xs[TN_SHM_MAX_RANKS];
    for (size_t e0 = 0; e0 < count; e0 += per) {
        size_t m = count - e0 < per ? count - e0 : per;
        uint64_t sl = s->slices++;
        memcpy(slot_of(s, sl, r), buf + e0 * isz, m * isz);
        TN_TRY(barrier(s, pg, seq, "all_reduce"));
        if (e0 == 0) TN_TRY(check_args(s, sl, "all_reduce"));
        for (int p = 0; p < n; p++) xs[p] = slot_of(s, sl, p);
        if (m * isz <= s->small) {
            /* every rank folds the whole slice into its own buffer: no second barrier */
            TN_TRY(fail_broken(s, tn_dist_fold_gloo_order(buf + e0 * isz, xs, m, count, e0, n, dt, op)));
            continue;
        }
        /* this rank's share of the slice, folded in place in the slots */
        size_t q = (m + (size_t)n - 1) / (size_t)n;
        q = (q + 15) / 16 * 16;
        size_t a = e0 + (size_t)r * q, b = e0 + (size_t)(r + 1) * q;
        if (a > e0 + m) a = e0 + m;
        if (b > e0 + m) b = e0 + m;
        for (int c = 0; c < n && a < b; c++) {
            size_t lo = start[c] > a ? start[c] : a, hi = start[c + 1] < b ? start[c + 1] : b;
            if (lo >= hi) continue;
            const uint8_t *at[TN_SHM_MAX_RANKS];
            for (int p = 0; p < n; p++) at[p] = slot_of(s, sl, p) + (lo - e0) * isz;
            TN_TRY(fail_broken(s, tn_dist_fold_chunk(slot_of(s, sl, c) + (lo - e0) * isz, at, n, c, hi - lo, dt, op)));
        }
        TN_TRY(barrier(s, pg, seq, "all_reduce"));
        /* copy the slice out: chunk c's result is in slot c */
        for (int c = 0; c < n; c++) {
            size_t lo = start[c] > e0 ? start[c] : e0, hi = start[c + 1] < e0 + m ? start[c + 1] : e0 + m;
            if (lo < hi) memcpy(buf + lo * isz, slot_of(s, sl, c) + (lo - e0) * isz, (hi - lo) * isz);
        }
    }
    s->n_allreduce++;
    return TN_OK;
}

tn_status tn_shm_allreduce(tn_shm *s, tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op) {
    TN_TRY(tn_pg_wait_turn(pg, seq));
    TN_TRY(broken_error(s));
    return allreduce_impl(s, pg, seq, buf, count, dt, op);
}

/* ---- broadcast ---------------------------------------------------------------------- */
/* The root copies a slice of size * slot bytes into the set; barrier; the others copy it
 * out. One barrier per slice. */
tn_status tn_shm_broadcast(tn_shm *s, tn_pg *pg, uint64_t seq, void *buf, size_t nbytes, int root) {
    TN_TRY(tn_pg_wait_turn(pg, seq));
    TN_TRY(broken_error(s));
    publish(s, seq, KIND_BROADCAST, nbytes, 0, root);
    size_t per = s->slot * (size_t)s->size;
    uint8_t *b = buf;
    for (size_t off = 0; off < nbytes; off += per) {
        size_t m = nbytes - off < per ? nbytes - off : per;
        uint64_t sl = s->slices++;
        uint8_t *set = slot_of(s, sl, 0);
        if (s->rank == root) memcpy(set, b + off, m);
        TN_TRY(barrier(s, pg, seq, "broadcast"));
        if (off == 0) TN_TRY(check_args(s, sl, "broadcast"));
        if (s->rank != root) memcpy(b + off, set, m);
    }
    s->n_broadcast++;
    return TN_OK;
}

/* ---- handshake ---------------------------------------------------------------------- */
static void read_small(const char *path, char *out, size_t n) {
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t k = fread(out, 1, n - 1, f);
    out[k] = 0;
    fclose(f);
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
}

/* What must be equal for two processes to share a segment by name. */
static void host_identity(char *id, size_t n) {
    char boot[64], host[128] = {0}, ipc[64] = {0}, mnt[64] = {0};
    read_small("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
    gethostname(host, sizeof host - 1);
    ssize_t k = readlink("/proc/self/ns/ipc", ipc, sizeof ipc - 1);
    if (k > 0) ipc[k] = 0;
    k = readlink("/proc/self/ns/mnt", mnt, sizeof mnt - 1);
    if (k > 0) mnt[k] = 0;
    struct stat st;
    unsigned long long dev = 0, ino = 0;
    if (stat("/dev/shm", &st) == 0) {
        dev = (unsigned long long)st.st_dev;
        ino = (unsigned long long)st.st_ino;
    }
    snprintf(id, n, "%s|%s|%s|%s|%llx:%llx", boot, host, ipc, mnt, dev, ino);
}

static int env_flag(const char *name, int dflt) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    return !(strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "off") == 0);
}

typedef struct hs_hello {
    uint32_t magic, want;
    char ident[IDENT_BYTES];
} hs_hello;

typedef struct hs_offer {
    uint32_t magic, verdict;
    char name[NAME_BYTES];
} hs_offer;

static tn_shm *map_segment(int fd, int rank, int size, size_t total, int create, size_t slot, size_t small) {
    if (create && ftruncate(fd, (off_t)total) != 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < total) return NULL;
    void *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return NULL;
    tn_shm *s = calloc(1, sizeof *s);
    if (!s) {
        munmap(base, total);
        return NULL;
    }
    s->rank = rank;
    s->size = size;
    s->base = base;
    s->total = total;
    s->hdr = base;
    if (create) {
        s->hdr->size = (uint32_t)size;
        s->hdr->slot = slot;
        s->hdr->small = small;
        s->hdr->total = total;
        s->hdr->magic = SEG_MAGIC;
    } else if (s->hdr->magic != SEG_MAGIC || s->hdr->size != (uint32_t)size || s->hdr->total != total) {
        munmap(base, total);
        free(s);
        return NULL;
    }
    s->slot = s->hdr->slot;
    s->small = s->hdr->small;
    size_t data_off = (HDR_BYTES + (size_t)size * CTL_BYTES + 4095) / 4096 * 4096;
    s->data = (uint8_t *)base + data_off;
    return s;
}

static size_t segment_bytes(int size, size_t slot) {
    size_t data_off = (HDR_BYTES + (size_t)size * CTL_BYTES + 4095) / 4096 * 4096;
    return data_off + 2 * (size_t)size * slot;
}

/* Rank 0's settings, published in the header (for measurements and tests):
 * TN_DIST_SHM_SLOT bytes per rank and slice, TN_DIST_SHM_SMALL the largest slice folded
 * whole by every rank after one barrier. */
static size_t env_size(const char *name, size_t dflt, size_t lo, size_t hi) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    long long x = atoll(v);
    if (x < (long long)lo || x > (long long)hi) return dflt;
    return (size_t)x / 64 * 64;
}

tn_status tn_shm_setup(int rank, int size, tn_conn *const *conns, int64_t deadline, tn_shm **out) {
    *out = NULL;
    int log = env_flag("TN_DIST_SHM_LOG", 0);
    hs_hello me = {HS_MAGIC, (uint32_t)(env_flag("TN_DIST_SHM", 1) && size <= TN_SHM_MAX_RANKS), {0}};
    host_identity(me.ident, sizeof me.ident);
    tn_shm *s = NULL;
    const char *why = "";
    if (rank != 0) {
        TN_TRY(tn_conn_send(conns[0], &me, sizeof me, deadline));
        hs_offer off;
        TN_TRY(tn_conn_recv(conns[0], &off, sizeof off, deadline, NULL));
        if (off.magic != HS_MAGIC) return tn_dist_fail(TN_DIST_ERR_BACKEND, "bad shared-memory handshake from rank 0");
        uint32_t ok = 0;
        if (off.verdict) {
            off.name[NAME_BYTES - 1] = 0;
            int fd = shm_open(off.name, O_RDWR, 0600);
            if (fd >= 0) {
                struct stat st;
                if (fstat(fd, &st) == 0) s = map_segment(fd, rank, size, (size_t)st.st_size, 0, 0, 0);
                close(fd);
            }
            ok = s != NULL;
        }
        if (off.verdict) {
            uint32_t use = 0;
            tn_status st = tn_conn_send(conns[0], &ok, sizeof ok, deadline);
            if (st == TN_OK) st = tn_conn_recv(conns[0], &use, sizeof use, deadline, NULL);
            if (st != TN_OK || !use) {
                tn_shm_free(s);
                s = NULL;
                if (st != TN_OK) return st;
            }
            why = s ? "" : "a rank could not map the segment";
        } else {
            why = me.want ? "the ranks are not all on this host, or one set TN_DIST_SHM=0" : "TN_DIST_SHM=0";
        }
    } else {
        uint32_t verdict = me.want;
        for (int p = 1; p < size; p++) {
            hs_hello h;
            TN_TRY(tn_conn_recv(conns[p], &h, sizeof h, deadline, NULL));
            h.ident[IDENT_BYTES - 1] = 0;
            if (h.magic != HS_MAGIC || !h.want || strcmp(h.ident, me.ident) != 0) verdict = 0;
        }
        why = me.want ? (verdict ? "" : "the ranks are not all on this host, or one set TN_DIST_SHM=0")
                      : "TN_DIST_SHM=0";
        hs_offer off = {HS_MAGIC, 0, {0}};
        if (verdict) {
            unsigned long long salt = (unsigned long long)tn_net_now_ms() ^ ((unsigned long long)(uintptr_t)&off << 7);
            snprintf(off.name, sizeof off.name, "/tn_dist_%d_%llx", (int)getpid(), salt);
            int fd = shm_open(off.name, O_RDWR | O_CREAT | O_EXCL, 0600);
            if (fd >= 0) {
                size_t slot = env_size("TN_DIST_SHM_SLOT", DEFAULT_SLOT, 4096, (size_t)1 << 30);
                size_t small = env_size("TN_DIST_SHM_SMALL", DEFAULT_SMALL, 0, (size_t)1 << 30);
                s = map_segment(fd, rank, size, segment_bytes(size, slot), 1, slot, small);
                close(fd);
                if (!s) shm_unlink(off.name);
            }
            verdict = s != NULL;
            if (!s) why = "could not create the segment";
        }
        off.verdict = verdict;
        tn_status st = TN_OK;
        for (int p = 1; p < size && st == TN_OK; p++) st = tn_conn_send(conns[p], &off, sizeof off, deadline);
        uint32_t all = verdict;
        for (int p = 1; p < size && st == TN_OK && verdict; p++) {
            uint32_t ok = 0;
            st = tn_conn_recv(conns[p], &ok, sizeof ok, deadline, NULL);
            if (!ok) all = 0;
        }
        if (verdict) shm_unlink(off.name); /* every rank has mapped it (or failed to) */
        for (int p = 1; p < size && st == TN_OK && verdict; p++) st = tn_conn_send(conns[p], &all, sizeof all, deadline);
        if (st != TN_OK || !all) {
            tn_shm_free(s);
            s = NULL;
            if (st != TN_OK) return st;
            if (verdict) why = "a rank could not map the segment";
        }
    }
    if (s) s->log = log;
    if (log) {
        if (s)
            fprintf(stderr, "tn_dist shm: rank %d of %d: shared memory on (%zu-byte segment, %zu-byte slots)\n", rank,
                    size, s->total, s->slot);
        else
            fprintf(stderr, "tn_dist shm: rank %d of %d: shared memory off (%s)\n", rank, size, why);
    }
    *out = s;
    return TN_OK;
}

void tn_shm_free(tn_shm *s) {
    if (!s) return;
    if (s->log)
        fprintf(stderr, "tn_dist shm: rank %d: %" PRIu64 " all_reduce and %" PRIu64 " broadcast through shared memory\n",
                s->rank, s->n_allreduce, s->n_broadcast);
    munmap(s->base, s->total);
    free(s);
}

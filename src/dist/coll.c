/* coll.c — the collectives of the gloo process group, written on tagged send/receive
 * (pg.c), and the elementwise reductions they apply (gloo's dtypes and ops).
 *
 * Algorithms: allreduce is a ring (reduce-scatter then allgather) cut at upstream gloo's
 * chunk boundaries and run in gloo's direction, so float results are bitwise gloo's and
 * every rank ends with the same bits; broadcast streams the buffer down a chain of
 * ranks in 4 MB chunks (flat sends below 64 KB); reduce is gloo's ring reduce-scatter
 * followed by a gather of the chunks on the root; allgather, gather, scatter, alltoall
 * and reduce_scatter exchange directly between pairs, reduce_scatter then folding the
 * contributions locally in the order gloo's allreduce would have used. Every receive is posted before the matching send so payloads land in
 * place; only reductions need a scratch segment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/net.h"
#include "dist/pg.h"
#include "dist/shm.h"

/* ---- reductions --------------------------------------------------------------------- */
/* restrict: acc and src never overlap, and saying so lets -O2 vectorise the loops */
#define RED_LOOP(T, EXPR)                         \
    do {                                          \
        T *restrict a = acc;                      \
        const T *restrict b = src;                \
        for (size_t i = 0; i < count; i++) {      \
            T x = a[i], y = b[i];                 \
            a[i] = (T)(EXPR);                     \
        }                                         \
    } while (0)

#define RED_ARITH(T)                                                 \
    switch (op) {                                                    \
    case TN_REDOP_SUM: RED_LOOP(T, x + y); return TN_OK;             \
    case TN_REDOP_PRODUCT: RED_LOOP(T, x * y); return TN_OK;         \
    case TN_REDOP_MIN: RED_LOOP(T, (y < x) ? y : x); return TN_OK;   \
    case TN_REDOP_MAX: RED_LOOP(T, (x < y) ? y : x); return TN_OK;   \
    default: break;                                                  \
    }

#define RED_BITS(T)                                          \
    switch (op) {                                            \
    case TN_REDOP_BAND: RED_LOOP(T, x & y); return TN_OK;    \
    case TN_REDOP_BOR: RED_LOOP(T, x | y); return TN_OK;     \
    case TN_REDOP_BXOR: RED_LOOP(T, x ^ y); return TN_OK;    \
    default: break;                                          \
    }

/* half and bfloat16: gloo computes in float and rounds back after every step */
#define RED_NARROW(TO_F, FROM_F)                                        \
    do {                                                                \
        uint16_t *a = acc;                                              \
        const uint16_t *b = src;                                        \
        for (size_t i = 0; i < count; i++) {                            \
            float x = TO_F(a[i]), y = TO_F(b[i]), r;                    \
            switch (op) {                                               \
            case TN_REDOP_SUM: r = x + y; break;                        \
            case TN_REDOP_PRODUCT: r = x * y; break;                    \
            case TN_REDOP_MIN: r = (y < x) ? y : x; break;              \
            default: r = (x < y) ? y : x; break;                        \
            }                                                           \
            a[i] = FROM_F(r);                                           \
        }                                                               \
        return TN_OK;                                                   \
    } while (0)

tn_status tn_dist_check_reduce(tn_dtype dt, tn_redop op) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: case TN_DTYPE_FLOAT64: case TN_DTYPE_FLOAT16: case TN_DTYPE_BFLOAT16:
        if (op == TN_REDOP_BAND || op == TN_REDOP_BOR || op == TN_REDOP_BXOR)
            return tn_error(TN_ERR_RUNTIME, "Cannot use ReduceOp.%s with non-integral dtype",
                            op == TN_REDOP_BAND ? "BAND" : op == TN_REDOP_BOR ? "BOR" : "BXOR");
        return TN_OK;
    case TN_DTYPE_INT8: case TN_DTYPE_UINT8: case TN_DTYPE_BOOL: case TN_DTYPE_INT32: case TN_DTYPE_INT64:
        return TN_OK;
    default:
        return tn_error(TN_ERR_RUNTIME, "Invalid scalar type");
    }
}

/* The build's -O2 does not vectorise loops of unknown trip count (GCC's very-cheap cost
 * model); these loops are the reduction's whole cost, so ask for -O3 here (elementwise
 * IEEE operations: vectorised results are bit-identical). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
tn_status tn_dist_reduce_into(void *acc, const void *src, size_t count, tn_dtype dt, tn_redop op) {
    if (op == TN_REDOP_AVG || op == TN_REDOP_PREMUL_SUM) op = TN_REDOP_SUM;
    TN_TRY(tn_dist_check_reduce(dt, op));
    switch (dt) {
    case TN_DTYPE_FLOAT32: RED_ARITH(float); break;
    case TN_DTYPE_FLOAT64: RED_ARITH(double); break;
    case TN_DTYPE_FLOAT16: RED_NARROW(tn_half_to_f32, tn_f32_to_half);
    case TN_DTYPE_BFLOAT16: RED_NARROW(tn_bf16_to_f32, tn_f32_to_bf16);
    case TN_DTYPE_INT8: RED_ARITH(int8_t); RED_BITS(int8_t); break;
    case TN_DTYPE_UINT8: case TN_DTYPE_BOOL: RED_ARITH(uint8_t); RED_BITS(uint8_t); break;
    case TN_DTYPE_INT32: RED_ARITH(int32_t); RED_BITS(int32_t); break;
    case TN_DTYPE_INT64: RED_ARITH(int64_t); RED_BITS(int64_t); break;
    default: break;
    }
    return tn_error(TN_ERR_RUNTIME, "unsupported reduce op %d", (int)op);
}

/* ---- helpers ------------------------------------------------------------------------ */
static uint16_t meta_of(tn_dtype dt, tn_redop op) { return (uint16_t)(((unsigned)dt & 0xff) | ((unsigned)op << 8)); }

/* Every collective ends here: a failing one tells its peers, so they raise too instead
 * of timing out; either way the collective is recorded as finished on this rank. */
static tn_status fail_coll(tn_pg *pg, uint64_t seq, tn_status st) {
    if (st != TN_OK && !strstr(tn_error_message(), "failed in the same collective")) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s", tn_error_message());
        tn_dist_err kind = tn_dist_error_kind();
        tn_pg_abort_seq(pg, seq, msg);
        tn_error(st, "%s", msg);
        tn_dist_set_kind(kind);
    }
    tn_pg_seq_done(pg, seq);
    return st;
}

static tn_status send_c(tn_pg *pg, int dst, uint64_t seq, uint32_t sub, uint16_t meta, const void *b, size_t n) {
    return tn_pg_send(pg, dst, TN_PG_KIND_COLL, seq, sub, meta, b, n);
}

static tn_status recv_c(tn_pg *pg, int src, uint64_t seq, uint32_t sub, uint16_t meta, void *b, size_t n) {
    tn_pg_req *r;
    TN_TRY(tn_pg_post_recv(pg, src, TN_PG_KIND_COLL, seq, sub, meta, b, n, &r));
    return tn_pg_req_wait(pg, r, -1, NULL);
}

/* Waits for every request in reqs[0..n) (NULL entries skipped); returns the first error
 * but always drains all, so no buffer is written after return. */
static tn_status wait_all(tn_pg *pg, tn_pg_req **reqs, int n) {
    tn_status first = TN_OK;
    char msg[1024] = {0};
    tn_dist_err kind = TN_DIST_ERR_NONE;
    for (int i = 0; i < n; i++) {
        if (!reqs[i]) continue;
        tn_status st = tn_pg_req_wait(pg, reqs[i], -1, NULL);
        reqs[i] = NULL;
        if (st != TN_OK && first == TN_OK) {
            first = st;
            snprintf(msg, sizeof msg, "%s", tn_error_message());
            kind = tn_dist_error_kind();
        }
    }
    if (first != TN_OK) {
        tn_error(first, "%s", msg);
        tn_dist_set_kind(kind);
    }
    return first;
}

/* ---- broadcast ---------------------------------------------------------------------- */
#define CHUNK ((size_t)4 << 20)

static tn_status broadcast_impl(tn_pg *pg, uint64_t seq, void *buf, size_t nbytes, int root) {
    int n = tn_pg_size(pg), r = tn_pg_rank(pg);
    if (n == 1) return TN_OK;
    if (nbytes < 65536) {
        if (r == root) {
            for (int p = 0; p < n; p++)
                if (p != root) TN_TRY(send_c(pg, p, seq, 0, 0, buf, nbytes));
            return TN_OK;
        }
        return recv_c(pg, root, seq, 0, 0, buf, nbytes);
    }
    int v = (r - root + n) % n;
    int prev = (r - 1 + n) % n, next = (r + 1) % n;
    size_t nchunks = (nbytes + CHUNK - 1) / CHUNK;
    tn_pg_req **reqs = NULL;
    if (v > 0) {
        reqs = calloc(nchunks, sizeof *reqs);
        if (!reqs) return tn_error(TN_ERR_NO_MEMORY, "out of memory in broadcast");
        for (size_t c = 0; c < nchunks; c++) {
            size_t off = c * CHUNK, len = nbytes - off < CHUNK ? nbytes - off : CHUNK;
            tn_status st = tn_pg_post_recv(pg, prev, TN_PG_KIND_COLL, seq, (uint32_t)c, 0, (char *)buf + off, len,
                                           &reqs[c]);
            if (st != TN_OK) {
                wait_all(pg, reqs, (int)c);
                free(reqs);
                return st;
            }
        }
    }
    tn_status st = TN_OK;
    for (size_t c = 0; c < nchunks && st == TN_OK; c++) {
        size_t off = c * CHUNK, len = nbytes - off < CHUNK ? nbytes - off : CHUNK;
        if (v > 0) {
            st = tn_pg_req_wait(pg, reqs[c], -1, NULL);
            reqs[c] = NULL;
        }
        if (st == TN_OK && v < n - 1) st = send_c(pg, next, seq, (uint32_t)c, 0, (char *)buf + off, len);
    }
    if (reqs) {
        if (st != TN_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", tn_error_message());
            tn_dist_err k = tn_dist_error_kind();
            /* cancel what is still posted: each wait fails fast once the abort arrives or
             * times out; buffers are never written after we return */
            tn_pg_abort_seq(pg, seq, msg);
            wait_all(pg, reqs, (int)nchunks);
            tn_error(st, "%s", msg);
            tn_dist_set_kind(k);
        }
        free(reqs);
    }
    return st;
}

tn_status tn_pg_broadcast(tn_pg *pg, uint64_t seq, void *buf, size_t nbytes, int root) {
    tn_shm *shm = tn_pg_shm(pg);
    if (tn_shm_takes_broadcast(shm, nbytes)) return fail_coll(pg, seq, tn_shm_broadcast(shm, pg, seq, buf, nbytes, root));
    return fail_coll(pg, seq, broadcast_impl(pg, seq, buf, nbytes, root));
}

/* ---- allreduce (ring, gloo's reduction order) ------------------------------------- */
/* Chunk boundaries (in elements) of upstream gloo's ring allreduce, as the torch 2.13
 * wheel computes them (fitted to measurements, see docs/DISTRIBUTED.md): numSegments =
 * ceil(total / 1 MiB), at least 2 n, rounded up to a multiple of n; segmentBytes =
 * ceil(total / numSegments) rounded up to whole elements; chunk c is segments
 * [c P, (c + 1) P), P = numSegments / n. Which chunk an element falls in fixes the order
 * in which the ranks' values are combined, so gloo's boundaries (and its ring direction)
 * make float sums bitwise equal to upstream's. (The gloo source in the index computes
 * the segment size first and the count second; the wheel's boundaries disagree with that
 * from 2 MB up.) start must hold n + 1 entries. */
void tn_dist_gloo_chunks(size_t count, size_t isz, int n, size_t *start) {
    size_t total = count * isz, maxseg = isz * (((size_t)1 << 20) / isz);
    size_t nseg = (total + maxseg - 1) / maxseg;
    if (nseg < (size_t)(2 * n)) nseg = (size_t)(2 * n);
    nseg = (nseg + (size_t)n - 1) / (size_t)n * (size_t)n;
    size_t seg = (total + nseg - 1) / nseg;
    seg = (seg + isz - 1) / isz * isz;
    if (seg == 0) seg = isz;
    size_t per_rank = nseg / (size_t)n, chunk_elems = per_rank * (seg / isz);
    for (int c = 0; c <= n; c++) {
        size_t e = chunk_elems * (size_t)c;
        start[c] = e < count ? e : count;
    }
}

/* Messages of the ring are cut into segments of at most SEG bytes so that the reduction
 * of one segment overlaps the transfer of the next (the order of the reduction, fixed by
 * the chunk boundaries, does not depend on this cut). */
#define SEG ((size_t)1 << 20)
#define SUB(step, seg) ((uint32_t)(step) << 16 | (uint32_t)(seg))

static size_t nsegs(size_t bytes) { return bytes ? (bytes + SEG - 1) / SEG : 1; }

/* Posts the receives of one chunk (all its segments) into dst. */
static tn_status post_chunk(tn_pg *pg, int from, uint64_t seq, int step, uint16_t meta, uint8_t *dst, size_t bytes,
                            tn_pg_req **reqs) {
    size_t k = nsegs(bytes);
    for (size_t g = 0; g < k; g++) {
        size_t off = g * SEG, len = bytes - off < SEG ? bytes - off : SEG;
        if (!bytes) len = 0;
        tn_status st = tn_pg_post_recv(pg, from, TN_PG_KIND_COLL, seq, SUB(step, g), meta, dst + off, len, &reqs[g]);
        if (st != TN_OK) {
            wait_all(pg, reqs, (int)g);
            return st;
        }
    }
    return TN_OK;
}

/* Ring in gloo's direction: data flows to rank - 1. Chunk c starts as rank c-1's values
 * and is folded as x_{c-j} (op) acc for j = 2..n, ending complete on rank c (the other
 * chunks of a rank keep the partial folds that passed through it, as in gloo). The next
 * step's receives are posted before this step's sends (double-buffered scratch), so
 * incoming data lands in place instead of being parked as unexpected. */
static tn_status ring_reduce_scatter(tn_pg *pg, uint64_t seq, uint8_t *b, const size_t *start, tn_dtype dt,
                                     tn_redop op, uint8_t *tmp, size_t tmp_half) {
    int n = tn_pg_size(pg), r = tn_pg_rank(pg);
    size_t isz = (size_t)tn_dtype_itemsize(dt);
    uint16_t meta = meta_of(dt, op);
    int to = (r - 1 + n) % n, from = (r + 1) % n;
    size_t maxk = nsegs(tmp_half);
    tn_pg_req **reqs = calloc(2 * maxk, sizeof *reqs);
    if (!reqs) return tn_error(TN_ERR_NO_MEMORY, "out of memory in allreduce");
    tn_status st = TN_OK;
#define RI(s) ((r + 2 + (s)) % n)
#define RBYTES(s) ((start[RI(s) + 1] - start[RI(s)]) * isz)
    st = post_chunk(pg, from, seq, 0, meta, tmp, RBYTES(0), reqs);
    for (int s = 0; s < n - 1 && st == TN_OK; s++) {
        tn_pg_req **cur = reqs + (size_t)(s & 1) * maxk, **nxt = reqs + (size_t)((s + 1) & 1) * maxk;
        uint8_t *cbuf = tmp + (size_t)(s & 1) * tmp_half, *nbuf = tmp + (size_t)((s + 1) & 1) * tmp_half;
        if (s + 1 < n - 1) st = post_chunk(pg, from, seq, s + 1, meta, nbuf, RBYTES(s + 1), nxt);
        int si = (r + 1 + s) % n, ri = RI(s);
        size_t sbytes = (start[si + 1] - start[si]) * isz, rbytes = RBYTES(s);
        size_t ks = nsegs(sbytes), kr = nsegs(rbytes);
        for (size_t g = 0; g < (ks > kr ? ks : kr) && st == TN_OK; g++) {
            if (g < ks) {
                size_t off = g * SEG, len = sbytes ? (sbytes - off < SEG ? sbytes - off : SEG) : 0;
                st = send_c(pg, to, seq, SUB(s, g), meta, b + start[si] * isz + off, len);
            }
            if (st == TN_OK && g < kr) {
                size_t off = g * SEG, len = rbytes ? (rbytes - off < SEG ? rbytes - off : SEG) : 0;
                st = tn_pg_req_wait(pg, cur[g], -1, NULL);
                cur[g] = NULL;
                if (st == TN_OK) st = tn_dist_reduce_into(b + start[ri] * isz + off, cbuf + off, len / isz, dt, op);
            }
        }
    }
#undef RI
#undef RBYTES
    tn_status st2 = wait_all(pg, reqs, (int)(2 * maxk)); /* after a failure: drain what is posted */
    free(reqs);
    return st != TN_OK ? st : st2;
}

/* The finished chunks circulate (rank r owns chunk r), so every rank ends with the same
 * bits; every receive lands directly in the output and is posted up front. */
static tn_status ring_allgather(tn_pg *pg, uint64_t seq, uint8_t *b, const size_t *start, tn_dtype dt, tn_redop op) {
    int n = tn_pg_size(pg), r = tn_pg_rank(pg);
    size_t isz = (size_t)tn_dtype_itemsize(dt);
    uint16_t meta = meta_of(dt, op);
    int to = (r - 1 + n) % n, from = (r + 1) % n;
    size_t total = 0;
    for (int s = 0; s < n - 1; s++) {
        int ri = (r + 1 + s) % n;
        total += nsegs((start[ri + 1] - start[ri]) * isz);
    }
    tn_pg_req **reqs = calloc(total + 1, sizeof *reqs);
    size_t *first = calloc((size_t)n, sizeof *first);
    if (!reqs || !first) {
        free(reqs);
        free(first);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory in allreduce");
    }
    tn_status st = TN_OK;
    size_t at = 0;
    for (int s = 0; s < n - 1 && st == TN_OK; s++) {
        int ri = (r + 1 + s) % n;
        size_t rbytes = (start[ri + 1] - start[ri]) * isz;
        first[s] = at;
        st = post_chunk(pg, from, seq, n + s, meta, b + start[ri] * isz, rbytes, reqs + at);
        at += nsegs(rbytes);
    }
    for (int s = 0; s < n - 1 && st == TN_OK; s++) {
        int si = (r + s) % n, ri = (r + 1 + s) % n;
        size_t sbytes = (start[si + 1] - start[si]) * isz, rbytes = (start[ri + 1] - start[ri]) * isz;
        size_t ks = nsegs(sbytes), kr = nsegs(rbytes);
        for (size_t g = 0; g < (ks > kr ? ks : kr) && st == TN_OK; g++) {
            if (g < ks) {
                size_t off = g * SEG, len = sbytes ? (sbytes - off < SEG ? sbytes - off : SEG) : 0;
                st = send_c(pg, to, seq, SUB(n + s, g), meta, b + start[si] * isz + off, len);
            }
            /* step s+1 forwards what step s received: wait for it segment by segment */
            if (st == TN_OK && g < kr) {
                st = tn_pg_req_wait(pg, reqs[first[s] + g], -1, NULL);
                reqs[first[s] + g] = NULL;
            }
        }
    }
    tn_status st2 = wait_all(pg, reqs, (int)total);
    free(reqs);
    free(first);
    return st != TN_OK ? st : st2;
}

/* Chunk boundaries and a double-buffered scratch (2 x the largest chunk, borrowed from
 * the group's cache) for the ring. */
static tn_status ring_setup(tn_pg *pg, size_t count, tn_dtype dt, int n, size_t **start, uint8_t **tmp,
                            size_t *half) {
    size_t isz = (size_t)tn_dtype_itemsize(dt);
    *start = malloc(sizeof(size_t) * (size_t)(n + 1));
    *tmp = NULL;
    if (!*start) return tn_error(TN_ERR_NO_MEMORY, "out of memory in a reduction");
    tn_dist_gloo_chunks(count, isz, n, *start);
    size_t maxlen = 0;
    for (int i = 0; i < n; i++)
        if ((*start)[i + 1] - (*start)[i] > maxlen) maxlen = (*start)[i + 1] - (*start)[i];
    *half = maxlen * isz;
    *tmp = tn_pg_scratch_take(pg, 2 * *half);
    if (!*tmp) {
        free(*start);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory in a reduction");
    }
    return TN_OK;
}

static tn_status allreduce_impl(tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op) {
    TN_TRY(tn_dist_check_reduce(dt, op == TN_REDOP_AVG || op == TN_REDOP_PREMUL_SUM ? TN_REDOP_SUM : op));
    int n = tn_pg_size(pg);
    if (n == 1 || count == 0) return TN_OK;
    tn_shm *shm = tn_pg_shm(pg);
    if (tn_shm_takes_allreduce(shm, count, dt)) return tn_shm_allreduce(shm, pg, seq, buf, count, dt, op);
    size_t *start, half;
    uint8_t *tmp;
    TN_TRY(ring_setup(pg, count, dt, n, &start, &tmp, &half));
    tn_status st = ring_reduce_scatter(pg, seq, buf, start, dt, op, tmp, half);
    if (st == TN_OK) st = ring_allgather(pg, seq, buf, start, dt, op);
    tn_pg_scratch_give(pg, tmp, 2 * half);
    free(start);
    return st;
}

tn_status tn_pg_allreduce(tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op) {
    return fail_coll(pg, seq, allreduce_impl(pg, seq, buf, count, dt, op));
}

/* ---- reduce (gloo's: the ring's reduce-scatter, then chunks gathered on the root) --- */
static tn_status reduce_impl(tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op, int root) {
    TN_TRY(tn_dist_check_reduce(dt, op == TN_REDOP_AVG || op == TN_REDOP_PREMUL_SUM ? TN_REDOP_SUM : op));
    int n = tn_pg_size(pg), r = tn_pg_rank(pg);
    if (n == 1 || count == 0) return TN_OK;
    size_t isz = (size_t)tn_dtype_itemsize(dt);
    uint16_t meta = meta_of(dt, op);
    size_t *start, half;
    uint8_t *tmp, *b = buf;
    TN_TRY(ring_setup(pg, count, dt, n, &start, &tmp, &half));
    tn_status st = ring_reduce_scatter(pg, seq, b, start, dt, op, tmp, half);
    if (st == TN_OK && r != root) {
        st = send_c(pg, root, seq, SUB(2 * n, 0), meta, b + start[r] * isz, (start[r + 1] - start[r]) * isz);
    } else if (st == TN_OK) {
        tn_pg_req **reqs = calloc((size_t)n, sizeof *reqs);
        if (!reqs) st = tn_error(TN_ERR_NO_MEMORY, "out of memory in reduce");
        for (int p = 0; reqs && p < n && st == TN_OK; p++)
            if (p != root)
                st = tn_pg_post_recv(pg, p, TN_PG_KIND_COLL, seq, SUB(2 * n, 0), meta, b + start[p] * isz,
                                     (start[p + 1] - start[p]) * isz, &reqs[p]);
        if (reqs) {
            tn_status st2 = wait_all(pg, reqs, n);
            if (st == TN_OK) st = st2;
            free(reqs);
        }
    }
    tn_pg_scratch_give(pg, tmp, 2 * half);
    free(start);
    return st;
}

tn_status tn_pg_reduce(tn_pg *pg, uint64_t seq, void *buf, size_t count, tn_dtype dt, tn_redop op, int root) {
    return fail_coll(pg, seq, reduce_impl(pg, seq, buf, count, dt, op, root));
}

/* ---- allgather / gather / scatter / alltoall ----------------------------------------- */
static tn_status exchange(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *in_n, void *const *outs,
                          const size_t *out_n, int do_send, int do_recv) {
    int n = tn_pg_size(pg), r = tn_pg_rank(pg);
    tn_pg_req **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = TN_OK;
    if (do_recv)
        for (int p = 0; p < n && st == TN_OK; p++)
            if (p != r) st = tn_pg_post_recv(pg, p, TN_PG_KIND_COLL, seq, 0, 0, outs[p], out_n[p], &reqs[p]);
    if (st == TN_OK && do_send && do_recv && outs[r] != ins[r]) {
        if (in_n[r] != out_n[r])
            st = tn_error(TN_ERR_RUNTIME, "Mismatched sizes: %zu bytes in, %zu bytes out", in_n[r], out_n[r]);
        else if (in_n[r]) memmove(outs[r], ins[r], in_n[r]);
    }
    /* stagger the sends (rank r starts with r+1) so no single rank is everyone's first */
    for (int k = 1; k < n && st == TN_OK && do_send; k++) {
        int p = (r + k) % n;
        st = send_c(pg, p, seq, 0, 0, ins[p], in_n[p]);
    }
    tn_status st2 = wait_all(pg, reqs, n);
    free(reqs);
    return st != TN_OK ? st : st2;
}

tn_status tn_pg_allgather(tn_pg *pg, uint64_t seq, const void *in, size_t n, void *const *outs, const size_t *out_n) {
    int sz = tn_pg_size(pg);
    const void **ins = malloc(sizeof *ins * (size_t)sz);
    size_t *in_n = malloc(sizeof *in_n * (size_t)sz);
    if (!ins || !in_n) {
        free(ins);
        free(in_n);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    for (int i = 0; i < sz; i++) {
        ins[i] = in;
        in_n[i] = n;
    }
    tn_status st = exchange(pg, seq, ins, in_n, outs, out_n, 1, 1);
    free(ins);
    free(in_n);
    return fail_coll(pg, seq, st);
}

tn_status tn_pg_gather(tn_pg *pg, uint64_t seq, const void *in, size_t n, void *const *outs, const size_t *out_n,
                       int root) {
    int r = tn_pg_rank(pg);
    tn_status st;
    if (r != root) {
        st = send_c(pg, root, seq, 0, 0, in, n);
    } else {
        st = TN_OK;
        if (out_n[r] != n) st = tn_error(TN_ERR_RUNTIME, "Mismatched sizes: %zu bytes in, %zu bytes out", n, out_n[r]);
        else if (n && outs[r] != in) memmove(outs[r], in, n);
        if (st == TN_OK) st = exchange(pg, seq, NULL, NULL, outs, out_n, 0, 1);
    }
    return fail_coll(pg, seq, st);
}

tn_status tn_pg_scatter(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *in_n, void *out, size_t n,
                        int root) {
    int r = tn_pg_rank(pg);
    tn_status st;
    if (r != root) {
        st = recv_c(pg, root, seq, 0, 0, out, n);
    } else {
        st = TN_OK;
        if (in_n[r] != n) st = tn_error(TN_ERR_RUNTIME, "Mismatched sizes: %zu bytes in, %zu bytes out", in_n[r], n);
        else if (n && ins[r] != out) memmove(out, ins[r], n);
        if (st == TN_OK) st = exchange(pg, seq, ins, in_n, NULL, NULL, 1, 0);
    }
    return fail_coll(pg, seq, st);
}

tn_status tn_pg_alltoall(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *in_n, void *const *outs,
                         const size_t *out_n) {
    return fail_coll(pg, seq, exchange(pg, seq, ins, in_n, outs, out_n, 1, 1));
}

/* ---- reduce_scatter ------------------------------------------------------------------ */
/* The fold of gloo's ring for elements of chunk c: x_{c-1}, then x_{c-j} (op) acc for
 * j = 2..n. Block by block through two buffers on the stack, so every input is read once
 * and dst written once (dst may be one of the inputs: each block is read before it is
 * written). */
tn_status tn_dist_fold_chunk(void *dst, const uint8_t *const *xs, int n, int c, size_t count, tn_dtype dt,
                             tn_redop op) {
    enum { BLOCK = 8192 };
    _Alignas(64) uint8_t b0[BLOCK], b1[BLOCK];
    size_t isz = (size_t)tn_dtype_itemsize(dt), len = count * isz, step = BLOCK / isz * isz;
    for (size_t at = 0; at < len; at += step) {
        size_t k = len - at < step ? len - at : step;
        uint8_t *acc = b0, *x = b1;
        memcpy(acc, xs[((c - 1) % n + n) % n] + at, k);
        for (int j = 2; j <= n; j++) {
            memcpy(x, xs[((c - j) % n + n) % n] + at, k);
            TN_TRY(tn_dist_reduce_into(x, acc, k / isz, dt, op));
            uint8_t *t = acc;
            acc = x;
            x = t;
        }
        memcpy((uint8_t *)dst + at, acc, k);
    }
    return TN_OK;
}

/* Folds the n contributions xs[0..n) (count elements each, already gathered here) into
 * out in the order gloo's ring allreduce would combine them for elements at positions
 * offset.. of a buffer of `total` elements (each element by the fold of its chunk). */
tn_status tn_dist_fold_gloo_order(void *out, const uint8_t *const *xs, size_t count, size_t total, size_t offset,
                                  int n, tn_dtype dt, tn_redop op) {
    size_t isz = (size_t)tn_dtype_itemsize(dt);
    size_t *start = malloc(sizeof(size_t) * (size_t)(n + 1));
    const uint8_t **at = malloc(sizeof *at * (size_t)n);
    if (!start || !at) {
        free(start);
        free(at);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory in a reduction");
    }
    tn_dist_gloo_chunks(total, isz, n, start);
    tn_status st = TN_OK;
    for (int c = 0; c < n && st == TN_OK; c++) {
        size_t lo = start[c] > offset ? start[c] - offset : 0, hi = start[c + 1] > offset ? start[c + 1] - offset : 0;
        if (hi > count) hi = count;
        if (lo >= hi) continue;
        for (int p = 0; p < n; p++) at[p] = xs[p] + lo * isz;
        st = tn_dist_fold_chunk((uint8_t *)out + lo * isz, at, n, c, hi - lo, dt, op);
    }
    free(start);
    free(at);
    return st;
}

static tn_status reduce_scatter_impl(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *counts, void *out,
                                     tn_dtype dt, tn_redop op, int flat) {
    TN_TRY(tn_dist_check_reduce(dt, op == TN_REDOP_AVG || op == TN_REDOP_PREMUL_SUM ? TN_REDOP_SUM : op));
    int n = tn_pg_size(pg), r = tn_pg_rank(pg);
    size_t isz = (size_t)tn_dtype_itemsize(dt), nb = counts[r] * isz;
    uint16_t meta = meta_of(dt, op);
    uint8_t *tmp = malloc(nb * (size_t)n + 1);
    const uint8_t **xs = calloc((size_t)n, sizeof *xs);
    tn_pg_req **reqs = calloc((size_t)n, sizeof *reqs);
    if (!tmp || !reqs || !xs) {
        free(tmp);
        free(reqs);
        free(xs);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory in reduce_scatter");
    }
    tn_status st = TN_OK;
    for (int p = 0; p < n && st == TN_OK; p++) {
        xs[p] = p == r ? ins[r] : tmp + nb * (size_t)p;
        if (p != r) st = tn_pg_post_recv(pg, p, TN_PG_KIND_COLL, seq, 0, meta, tmp + nb * (size_t)p, nb, &reqs[p]);
    }
    for (int k = 1; k < n && st == TN_OK; k++) {
        int p = (r + k) % n;
        st = send_c(pg, p, seq, 0, meta, ins[p], counts[p] * isz);
    }
    tn_status st2 = wait_all(pg, reqs, n);
    if (st == TN_OK) st = st2;
    if (st == TN_OK && counts[r]) {
        size_t total = flat ? counts[r] * (size_t)n : counts[r], offset = flat ? counts[r] * (size_t)r : 0;
        st = tn_dist_fold_gloo_order(out, xs, counts[r], total, offset, n, dt, op);
    }
    free(tmp);
    free(reqs);
    free(xs);
    return st;
}

tn_status tn_pg_reduce_scatter(tn_pg *pg, uint64_t seq, const void *const *ins, const size_t *counts, void *out,
                               tn_dtype dt, tn_redop op, int flat) {
    return fail_coll(pg, seq, reduce_scatter_impl(pg, seq, ins, counts, out, dt, op, flat));
}

/* ---- barriers ----------------------------------------------------------------------- */
tn_status tn_pg_barrier(tn_pg *pg, uint64_t seq) {
    int n = tn_pg_size(pg);
    void **outs = calloc((size_t)n, sizeof *outs);
    size_t *sz = calloc((size_t)n, sizeof *sz);
    if (!outs || !sz) {
        free(outs);
        free(sz);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    static char dummy;
    for (int i = 0; i < n; i++) outs[i] = &dummy;
    tn_status st = tn_pg_allgather(pg, seq, &dummy, 0, outs, sz);
    free(outs);
    free(sz);
    return st;
}

static tn_status monitored_barrier_impl(tn_pg *pg, uint64_t seq, int64_t timeout_ms, int wait_all_ranks) {
    int n = tn_pg_size(pg), r = tn_pg_rank(pg);
    if (n == 1) return TN_OK;
    char dummy;
    if (r != 0) {
        TN_TRY(send_c(pg, 0, seq, 0, 0, &dummy, 0));
        tn_pg_req *q;
        TN_TRY(tn_pg_post_recv(pg, 0, TN_PG_KIND_COLL, seq, 1, 0, &dummy, 0, &q));
        return tn_pg_req_wait(pg, q, tn_net_deadline(timeout_ms), NULL);
    }
    int64_t deadline = tn_net_deadline(timeout_ms);
    char failed[512] = {0};
    size_t off = 0;
    int nfailed = 0;
    for (int p = 1; p < n; p++) {
        tn_pg_req *q;
        TN_TRY(tn_pg_post_recv(pg, p, TN_PG_KIND_COLL, seq, 0, 0, &dummy, 0, &q));
        if (tn_pg_req_wait(pg, q, deadline, NULL) != TN_OK) {
            int w = snprintf(failed + off, sizeof failed - off, "%s%d", nfailed ? ", " : "", p);
            if (w > 0 && off + (size_t)w < sizeof failed) off += (size_t)w;
            nfailed++;
            if (!wait_all_ranks) break;
        }
    }
    if (nfailed)
        return tn_dist_fail(TN_DIST_ERR_BACKEND, "[Rank 0]: %s %s failed to pass monitoredBarrier in %lld ms",
                            nfailed > 1 ? "Ranks" : "Rank", failed, (long long)timeout_ms);
    for (int p = 1; p < n; p++) TN_TRY(send_c(pg, p, seq, 1, 0, &dummy, 0));
    return TN_OK;
}

tn_status tn_pg_monitored_barrier(tn_pg *pg, uint64_t seq, int64_t timeout_ms, int wait_all_ranks) {
    tn_status st = monitored_barrier_impl(pg, seq, timeout_ms, wait_all_ranks);
    tn_pg_seq_done(pg, seq); /* no abort to the peers: rank 0 reports the late ones itself */
    return st;
}

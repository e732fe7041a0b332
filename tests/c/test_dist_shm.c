/* test_dist_shm.c — the shared-memory path between the ranks of a group (src/dist/shm.c)
 * from plain C, ranks as threads over the in-process loopback: all_reduce results bitwise
 * equal to the TCP ring's for several dtypes, ops and sizes (small slices, many of them),
 * broadcast, a thousand back-to-back small all_reduces (the futex barriers), asynchronous
 * work on the worker thread next to blocking calls (run in order), and a size mismatch
 * that fails on every rank and leaves the group usable. Part of scripts/tsan.sh's runs
 * (`scripts/tsan.sh test_dist_shm`). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dist/net.h"
#include "dist/pg.h"
#include "tn_test.h"

#define N 3
static tn_pg *pgs[N];

typedef struct {
    int rank;
    int shm;
    tn_status st;
} starter;

static void *start_rank(void *arg) {
    starter *s = arg;
    tn_pg *pg = pgs[s->rank];
    s->st = s->shm ? tn_pg_setup_shm(pg, tn_net_deadline(10000)) : TN_OK;
    if (s->st == TN_OK) s->st = tn_pg_start(pg);
    return NULL;
}

static int make_group(int shm) {
    for (int r = 0; r < N; r++) tn_pg_new(r, N, 20000, &pgs[r]);
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++) {
            tn_conn *x, *y;
            tn_conn_loopback_pair(&x, &y);
            tn_pg_set_peer(pgs[a], b, x);
            tn_pg_set_peer(pgs[b], a, y);
        }
    pthread_t th[N];
    starter st[N];
    for (int r = 0; r < N; r++) {
        st[r] = (starter){r, shm, TN_OK};
        pthread_create(&th[r], NULL, start_rank, &st[r]);
    }
    int ok = 1;
    for (int r = 0; r < N; r++) {
        pthread_join(th[r], NULL);
        if (st[r].st != TN_OK) ok = 0;
        if (shm && !tn_pg_shm(pgs[r])) ok = 0;
    }
    return ok;
}

static void free_group(void) {
    for (int r = 0; r < N; r++) tn_pg_free(pgs[r]);
}

/* ---- all_reduce cases: run on the shm group, then on the TCP group, compare bytes ----- */
typedef struct {
    tn_dtype dt;
    tn_redop op;
    size_t count;
} ar_case;

static const ar_case CASES[] = {
    {TN_DTYPE_FLOAT32, TN_REDOP_SUM, 1},        {TN_DTYPE_FLOAT32, TN_REDOP_SUM, 13},
    {TN_DTYPE_FLOAT32, TN_REDOP_SUM, 70001},    {TN_DTYPE_FLOAT32, TN_REDOP_MIN, 30011},
    {TN_DTYPE_FLOAT64, TN_REDOP_PRODUCT, 9001}, {TN_DTYPE_FLOAT16, TN_REDOP_SUM, 50003},
    {TN_DTYPE_BFLOAT16, TN_REDOP_MAX, 40009},   {TN_DTYPE_INT64, TN_REDOP_BXOR, 12345},
    {TN_DTYPE_INT8, TN_REDOP_SUM, 100000},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

static uint8_t *results[2][NCASES][N]; /* [shm][case][rank] */

static void fill(uint8_t *b, const ar_case *c, int r) {
    for (size_t i = 0; i < c->count; i++) {
        double v = ((double)(i % 97) * 0.1 + r * 1.37 + 0.003 * (double)(i % 89) * r) * (((i + (size_t)r) % 2) ? -1 : 1);
        switch (c->dt) {
        case TN_DTYPE_FLOAT32: ((float *)b)[i] = (float)v; break;
        case TN_DTYPE_FLOAT64: ((double *)b)[i] = v; break;
        case TN_DTYPE_FLOAT16: ((uint16_t *)b)[i] = tn_f32_to_half((float)v); break;
        case TN_DTYPE_BFLOAT16: ((uint16_t *)b)[i] = tn_f32_to_bf16((float)v); break;
        case TN_DTYPE_INT64: ((int64_t *)b)[i] = (int64_t)(i * 2654435761u) ^ r; break;
        default: ((int8_t *)b)[i] = (int8_t)(i * 7 + (size_t)r); break;
        }
    }
}

typedef struct {
    int rank, shm, mode;
    int ok;
    tn_status st;
    char msg[600];
} job;

typedef struct {
    float *v;
    size_t n;
    uint64_t seq;
} queued;

static tn_status run_queued(tn_pg *pg, void *ctx) {
    queued *q = ctx;
    return tn_pg_allreduce(pg, q->seq, q->v, q->n, TN_DTYPE_FLOAT32, TN_REDOP_SUM);
}

static void *run(void *arg) {
    job *j = arg;
    tn_pg *pg = pgs[j->rank];
    int r = j->rank;
    j->ok = 1;
    if (j->mode == 0) {
        for (size_t k = 0; k < NCASES; k++) {
            const ar_case *c = &CASES[k];
            size_t bytes = c->count * (size_t)tn_dtype_itemsize(c->dt);
            uint8_t *b = malloc(bytes);
            fill(b, c, r);
            if (tn_pg_allreduce(pg, tn_pg_next_seq(pg), b, c->count, c->dt, c->op) != TN_OK) j->ok = 0;
            results[j->shm][k][r] = b;
        }
        /* a small broadcast (through the segment) and a large one (TCP's chain) from rank 1 */
        uint8_t sb[1000];
        for (size_t i = 0; i < sizeof sb; i++) sb[i] = r == 1 ? (uint8_t)(i * 3) : 0;
        if (tn_pg_broadcast(pg, tn_pg_next_seq(pg), sb, sizeof sb, 1) != TN_OK) j->ok = 0;
        for (size_t i = 0; i < sizeof sb; i++)
            if (sb[i] != (uint8_t)(i * 3)) j->ok = 0;
        size_t big = (3u << 20) + 5;
        uint8_t *b = malloc(big);
        for (size_t i = 0; i < big; i++) b[i] = r == 1 ? (uint8_t)(i * 7) : 0;
        if (tn_pg_broadcast(pg, tn_pg_next_seq(pg), b, big, 1) != TN_OK) j->ok = 0;
        for (size_t i = 0; i < big; i++)
            if (b[i] != (uint8_t)(i * 7)) j->ok = 0;
        free(b);
    } else if (j->mode == 1) {
        /* back-to-back small all_reduces: the barriers keep every rank in step */
        for (int it = 0; it < 1000; it++) {
            int32_t v[2] = {r + it, 1};
            if (tn_pg_allreduce(pg, tn_pg_next_seq(pg), v, 2, TN_DTYPE_INT32, TN_REDOP_SUM) != TN_OK ||
                v[0] != 3 * it + 3 || v[1] != N)
                j->ok = 0;
        }
    } else if (j->mode == 2) {
        /* queued work on the worker thread, then a blocking call before waiting for it */
        enum { M = 40000 };
        float *a = malloc(M * sizeof *a), *b = malloc(M * sizeof *b);
        for (int i = 0; i < M; i++) {
            a[i] = (float)(r + 1);
            b[i] = (float)(10 * (r + 1));
        }
        queued *q = malloc(sizeof *q);
        *q = (queued){a, M, tn_pg_next_seq(pg)};
        tn_pg_work *w;
        if (tn_pg_enqueue(pg, run_queued, q, free, &w) != TN_OK) j->ok = 0;
        if (tn_pg_allreduce(pg, tn_pg_next_seq(pg), b, M, TN_DTYPE_FLOAT32, TN_REDOP_SUM) != TN_OK) j->ok = 0;
        if (tn_pg_work_wait(w, 0) != TN_OK) j->ok = 0;
        tn_pg_work_release(w);
        for (int i = 0; i < M; i++)
            if (a[i] != 6.f || b[i] != 60.f) j->ok = 0;
        free(a);
        free(b);
    } else {
        /* rank 2 passes a longer tensor: every rank fails; then the group still works */
        int32_t v[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        j->st = tn_pg_allreduce(pg, tn_pg_next_seq(pg), v, r == 2 ? 8 : 6, TN_DTYPE_INT32, TN_REDOP_SUM);
        snprintf(j->msg, sizeof j->msg, "%s", tn_error_message());
        int32_t u[3] = {r, r, r};
        if (tn_pg_allreduce(pg, tn_pg_next_seq(pg), u, 3, TN_DTYPE_INT32, TN_REDOP_SUM) != TN_OK || u[0] != 3) j->ok = 0;
    }
    return NULL;
}

static void run_all(int shm, int mode, job *jobs) {
    pthread_t th[N];
    for (int r = 0; r < N; r++) {
        jobs[r] = (job){r, shm, mode, 0, TN_OK, {0}};
        pthread_create(&th[r], NULL, run, &jobs[r]);
    }
    for (int r = 0; r < N; r++) pthread_join(th[r], NULL);
}

int main(void) {
    /* small slots: every tensor above 16 KB crosses several slices */
    setenv("TN_DIST_SHM_SLOT", "65536", 1);
    job jobs[N];
    for (int shm = 1; shm >= 0; shm--) {
        TN_CHECK(make_group(shm), "group set up (shm=%d)", shm);
        run_all(shm, 0, jobs);
        for (int r = 0; r < N; r++) TN_CHECK(jobs[r].ok, "collectives ok (shm=%d, rank %d)", shm, r);
        free_group();
    }
    for (size_t k = 0; k < NCASES; k++) {
        size_t bytes = CASES[k].count * (size_t)tn_dtype_itemsize(CASES[k].dt);
        for (int r = 0; r < N; r++) {
            TN_CHECK(memcmp(results[1][k][r], results[0][k][r], bytes) == 0,
                     "case %zu rank %d: shared memory equals the TCP ring bitwise", k, r);
            TN_CHECK(memcmp(results[1][k][r], results[1][k][0], bytes) == 0, "case %zu: rank %d equals rank 0", k, r);
        }
        for (int r = 0; r < N; r++) {
            free(results[0][k][r]);
            free(results[1][k][r]);
        }
    }
    TN_CHECK(make_group(1), "group set up");
    run_all(1, 1, jobs);
    for (int r = 0; r < N; r++) TN_CHECK(jobs[r].ok, "1000 small all_reduces, rank %d", r);
    run_all(1, 2, jobs);
    for (int r = 0; r < N; r++) TN_CHECK(jobs[r].ok, "queued and blocking all_reduce in order, rank %d", r);
    run_all(1, 3, jobs);
    for (int r = 0; r < N; r++) {
        TN_CHECK(jobs[r].st != TN_OK, "rank %d fails on the size mismatch", r);
        TN_CHECK(strstr(jobs[r].msg, "Mismatched sizes") != NULL, "rank %d: %s", r, jobs[r].msg);
        TN_CHECK(jobs[r].ok, "rank %d: the group works after the mismatch", r);
    }
    free_group();
    return tn_test_summary();
}

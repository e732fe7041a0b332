/* test_dist.c — the distributed layer from plain C: collectives of a 3-rank group whose
 * ranks are threads joined by the in-process loopback transport, size mismatches raising
 * on every rank, a dead peer named in the error, and a TCPStore server/client round trip
 * on 127.0.0.1 with a wait timeout. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dist/net.h"
#include "dist/pg.h"
#include "dist/store.h"
#include "tn_test.h"

#define N 3
static tn_pg *pgs[N];

typedef struct {
    int rank;
    int mode;
    tn_status st;
    char msg[1024];
    int ok;
} job;

static void *run(void *arg) {
    job *j = arg;
    tn_pg *pg = pgs[j->rank];
    int r = j->rank;
    j->ok = 1;
    if (j->mode == 0) {
        /* allreduce of int32 across sizes that do and do not divide by N */
        for (size_t count = 1; count < 40; count += 7) {
            int32_t *v = malloc(count * 4);
            for (size_t i = 0; i < count; i++) v[i] = (int32_t)(i * 10 + (size_t)r + 1);
            tn_status st = tn_pg_allreduce(pg, tn_pg_next_seq(pg), v, count, TN_DTYPE_INT32, TN_REDOP_SUM);
            for (size_t i = 0; i < count; i++)
                if (st != TN_OK || v[i] != (int32_t)(i * 30 + 6)) j->ok = 0;
            free(v);
        }
        float f[5] = {1.f * (float)r, 2, 3, 4, 5};
        tn_pg_allreduce(pg, tn_pg_next_seq(pg), f, 5, TN_DTYPE_FLOAT32, TN_REDOP_MAX);
        if (f[0] != 2.f) j->ok = 0;
        /* broadcast, small and chunked */
        size_t big = (9u << 20) + 3;
        uint8_t *b = malloc(big);
        for (size_t i = 0; i < big; i++) b[i] = r == 1 ? (uint8_t)(i * 7) : 0;
        if (tn_pg_broadcast(pg, tn_pg_next_seq(pg), b, big, 1) != TN_OK) j->ok = 0;
        for (size_t i = 0; i < big; i += 4099)
            if (b[i] != (uint8_t)(i * 7)) j->ok = 0;
        free(b);
        /* allgather */
        int64_t mine = 100 + r, got[N] = {0};
        void *outs[N] = {&got[0], &got[1], &got[2]};
        size_t sz[N] = {8, 8, 8};
        if (tn_pg_allgather(pg, tn_pg_next_seq(pg), &mine, 8, outs, sz) != TN_OK) j->ok = 0;
        for (int i = 0; i < N; i++)
            if (got[i] != 100 + i) j->ok = 0;
        if (tn_pg_barrier(pg, tn_pg_next_seq(pg)) != TN_OK) j->ok = 0;
    } else if (j->mode == 1) {
        /* rank 2 passes a longer tensor: every rank must fail */
        int32_t v[8] = {0};
        j->st = tn_pg_allreduce(pg, tn_pg_next_seq(pg), v, r == 2 ? 8 : 6, TN_DTYPE_INT32, TN_REDOP_SUM);
        snprintf(j->msg, sizeof j->msg, "%s", tn_error_message());
    } else {
        /* rank 2 is gone: ranks 0 and 1 fail naming it */
        int32_t v[4] = {0};
        if (r == 2) return NULL;
        j->st = tn_pg_allreduce(pg, tn_pg_next_seq(pg), v, 4, TN_DTYPE_INT32, TN_REDOP_SUM);
        snprintf(j->msg, sizeof j->msg, "%s", tn_error_message());
    }
    return NULL;
}

static void run_all(int mode, job *jobs) {
    pthread_t th[N];
    for (int r = 0; r < N; r++) {
        jobs[r] = (job){r, mode, TN_OK, {0}, 0};
        pthread_create(&th[r], NULL, run, &jobs[r]);
    }
    for (int r = 0; r < N; r++) pthread_join(th[r], NULL);
}

static void make_group(int64_t timeout_ms) {
    for (int r = 0; r < N; r++) tn_pg_new(r, N, timeout_ms, &pgs[r]);
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++) {
            tn_conn *x, *y;
            tn_conn_loopback_pair(&x, &y);
            tn_pg_set_peer(pgs[a], b, x);
            tn_pg_set_peer(pgs[b], a, y);
        }
    for (int r = 0; r < N; r++) tn_pg_start(pgs[r]);
}

static void free_group(void) {
    for (int r = 0; r < N; r++) tn_pg_free(pgs[r]);
}

static void test_store(void) {
    tn_store_server *srv;
    TN_CHECK(tn_store_server_acquire(0, 0, &srv) == TN_OK, "%s", tn_error_message());
    int port = tn_store_server_port(srv);
    tn_store_client *c;
    TN_CHECK(tn_store_client_connect("127.0.0.1", port, 5000, &c) == TN_OK, "%s", tn_error_message());
    TN_CHECK(tn_store_client_set(c, "k", 1, (const uint8_t *)"v1", 2) == TN_OK, "set");
    uint8_t *v = NULL;
    size_t vl = 0;
    TN_CHECK(tn_store_client_get(c, "k", 1, &v, &vl) == TN_OK && vl == 2 && !memcmp(v, "v1", 2), "get");
    free(v);
    int64_t n = 0;
    tn_store_client_add(c, "cnt", 3, 5, &n);
    tn_store_client_add(c, "cnt", 3, -2, &n);
    TN_CHECK(n == 3, "add gave %lld", (long long)n);
    const char *keys[1] = {"missing"};
    size_t kl[1] = {7};
    tn_dist_clear();
    tn_status st = tn_store_client_wait(c, 1, keys, kl, 100);
    TN_CHECK(st != TN_OK && tn_dist_error_kind() == TN_DIST_ERR_STORE, "wait timeout: %s", tn_error_message());
    /* the connection is still usable after a cancelled wait */
    TN_CHECK(tn_store_client_num_keys(c, &n) == TN_OK && n == 2, "num_keys %lld", (long long)n);
    tn_store_client_free(c);
    tn_store_server_release(srv);
}

int main(void) {
    job jobs[N];
    make_group(5000);
    run_all(0, jobs);
    for (int r = 0; r < N; r++) TN_CHECK(jobs[r].ok, "collectives on rank %d", r);
    run_all(1, jobs);
    for (int r = 0; r < N; r++) TN_CHECK(jobs[r].st != TN_OK, "mismatch not detected on rank %d", r);
    free_group();

    make_group(3000);
    tn_pg_free(pgs[2]);
    pgs[2] = NULL;
    run_all(2, jobs);
    for (int r = 0; r < 2; r++)
        TN_CHECK(jobs[r].st != TN_OK && strstr(jobs[r].msg, "rank 2"), "rank %d: %s", r, jobs[r].msg);
    tn_pg_free(pgs[0]);
    tn_pg_free(pgs[1]);

    test_store();
    return tn_test_summary();
}

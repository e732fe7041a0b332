/* gemm_regions.c — how the avx512 engines (sgemm_avx512.c for float32,
 * bgemm_avx512bf16.c for bfloat16) cut one product into a region of C per worker. */
#include "kernels/gemm_internal.h"

#include <stdatomic.h>
#include <stdbool.h>

#include "core/threadpool.h"
#include "kernels/gemm.h"

/* Products below this many multiply-adds stay on the calling thread. */
#define REGIONS_PARALLEL_MACS (1 << 20)

static int64_t rg_min(int64_t a, int64_t b) { return a < b ? a : b; }

typedef struct rg_job {
    const tn_gemm_desc *g;
    tn_gemm_region_fn region;
    int64_t per; /* rows (split_n == 0) or columns per region */
    int split_n;
    atomic_int failed;
} rg_job;

static void rg_worker(void *ctx, int64_t b, int64_t e) {
    rg_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        int64_t lo = t * j->per;
        bool ok = j->split_n ? j->region(j->g, 0, j->g->m, lo, rg_min(j->g->n, lo + j->per))
                             : j->region(j->g, lo, rg_min(j->g->m, lo + j->per), 0, j->g->n);
        if (!ok) atomic_store(&j->failed, 1);
    }
}

/* C' = Bᵀ·Aᵀ: the same product with the operands' roles exchanged (C' = Cᵀ). */
static tn_gemm_desc rg_turn(const tn_gemm_desc *g0) {
    tn_gemm_desc g = *g0;
    g.a = g0->b, g.b = g0->a;
    g.m = g0->n, g.n = g0->m;
    g.a_rs = g0->b_cs, g.a_cs = g0->b_rs;
    g.b_rs = g0->a_cs, g.b_cs = g0->a_rs;
    g.c_rs = g0->c_cs, g.c_cs = g0->c_rs;
    return g;
}

/* How the work of g is cut for `parts` workers: 0 (one region), 1 (along n) or 2 (along
 * m), whichever packs fewer elements per worker. Every region packs the columns of B it
 * computes (all of them when the split is along m) and, unless A is read in place, the
 * rows of A it computes (all of them when the split is along n). A split along n needs
 * two full column panels (nr columns each) per worker. */
static int rg_plan(const tn_gemm_desc *g, int64_t parts, int mr, int nr) {
    const double a = g->a_cs == 1 ? 0.0 : (double)g->m * g->k, b = (double)g->n * g->k;
    const int64_t ncol16 = (g->n + 15) / 16, nrows = (g->m + mr - 1) / mr;
    const bool cols = parts > 1 && ncol16 >= parts * 2 * (nr / 16), rows = parts > 1 && nrows >= parts;
    return cols && (!rows || a + b / parts <= a / parts + b) ? 1 : rows ? 2 : 0;
}

tn_status tn_gemm_by_regions(const tn_gemm_desc *g0, int mr, int nr, tn_gemm_region_fn region) {
    int64_t parts = (int64_t)tn_get_num_threads();
    if ((double)g0->m * (double)g0->n * (double)g0->k < REGIONS_PARALLEL_MACS || tn_in_parallel_region()) parts = 1;
    /* A column-major C is computed as the row-major C' = Cᵀ = Bᵀ·Aᵀ. */
    tn_gemm_desc g = g0->c_cs == 1 ? *g0 : rg_turn(g0);
    const int split = rg_plan(&g, parts, mr, nr);
    rg_job job = {&g, region, g.n, 1, 0};
    int64_t nparts = 1;
    if (split == 1) {
        job.per = ((g.n + 15) / 16 + parts - 1) / parts * 16;
        nparts = (g.n + job.per - 1) / job.per;
    } else if (split == 2) {
        job.split_n = 0;
        job.per = ((g.m + mr - 1) / mr + parts - 1) / parts * mr;
        nparts = (g.m + job.per - 1) / job.per;
    }
    if (nparts > 1) tn_parallel_for(nparts, 1, rg_worker, &job);
    else rg_worker(&job, 0, 1);
    if (atomic_load(&job.failed)) return tn_error(TN_ERR_RUNTIME, "gemm: out of memory for packing buffers");
    return TN_OK;
}

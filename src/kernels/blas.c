/* blas.c — run-time loading of OpenBLAS (scipy-openblas32) through dlopen. */
#include "kernels/blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tn_blas g_blas;
static atomic_bool g_loaded;
static atomic_bool g_enabled = true;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Finds `name` under the scipy_ prefix first, then bare. */
static void *sym(void *h, const char *name) {
    char buf[96];
    snprintf(buf, sizeof buf, "scipy_%s", name);
    void *p = dlsym(h, buf);
    return p ? p : dlsym(h, name);
}

tn_status tn_blas_load(const char *path) {
    if (atomic_load(&g_loaded)) return TN_OK;
    if (!path) path = getenv("TN_BLAS_PATH");
    if (!path || !*path) return tn_error(TN_ERR_RUNTIME, "tn_blas_load: no BLAS library path given");
    pthread_mutex_lock(&g_lock);
    tn_status st = TN_OK;
    if (!atomic_load(&g_loaded)) {
        /* RTLD_LOCAL: the BLAS's symbols must not interpose on anything else in the process
         * (numpy ships its own, differently prefixed OpenBLAS). */
        /* One thread pool: the BLAS runs single-threaded inside our pool's workers
         * (gemm.c splits big products), so it must not start threads of its own, which
         * would compete with ours for the cores. OpenBLAS reads this at load time. */
        const char *prev = getenv("OPENBLAS_NUM_THREADS");
        char *saved = prev ? strdup(prev) : NULL;
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (saved) { setenv("OPENBLAS_NUM_THREADS", saved, 1); free(saved); }
        else unsetenv("OPENBLAS_NUM_THREADS");
        if (!h) {
            st = tn_error(TN_ERR_RUNTIME, "tn_blas_load: %s", dlerror());
        } else {
            tn_blas b = {0};
            b.sgemm = (tn_cblas_sgemm_fn)sym(h, "cblas_sgemm");
            b.dgemm = (tn_cblas_dgemm_fn)sym(h, "cblas_dgemm");
            b.cgemm = (tn_cblas_cgemm_fn)sym(h, "cblas_cgemm");
            b.zgemm = (tn_cblas_cgemm_fn)sym(h, "cblas_zgemm");
            b.set_num_threads = (void (*)(int))sym(h, "openblas_set_num_threads");
            b.get_num_threads = (int (*)(void))sym(h, "openblas_get_num_threads");
            b.get_config = (const char *(*)(void))sym(h, "openblas_get_config");
            if (!b.sgemm || !b.dgemm) {
                dlclose(h);
                st = tn_error(TN_ERR_RUNTIME, "tn_blas_load: %s has no cblas_sgemm/cblas_dgemm", path);
            } else {
                if (b.set_num_threads) b.set_num_threads(1);
                g_blas = b;
                atomic_store(&g_loaded, true);
            }
        }
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

const tn_blas *tn_blas_get(void) {
    /* atomic for the same reason as gemm.c's f32_prefers_blas: pool workers call this */
    static _Atomic int no_blas = -1;
    if (!atomic_load_explicit(&g_loaded, memory_order_acquire) || !atomic_load(&g_enabled)) return NULL;
    int nb = atomic_load_explicit(&no_blas, memory_order_relaxed);
    if (nb < 0) {
        const char *e = getenv("TN_NO_BLAS");
        nb = e && *e && *e != '0';
        atomic_store_explicit(&no_blas, nb, memory_order_relaxed);
    }
    return nb ? NULL : &g_blas;
}

void tn_blas_enable(bool on) { atomic_store(&g_enabled, on); }

void tn_blas_set_num_threads(int n) {
    /* The BLAS stays single-threaded; torch.set_num_threads governs the pool that runs it
     * (see tn_blas_load). Kept so callers need not know. */
    (void)n;
}

const char *tn_blas_config(void) {
    return atomic_load(&g_loaded) && g_blas.get_config ? g_blas.get_config() : NULL;
}

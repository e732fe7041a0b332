/* blas.h — the optional external BLAS (OpenBLAS from PyPI's scipy-openblas32), loaded at
 * run time with dlopen so the extension builds and works without it.
 *
 * Who loads it: the binding finds the library in Python at init
 * (scipy_openblas32.get_lib_dir() + "/lib" + get_library() + ".so") and calls
 * tn_blas_load(path). C tests and tools may pass the path in TN_BLAS_PATH instead and call
 * tn_blas_load(NULL). Until a load succeeds every GEMM runs on our own kernels.
 * Symbols are looked up with the "scipy_" prefix that scipy-openblas32 uses, then
 * without a prefix (a system libopenblas). Indices are 32-bit (scipy-openblas32 is LP64). */
#ifndef TN_BLAS_H
#define TN_BLAS_H

#include <stdbool.h>

#include "core/status.h"

/* CBLAS enum values (identical in every CBLAS). */
enum { TN_CBLAS_ROW_MAJOR = 101, TN_CBLAS_COL_MAJOR = 102 };
enum { TN_CBLAS_NO_TRANS = 111, TN_CBLAS_TRANS = 112, TN_CBLAS_CONJ_TRANS = 113 };

typedef void (*tn_cblas_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                                  const float *a, int lda, const float *b, int ldb, float beta,
                                  float *c, int ldc);
typedef void (*tn_cblas_dgemm_fn)(int order, int ta, int tb, int m, int n, int k, double alpha,
                                  const double *a, int lda, const double *b, int ldb, double beta,
                                  double *c, int ldc);
/* Complex variants take alpha/beta by pointer (interleaved re, im). */
typedef void (*tn_cblas_cgemm_fn)(int order, int ta, int tb, int m, int n, int k, const void *alpha,
                                  const void *a, int lda, const void *b, int ldb, const void *beta,
                                  void *c, int ldc);

typedef struct tn_blas {
    tn_cblas_sgemm_fn sgemm;
    tn_cblas_dgemm_fn dgemm;
    tn_cblas_cgemm_fn cgemm, zgemm;
    void (*set_num_threads)(int);
    int (*get_num_threads)(void);
    const char *(*get_config)(void);
} tn_blas;

/* Loads the BLAS shared library at `path` (NULL: the path in $TN_BLAS_PATH). Idempotent:
 * once a library is loaded, later calls return TN_OK without loading another. Fails with
 * TN_ERR_RUNTIME (message says why) if the file cannot be opened or lacks the GEMM
 * symbols; the process keeps working on our own kernels. */
tn_status tn_blas_load(const char *path);
/* The loaded BLAS, or NULL. TN_NO_BLAS=1 in the environment hides it (for benchmarks and
 * tests of the fallback), as does tn_blas_enable(false). */
const tn_blas *tn_blas_get(void);
/* Turns use of the loaded BLAS on or off at run time (tests compare both paths). */
void tn_blas_enable(bool on);
/* Kept for callers: the BLAS always runs single-threaded inside our pool (blas.c). */
void tn_blas_set_num_threads(int n);
/* The library's configuration string ("OpenBLAS 0.3.x ... SkylakeX"), or NULL. */
const char *tn_blas_config(void);

#endif

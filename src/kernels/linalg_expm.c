/* linalg_expm.c — the matrix exponential in float64: scaling and squaring with the
 * degree-13 Padé approximant (Higham, "The scaling and squaring method for the matrix
 * exponential revisited", 2005). Contract in linalg_decomp.h. */
#include <math.h>
#include <string.h>

#include "kernels/linalg_decomp.h"

/* c = a·b, all n×n (c distinct from a and b) */
static void matmul(int64_t n, const double *a, const double *b, double *c) {
    memset(c, 0, (size_t)(n * n) * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < n; k++) {
            double x = a[i * n + k];
            if (x == 0) continue;
            for (int64_t j = 0; j < n; j++) c[i * n + j] += x * b[k * n + j];
        }
}

void tn_linalg_expm(int64_t n, const double *a, double *out, double *work, int32_t *piv) {
    static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                 1187353796428800.0,  129060195264000.0,   10559470521600.0,
                                 670442572800.0,      33522128640.0,       1323241920.0,
                                 40840800.0,          960960.0,            16380.0,
                                 182.0,               1.0};
    const double theta13 = 5.371920351148152;
    int64_t nn = n * n;
    if (n == 0) return;
    double *A = work, *A2 = work + nn, *A4 = work + 2 * nn, *A6 = work + 3 * nn, *U = work + 4 * nn,
           *V = work + 5 * nn, *T = work + 6 * nn, *P = work + 7 * nn;
    double norm = 0; /* 1-norm: the largest column sum */
    for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += fabs(a[i * n + j]);
        if (s > norm || s != s) norm = s;
    }
    int s = 0;
    if (norm > theta13) s = (int)ceil(log2(norm / theta13));
    if (!(s >= 0)) s = 0; /* nan or inf input: the result is nan, as upstream's */
    if (s > 1000) s = 1000;
    double scale = ldexp(1.0, -s);
    for (int64_t i = 0; i < nn; i++) A[i] = a[i] * scale;
    matmul(n, A, A, A2);
    matmul(n, A2, A2, A4);
    matmul(n, A4, A2, A6);
    for (int64_t i = 0; i < nn; i++) T[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
    matmul(n, A6, T, P);
    for (int64_t i = 0; i < nn; i++) P[i] += b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i];
    for (int64_t i = 0; i < n; i++) P[i * n + i] += b[1];
    matmul(n, A, P, U);
    for (int64_t i = 0; i < nn; i++) T[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
    matmul(n, A6, T, V);
    for (int64_t i = 0; i < nn; i++) V[i] += b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i];
    for (int64_t i = 0; i < n; i++) V[i * n + i] += b[0];
    /* (V - U) X = (V + U) */
    for (int64_t i = 0; i < nn; i++) {
        double v = V[i], u = U[i];
        T[i] = v - u;
        out[i] = v + u;
    }
    tn_linalg_lu(n, n, T, n, piv);
    tn_linalg_lu_solve(n, T, n, piv, false, n, out, n);
    for (int k = 0; k < s; k++) {
        matmul(n, out, out, T);
        memcpy(out, T, (size_t)nn * sizeof(double));
    }
}

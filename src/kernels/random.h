/* random.h — sampling kernels that reproduce upstream CPU random fills bit for bit: the
 * same engine draws, in the same element order, through the same arithmetic (including
 * where upstream's compiler fused a multiply-add, and the AVX2 Box-Muller of
 * avx_mathfun.h emulated lane by lane).
 *
 * Kernels see raw strided buffers, never tensors. Each fill takes the generator's lock for
 * its whole duration (upstream's rule), never allocates, and validates nothing the op
 * layer already checked; an unsupported dtype is refused with upstream's dispatch message.
 *
 * Element order: fills walk the output as upstream's serial TensorIterator loop does —
 * dimensions sorted by ascending stride, smallest stride innermost — so a transposed
 * output receives draws in memory order, exactly as upstream. Plain C11; no Python. */
#ifndef TN_KERNELS_RANDOM_H
#define TN_KERNELS_RANDOM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/generator.h"
#include "core/status.h"

/* A strided buffer: element 0 at `data`, strides in elements. */
typedef struct tn_strided {
    void *data;
    int ndim;
    const int64_t *sizes;
    const int64_t *strides;
    tn_dtype dtype;
} tn_strided;

/* Which upstream kernel build the samplers imitate (upstream picks one per process from the
 * CPU, overridable with ATEN_CPU_CAPABILITY=default|avx2|avx512; so do we). It matters
 * because upstream's AVX2/AVX512 builds fuse a*b+c into one FMA and use the AVX2
 * Box-Muller for float; the default build does neither. */
typedef enum tn_random_isa {
    TN_RANDOM_ISA_DEFAULT = 0,
    TN_RANDOM_ISA_AVX2 = 1,
    TN_RANDOM_ISA_AVX512 = 2,
} tn_random_isa;

/* The capability in effect (detected once; see above). */
tn_random_isa tn_random_isa_get(void);
/* Forces a capability (tests); clamped to what the CPU supports. */
void tn_random_isa_set(tn_random_isa isa);

/* uniform_(from, to) for floating dtypes (checked by the caller: from <= to, in range). */
tn_status tn_random_uniform(tn_generator *g, const tn_strided *out, double from, double to);
/* normal_(mean, std): the 16-wide Box-Muller block path for contiguous outputs of >= 16
 * elements, the scalar cached-pair path otherwise. */
tn_status tn_random_normal(tn_generator *g, const tn_strided *out, double mean, double std);
/* random_() with no bounds: [0, 2^mantissa] for floats, [0, max] for integers, bool 0/1. */
tn_status tn_random_random(tn_generator *g, const tn_strided *out);
/* random_(from, to) as [base, base + range): range fits in 64 bits and is >= 1. */
tn_status tn_random_from_to(tn_generator *g, const tn_strided *out, uint64_t range, int64_t base);
/* random_(INT64_MIN, None): the full 64-bit range (int64, float, double, bfloat16). */
tn_status tn_random_full_range(tn_generator *g, const tn_strided *out);
/* bernoulli_(p) with a scalar p in [0, 1]. */
tn_status tn_random_bernoulli_scalar(tn_generator *g, const tn_strided *out, double p);
/* bernoulli_(p_tensor): `p` already expanded to out's shape (zero strides allowed). */
tn_status tn_random_bernoulli_tensor(tn_generator *g, const tn_strided *out, const tn_strided *p);
tn_status tn_random_exponential(tn_generator *g, const tn_strided *out, double lambd);
tn_status tn_random_geometric(tn_generator *g, const tn_strided *out, double p);
tn_status tn_random_log_normal(tn_generator *g, const tn_strided *out, double mean, double std);
tn_status tn_random_cauchy(tn_generator *g, const tn_strided *out, double median, double sigma);

/* Multinomial with replacement (upstream's inverse-CDF binary search), n_sample >= 2.
 * probs: [n_dist, n_cat] with strides ps0, ps1 (elements); result int64 [n_dist, n_sample]
 * with strides rs0, rs1; scratch holds n_cat doubles. Fails on a negative, non-finite or
 * all-zero row with upstream's messages. */
tn_status tn_random_multinomial_with_replacement(tn_generator *g, int64_t *result, int64_t rs0, int64_t rs1,
                                                 const void *probs, tn_dtype dtype, int64_t ps0, int64_t ps1,
                                                 int64_t n_dist, int64_t n_cat, int64_t n_sample,
                                                 double *scratch);
/* The rest of multinomial without replacement (or one sample): q holds Exp(1) draws
 * (same shape/dtype as probs, contiguous [n_dist, n_cat]); computes probs / q in the
 * dtype and writes the indices of the n_sample largest ratios, largest first (argmax for
 * n_sample == 1). scratch holds 2 * n_cat int64. */
tn_status tn_random_multinomial_pick(int64_t *result, int64_t rs0, int64_t rs1, const void *probs, tn_dtype dtype,
                                     int64_t ps0, int64_t ps1, void *q, int64_t n_dist, int64_t n_cat,
                                     int64_t n_sample, int64_t *scratch);
/* rrelu_with_noise in training (upstream's _rrelu_with_noise_train): over n contiguous
 * elements of x (float, double, float16, bfloat16: y, noise of the same dtype), each
 * x <= 0 draws r = uniform_real<double>(lower, upper) (a 53-bit draw) in element order,
 * rounded to the opmath type (float below double), y = x * r, noise = r; else y = x,
 * noise = 1. lower/upper are the opmath values (caller checked lower <= upper). */
tn_status tn_random_rrelu_train(tn_generator *g, void *y, void *noise, const void *x, tn_dtype dt, int64_t n,
                                double lower, double upper);
/* randperm(n) into a 1-D strided buffer of n elements (any real dtype; caller checked n). */
tn_status tn_random_randperm(tn_generator *g, const tn_strided *out, int64_t n);

#endif

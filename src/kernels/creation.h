/* creation.h — the sequence kernels behind arange, range, linspace and logspace: they fill
 * elements [begin, end) of a contiguous 1-D buffer with values bit-identical to upstream's
 * CPU kernels (same accumulation type, same fused multiply-adds, same split of a chunk
 * into 32-byte vector groups and a scalar tail). Kernels never allocate and never see a
 * tensor; the caller (src/ops/creation_range.c) chooses the chunks. Plain C11. */
#ifndef TN_KERNELS_CREATION_H
#define TN_KERNELS_CREATION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

/* Parameters of one sequence. Which fields a kernel reads depends on the op and dtype:
 * arange/range use start/step as the accumulation type upstream uses (int64 for integral
 * dtypes in `i*`, double for float/double in `d*`, float for half/bfloat16 in `d*` already
 * rounded to float); linspace/logspace use start/end/step/steps/base as documented on
 * each kernel. */
typedef struct tn_seq_params {
    int64_t istart, istep, iend;
    double dstart, dstep, dend;
    double re_start, im_start, re_end, im_end; /* complex linspace */
    double base;                               /* logspace */
    int64_t steps;                             /* linspace/logspace length */
} tn_seq_params;

typedef void (*tn_seq_fn)(char *out, int64_t begin, int64_t end, const tn_seq_params *p);

/* arange: out[i] = start + step * i in upstream's accumulation type, with upstream's
 * vector-group rounding (base of each group rounded to the element type first). NULL for
 * dtypes upstream refuses (bool, complex). */
tn_seq_fn tn_arange_kernel(tn_dtype dtype);
/* range (deprecated, inclusive): out[i] = start + i * step in the accumulation type. */
tn_seq_fn tn_range_kernel(tn_dtype dtype);
/* linspace with steps >= 2: first half from start, second half from end. */
tn_seq_fn tn_linspace_kernel(tn_dtype dtype);
/* logspace with steps >= 2: base ** (linspace exponent in double). Real dtypes only. */
tn_seq_fn tn_logspace_kernel(tn_dtype dtype);

#endif

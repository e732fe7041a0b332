/* attn_avx2.c — the AVX2+FMA instance of the blocked attention kernel (attn_flash.inc,
 * 8-float vectors). Only called after tn_cpu_isa() says avx2 or above. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/nn.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c")
#pragma GCC optimize("fp-contract=fast")
#define VW 8
#define SFX avx2
#include "kernels/attn_flash.inc"
#else
void tn_attn_tasks__avx2(const tn_attn_desc *d, float *scratch, int64_t first, int64_t step) {
    tn_attn_tasks__generic(d, scratch, first, step);
}
#endif

/* elementwise.c — the (op x dtype) kernel table: scalar references registered first,
 * AVX2 / AVX-512 variants (ew_vec.inc) override entries per tier; plus
 * the dtype-agnostic byte loops (where, masked_fill, fill). */
#include "kernels/elementwise.h"
#include "kernels/cast.h"

#include "kernels/cpu_features.h"
#include "kernels/ew_simd.h"
#include "kernels/fmod_f32.h"

#include <pthread.h>
#include <string.h>

/* One table per tier: [0] scalar references, [1] AVX2, [2] AVX-512 (each starts as a copy
 * of the one below and is overwritten where a vector loop exists). The tier is read at
 * every lookup, so TN_FORCE_ISA / tn_cpu_isa_set take effect immediately. */
static tn_loop_fn ew_table[3][TN_EW_COUNT][TN_DTYPE_COUNT];
static pthread_once_t ew_once = PTHREAD_ONCE_INIT;

static void ew_init(void) {
    tn_ew_register_unary(ew_table[0]);
    tn_ew_register_binary(ew_table[0]);
    tn_ew_register_special(ew_table[0]);
    tn_cast_register_rows();
    const tn_cpu_features *f = tn_cpu_features_get();
    memcpy(ew_table[1], ew_table[0], sizeof ew_table[0]);
    if (f->avx2 && f->fma && f->f16c) tn_ew_register_avx2(ew_table[1], ew_table[0]);
    if (f->avx2) tn_ew_register_fmod_avx2(ew_table[1], ew_table[0]);
    memcpy(ew_table[2], ew_table[1], sizeof ew_table[0]);
    if (f->avx512f && f->avx512bw && f->avx512vl) tn_ew_register_avx512(ew_table[2], ew_table[0]);
}

tn_loop_fn tn_ew_loop(tn_ew_op op, tn_dtype dtype) {
    pthread_once(&ew_once, ew_init);
    if ((unsigned)op >= TN_EW_COUNT || (unsigned)dtype >= TN_DTYPE_COUNT) return NULL;
    tn_isa isa = tn_cpu_isa();
    int tier = isa >= TN_ISA_AVX512 ? 2 : isa >= TN_ISA_AVX2 ? 1 : 0;
    return ew_table[tier][op][dtype];
}

tn_loop_fn tn_ew_loop_scalar(tn_ew_op op, tn_dtype dtype) {
    pthread_once(&ew_once, ew_init);
    if ((unsigned)op >= TN_EW_COUNT || (unsigned)dtype >= TN_DTYPE_COUNT) return NULL;
    return ew_table[0][op][dtype];
}

/* loop -> its rows form: open addressing on the function's address, filled once inside
 * ew_init (so before any loop is handed out) and only read afterwards */
enum { EW_ROWS_SLOTS = 1024 };
static struct { tn_loop_fn loop; tn_loop_rows_fn rows; } ew_rows[EW_ROWS_SLOTS];

static unsigned ew_rows_slot(tn_loop_fn f) {
    uintptr_t h = (uintptr_t)f;
    return (unsigned)((h >> 4) ^ (h >> 14)) & (EW_ROWS_SLOTS - 1);
}

void tn_ew_register_rows(tn_loop_fn loop, tn_loop_rows_fn rows) {
    for (unsigned i = ew_rows_slot(loop), k = 0; k < EW_ROWS_SLOTS; i = (i + 1) & (EW_ROWS_SLOTS - 1), k++)
        if (!ew_rows[i].loop || ew_rows[i].loop == loop) {
            ew_rows[i].loop = loop, ew_rows[i].rows = rows;
            return;
        }
}

tn_loop_rows_fn tn_ew_loop_rows(tn_loop_fn loop) {
    pthread_once(&ew_once, ew_init);
    for (unsigned i = ew_rows_slot(loop), k = 0; k < EW_ROWS_SLOTS; i = (i + 1) & (EW_ROWS_SLOTS - 1), k++) {
        if (ew_rows[i].loop == loop) return ew_rows[i].rows;
        if (!ew_rows[i].loop) return NULL;
    }
    return NULL;
}

static const char *const ew_names[TN_EW_COUNT] = {
#define TN_X(op) #op,
    TN_EW_OPS(TN_X)
#undef TN_X
};

const char *tn_ew_name(tn_ew_op op) { return (unsigned)op < TN_EW_COUNT ? ew_names[op] : "?"; }

/* Byte loops: element size W is a compile-time constant so memcpy becomes a move. */
#define TN_BYTE_LOOPS(W)                                                                    \
    static void where_##W(char **d, const int64_t *s, int64_t n, void *ctx) {               \
        (void)ctx;                                                                          \
        for (int64_t k = 0; k < n; k++)                                                     \
            memcpy(d[0] + k * s[0], *(const uint8_t *)(d[1] + k * s[1]) ? d[2] + k * s[2] : d[3] + k * s[3], W); \
    }                                                                                       \
    static void masked_fill_##W(char **d, const int64_t *s, int64_t n, void *vctx) {        \
        const tn_loop_ctx *ctx = (const tn_loop_ctx *)vctx;                                 \
        for (int64_t k = 0; k < n; k++)                                                     \
            memcpy(d[0] + k * s[0], *(const uint8_t *)(d[2] + k * s[2]) ? (const char *)ctx->bytes : d[1] + k * s[1], W); \
    }                                                                                       \
    static void fill_##W(char **d, const int64_t *s, int64_t n, void *vctx) {               \
        const tn_loop_ctx *ctx = (const tn_loop_ctx *)vctx;                                 \
        for (int64_t k = 0; k < n; k++) memcpy(d[0] + k * s[0], ctx->bytes, W);             \
    }
TN_BYTE_LOOPS(1)
TN_BYTE_LOOPS(2)
TN_BYTE_LOOPS(4)
TN_BYTE_LOOPS(8)
TN_BYTE_LOOPS(16)

#define TN_BY_SIZE(name)                                                             \
    switch (itemsize) {                                                              \
    case 1: return name##_1; case 2: return name##_2; case 4: return name##_4;      \
    case 8: return name##_8; case 16: return name##_16; default: return NULL;       \
    }
tn_loop_fn tn_ew_where_loop_scalar(int itemsize) { TN_BY_SIZE(where) }
tn_loop_fn tn_ew_masked_fill_loop_scalar(int itemsize) { TN_BY_SIZE(masked_fill) }
tn_loop_fn tn_ew_fill_loop_scalar(int itemsize) { TN_BY_SIZE(fill) }

/* Vector variant k (0 where, 1 masked_fill, 2 fill) for the tier in effect, or NULL. */
static tn_loop_fn byte_vec(int itemsize, int k) {
    tn_isa isa = tn_cpu_isa();
    if (isa < TN_ISA_AVX2) return NULL;
    tn_loop_fn f[3];
    if (isa >= TN_ISA_AVX512) tn_ew_byte_loops_avx512(itemsize, f);
    else tn_ew_byte_loops_avx2(itemsize, f);
    return f[k];
}
tn_loop_fn tn_ew_where_loop(int itemsize) {
    tn_loop_fn v = byte_vec(itemsize, 0);
    return v ? v : tn_ew_where_loop_scalar(itemsize);
}
tn_loop_fn tn_ew_masked_fill_loop(int itemsize) {
    tn_loop_fn v = byte_vec(itemsize, 1);
    return v ? v : tn_ew_masked_fill_loop_scalar(itemsize);
}
tn_loop_fn tn_ew_fill_loop(int itemsize) {
    tn_loop_fn v = byte_vec(itemsize, 2);
    return v ? v : tn_ew_fill_loop_scalar(itemsize);
}

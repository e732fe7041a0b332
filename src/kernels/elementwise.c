/* elementwise.c — the (op x dtype) kernel table: scalar references registered first,
 * SIMD variants (none yet) would override entries after CPU feature detection; plus
 * the dtype-agnostic byte loops (where, masked_fill, fill). */
#include "kernels/elementwise.h"

#include <pthread.h>
#include <string.h>

static tn_loop_fn ew_table[TN_EW_COUNT][TN_DTYPE_COUNT];
static pthread_once_t ew_once = PTHREAD_ONCE_INIT;

static void ew_init(void) {
    tn_ew_register_unary(ew_table);
    tn_ew_register_binary(ew_table);
}

tn_loop_fn tn_ew_loop(tn_ew_op op, tn_dtype dtype) {
    pthread_once(&ew_once, ew_init);
    if ((unsigned)op >= TN_EW_COUNT || (unsigned)dtype >= TN_DTYPE_COUNT) return NULL;
    return ew_table[op][dtype];
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
tn_loop_fn tn_ew_where_loop(int itemsize) { TN_BY_SIZE(where) }
tn_loop_fn tn_ew_masked_fill_loop(int itemsize) { TN_BY_SIZE(masked_fill) }
tn_loop_fn tn_ew_fill_loop(int itemsize) { TN_BY_SIZE(fill) }

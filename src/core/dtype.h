/* dtype.h — the element types torchnative knows, numbered as upstream's c10::ScalarType
 * (so pickles, state dicts and error messages line up), with per-dtype facts in one table
 * and the exact float16/bfloat16 conversions (round to nearest even, NaN kept quiet).
 *
 * Plain C11; no Python. */
#ifndef TN_DTYPE_H
#define TN_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* X-macro list: (enum suffix, c10 name, element size in bytes, kind).
 * Kind: 'b' bool, 'u' unsigned int, 'i' signed int, 'f' float, 'c' complex, 'q' quantized,
 * 'x' bits/opaque. Order and numbering are c10::ScalarType's; never reorder. */
#define TN_DTYPE_LIST(X)                   \
    X(UINT8, Byte, 1, 'u')                 \
    X(INT8, Char, 1, 'i')                  \
    X(INT16, Short, 2, 'i')                \
    X(INT32, Int, 4, 'i')                  \
    X(INT64, Long, 8, 'i')                 \
    X(FLOAT16, Half, 2, 'f')               \
    X(FLOAT32, Float, 4, 'f')              \
    X(FLOAT64, Double, 8, 'f')             \
    X(COMPLEX32, ComplexHalf, 4, 'c')      \
    X(COMPLEX64, ComplexFloat, 8, 'c')     \
    X(COMPLEX128, ComplexDouble, 16, 'c')  \
    X(BOOL, Bool, 1, 'b')                  \
    X(QINT8, QInt8, 1, 'q')                \
    X(QUINT8, QUInt8, 1, 'q')              \
    X(QINT32, QInt32, 4, 'q')              \
    X(BFLOAT16, BFloat16, 2, 'f')          \
    X(QUINT4X2, QUInt4x2, 1, 'q')          \
    X(QUINT2X4, QUInt2x4, 1, 'q')          \
    X(BITS1X8, Bits1x8, 1, 'x')            \
    X(BITS2X4, Bits2x4, 1, 'x')            \
    X(BITS4X2, Bits4x2, 1, 'x')            \
    X(BITS8, Bits8, 1, 'x')                \
    X(BITS16, Bits16, 2, 'x')              \
    X(FLOAT8_E5M2, Float8_e5m2, 1, 'f')    \
    X(FLOAT8_E4M3FN, Float8_e4m3fn, 1, 'f')       \
    X(FLOAT8_E5M2FNUZ, Float8_e5m2fnuz, 1, 'f')   \
    X(FLOAT8_E4M3FNUZ, Float8_e4m3fnuz, 1, 'f')   \
    X(UINT16, UInt16, 2, 'u')              \
    X(UINT32, UInt32, 4, 'u')              \
    X(UINT64, UInt64, 8, 'u')              \
    X(UINT1, UInt1, 1, 'u')                \
    X(UINT2, UInt2, 1, 'u')                \
    X(UINT3, UInt3, 1, 'u')                \
    X(UINT4, UInt4, 1, 'u')                \
    X(UINT5, UInt5, 1, 'u')                \
    X(UINT6, UInt6, 1, 'u')                \
    X(UINT7, UInt7, 1, 'u')                \
    X(INT1, Int1, 1, 'i')                  \
    X(INT2, Int2, 1, 'i')                  \
    X(INT3, Int3, 1, 'i')                  \
    X(INT4, Int4, 1, 'i')                  \
    X(INT5, Int5, 1, 'i')                  \
    X(INT6, Int6, 1, 'i')                  \
    X(INT7, Int7, 1, 'i')                  \
    X(FLOAT8_E8M0FNU, Float8_e8m0fnu, 1, 'f')     \
    X(FLOAT4_E2M1FN_X2, Float4_e2m1fn_x2, 1, 'x')

typedef enum tn_dtype {
#define TN_X(e, c10, size, kind) TN_DTYPE_##e,
    TN_DTYPE_LIST(TN_X)
#undef TN_X
    TN_DTYPE_COUNT,
    TN_DTYPE_UNDEFINED = -1
} tn_dtype;

typedef struct tn_dtype_info {
    const char *c10_name; /* "Float" */
    int itemsize;         /* bytes per element */
    char kind;            /* see TN_DTYPE_LIST */
} tn_dtype_info;

extern const tn_dtype_info tn_dtype_infos[TN_DTYPE_COUNT];

static inline int tn_dtype_itemsize(tn_dtype d) { return tn_dtype_infos[d].itemsize; }
static inline bool tn_dtype_is_floating(tn_dtype d) { return tn_dtype_infos[d].kind == 'f'; }
static inline bool tn_dtype_is_complex(tn_dtype d) { return tn_dtype_infos[d].kind == 'c'; }
static inline bool tn_dtype_is_integral(tn_dtype d, bool include_bool) {
    char k = tn_dtype_infos[d].kind;
    return k == 'i' || k == 'u' || (include_bool && k == 'b');
}

/* ---- float16 / bfloat16 <-> float32, bit exact with c10 ---------------------------- */

typedef uint16_t tn_half;     /* IEEE binary16 bits */
typedef uint16_t tn_bfloat16; /* top half of a binary32 */

static inline uint32_t tn_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float tn_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float tn_bf16_to_f32(tn_bfloat16 h) { return tn_f32_from_bits((uint32_t)h << 16); }

/* Round to nearest even; NaN becomes the canonical quiet NaN 0x7FC0 as c10 does. */
static inline tn_bfloat16 tn_f32_to_bf16(float f) {
    if (f != f) return 0x7FC0;
    uint32_t u = tn_f32_bits(f);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (tn_bfloat16)(u >> 16);
}

float tn_half_to_f32(tn_half h);
tn_half tn_f32_to_half(float f);

#endif

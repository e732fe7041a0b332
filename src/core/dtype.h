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

/* X-macro list: (enum suffix, c10 name, element size in bytes, kind, C++ name, Python name,
 * legacy alias, abbreviation).
 * Kind: 'b' bool, 'u' unsigned int, 'i' signed int, 'f' float, 'c' complex, 'q' quantized,
 * 'x' bits/opaque. C++ name: what caffe2::TypeMeta prints for the element type ("long int",
 * "c10::Half"), which upstream's copy_arg / reduction / mm messages show. Python name: the
 * torch attribute and str(dtype) without "torch." ("float32"); legacy alias: the second
 * torch attribute ("float") or NULL; abbreviation: dtype.abbr ("f32"), NULL where upstream
 * has none (its abbr is then the Python name, and torch._C._get_all_dtypes() leaves it out).
 * Order and numbering are c10::ScalarType's; never reorder. */
#define TN_DTYPE_LIST(X)                                                                                       \
    X(UINT8, Byte, 1, 'u', "unsigned char", "uint8", NULL, "u8")                                               \
    X(INT8, Char, 1, 'i', "signed char", "int8", NULL, "i8")                                                   \
    X(INT16, Short, 2, 'i', "short int", "int16", "short", "i16")                                              \
    X(INT32, Int, 4, 'i', "int", "int32", "int", "i32")                                                        \
    X(INT64, Long, 8, 'i', "long int", "int64", "long", "i64")                                                 \
    X(FLOAT16, Half, 2, 'f', "c10::Half", "float16", "half", "f16")                                            \
    X(FLOAT32, Float, 4, 'f', "float", "float32", "float", "f32")                                              \
    X(FLOAT64, Double, 8, 'f', "double", "float64", "double", "f64")                                           \
    X(COMPLEX32, ComplexHalf, 4, 'c', "c10::complex<c10::Half>", "complex32", "chalf", "c32")                  \
    X(COMPLEX64, ComplexFloat, 8, 'c', "c10::complex<float>", "complex64", "cfloat", "c64")                    \
    X(COMPLEX128, ComplexDouble, 16, 'c', "c10::complex<double>", "complex128", "cdouble", "c128")             \
    X(BOOL, Bool, 1, 'b', "bool", "bool", NULL, "b8")                                                          \
    X(QINT8, QInt8, 1, 'q', "c10::QInt8", "qint8", NULL, NULL)                                                 \
    X(QUINT8, QUInt8, 1, 'q', "c10::QUInt8", "quint8", NULL, NULL)                                             \
    X(QINT32, QInt32, 4, 'q', "c10::QInt32", "qint32", NULL, NULL)                                             \
    X(BFLOAT16, BFloat16, 2, 'f', "c10::BFloat16", "bfloat16", NULL, "bf16")                                   \
    X(QUINT4X2, QUInt4x2, 1, 'q', "c10::QUInt4x2", "quint4x2", NULL, NULL)                                     \
    X(QUINT2X4, QUInt2x4, 1, 'q', "c10::QUInt2x4", "quint2x4", NULL, NULL)                                     \
    X(BITS1X8, Bits1x8, 1, 'x', "c10::Bits1x8", "bits1x8", NULL, "b1x8")                                       \
    X(BITS2X4, Bits2x4, 1, 'x', "c10::Bits2x4", "bits2x4", NULL, "b2x4")                                       \
    X(BITS4X2, Bits4x2, 1, 'x', "c10::Bits4x2", "bits4x2", NULL, "b4x2")                                       \
    X(BITS8, Bits8, 1, 'x', "c10::Bits8", "bits8", NULL, "b8x1")                                               \
    X(BITS16, Bits16, 2, 'x', "c10::Bits16", "bits16", NULL, "b16x1")                                          \
    X(FLOAT8_E5M2, Float8_e5m2, 1, 'f', "c10::Float8_e5m2", "float8_e5m2", NULL, "f8e5m2")                     \
    X(FLOAT8_E4M3FN, Float8_e4m3fn, 1, 'f', "c10::Float8_e4m3fn", "float8_e4m3fn", NULL, "f8e4m3fn")           \
    X(FLOAT8_E5M2FNUZ, Float8_e5m2fnuz, 1, 'f', "c10::Float8_e5m2fnuz", "float8_e5m2fnuz", NULL, "f8e5m2fnuz") \
    X(FLOAT8_E4M3FNUZ, Float8_e4m3fnuz, 1, 'f', "c10::Float8_e4m3fnuz", "float8_e4m3fnuz", NULL, "f8e4m3fnuz") \
    X(UINT16, UInt16, 2, 'u', "short unsigned int", "uint16", NULL, "u16")                                     \
    X(UINT32, UInt32, 4, 'u', "unsigned int", "uint32", NULL, "u32")                                           \
    X(UINT64, UInt64, 8, 'u', "long unsigned int", "uint64", NULL, "u64")                                      \
    X(UINT1, UInt1, 1, 'u', "c10::UInt1", "uint1", "bit", NULL)                                                \
    X(UINT2, UInt2, 1, 'u', "c10::UInt2", "uint2", NULL, NULL)                                                 \
    X(UINT3, UInt3, 1, 'u', "c10::UInt3", "uint3", NULL, NULL)                                                 \
    X(UINT4, UInt4, 1, 'u', "c10::UInt4", "uint4", NULL, NULL)                                                 \
    X(UINT5, UInt5, 1, 'u', "c10::UInt5", "uint5", NULL, NULL)                                                 \
    X(UINT6, UInt6, 1, 'u', "c10::UInt6", "uint6", NULL, NULL)                                                 \
    X(UINT7, UInt7, 1, 'u', "c10::UInt7", "uint7", NULL, NULL)                                                 \
    X(INT1, Int1, 1, 'i', "c10::Int1", "int1", NULL, NULL)                                                     \
    X(INT2, Int2, 1, 'i', "c10::Int2", "int2", NULL, NULL)                                                     \
    X(INT3, Int3, 1, 'i', "c10::Int3", "int3", NULL, NULL)                                                     \
    X(INT4, Int4, 1, 'i', "c10::Int4", "int4", NULL, NULL)                                                     \
    X(INT5, Int5, 1, 'i', "c10::Int5", "int5", NULL, NULL)                                                     \
    X(INT6, Int6, 1, 'i', "c10::Int6", "int6", NULL, NULL)                                                     \
    X(INT7, Int7, 1, 'i', "c10::Int7", "int7", NULL, NULL)                                                     \
    X(FLOAT8_E8M0FNU, Float8_e8m0fnu, 1, 'f', "c10::Float8_e8m0fnu", "float8_e8m0fnu", NULL, "f8e8m0fnu")      \
    X(FLOAT4_E2M1FN_X2, Float4_e2m1fn_x2, 1, 'x', "c10::Float4_e2m1fn_x2", "float4_e2m1fn_x2", NULL, "f4e2m1fnx2")

typedef enum tn_dtype {
#define TN_X(e, c10, size, kind, cpp, py, alias, abbr) TN_DTYPE_##e,
    TN_DTYPE_LIST(TN_X)
#undef TN_X
    TN_DTYPE_COUNT,
    TN_DTYPE_UNDEFINED = -1
} tn_dtype;

typedef struct tn_dtype_info {
    const char *c10_name; /* "Float" */
    int itemsize;         /* bytes per element */
    char kind;            /* see TN_DTYPE_LIST */
    const char *cpp_name; /* "float", "long int": caffe2::TypeMeta's name */
    const char *py_name;  /* "float32": torch.float32 */
    const char *py_alias; /* "float": torch.float, or NULL */
    const char *abbr;     /* "f32": dtype.abbr, or NULL */
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

/* v rounded to float16 / bfloat16 and back: one operation of c10's Half / BFloat16
 * arithmetic on float values (the kernels that emulate upstream's per-step rounding) */
static inline float tn_round_half_f32(float v) { return tn_half_to_f32(tn_f32_to_half(v)); }
static inline float tn_round_bf16_f32(float v) { return tn_bf16_to_f32(tn_f32_to_bf16(v)); }
/* v rounded to floating dtype d and back (float32, float16, bfloat16; float64 and the rest
 * unchanged): one operation's result in d, for the kernels that compute in double and
 * round each step as upstream's arithmetic in d does */
static inline double tn_round_to_dtype(tn_dtype d, double v) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return (float)v;
    case TN_DTYPE_FLOAT16: return tn_round_half_f32((float)v);
    case TN_DTYPE_BFLOAT16: return tn_round_bf16_f32((float)v);
    default: return v;
    }
}

#endif

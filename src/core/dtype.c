/* dtype.c — the dtype table and float16 conversions (bit exact with c10's fp16 code). */
#include "core/dtype.h"

const tn_dtype_info tn_dtype_infos[TN_DTYPE_COUNT] = {
#define TN_X(e, c10, size, k, cpp, py, alias, abbr) [TN_DTYPE_##e] = {#c10, size, k, cpp, py, alias, abbr},
    TN_DTYPE_LIST(TN_X)
#undef TN_X
};
_Static_assert(TN_DTYPE_COUNT == 46, "c10::ScalarType has 46 entries in torch 2.13");

float tn_half_to_f32(tn_half h) {
    /* Same exponent-rebias trick c10 uses: exact for normals, subnormals, inf, NaN. */
    const uint32_t w = (uint32_t)h << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = 0xE0u << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized = tn_f32_from_bits((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = 126u << 23;
    const float magic_bias = 0.5f;
    const float denormalized = tn_f32_from_bits((two_w >> 17) | magic_mask) - magic_bias;
    const uint32_t denormalized_cutoff = 1u << 27;
    const uint32_t result = sign | (two_w < denormalized_cutoff ? tn_f32_bits(denormalized)
                                                                : tn_f32_bits(normalized));
    return tn_f32_from_bits(result);
}

tn_half tn_f32_to_half(float f) {
    const float scale_to_inf = 0x1.0p+112f;
    const float scale_to_zero = 0x1.0p-110f;
    float base = (f < 0 ? -f : f) * scale_to_inf * scale_to_zero;
    const uint32_t w = tn_f32_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = tn_f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = tn_f32_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return (tn_half)((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

/* test_core.c — dtype conversions and tensor geometry of the core. */
#include "core/tensor.h"
#include "tn_test.h"

static void test_half_roundtrip(void) {
    /* Every finite half converts to float and back unchanged. */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) continue; /* NaN payloads */
        if (tn_f32_to_half(tn_half_to_f32((tn_half)h)) != h) bad++;
    }
    TN_CHECK(bad == 0, "%d half values did not round-trip", bad);
    TN_CHECK(tn_f32_to_half(65520.0f) == 0x7C00, "65520 rounds to inf");
    TN_CHECK(tn_f32_to_half(1.0f + 0x1p-11f) == 0x3C00, "tie rounds to even");
}

static void test_bf16(void) {
    TN_CHECK(tn_f32_to_bf16(1.0f) == 0x3F80, "1.0");
    TN_CHECK(tn_f32_to_bf16(tn_f32_from_bits(0x3F808000u)) == 0x3F80, "tie to even (down)");
    TN_CHECK(tn_f32_to_bf16(tn_f32_from_bits(0x3F818000u)) == 0x3F82, "tie to even (up)");
    TN_CHECK(tn_f32_to_bf16(NAN) == 0x7FC0, "NaN");
}

static void test_tensor_geometry(void) {
    int64_t sizes[3] = {2, 3, 4};
    tn_tensor *t;
    TN_CHECK(tn_tensor_empty(3, sizes, TN_DTYPE_FLOAT32, tn_device_cpu(), &t) == TN_OK, "alloc");
    TN_CHECK(t->strides[0] == 12 && t->strides[1] == 4 && t->strides[2] == 1, "strides");
    TN_CHECK(tn_tensor_numel(t) == 24 && tn_tensor_is_contiguous(t), "numel/contiguous");
    int d;
    TN_CHECK(tn_wrap_dim(-1, 3, &d) == TN_OK && d == 2, "wrap -1");
    TN_CHECK(tn_wrap_dim(3, 3, &d) == TN_ERR_INDEX, "dim out of range is IndexError");
    tn_tensor_release(t);
    int64_t neg[1] = {-1};
    TN_CHECK(tn_tensor_empty(1, neg, TN_DTYPE_FLOAT32, tn_device_cpu(), &t) == TN_ERR_RUNTIME, "negative size");
}

int main(void) {
    test_half_roundtrip();
    test_bf16();
    test_tensor_geometry();
    return tn_test_summary();
}

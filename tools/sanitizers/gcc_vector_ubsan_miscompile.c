/* gcc_vector_ubsan_miscompile.c — a reproducer of the GCC miscompilation that made the
 * generic instance of the 2x2 max pool (src/kernels/nn_vec.inc, pool_flat) disagree with its
 * reference under ASan+UBSan only. The index arithmetic of pool_flat on 8 x int32 GCC vectors,
 * without any undefined behaviour (every value stays below 100): the printed hash is the same
 * at -O0 and -O2, with -fsanitize=address alone and with -fsanitize=undefined alone, and
 * differs with all three of -O2 -fsanitize=address,undefined -fno-sanitize-recover=undefined
 * (GCC 12.2, x86-64 baseline ISA: the 32-byte vectors are emulated on SSE2; -mavx2 agrees).
 *
 *   for f in "-O0" "-O2 -fsanitize=address,undefined -fno-sanitize-recover=undefined"; do
 *       cc -w $f tools/sanitizers/gcc_vector_ubsan_miscompile.c -o /tmp/repro &&
 *       ASAN_OPTIONS=detect_leaks=0 /tmp/repro; done
 *
 * Expected: the same two lines twice. On GCC 12.2 the second build prints another hash and
 * vectors whose wrap (q -= OHW where q >= OHW) was lost: 33 34 41 ... instead of 9 0 3 .... */
#include <stdint.h>
#include <stdio.h>

typedef int32_t i8 __attribute__((vector_size(32)));
typedef int64_t l8 __attribute__((vector_size(64)));
typedef int64_t l8u __attribute__((vector_size(64), aligned(8)));

/* out[o + l] = 4 q - 2 (q & (ow - 1)) + code, q running over the output index modulo OHW */
__attribute__((noinline)) static void indices(int64_t *out, int64_t T, int64_t OHW, int64_t ow, const i8 *codes) {
    i8 q;
    for (int l = 0; l < 8; l++) q[l] = (int32_t)(l % OHW);
    int wraps = (int)((8 + OHW - 1) / OHW);
    for (int64_t o = 0; o + 8 <= T; o += 8) {
        i8 v = 4 * q - 2 * (q & (int32_t)(ow - 1)) + codes[o / 8];
        *(l8u *)(out + o) = __builtin_convertvector(v, l8);
        q += 8;
        for (int r = 0; r < wraps; r++) q -= (q >= (int32_t)OHW) & (int32_t)OHW;
    }
}

int main(void) {
    int64_t out[64];
    i8 codes[8];
    for (int k = 0; k < 8; k++)
        for (int l = 0; l < 8; l++) codes[k][l] = (k * 8 + l) % 4 == 3 ? 5 : (k + l) % 2;
    unsigned long h = 0;
    for (int ow = 1; ow <= 4; ow *= 2)
        for (int64_t OHW = 1; OHW <= 12; OHW++) {
            indices(out, 64, OHW, ow, codes);
            for (int i = 0; i < 64; i++) h = h * 1000003u + (unsigned long)out[i];
        }
    printf("%lx\n", h);
    indices(out, 64, 3, 2, codes);
    for (int i = 0; i < 16; i++) printf("%ld ", (long)out[i]);
    printf("\n");
    return 0;
}

#!/usr/bin/env bash
# cross_aarch64.sh — cross-compiles the quantised-product kernels (and the NEON GEMV) for
# aarch64 and links tests/c/test_quant.c against them into a static aarch64 binary.
#
#   scripts/cross_aarch64.sh [out-dir]        # default build/aarch64
#
# Checks, without running anything: every file compiles with -Werror, the NEON kernels
# are defined in the binary, and they contain sdot instructions (objdump). Running the
# binary: `qemu-aarch64 -cpu max build/aarch64/test_quant` (qemu-user) or an arm64 host. Needs aarch64-linux-gnu-gcc
# (Debian/Ubuntu: apt-get install gcc-aarch64-linux-gnu).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/build/aarch64}"
CC="${CROSS_CC:-aarch64-linux-gnu-gcc}"
OBJDUMP="${CROSS_OBJDUMP:-aarch64-linux-gnu-objdump}"
command -v "$CC" >/dev/null || { echo "cross_aarch64.sh: $CC not found (apt-get install gcc-aarch64-linux-gnu)" >&2; exit 2; }
mkdir -p "$OUT"
FLAGS=(-std=c11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -I"$ROOT/src" -I"$ROOT/tests/c")
SRCS=(kernels/quant.c kernels/quant_ref.c kernels/quant_neon.c kernels/quant_avx2.c kernels/quant_avx512.c
      kernels/gemv_neon.c kernels/cpu_features.c kernels/stream.c core/threadpool.c core/dtype.c)
OBJS=()
for s in "${SRCS[@]}"; do
    o="$OUT/$(echo "$s" | tr / _ | sed 's/\.c$/.o/')"
    "$CC" "${FLAGS[@]}" -c "$ROOT/src/$s" -o "$o"
    OBJS+=("$o")
done
"$CC" "${FLAGS[@]}" -static "$ROOT/tests/c/test_quant.c" "${OBJS[@]}" -lm -lpthread -o "$OUT/test_quant"
DIS="$("$OBJDUMP" -d --no-show-raw-insn "$OUT/test_quant")"
for k in q4_0_qdot__neon q4_1_qdot__neon q8_0_qdot__neon i4_qdot__neon; do
    n="$(awk -v f="<$k>:" '$2 == f {on=1; next} on && /^$/ {exit} on && /sdot/ {c++} END {print c+0}' <<<"$DIS")"
    [ "$n" -gt 0 ] || { echo "cross_aarch64.sh: $k has no sdot instruction" >&2; exit 1; }
    echo "  $k: $n sdot instructions"
done
echo "cross_aarch64.sh: $OUT/test_quant (aarch64, static); NEON kernels defined and using sdot"

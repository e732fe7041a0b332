"""Static instruction counts of the GEMV, GEMM and quantised-product kernels' main loops,
aarch64 (NEON) next to x86-64 (AVX2, AVX-512), from objdump of the built extensions.

    python scripts/kernel_insns.py                 # table (markdown) on stdout
    python scripts/kernel_insns.py --json          # the same rows as JSON (tests read it)

Speed on aarch64 is not measured under emulation (qemu's timing means nothing and
Debian's qemu ships no TCG plugins to count executed instructions), so a regression in
the NEON code shows here instead: for each kernel, the innermost loop carrying the most
multiply-accumulate lanes is taken as its main loop; its instructions are divided by the
lanes it computes, giving instructions per multiply-accumulate, and, times k, per output
element of a k-long dot product (k = 576, SmolLM2-135M's width). Lanes per instruction
are ISA facts (MAC_LANES below), not kernel facts: nothing about a kernel's tiling is
written here. The NEON quantised kernels must contain sdot (checked, as the cross build
of the quantised kernels used to be: the script fails otherwise).

Reads build/_C.abi3.so (x86-64, scripts/build.py) and build/aarch64/build/_C.abi3.so
(scripts/build.py --target aarch64); a missing one is reported and its rows left out.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K = 576

# Multiply-accumulate lanes per instruction, by mnemonic and register width. aarch64:
# fmla .4s = 4, .8h = 8; sdot/udot .4s = 16 (four int8 pairs per lane); smmla/ummla = 32.
# x86: vfmadd*ps xmm/ymm/zmm = 4/8/16; vpdpbusd = 4 int8 pairs per int32 lane;
# vpmaddubsw = two int8 pairs per int16 lane (four per 32 bits); vdpbf16ps = two bf16 pairs per lane.
X86_WIDTH = {"xmm": 4, "ymm": 8, "zmm": 16}


def mac_lanes(arch, mnemonic, operands):
    if arch == "aarch64":
        if mnemonic in ("fmla", "fmls"):
            return 8 if ".8h" in operands else 4 if ".4s" in operands else 2 if ".2d" in operands or ".2s" in operands else 1
        if mnemonic in ("sdot", "udot", "usdot"):
            return 16 if ".4s" in operands else 8
        if mnemonic in ("smmla", "ummla", "usmmla"):
            return 32
        if mnemonic in ("fmadd", "fmsub"):
            return 1
        return 0
    reg = re.search(r"%([xyz]mm)", operands)
    lanes32 = X86_WIDTH[reg.group(1)] if reg else 1
    if re.match(r"vf(n)?madd(132|213|231)ps", mnemonic):
        return lanes32
    if re.match(r"vf(n)?madd(132|213|231)ss", mnemonic):
        return 1
    if mnemonic == "vpdpbusd":
        return 4 * lanes32
    if mnemonic == "vpmaddubsw":
        return 4 * lanes32
    if mnemonic == "vdpbf16ps":
        return 2 * lanes32
    return 0


# (kernel family, dtype, x86-64 symbols, aarch64 symbols)
KERNELS = [
    ("GEMV", "float32", ["f32_gemv__avx2", "f32_gemv__avx512"], ["f32_gemv__neon"]),
    ("GEMV", "bfloat16", ["bf16_gemv__avx2", "bf16_gemv__avx512", "bf16_gemv__avx512bf16"], ["bf16_gemv__neon"]),
    ("GEMV", "float16", ["f16_gemv__avx2", "f16_gemv__avx512"], ["f16_gemv__neon"]),
    ("GEMM micro-kernel", "float32", ["f32_gemm_6x16__avx2", "f32_gemm_12x32__avx512"], ["f32_gemm_12x8__neon"]),
    ("quantised dot", "Q4_0", ["q4_0_qdot__avx2", "q4_0_qdot__avx512vnni"], ["q4_0_qdot__neon", "q4_0_qdot__i8mm"]),
    ("quantised dot", "Q4_1", ["q4_1_qdot__avx2", "q4_1_qdot__avx512vnni"], ["q4_1_qdot__neon", "q4_1_qdot__i8mm"]),
    ("quantised dot", "Q8_0", ["q8_0_qdot__avx2", "q8_0_qdot__avx512vnni"], ["q8_0_qdot__neon", "q8_0_qdot__i8mm"]),
    ("quantised dot", "8da4w", ["i4_qdot__avx2", "i4_qdot__avx512vnni"], ["i4_qdot__neon", "i4_qdot__i8mm"]),
]
SDOT_REQUIRED = ("q4_0_qdot__neon", "q4_1_qdot__neon", "q8_0_qdot__neon", "i4_qdot__neon")
SMMLA_REQUIRED = ("q4_0_qdot__i8mm", "q4_1_qdot__i8mm", "q8_0_qdot__i8mm", "i4_qdot__i8mm")

LINE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")


def disassemble(objdump, so, symbol):
    """[(address, mnemonic, operands)] of `symbol` in `so`."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", f"--disassemble={symbol}", so],
                         capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m and not line.rstrip().endswith(":"):
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return insns


def branch_target(arch, mnemonic, operands):
    """The target address of a direct branch, or None."""
    if arch == "aarch64":
        if not (mnemonic == "b" or mnemonic.startswith("b.") or mnemonic in ("cbz", "cbnz", "tbz", "tbnz")):
            return None
    elif not mnemonic.startswith("j"):
        return None
    m = re.search(r"\b([0-9a-f]+) <", operands)
    return int(m.group(1), 16) if m else None


def main_loop(arch, insns):
    """(instructions, MAC lanes) of the innermost loop with the most MAC lanes."""
    loops = []
    for i, (addr, mn, ops) in enumerate(insns):
        t = branch_target(arch, mn, ops)
        if t is not None and t <= addr and t >= insns[0][0]:
            loops.append((t, addr))
    inner = [(s, e) for s, e in loops if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for s2, e2 in loops)]
    best = None
    for s, e in inner:
        body = [(mn, ops) for a, mn, ops in insns if s <= a <= e]
        lanes = sum(mac_lanes(arch, mn, ops) for mn, ops in body)
        if lanes and (best is None or lanes > best[1] or (lanes == best[1] and len(body) < best[0])):
            best = (len(body), lanes)
    return best


def measure():
    """Rows: {family, dtype, arch, kernel, loop_insns, mac_lanes, per_mac, per_output}."""
    builds = {
        "x86-64": (os.path.join(ROOT, "build", "_C.abi3.so"), "objdump", "x86"),
        "aarch64": (os.path.join(ROOT, "build", "aarch64", "build", "_C.abi3.so"), "aarch64-linux-gnu-objdump", "aarch64"),
    }
    rows, missing = [], []
    for arch, (so, objdump, isa) in builds.items():
        if not os.path.exists(so) or shutil.which(objdump) is None:
            missing.append(f"{arch}: {os.path.relpath(so, ROOT)} or {objdump} missing")
            continue
        for family, dtype, x86, arm in KERNELS:
            for sym in (arm if isa == "aarch64" else x86):
                insns = disassemble(objdump, so, sym)
                if not insns:
                    raise SystemExit(f"{sym} not found in {so}")
                if sym in SDOT_REQUIRED and not any(mn == "sdot" for _, mn, _ in insns):
                    raise SystemExit(f"{sym} has no sdot instruction")
                if sym in SMMLA_REQUIRED and not any(mn == "smmla" for _, mn, _ in insns):
                    raise SystemExit(f"{sym} has no smmla instruction")
                loop = main_loop(isa, insns)
                if loop is None:
                    raise SystemExit(f"{sym}: no loop with multiply-accumulates found")
                n, lanes = loop
                rows.append({"family": family, "dtype": dtype, "arch": arch, "kernel": sym, "loop_insns": n,
                             "mac_lanes": lanes, "per_mac": n / lanes, "per_output": n / lanes * K})
    return rows, missing


def table(rows):
    out = [f"| kernel | dtype | arch | main-loop instructions | MAC lanes | instructions per MAC | per output (k = {K}) |",
           "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['kernel']} | {r['dtype']} | {r['arch']} | {r['loop_insns']} | {r['mac_lanes']} | "
                   f"{r['per_mac']:.3f} | {r['per_output']:.0f} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows, missing = measure()
    for m in missing:
        print(f"kernel_insns.py: skipped {m}", file=sys.stderr)
    print(json.dumps(rows, indent=1) if args.json else table(rows))


if __name__ == "__main__":
    main()

"""The avx2 instances of kernels GCC once compiled through the stack stay in registers
(docs/PERFORMANCE.md "Session 19"): with 64-byte GCC vector types on the avx2 tier, GCC 12
turned the softmax rows' and relu gradient's compare-and-select into a scalar cmov per lane
and kept batch_stats' double accumulators in memory, a third of a Tent step. The kernels
now use 8-lane vectors; this reads their machine code from the built extension (objdump)
and fails if the pattern comes back."""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SO = os.path.join(ROOT, os.environ.get("TN_BUILD_DIR", "build"), "_C.abi3.so")

# function -> (max cmov instructions, max instructions addressing the stack); the per-lane
# pattern is 8 cmovs per select, so a few scalar ones pass (the softmax rows' group size:
# two mins of integers, and the group's last)
LIMITS = {
    "tn_softmax_rows__avx2": (3, 8),
    "tn_softmax_backward_rows__avx2": (0, 120),
    "tn_attn_bwd_prob_row__avx2": (1, 16),
    "tn_ewb_threshold_f32__avx2": (0, 8),
    "batch_stats__avx2": (0, 24),
}


@pytest.fixture(scope="module")
def disassembly():
    if os.uname().machine != "x86_64" or "asan" in SO or not os.path.exists(SO) or not shutil.which("objdump"):
        pytest.skip("reads the x86-64 host build's machine code")
    funcs = {}
    for name in LIMITS:  # one symbol per objdump call (--disassemble= keeps only the last one given)
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={name}", SO], capture_output=True,
                             text=True, check=True).stdout
        body = out.split(f"<{name}>:", 1)[1] if f"<{name}>:" in out else ""
        funcs[name] = [line for line in body.splitlines() if re.match(r"^\s+[0-9a-f]+:", line)]
    return funcs


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_avx2_kernel_has_no_per_lane_stack_code(disassembly, name):
    body = disassembly.get(name)
    assert body, f"{name} not found in {SO}"
    cmov = sum(1 for l in body if re.search(r"\scmov", l))
    stack = sum(1 for l in body if "(%rsp" in l)
    max_cmov, max_stack = LIMITS[name]
    assert cmov <= max_cmov and stack <= max_stack, f"{name}: {cmov} cmov, {stack} stack operands ({len(body)} instructions)"


def test_no_legacy_sse_call_with_dirty_upper_state():
    """No call or jump from AVX / AVX-512 code into a function of legacy-SSE instructions while
    the upper halves of the vector registers are dirty (tools/vzeroupper_scan.py: GCC 12 omits
    the vzeroupper before calls to functions local to the file; argext.c's row kernels ran
    11x slower for it until session 46). The scan's own check: it finds the pattern in a
    hand-written object assembled here."""
    if os.uname().machine != "x86_64" or "asan" in SO or not os.path.exists(SO) or not shutil.which("objdump"):
        pytest.skip("reads the x86-64 host build's machine code")
    import sys
    import tempfile
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import vzeroupper_scan
    # the scan's own check, on hand-written code: f dirties zmm0, then reaches g (legacy SSE)
    # by a tail jump and, on another path, by a call after a vzeroupper (clean); h does it
    # only after a vzeroupper
    asm = (".text\n.globl f\n.globl g\n.globl h\n"
           "g:\n ucomiss %xmm0, %xmm0\n ret\n"
           "f:\n test %edi, %edi\n je 1f\n vmovups (%rsi), %zmm0\n jmp g\n"
           "1:\n vzeroupper\n call g\n ret\n"
           "h:\n vmovups (%rsi), %zmm0\n vzeroupper\n jmp g\n")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "t.s"), "w") as fh:
            fh.write(asm)
        subprocess.run(["gcc", "-c", "t.s", "-o", "t.o"], cwd=d, check=True)
        assert vzeroupper_scan.scan(os.path.join(d, "t.o")) == [("f", "jmp", "g")]
    found = vzeroupper_scan.scan(SO)
    assert not found, "called with the upper state dirty: " + "; ".join(" ".join(h) for h in found)

"""Build torch._C (our C extension) with ninja: one description shared by the dev build
(scripts/build.py) and the setuptools backend (setup.py).

Incremental (depfiles), parallel, and it regenerates the operator tables when the
generator or upstream's native_functions.yaml changes.
"""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# TN_BUILD_DIR lets parallel work use separate build trees (ninja state is per directory).
BUILD = os.path.abspath(os.environ.get("TN_BUILD_DIR", os.path.join(ROOT, "build")))
GEN = os.path.join(BUILD, "gen")
EXT_NAME = "_C.abi3.so"

CFLAGS = [
    "-std=c11", "-O2", "-g", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing",
    "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers",
    "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types",
    "-Werror=int-conversion", "-Werror=return-type",
    "-D_GNU_SOURCE", "-DPy_LIMITED_API=0x030B0000",
]
LDFLAGS = ["-shared", "-lm", "-lpthread", "-ldl"]

# Sanitizer builds (scripts/build.py --sanitize ...; docs/RELIABILITY.md). Each set of
# sanitizers gets its own build directory, so the normal build stays incremental.
# UBSan is made fatal: a report must fail the test that caused it, not scroll past.
SANITIZE_FLAGS = {
    "address": ["-fsanitize=address", "-fno-omit-frame-pointer", "-fno-common"],
    "undefined": ["-fsanitize=undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"],
    "thread": ["-fsanitize=thread", "-fno-omit-frame-pointer"],
}


def sanitize_list(spec):
    """Parses "address,undefined" / "thread" / "" into a sorted list; rejects unknown names
    and thread mixed with address (the two runtimes cannot share a process)."""
    names = sorted({n.strip() for n in (spec or "").split(",") if n.strip()})
    for n in names:
        if n not in SANITIZE_FLAGS:
            raise SystemExit(f"unknown sanitizer {n!r} (known: {', '.join(SANITIZE_FLAGS)})")
    if "thread" in names and "address" in names:
        raise SystemExit("ThreadSanitizer cannot be combined with AddressSanitizer")
    return names


def sanitize_cflags(names):
    """Compiler and linker flags for the sanitizers in `names` (deduplicated, in order)."""
    out = []
    for n in names:
        out += [f for f in SANITIZE_FLAGS[n] if f not in out]
    return out


# TN_SANITIZE (set by scripts/build.py --sanitize) switches the flags on; read once here so
# CFLAGS/LDFLAGS are the whole truth for this process.
SANITIZE = sanitize_list(os.environ.get("TN_SANITIZE", ""))
if SANITIZE:
    # Sanitizer builds keep only line tables (-g1): a report's frames still name file and
    # line, and compiling takes about 15 % less (an ASan elementwise_unary.c: 40.7 s of CPU
    # with -g, 34.8 s with -g1). They are -O1, as the sanitizers' documentation suggests:
    # the ThreadSanitizer build since session 31 (8.1 s against 15.5 s for that file), the
    # ASan + UBSan build since session 32, whose compile time it about halves (functions.c
    # 11.0 s against 4.3 s) for about 13 % more time in its most kernel-bound test files.
    # CI compiles four builds of every file (normal, ASan, TSan, aarch64), docs/RELIABILITY.md
    # "Session 31" and "Session 32".
    _opt = {"-g": "-g1", "-O2": "-O1"}
    CFLAGS = [_opt.get(f, f) for f in CFLAGS] + sanitize_cflags(SANITIZE)
    LDFLAGS = LDFLAGS + sanitize_cflags(SANITIZE)


# Cross-compilation (scripts/build.py --target aarch64; docs/AARCH64.md): TN_CROSS is the
# toolchain prefix (aarch64-linux-gnu), TN_PY_INCLUDE the target CPython's header
# directories (pyconfig.h is per architecture), os.pathsep-separated. Read once here.
CROSS = os.environ.get("TN_CROSS", "")
if CROSS:
    # The cross build runs under qemu-user in CI (tests/test_aarch64.py) and is rebuilt for
    # a debugger when one is wanted: no debug information, which was a fifth to a quarter
    # of a file's compile time (aarch64-linux-gnu-gcc, this build's flags: functions.c 8.1 s
    # with -g, 6.5 s without; quant_neon.c 1.03 against 0.77 s; docs/RELIABILITY.md
    # "Session 32"). The optimisation level stays that of the native build, so the code
    # under test is the code that ships.
    CFLAGS = ["-g0" if f == "-g" else f for f in CFLAGS]
PY_INCLUDES = [p for p in os.environ.get("TN_PY_INCLUDE", "").split(os.pathsep) if p] or [sysconfig.get_paths()["include"]]


def _tool(name, default):
    """The cross toolchain's `name` (gcc, ar) when cross-compiling, else `default`."""
    return f"{CROSS}-{name}" if CROSS else default


def _sources():
    return sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.c"), recursive=True))


# Kernel files named <family>_<tier>.c hold one instruction set's instances (the tier names
# of src/kernels/cpu_features.c; longest first, so bgemm_avx512bf16 is avx512bf16).
ISA_TIERS = ("avx512bf16", "avx512", "avx2", "amx", "dotprod", "i8mm", "neon")


def _file_tier(src):
    stem = os.path.basename(src)[:-2]
    return next((t for t in ISA_TIERS if stem.endswith("_" + t)), None)


def _host_tiers(python):
    """The kernel tiers this machine can execute, as the normal build of torch._C in
    `python`'s environment reports them (cpu_features.c is their one home), or None when
    that build cannot be imported (then nothing is left uninstrumented)."""
    try:
        out = subprocess.run([python, "-c", "import torch; print(' '.join(torch._C._tn_isa()[1]))"],
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return set(out.stdout.split()) if out.returncode == 0 and out.stdout.strip() else None


def _uninstrumented(srcs, python):
    """Sanitizer builds only: the kernel files of a tier this host cannot execute are
    compiled without the sanitizers. Their code never runs here (the dispatch would not pick
    it, and the CPU would fault if it did), so instrumenting it finds nothing, and it is the
    costliest code to instrument: the AVX-512 / AMX files were a quarter of the ASan build's
    compile time on an AVX2 host (docs/RELIABILITY.md "Session 22"). A host that has the
    tier compiles the file instrumented as before."""
    if not SANITIZE or CROSS:
        return set()
    tiers = _host_tiers(python)
    if tiers is None:
        return set()
    return {s for s in srcs if _file_tier(s) is not None and _file_tier(s) not in tiers}


def _native_functions_yaml(python):
    out = subprocess.run([python, "-c", "import torchgen, os; print(os.path.dirname(torchgen.__file__))"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(out, "packaged", "ATen", "native", "native_functions.yaml")


def write_ninja(python):
    os.makedirs(BUILD, exist_ok=True)
    # a cross build's target headers are system headers (no warnings from the sysroot's libc)
    inc = (" -isystem " if CROSS else " -I").join(PY_INCLUDES)
    yaml = _native_functions_yaml(python)
    gen_script = os.path.join(ROOT, "tools", "codegen", "gen_ops.py")
    gen_out = [os.path.join(GEN, n) for n in ("ops_generated.h", "ops_generated.c", "pysig_generated.h",
                                              "pysig_generated.c", "pysig_generated.def")]
    lines = [
        "ninja_required_version = 1.5",
        f"cflags = {' '.join(CFLAGS)} -I{ROOT}/src -I{ROOT}/tests/c -I{GEN} {'-isystem ' if CROSS else '-I'}{inc}",
        f"ldflags = {' '.join(LDFLAGS)}",
        "rule cc",
        "  command = ${cc} -MMD -MF $out.d $cflags -c $in -o $out",
        "  depfile = $out.d",
        "  deps = gcc",
        "  description = CC $in",
        "rule link",
        "  command = ${cc} -o $out $in $ldflags",
        "  description = LINK $out",
        "rule ar",
        f"  command = rm -f $out && {_tool('ar', 'ar')} rcs $out $in",
        "  description = AR $out",
        "rule ctest_link",
        f"  command = ${{cc}} -o $out $in {' '.join(sanitize_cflags(SANITIZE))} -lm -lpthread -ldl",
        "  description = LINK $out",
        "rule gen",
        f"  command = {python} {gen_script} --yaml {yaml} --out {GEN}",
        "  description = GEN operator tables",
        "  restat = 1",
        f"cc = {_tool('gcc', os.environ.get('CC', 'cc'))}",
        f"build {' '.join(gen_out)}: gen {gen_script} {yaml} | "
        + " ".join(sorted(glob.glob(os.path.join(ROOT, 'tools', 'codegen', '*.py'))))
        + " " + os.path.join(ROOT, "tools", "codegen", "own_operators.yaml"),
    ]
    # Derivative formulas generated from upstream's derivatives.yaml (tools/codegen/gen_derivatives.py).
    deriv_script = os.path.join(ROOT, "tools", "codegen", "gen_derivatives.py")
    packaged = os.path.dirname(os.path.dirname(os.path.dirname(yaml)))
    deriv_out = [os.path.join(GEN, n) for n in ("formulas_generated.def", "formulas_generated.c",
                                                "formulas_generated_nodiff.def", "formulas_generated_refused.def")]
    deriv_in = [deriv_script, os.path.join(packaged, "autograd", "derivatives.yaml"), yaml,
                os.path.join(ROOT, "src", "autograd", "formulas.def"), os.path.join(ROOT, "src", "autograd", "decompose.c")]
    deriv_in += sorted(glob.glob(os.path.join(ROOT, "src", "ops", "*.def")))
    lines += [
        "rule gen_derivatives",
        f"  command = {python} {deriv_script} --yaml-dir {packaged} --out {GEN}",
        "  description = GEN derivative formulas",
        "  restat = 1",
        f"build {' '.join(deriv_out)}: gen_derivatives {' '.join(deriv_in)}",
    ]
    gen_out = gen_out + deriv_out
    objs = []
    srcs = _sources() + [g for g in gen_out if g.endswith(".c")]
    plain = _uninstrumented(srcs, python)
    plain_cflags = " ".join(f for f in CFLAGS if f not in sanitize_cflags(SANITIZE))
    for src in srcs:
        rel = os.path.relpath(src, ROOT).replace(os.sep, "_")
        obj = os.path.join(BUILD, "obj", rel[:-2] + ".o")
        objs.append(obj)
        lines.append(f"build {obj}: cc {src} || {' '.join(gen_out)}")
        if src in plain:
            lines.append(f"  cflags = {plain_cflags} -I{ROOT}/src -I{ROOT}/tests/c -I{GEN} -I{inc}")
    lines.append(f"build {BUILD}/{EXT_NAME}: link {' '.join(objs)}")
    # Everything below the binding, as a static library the C unit tests link against.
    core_objs = [o for o, s in zip(objs, srcs) if os.sep + "python" + os.sep not in os.path.relpath(s, ROOT)]
    lines.append(f"build {BUILD}/libtncore.a: ar {' '.join(core_objs)}")
    tests = []
    for src in sorted(glob.glob(os.path.join(ROOT, "tests", "c", "test_*.c"))):
        name = os.path.basename(src)[:-2]
        obj = os.path.join(BUILD, "obj", "tests_" + name + ".o")
        exe = os.path.join(BUILD, "tests", name)
        lines.append(f"build {obj}: cc {src} || {' '.join(gen_out)}")
        lines.append(f"build {exe}: ctest_link {obj} {BUILD}/libtncore.a")
        tests.append(exe)
    # A ThreadSanitizer _C could only run inside a TSan-preloaded CPython; the TSan build
    # is for the C tests (scripts/tsan.sh), so it skips the extension.
    lines.append(f"default {'' if 'thread' in SANITIZE else BUILD + '/' + EXT_NAME} {' '.join(tests)}")
    with open(os.path.join(BUILD, "build.ninja"), "w") as f:
        f.write("\n".join(lines) + "\n")


def build(python=sys.executable, jobs=None):
    """Build build/_C.abi3.so; returns its path."""
    write_ninja(python)
    ninja = shutil.which("ninja", path=os.path.dirname(python) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [ninja, "-C", BUILD]
    if jobs:
        cmd += ["-j", str(jobs)]
    subprocess.run(cmd, check=True)
    return os.path.join(BUILD, EXT_NAME)

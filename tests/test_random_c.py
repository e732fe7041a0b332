"""test_random_c.py — bit-for-bit comparison of torchnative's CPU random number generation
with upstream torch 2.13. The C side is the `--dump` mode of tests/c/test_random.c (built
into <build>/tests/test_random); the upstream side is this same file run under
.venv-ref/bin/python with `--ref`, which executes the same command language on genuine
torch. Every command's output (float bit patterns, integer values, error first lines) must
be identical. Nothing is skipped: a missing binary or reference environment fails.

Run: TN_BUILD_DIR=build/<dir> .venv/bin/python -m pytest tests/test_random_c.py
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF_PY = os.path.join(ROOT, ".venv-ref", "bin", "python")


def _binary():
    build = os.path.abspath(os.environ.get("TN_BUILD_DIR", os.path.join(ROOT, "build")))
    return os.path.join(build, "tests", "test_random")


def _run(cmds, capability=None):
    env = dict(os.environ)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    exe = _binary()
    assert os.path.exists(exe), f"{exe} is missing: build first (TN_BUILD_DIR selects the build dir)"
    assert os.path.exists(REF_PY), f"{REF_PY} is missing: the reference environment is required"
    ours = subprocess.run([exe, "--dump", *cmds], capture_output=True, text=True, env=env, check=True).stdout
    ref = subprocess.run([REF_PY, os.path.abspath(__file__), "--ref", *cmds], capture_output=True, text=True,
                         env=env, check=True).stdout
    ours = [json.loads(l) for l in ours.splitlines()]
    ref = [json.loads(l) for l in ref.splitlines()]
    assert len(ours) == len(ref) == len(cmds)
    bad = [(c, str(a)[:200], str(b)[:200]) for c, a, b in zip(cmds, ours, ref) if a != b]
    assert not bad, "\n".join(f"{c}:\n  ours {a}\n  ref  {b}" for c, a, b in bad)


SIZES = [1, 7, 15, 16, 17, 31, 33, 1000]
FLOATS = ["float32", "float64", "bfloat16", "float16"]


def _rand_randn_cmds():
    cmds = ["seed 0"]
    for dt in FLOATS:
        for n in SIZES:
            cmds += [f"op rand {dt} {n}", f"op randn {dt} {n}"]
    cmds += ["state"]
    return cmds


def _fill_cmds():
    cmds = ["seed 1234"]
    for dt in FLOATS:
        cmds += [f"fill uniform {dt} 1000 - -2.5 3.75", f"fill uniform {dt} 33 - 0.1 0.7",
                 f"fill normal {dt} 1000 - 0.3 1.7", f"fill normal {dt} 17 - -1 0.5",
                 f"fill normal {dt} 4,9 1,0 0 1",          # non-contiguous: scalar Box-Muller path
                 f"fill uniform {dt} 3,4,5 2,0,1 0 1",     # permuted: memory-order draws
                 f"fill normal {dt} 6,20 step2 0 1",       # strided: scalar path with cache
                 f"fill exponential {dt} 1000 - 1.5", f"fill cauchy {dt} 33 - 0.5 2",
                 f"fill log_normal {dt} 33 - 1 2", f"fill bernoulli {dt} 33 - 0.3"]
    cmds += ["fill geometric int64 100 - 0.3", "fill geometric float32 33 - 0.05", "state"]
    return cmds


def _integer_cmds():
    cmds = ["seed 7"]
    for dt in ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64", "float16", "bfloat16"]:
        cmds += [f"fill random {dt} 33 -"]
    cmds += ["fill random_to int64 33 - 10", "fill random_from int64 33 - -5 7",
             "fill random_from int64 1000 - -9223372036854775808 none",
             "fill random_from int64 33 - -1000000000000 1000000000000",
             "fill random_from int32 33 - -300000000 300000000", "fill random_to uint8 33 - 200",
             "fill random_from uint64 7 - 0 9000000000", "fill random_from float32 33 - -9223372036854775808 none",
             "fill random_from float64 33 - -9223372036854775808 none",
             "op randint -5 9 int64 33", "op randint -100 100 int32 3,11", "op randint 0 10 float32 3,3",
             "op randint 5 3 int64 2", "state"]
    return cmds


def _discrete_cmds():
    probs = ",".join(str((i * 7 % 13) / 13) for i in range(3 * 50))
    cmds = ["seed 11"]
    for dt in FLOATS:
        cmds += [f"multinomial {dt} 3 50 20 1 {probs}", f"multinomial {dt} 3 50 10 0 {probs}",
                 f"multinomial {dt} 3 50 1 1 {probs}", f"multinomial {dt} 1 5 3 0 0.1,0.2,0.3,0.15,0.25"]
        cmds += [f"bernoulli_t float32 1000 {dt}", f"bernoulli_t bool 33 {dt}"]
    cmds += ["multinomial float32 1 3 2 1 0.5,-1,0.2", "multinomial float32 1 3 2 1 0,0,0"]
    for n, dt in [(1, "int64"), (7, "int64"), (33, "int32"), (1000, "int64"), (100, "float32"), (100, "float16"),
                  (100000, "int64")]:
        cmds += [f"randperm {n} {dt}", f"op randperm {n} {dt}"]
    cmds += ["state"]
    return cmds


def test_rand_randn_all_sizes():
    _run(_rand_randn_cmds())


def test_randn_large():
    # 6,250 AVX2 Box-Muller blocks per call (the vector block of session 47) and a tail; the
    # contiguous uniform run between twists (session 47) and a transposed one; randint's
    # blocks with Lemire's remainder (a range of 1; the last 32-bit range; the first 64-bit one)
    _run(["seed 3", "op randn float32 100003", "op randn bfloat16 20001", "fill normal float32 65537 - -2 3",
          "op rand float32 100003", "fill uniform float32 65537 - -2 3", "fill uniform float32 40,30 1,0 0 1",
          "op randint -5 1000 int64 100003", "op randint 5 6 int64 700", "op randint 0 268435455 int64 2000",
          "op randint -7 268435456 int64 2000", "state"])


def test_fills_contiguous_and_strided():
    _run(_fill_cmds())


def test_fills_default_capability():
    # upstream's DEFAULT kernel build: no FMA contraction, glibc Box-Muller for float
    _run(_fill_cmds(), capability="default")


def test_integers_and_ranges():
    _run(_integer_cmds())


def test_discrete():
    _run(_discrete_cmds())


def test_state_bytes_and_set_state():
    cmds = ["seed 99", "fill normal float64 3 - 0 1", "state"]  # odd count: cached normal in the state
    _run(cmds)
    # a state produced by upstream loads here and continues identically
    ref = subprocess.run([REF_PY, "-c", "import torch; torch.manual_seed(5); torch.randn(3, dtype=torch.float64);"
                          "torch.rand(700); print(bytes(torch.get_rng_state().tolist()).hex())"],
                         capture_output=True, text=True, check=True).stdout.strip()
    _run([f"setstate {ref}", "fill normal float64 5 - 0 1", "fill uniform float32 33 - 0 1", "state"])


def test_c_unit_tests():
    exe = _binary()
    assert os.path.exists(exe), f"{exe} is missing"
    subprocess.run([exe], check=True)


# ---------------------------------------------------------------------------------------
# Reference side: run with .venv-ref/bin/python tests/test_random_c.py --ref CMD...

torch = None


def _ref_tables():
    global DT, BITS, MASK
    DT = {
        "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
        "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "int16": torch.int16,
        "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool, "uint16": torch.uint16,
        "uint32": torch.uint32, "uint64": torch.uint64,
    }
    # how each dtype's elements are printed: float bit patterns as unsigned, integers as values
    BITS = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
            torch.bfloat16: torch.int16}
    MASK = {torch.float32: 0xFFFFFFFF, torch.float16: 0xFFFF, torch.bfloat16: 0xFFFF}


def as_ints(t):
    t = t.contiguous()
    if t.dtype in BITS:
        vals = t.view(BITS[t.dtype]).flatten().tolist()
        m = MASK.get(t.dtype)
        return [v & m for v in vals] if m else vals
    if t.dtype == torch.bool:
        return [int(v) for v in t.flatten().tolist()]
    if t.dtype in (torch.uint16, torch.uint32, torch.uint64):
        return [int(v) for v in t.to(torch.int64).flatten().tolist()] if t.dtype != torch.uint64 else \
            [int(v) for v in t.view(torch.int64).flatten().tolist()]
    return t.flatten().tolist()


def ints(s):
    return [] if s == "scalar" else [int(x) for x in s.split(",")]


def run_fill(f):
    op, dt, shape, view = f[1], DT[f[2]], ints(f[3]), f[4]
    args = f[5:]
    if view == "step2":
        base = torch.zeros(shape[:-1] + [shape[-1] * 2], dtype=dt)
        t = base[..., ::2]
    elif view != "-":
        perm = ints(view)
        t = torch.zeros(shape, dtype=dt).permute(perm)
    else:
        t = torch.zeros(shape, dtype=dt)
    a = float(args[0]) if args else None
    b = float(args[1]) if len(args) > 1 and args[1] != "none" else None
    if op == "uniform":
        t.uniform_(a, b)
    elif op == "normal":
        t.normal_(a, b)
    elif op == "random":
        t.random_()
    elif op == "random_to":
        t.random_(int(args[0]))
    elif op == "random_from":
        t.random_(int(args[0]), None if args[1] == "none" else int(args[1]))
    elif op == "bernoulli":
        t.bernoulli_(a)
    elif op == "exponential":
        t.exponential_(a)
    elif op == "geometric":
        t.geometric_(a)
    elif op == "log_normal":
        t.log_normal_(a, b)
    elif op == "cauchy":
        t.cauchy_(a, b)
    else:
        raise SystemExit("unknown op " + op)
    return as_ints(t)


def _ref_run(cmds):
    for line in cmds:
        f = line.split()
        try:
            if f[0] == "seed":
                torch.manual_seed(int(f[1]))
                out = None
            elif f[0] == "isa":
                out = None  # the reference process is pinned through ATEN_CPU_CAPABILITY
            elif f[0] == "state":
                out = torch.get_rng_state().tolist()
            elif f[0] == "setstate":
                torch.set_rng_state(torch.tensor(list(bytes.fromhex(f[1])), dtype=torch.uint8))
                out = None
            elif f[0] == "fill":
                out = run_fill(f)
            elif f[0] == "bernoulli_t":
                dt, shape, pdt = DT[f[1]], ints(f[2]), DT[f[3]]
                n = 1
                for s in shape:
                    n *= s
                p = (torch.arange(n, dtype=torch.float64) % 11 / 10.0).to(pdt).reshape(shape)
                out = as_ints(torch.empty(shape, dtype=dt).bernoulli_(p))
            elif f[0] == "multinomial":
                dt, rows, cols, n, repl = DT[f[1]], int(f[2]), int(f[3]), int(f[4]), f[5] != "0"
                p = torch.tensor([float(x) for x in f[6].split(",")], dtype=torch.float64).to(dt)
                p = p.reshape(rows, cols)
                out = as_ints(torch.multinomial(p, n, repl).reshape(rows, n))
            elif f[0] == "op":
                if f[1] in ("rand", "randn"):
                    fn = torch.rand if f[1] == "rand" else torch.randn
                    out = as_ints(fn(ints(f[3]), dtype=DT[f[2]]))
                elif f[1] == "randint":
                    out = as_ints(torch.randint(int(f[2]), int(f[3]), ints(f[5]), dtype=DT[f[4]]))
                else:
                    out = as_ints(torch.randperm(int(f[2]), dtype=DT[f[3]]))
            elif f[0] == "randperm":
                out = as_ints(torch.randperm(int(f[1]), dtype=DT[f[2]]))
            else:
                raise SystemExit("unknown command " + f[0])
        except RuntimeError as e:
            out = {"error": str(e).splitlines()[0]}
        print(json.dumps(out))




if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--ref":
    import torch  # noqa: F811  (the reference environment's genuine torch)
    _ref_tables()
    _ref_run(sys.argv[2:])

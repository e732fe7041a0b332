"""Print how torch._C's surface is provided: per name real / inert / refuse / provisional /
c (the C extension), with counts, plus which operators have kernels when C can say.

    python -m torchnative.surface_report            # counts per status and module
    python -m torchnative.surface_report --list     # every name with status and reason
    python -m torchnative.surface_report --status refuse
    python -m torchnative.surface_report --ops      # every operator with a kernel, and the
                                                    # input dtypes compared with upstream
"""

import argparse
import collections
import sys


def collect():
    """Import torch (which runs the bootstrap) and return the registry."""
    import torch  # noqa: F401
    from torchnative._surface import REGISTRY
    return dict(REGISTRY)


def op_kernels():
    """(operators with a kernel of their own, operators in the schema table), from C's
    _tn_kernel_ops() (in-place/out= variants derived by the door are not counted)."""
    import torch
    fn = getattr(torch._C, "_tn_kernel_ops", None)
    if fn is None:
        return None
    from torchnative._surface import schema
    schema._ensure_loaded()
    total = sum(len(r) for r in schema.OPS.values())
    return len(fn()), total


def op_dtypes():
    """{operator: set of input dtypes} from the comparison cases in tests/optest (the
    dtypes each kernel is verified for against upstream), or None outside a checkout."""
    import os
    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests")
    if not os.path.exists(os.path.join(tests, "optest", "cases.py")):
        return None
    sys.path.insert(0, tests)
    try:
        from optest import cases
    finally:
        sys.path.remove(tests)
    seen = collections.defaultdict(set)
    for case in cases.CASES:
        dts = {i.dtype for i in case.inputs} or {"(factory)"}
        for op in case.covers:
            seen[op] |= dts
    return seen


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m torchnative.surface_report")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--status")
    ap.add_argument("--ops", action="store_true")
    a = ap.parse_args(argv)
    reg = collect()
    counts = collections.Counter(s for s, _ in reg.values())
    print(f"torch._C surface: {len(reg)} names")
    for st in ("c", "real", "inert", "provisional", "refuse"):
        print(f"  {st:12s} {counts.get(st, 0)}")
    per_mod = collections.defaultdict(collections.Counter)
    for k, (s, _) in reg.items():
        per_mod[k.rpartition(".")[0]][s] += 1
    print("by module:")
    for m in sorted(per_mod):
        c = per_mod[m]
        print(f"  {m:45s} " + " ".join(f"{s}={c[s]}" for s in sorted(c)))
    ok = op_kernels()
    print("operators with kernels: " + ("C does not report it (_tn_kernel_ops)" if ok is None
                                        else f"{ok[0]} of {ok[1]} schemas"))
    if a.ops:
        import torch
        seen = op_dtypes() or {}
        for op in sorted(torch._C._tn_kernel_ops()):
            print(f"{op:50s} {' '.join(sorted(seen.get(op, ()))) or '-'}")
    if a.list or a.status:
        for k in sorted(reg):
            s, why = reg[k]
            if a.status and s != a.status:
                continue
            print(f"{s:12s} {k}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""vzeroupper_scan.py — finds calls from AVX / AVX-512 code into legacy-SSE code with the
upper halves of the vector registers still dirty, in a built x86-64 object.

    .venv/bin/python tools/vzeroupper_scan.py build/_C.abi3.so

Legacy (non-VEX) SSE instructions executed while the upper halves are dirty each pay a
merge with the upper state on Intel cores: a function of them runs several times slower.
GCC inserts vzeroupper before calls out of AVX code, but not before a call (or tail call)
to a function local to the translation unit (GCC 12: seen in session 46, where argext.c's
row kernel jumped into its scalar helper with the state dirty, 148 ns a row of 100 floats
against 13.5 with a vzeroupper). The scan disassembles with objdump, builds each
function's control flow from its jumps, propagates "dirty" (a ymm / zmm register written,
cleared by vzeroupper / vzeroall; clean at entry) along it, and reports each call or jump
to another function containing legacy-SSE instructions reached dirty. Prints one line per
finding (caller, call or jmp, callee); exit status 1 when there are any."""
import re
import subprocess
import sys


def parse(path):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        m = re.match(r"^\s*([0-9a-f]+):\t(.*)$", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2)))
    return funcs


def legacy_sse(ins):
    return "%xmm" in ins and not ins.lstrip().startswith("v")


def dirty_entry_states(ins):
    """For each instruction, whether the upper state may be dirty on entry to it."""
    index = {a: k for k, (a, _) in enumerate(ins)}
    n = len(ins)
    succ = [[] for _ in range(n)]
    for k, (_, i) in enumerate(ins):
        words = i.split()
        op = words[0] if words else ""
        m = re.search(r"\b(j[a-z]+)\s+([0-9a-f]+) <", i)
        if m:
            t = int(m.group(2), 16)
            if t in index:
                succ[k].append(index[t])
            if m.group(1) != "jmp" and k + 1 < n:
                succ[k].append(k + 1)
        elif op.startswith("ret") or op in ("ud2", "jmp"):
            pass
        elif k + 1 < n:
            succ[k].append(k + 1)
    dirty = [False] * n
    work = [k for k in range(n) if re.search(r"%[yz]mm", ins[k][1])]
    while work:
        k = work.pop()
        i = ins[k][1]
        if "vzeroupper" in i or "vzeroall" in i:
            continue
        if not (dirty[k] or re.search(r"%[yz]mm", i)):
            continue
        for t in succ[k]:
            if not dirty[t]:
                dirty[t] = True
                work.append(t)
    return dirty


def scan(path):
    funcs = parse(path)
    has_legacy = {name: any(legacy_sse(i) for _, i in ins) for name, ins in funcs.items()}
    hits = set()
    for name, ins in funcs.items():
        if not any(re.search(r"%[yz]mm", i) for _, i in ins):
            continue
        dirty = dirty_entry_states(ins)
        for k, (_, i) in enumerate(ins):
            m = re.search(r"\b(call|jmp)\s+[0-9a-f]+ <([^+>@]+)>", i)
            if m and m.group(2) != name and has_legacy.get(m.group(2)) and dirty[k]:
                hits.add((name, m.group(1), m.group(2)))
    return sorted(hits)


if __name__ == "__main__":
    found = scan(sys.argv[1])
    for h in found:
        print(*h)
    sys.exit(1 if found else 0)

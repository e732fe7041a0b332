"""The file fuzzer (issue 21 item 3): truncated, bit-flipped, overwritten and structurally
adversarial torch.load archives (zip and legacy; weights_only, full and mmap loads),
safetensors files and GGUF files, each loaded on both sides (the operator fuzzer's
workers: ours in .venv or .venv-asan, upstream in .venv-ref) and compared: same exception
class, or the same loaded values. A crash or hang of our side is the worst finding.

    .venv/bin/python tests/fuzz/filefuzz.py --cases 5000           # a full run
    scripts/asan.sh tests/fuzz/filefuzz.py --cases 2000            # ours under ASan+UBSan
    .venv/bin/python tests/fuzz/filefuzz.py --replay IDX           # one case

Cases are a pure function of (seed, index); the mutated file of a case is rebuilt from
the seed files (written once per run by upstream torch) and the case's random stream."""
import argparse
import json
import os
import random
import struct
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fileload  # noqa: E402
import opfuzz  # noqa: E402


def _safetensors_header(data):
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def _safetensors_pack(header, body):
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + body


def adversarial_safetensors(data, r):
    """A well-formed file whose header lies: offsets past the end, overlapping or reversed,
    shapes that disagree with the bytes, huge shapes, unknown dtypes, a huge header length."""
    header, body = _safetensors_header(data)
    keys = [k for k in header if k != "__metadata__"]
    k = r.choice(keys)
    e = header[k]
    how = r.randrange(9)
    if how == 0:
        e["data_offsets"] = [e["data_offsets"][0], len(body) + r.choice([1, 8, 4096, 2**40])]
    elif how == 1:
        e["data_offsets"] = [e["data_offsets"][1], e["data_offsets"][0]]
    elif how == 2:
        e["shape"] = [2**31, 2**31]
    elif how == 3:
        e["shape"] = [d + 1 for d in e["shape"]] or [3]
    elif how == 4:
        e["dtype"] = r.choice(["F99", "", "BOOL", "F64", "I8", "U64", "F8_E4M3"])
    elif how == 5:
        e["data_offsets"] = [-8, 16]
    elif how == 6:
        other = header[r.choice(keys)]
        e["data_offsets"] = list(other["data_offsets"])
    elif how == 7:
        return struct.pack("<Q", r.choice([2**63, 2**40, len(data) + 1, 0, 1])) + data[8:]
    else:
        e["shape"] = [-1] + e["shape"]
    return _safetensors_pack(header, body)


def adversarial_gguf(data, r):
    """GGUF fields overwritten with huge or inconsistent values: tensor and KV counts,
    string lengths, tensor dims and offsets (located by the gguf-py parser's layout:
    magic, version, n_tensors, n_kv, then KV pairs)."""
    b = bytearray(data)
    how = r.randrange(4)
    if how == 0:  # n_tensors
        b[8:16] = struct.pack("<Q", r.choice([2**62, 2**31, 1000, 0]))
    elif how == 1:  # n_kv
        b[16:24] = struct.pack("<Q", r.choice([2**62, 2**31, 1000]))
    elif how == 2:  # the first KV key's string length
        b[24:32] = struct.pack("<Q", r.choice([2**62, len(data), 2**31]))
    else:  # a tensor's dims or offset: find the tensor name "a" and poke what follows it
        i = data.rfind(b"\x01\x00\x00\x00\x00\x00\x00\x00a")
        if i > 0:
            j = i + 9 + 4 + 8 * r.randrange(0, 4)
            b[j:j + 8] = struct.pack("<Q", r.choice([2**62, 2**32, 1 << 20, len(data)]))
    return bytes(b)


def adversarial_zip(data, r):
    """Zip records with a lying local header / central directory entry (sizes, offsets),
    found by signature, so the reader is asked to read outside the file."""
    b = bytearray(data)
    sigs = [i for i in range(len(b) - 4) if b[i:i + 4] in (b"PK\x03\x04", b"PK\x01\x02", b"PK\x06\x06", b"PK\x05\x06")]
    if not sigs:
        return data
    i = r.choice(sigs)
    off = i + r.choice([18, 22, 24, 26, 28, 42, 20, 32, 40, 48])
    if off + 8 <= len(b):
        b[off:off + 4] = struct.pack("<I", r.choice([0xFFFFFFFF, 0x7FFFFFFF, len(b), 0, 1 << 20]))
    return bytes(b)


def mutate(data, name, r):
    how = r.choices(["truncate", "bitflip", "overwrite", "adversarial", "none"], [25, 30, 15, 28, 2])[0]
    if how == "truncate":
        cut = r.choice([0, 1, 8, r.randrange(len(data)), len(data) - r.randint(1, 64)])
        return data[:max(cut, 0)], how
    if how == "bitflip":
        b = bytearray(data)
        for _ in range(r.choice([1, 1, 2, 4, 8, 32])):
            p = r.randrange(len(b))
            b[p] ^= 1 << r.randrange(8)
        return bytes(b), how
    if how == "overwrite":
        b = bytearray(data)
        p = r.randrange(len(b))
        n = r.choice([1, 4, 8, 64])
        fill = r.choice([b"\x00", b"\xff", bytes([r.randrange(256)])])
        b[p:p + n] = fill * len(b[p:p + n])
        return bytes(b), how
    if how == "adversarial":
        if name.endswith(".safetensors"):
            return adversarial_safetensors(data, r), how
        if name.endswith(".gguf"):
            return adversarial_gguf(data, r), how
        if name.endswith(".pt") and data[:2] == b"PK":
            return adversarial_zip(data, r), how
        return data[: len(data) // 2], "truncate"
    return data, how


def make_case(seeds, seed, idx, workdir):
    """Writes the case's file into workdir; returns the case dict."""
    r = random.Random(zlib.crc32(f"file|{seed}|{idx}".encode()))
    name = r.choice(sorted(seeds))
    data, how = mutate(seeds[name], name, r)
    ext = os.path.splitext(name)[1]
    loader = r.choice(fileload.LOADERS[ext])
    path = os.path.join(workdir, f"case{idx}{ext}")
    with open(path, "wb") as f:
        f.write(data)
    return {"idx": idx, "seed": idx, "op": f"{loader}:{name}:{how}", "loader": loader, "path": path}


def make_seeds(d, w):
    """Seed files written into d by the upstream worker w; returns {name: bytes}."""
    res = opfuzz.run_batch(w, [{"idx": -1, "make_seeds": d}], 300)
    if res[-1][0] != "ok":
        raise RuntimeError(f"seed files: {res[-1]}")
    out = {}
    for n in fileload.SEEDS:
        with open(os.path.join(d, n), "rb") as f:
            out[n] = f.read()
    return out


def _ref_env():
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS",
                                                           "UBSAN_OPTIONS", "PYTHONMALLOC", "TN_SANITIZER")}


def fuzz(state_dir, seed=0, cases=1000, batch=25, timeout=60.0, ours_python=opfuzz.OURS_PYTHON, progress=True,
         workers=None):
    """Runs `cases` file cases; returns a summary dict and appends findings to
    state_dir/findings.jsonl. workers: an (ours, ref) pair of started Workers to use."""
    os.makedirs(state_dir, exist_ok=True)
    work = tempfile.mkdtemp(dir=state_dir)
    if workers:
        ours, ref = workers
    else:  # no meta-operator warm-up: loading files never builds meta tensors
        ours = opfuzz.Worker(ours_python, "ours", state_dir, dict(os.environ, TN_FUZZ_WARM="0"))
        ref = opfuzz.Worker(opfuzz.REF_PYTHON, "ref", state_dir, dict(_ref_env(), TN_FUZZ_WARM="0"))
        ours.start()
        ref.start()
    seeds = make_seeds(state_dir, ref)
    counts, agree = {}, {"value": 0, "exception": 0}
    t0 = time.monotonic()
    findings = open(os.path.join(state_dir, "findings.jsonl"), "a")
    known = opfuzz.load_known()
    try:
        for lo in range(0, cases, batch):
            cs = [make_case(seeds, seed, i, work) for i in range(lo, min(cases, lo + batch))]
            rres, ores = opfuzz.run_both(ours, ref, cs, timeout)
            for c in cs:
                r, g = rres[c["idx"]], ores[c["idx"]]
                res = opfuzz.classify(r, g)
                os.unlink(c["path"])
                if res is None:
                    agree["exception" if g[0] == "err" else "value"] += 1
                    continue
                cat, detail = res
                k = None if cat in opfuzz.FATAL else opfuzz.allowed(known, "file:" + c["op"], cat, detail)
                tag = "known" if k else "new"
                counts[f"{cat}:{tag}"] = counts.get(f"{cat}:{tag}", 0) + 1
                rec = {"idx": c["idx"], "op": c["op"], "category": cat, "status": tag, "detail": detail[:400]}
                if g[0] == "crash":
                    rec["stderr"] = g[2][-1500:]
                findings.write(json.dumps(rec) + "\n")
                if progress and tag == "new":
                    print(f"  [{cat}] #{c['idx']} {c['op']}: {detail[:160]}", flush=True)
            findings.flush()
    finally:
        findings.close()
        if not workers:
            ours.kill()
            ref.kill()
    el = time.monotonic() - t0
    return {"cases": cases, "seconds": round(el, 1), "rate": round(cases / el, 1), "agree": agree, "counts": counts,
            "restarts": {"ours": ours.restarts, "ref": ref.restarts}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", default=os.path.join(opfuzz.ROOT, "build", "fuzz", "files"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--ours", default=None, help="our interpreter (default: this one if it runs our torch)")
    a = ap.parse_args()
    ours = a.ours or (sys.executable if os.environ.get("TN_SANITIZER") else opfuzz.OURS_PYTHON)
    print(json.dumps(fuzz(a.state, a.seed, a.cases, ours_python=ours), indent=1))


if __name__ == "__main__":
    main()

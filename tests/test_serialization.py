"""torch.save / torch.load / safetensors / pickle on torchnative against upstream torch 2.13.0.

Run with the project environment:  .venv/bin/python -m pytest tests/test_serialization.py
Two upstream (.venv-ref) processes do all the upstream work: one writes checkpoints,
safetensors files and pickles before the tests run; one reads back everything torchnative
wrote and reports what it found. Tensors are compared by layout (dtype, shape, stride,
storage offset), by the exact bytes of their whole storage, and by which of them share a
storage, so "identical" means bit-identical.
"""

import collections
import ctypes
import fractions
import io
import json
import os
import pickle
import struct
import subprocess
import zipfile
import zlib

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF = os.path.join(ROOT, ".venv-ref", "bin", "python")

# Runs in both environments: the tensors written by each side.
BUILD = r'''
import collections, ctypes, torch

def build():
    o = {}
    base = torch.arange(1200, dtype=torch.float32) * 0.37 - 100.0
    o["f32"] = base
    o["f32_view"] = base[7:40]
    o["f32_t"] = base[:1000].reshape(40, 25).t()
    o["f32_step"] = base[3:100:3]
    o["f64"] = torch.arange(33, dtype=torch.float64) / 7.0
    o["f16"] = (torch.arange(31, dtype=torch.float32) / 3.0).to(torch.float16)
    o["bf16"] = (torch.arange(1001, dtype=torch.float32) * 0.0123 - 5.0).to(torch.bfloat16)
    o["bf16_nc"] = o["bf16"][:1000].reshape(10, 100)[:, ::7]
    o["i8"] = (torch.arange(7) - 3).to(torch.int8)
    o["u8"] = torch.arange(255).to(torch.uint8)
    o["i16"] = (torch.arange(31) * 1000 - 15000).to(torch.int16)
    o["i32"] = (torch.arange(33) * 100000 - 1600000).to(torch.int32)
    o["i64"] = torch.arange(33) * (2 ** 40) - 2 ** 44
    o["bool"] = torch.arange(33) % 3 == 0
    o["scalar"] = torch.tensor(3.5)
    o["empty"] = torch.zeros(0, 4)
    o["expanded"] = torch.arange(3.0).expand(4, 3)
    o["perm"] = torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
    return o

def build_module():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(7, 33), torch.nn.BatchNorm1d(33), torch.nn.Linear(33, 1))

def describe(t):
    st = t.untyped_storage()
    n = st.nbytes()
    data = ctypes.string_at(st.data_ptr(), n) if n else b""
    return {"dtype": str(t.dtype), "shape": list(t.shape), "stride": list(t.stride()),
            "offset": t.storage_offset(), "storage": data.hex(), "requires_grad": t.requires_grad}

def contiguous_bytes(t):
    """The bytes of a contiguous tensor's elements (its storage may be larger)."""
    assert t.is_contiguous()
    n, isz = t.numel(), t.element_size()
    st = t.untyped_storage()
    return ctypes.string_at(st.data_ptr() + t.storage_offset() * isz, n * isz).hex() if n else ""

def describe_all(objs):
    out = {k: describe(v) for k, v in objs.items()}
    groups = collections.defaultdict(list)
    for k, v in objs.items():
        if v.untyped_storage().nbytes():
            groups[v.untyped_storage().data_ptr()].append(k)
    return {"tensors": out, "shared": sorted(sorted(g) for g in groups.values() if len(g) > 1)}

def plain_objects():
    return {"dtypes": [torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.complex64],
            "devices": [torch.device("cpu"), torch.device("cpu", 0)],
            "size": torch.Size([2, 3, 5]), "layout": torch.strided,
            "nested": collections.OrderedDict(a=[1, 2.5, "x"], b=(None, True))}
'''

exec(BUILD)  # noqa: S102  (defines build, build_module, describe, describe_all, plain_objects)


def _ref(code, timeout=300):
    if not os.path.exists(REF):
        pytest.skip("reference environment .venv-ref not present")
    out = subprocess.run([REF, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---- upstream writes ----------------------------------------------------------------------

REF_WRITE = BUILD + r'''
import io, json, os, pickle, sys, zipfile
import safetensors.torch as st
d = sys.argv[1] if len(sys.argv) > 1 else DIR
objs = build()
extra = {"c64": torch.arange(12, dtype=torch.float32).view(torch.complex64),
         "c128": torch.arange(12, dtype=torch.float64).view(torch.complex128)[1:],
         "u16": torch.arange(40000, 40033).to(torch.uint16),
         "f8": torch.arange(16, dtype=torch.uint8).view(torch.float8_e4m3fn),
         "param": torch.nn.Parameter(torch.arange(5.0))}
allobjs = dict(objs, **extra)
torch.save(allobjs, os.path.join(d, "up.pt"))
m = build_module()
with torch.no_grad():
    m[1].running_mean.copy_(torch.arange(33.0) / 3)
    m[1].num_batches_tracked.fill_(7)
sd = m.state_dict()
torch.save(sd, os.path.join(d, "up_sd.pt"))
torch.save(plain_objects(), os.path.join(d, "up_plain.pt"))
g = torch.Generator().manual_seed(1234); torch.randn(5, generator=g)
torch.save({"gen": g}, os.path.join(d, "up_gen.pt"))
safe = {k: objs[k].clone() for k in ["f32", "f64", "f16", "bf16", "i8", "u8", "i64", "bool", "scalar", "empty"]}
safe["bf16_nc"] = objs["bf16_nc"].contiguous()
st.save_file(safe, os.path.join(d, "up.safetensors"), metadata={"format": "pt"})
# the container on its own: records, alignment 128, a metadata-only record, min version 7
w = torch._C.PyTorchFileWriter(os.path.join(d, "container.bin"), True, 128)
w.write_record("data.pkl", b"\x80\x02}q\x00.", 6)
w.write_record("text", "hello", 5)
w.write_record_metadata("skipped", 300)
w.write_record("data/0", torch.arange(40, dtype=torch.int32).untyped_storage(), 160)
w.set_min_version(7)
w.write_end_of_file()
# zip64: a record past 4 GiB (sparse: the skipped data is a hole in the file)
os.makedirs(os.path.join(d, "z64"))
w = torch._C.PyTorchFileWriter(os.path.join(d, "z64", "big.bin"))
w.write_record_metadata("huge", 2**32 + 5)
w.write_record("after", b"abc", 3)
w.write_end_of_file()
r = torch._C.PyTorchFileReader(os.path.join(d, "up.pt"))
names = r.get_all_records()
reader = {"records": names, "sid": r.serialization_id(),
          "offsets": {n: r.get_record_offset(n) for n in names},
          "headers": {n: r.get_record_header_offset(n) for n in names},
          "sizes": {n: r.get_record_size(n) for n in names},
          "no_read": [r.get_record_offset_no_read(c, n, s, a) for c, n, s, a in
                      [(0, "a", 5, 64), (1000, "data/0", 5, 64), (0, "a", 2**32, 64), (2**32, "a", 5, 128)]]}
pick = {}
for proto in (2, 5):
    pick[str(proto)] = pickle.dumps(plain_objects(), protocol=proto).hex()
pick["gen"] = pickle.dumps(g).hex()
pick["gen_state"] = bytes(g.get_state().tolist()).hex()
pick["tensor"] = pickle.dumps({"a": objs["f32_t"], "b": objs["bf16"]}).hex()
json.dump({"objs": describe_all(allobjs), "sd": describe_all(sd), "reader": reader, "pickle": pick},
          open(os.path.join(d, "up.json"), "w"))
print(json.dumps("ok"))
'''


@pytest.fixture(scope="module")
def updir(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("upstream"))
    _ref(REF_WRITE.replace("DIR", repr(d)))
    with open(os.path.join(d, "up.json")) as f:
        return d, json.load(f)


def _assert_same(got, want):
    assert sorted(got["tensors"]) == sorted(want["tensors"])
    for k, w in want["tensors"].items():
        assert got["tensors"][k] == w, k
    assert got["shared"] == want["shared"]


# ---- upstream files read by torchnative --------------------------------------------------

def test_upstream_checkpoint_loads_weights_only_default(updir):
    d, up = updir
    loaded = torch.load(os.path.join(d, "up.pt"))
    _assert_same(describe_all(loaded), up["objs"])
    assert type(loaded["param"]) is torch.nn.Parameter


def test_upstream_checkpoint_loads_from_file_objects(updir):
    d, up = updir
    with open(os.path.join(d, "up.pt"), "rb") as f:
        _assert_same(describe_all(torch.load(f)), up["objs"])
    with open(os.path.join(d, "up.pt"), "rb") as f:
        buf = io.BytesIO(b"prefix" + f.read())
    buf.seek(6)
    _assert_same(describe_all(torch.load(buf, weights_only=False)), up["objs"])


def _mapped_ranges(path):
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


def test_upstream_checkpoint_mmap(updir):
    d, up = updir
    path = os.path.join(d, "up.pt")
    loaded = torch.load(path, mmap=True)
    got = describe_all(loaded)
    _assert_same(got, up["objs"])
    ranges = _mapped_ranges(path)
    assert ranges, "the checkpoint is not memory-mapped"
    for k, t in loaded.items():
        p = t.untyped_storage().data_ptr()
        if t.untyped_storage().nbytes():
            assert any(lo <= p < hi for lo, hi in ranges), f"{k} was copied, not mapped"
            assert p % 64 == 0, k


def test_upstream_state_dict_into_module(updir):
    d, up = updir
    sd = torch.load(os.path.join(d, "up_sd.pt"))
    assert isinstance(sd, collections.OrderedDict)
    _assert_same(describe_all(sd), up["sd"])
    m = build_module()
    res = m.load_state_dict(sd)
    assert not res.missing_keys and not res.unexpected_keys
    for k, v in m.state_dict().items():
        assert describe(v)["storage"] == up["sd"]["tensors"][k]["storage"], k


def test_roundtrip_on_torchnative(tmp_path):
    objs = build()
    want = describe_all(objs)
    path = str(tmp_path / "rt.pt")
    torch.save(objs, path)
    assert zipfile.ZipFile(path).testzip() is None
    _assert_same(describe_all(torch.load(path)), want)
    _assert_same(describe_all(torch.load(path, mmap=True)), want)
    buf = io.BytesIO()
    torch.save(objs, buf)
    buf.seek(0)
    _assert_same(describe_all(torch.load(buf)), want)


def test_upstream_plain_objects_weights_only(updir):
    d, _ = updir
    got = torch.load(os.path.join(d, "up_plain.pt"))
    assert got == plain_objects()
    assert type(got["size"]) is torch.Size and type(got["nested"]) is collections.OrderedDict


def test_upstream_generator_checkpoint(updir):
    d, up = updir
    g = torch.load(os.path.join(d, "up_gen.pt"), weights_only=False)["gen"]
    assert isinstance(g, torch.Generator)
    assert bytes(g.get_state().tolist()).hex() == up["pickle"]["gen_state"]


def test_weights_only_rejects_arbitrary_globals(tmp_path):
    path = str(tmp_path / "evil.pt")
    torch.save({"f": fractions.Fraction(1, 3)}, path)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        torch.load(path)
    assert torch.load(path, weights_only=False)["f"] == fractions.Fraction(1, 3)


def test_reader_matches_upstream_reader(updir):
    d, up = updir
    r = torch._C.PyTorchFileReader(os.path.join(d, "up.pt"))
    names = r.get_all_records()
    ref = up["reader"]
    assert names == ref["records"]
    assert r.serialization_id() == ref["sid"]
    assert {n: r.get_record_offset(n) for n in names} == ref["offsets"]
    assert {n: r.get_record_header_offset(n) for n in names} == ref["headers"]
    assert {n: r.get_record_size(n) for n in names} == ref["sizes"]
    assert [r.get_record_offset_no_read(c, n, s, a) for c, n, s, a in
            [(0, "a", 5, 64), (1000, "data/0", 5, 64), (0, "a", 2**32, 64), (2**32, "a", 5, 128)]] == ref["no_read"]
    assert r.has_record("data.pkl") and not r.has_record("nope")
    with pytest.raises(RuntimeError, match="failed locating file nope: file not found"):
        r.get_record("nope")
    t = r.get_storage_from_record("data/0", 1200, torch.float32)
    assert t.shape == (0,) and t.dtype == torch.float32
    assert describe(t)["storage"] == up["objs"]["tensors"]["f32"]["storage"]
    with pytest.raises(RuntimeError, match="record size"):
        r.get_storage_from_record("data/0", 1199, torch.float32)


def test_writer_bytes_match_upstream(updir, tmp_path):
    """Same records through torchnative's writer give upstream's bytes, except the first 20
    digits of the serialization id (upstream hashes names with libstdc++'s std::hash)."""
    d, _ = updir
    path = str(tmp_path / "container.bin")
    w = torch._C.PyTorchFileWriter(path, True, 128)
    w.write_record("data.pkl", b"\x80\x02}q\x00.", 6)
    w.write_record("text", "hello", 5)
    w.write_record_metadata("skipped", 300)
    w.write_record("data/0", torch.arange(40, dtype=torch.int32).untyped_storage(), 160)
    w.set_min_version(7)
    assert w.archive_name() == "container"
    w.write_end_of_file()
    assert w.get_all_written_records() == {"data.pkl", "text", "skipped", "data/0", ".data/version",
                                           "byteorder", ".data/serialization_id"}
    ours = open(path, "rb").read()
    theirs = open(os.path.join(d, "container.bin"), "rb").read()
    assert len(ours) == len(theirs)
    sid_ours = zipfile.ZipFile(path).read("container/.data/serialization_id")
    sid_theirs = zipfile.ZipFile(os.path.join(d, "container.bin")).read("container/.data/serialization_id")
    assert sid_ours[20:] == sid_theirs[20:] and sid_ours == w.serialization_id().encode()

    def mask(data, sid):   # the id and the crc32 of its record (data descriptor, directory)
        return data.replace(sid, b"#" * 40).replace(struct.pack("<I", zlib.crc32(sid)), b"####")
    assert mask(ours, sid_ours) == mask(theirs, sid_theirs)
    with pytest.raises(RuntimeError):
        w.write_record("late", b"x", 1)


def test_zip64_records_match_upstream(updir, tmp_path):
    """Records larger than 4 GiB and local headers past 4 GiB take zip64 fields; the data of
    the 4 GiB record is skipped (write_record_metadata), so both files are sparse."""
    d, _ = updir
    theirs_path = os.path.join(d, "z64", "big.bin")
    ours_path = str(tmp_path / "big.bin")
    w = torch._C.PyTorchFileWriter(ours_path)
    w.write_record_metadata("huge", 2**32 + 5)
    w.write_record("after", b"abc", 3)
    w.write_end_of_file()
    assert os.path.getsize(ours_path) == os.path.getsize(theirs_path)
    with open(ours_path, "rb") as a, open(theirs_path, "rb") as b:
        assert a.read(4096) == b.read(4096)
        a.seek(2**32)
        b.seek(2**32)
        tail_ours, tail_theirs = a.read(), b.read()
    sid_ours = w.serialization_id().encode()
    sid_theirs = torch._C.PyTorchFileReader(theirs_path).serialization_id().encode()

    def mask(data, sid):
        return data.replace(sid, b"#" * 40).replace(struct.pack("<I", zlib.crc32(sid)), b"####")
    assert mask(tail_ours, sid_ours) == mask(tail_theirs, sid_theirs)
    r = torch._C.PyTorchFileReader(theirs_path)
    assert r.get_record("after") == b"abc"
    assert r.get_record_size("huge") == 2**32 + 5
    hdr = r.get_record_header_offset("after")
    assert hdr > 2**32
    assert r.get_record_offset("after") == r.get_record_offset_no_read(hdr, "after", 3, 64)


def test_writer_refuses_duplicates_and_bad_paths(tmp_path):
    w = torch._C.PyTorchFileWriter(io.BytesIO())
    assert w.archive_name() == "archive"
    w.write_record("a", b"1", 1)
    with pytest.raises(RuntimeError, match="Tried to serialize file twice: a"):
        w.write_record("a", b"1", 1)
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        torch._C.PyTorchFileWriter(str(tmp_path / "no" / "x.pt"))
    with pytest.raises(RuntimeError, match="failed finding central directory"):
        torch._C.PyTorchFileReader(io.BytesIO(b"not a zip file at all, really"))


# ---- safetensors ----------------------------------------------------------------------------

SAFE_KEYS = ["f32", "f64", "f16", "bf16", "i8", "u8", "i64", "bool", "scalar", "empty"]


def test_upstream_safetensors_load(updir):
    import safetensors.torch as st
    d, up = updir
    path = os.path.join(d, "up.safetensors")
    got = st.load_file(path)
    assert sorted(got) == sorted(SAFE_KEYS + ["bf16_nc"])
    for k in SAFE_KEYS:
        w = up["objs"]["tensors"][k]
        g = describe(got[k])
        assert (g["dtype"], g["shape"]) == (w["dtype"], w["shape"]), k
        assert contiguous_bytes(got[k]) == w["storage"], k
    with st.safe_open(path, "pt") as f:
        assert f.metadata() == {"format": "pt"}
        bf = f.get_tensor("bf16_nc")
        assert bf.dtype == torch.bfloat16 and list(bf.shape) == [10, 15]
        sl = f.get_slice("f32")[10:20]
        assert contiguous_bytes(sl.contiguous()) == up["objs"]["tensors"]["f32"]["storage"][80:160]
    with open(path, "rb") as f:
        assert sorted(st.load(f.read())) == sorted(got)


def test_safetensors_bytes_match_upstream(updir, tmp_path):
    """Tensors loaded from upstream's file and saved again give upstream's exact bytes."""
    import safetensors.torch as st
    d, _ = updir
    with open(os.path.join(d, "up.safetensors"), "rb") as f:
        theirs = f.read()
    loaded = st.load_file(os.path.join(d, "up.safetensors"))
    path = str(tmp_path / "tn.safetensors")
    st.save_file(loaded, path, metadata={"format": "pt"})
    with open(path, "rb") as f:
        assert f.read() == theirs
    assert st.save(loaded, metadata={"format": "pt"}) == theirs


# ---- pickle ---------------------------------------------------------------------------------

def test_pickle_plain_objects_roundtrip():
    # memory formats pickle (by name) but upstream's torch.save cannot write them
    fmts = [torch.contiguous_format, torch.channels_last, torch.preserve_format]
    assert pickle.loads(pickle.dumps(fmts)) == fmts
    for proto in (2, 4, 5):
        objs = plain_objects()
        back = pickle.loads(pickle.dumps(objs, protocol=proto))
        assert back == objs
        assert all(type(a) is torch.dtype for a in back["dtypes"])
        assert type(back["size"]) is torch.Size
        assert back["devices"][1].index == 0


def test_pickle_from_upstream(updir):
    _, up = updir
    for proto in ("2", "5"):
        assert pickle.loads(bytes.fromhex(up["pickle"][proto])) == plain_objects()


def test_pickle_generator_from_upstream(updir):
    _, up = updir
    g = pickle.loads(bytes.fromhex(up["pickle"]["gen"]))
    assert bytes(g.get_state().tolist()).hex() == up["pickle"]["gen_state"]


def test_pickle_generator_roundtrip():
    g = torch.Generator().manual_seed(99)
    torch.rand(3, generator=g)
    g2 = pickle.loads(pickle.dumps(g))
    assert g2.initial_seed() == 99
    assert torch.equal(g2.get_state(), g.get_state())
    assert torch.equal(torch.rand(7, generator=g2), torch.rand(7, generator=g))


def test_pickle_tensor_roundtrip():
    objs = build()
    back = pickle.loads(pickle.dumps(objs))
    got, want = describe_all(back), describe_all(objs)
    # Plain pickle does not keep views sharing a storage, upstream included (each tensor
    # pickles its own TypedStorage: pickle.loads(pickle.dumps([t, t[1:]])) gives two
    # storages on upstream torch 2.13), so only per-tensor facts are compared.
    got.pop("shared", None)
    want.pop("shared", None)
    assert got == want


def test_pickle_tensor_from_upstream(updir):
    _, up = updir
    got = pickle.loads(bytes.fromhex(up["pickle"]["tensor"]))
    assert describe(got["a"]) == up["objs"]["tensors"]["f32_t"]
    assert describe(got["b"]) == up["objs"]["tensors"]["bf16"]


# ---- torchnative files read by upstream ----------------------------------------------------

REF_READ = BUILD + r'''
import io, json, os, pickle, sys, zipfile
import safetensors.torch as st
d = DIR
want = json.load(open(os.path.join(d, "tn.json")))
res = {}
def check(name, fn):
    try:
        res[name] = fn()
    except Exception as e:
        res[name] = {"error": f"{type(e).__name__}: {e}"}
def aligned(path):
    r = torch._C.PyTorchFileReader(path)
    a = int(r.get_record(".storage_alignment")) if r.has_record(".storage_alignment") else 64
    return a >= 64 and all(r.get_record_offset(n) % a == 0 for n in r.get_all_records())
for f in want["files"]:
    p = os.path.join(d, f)
    check(f, lambda: describe_all(torch.load(p)))
    check(f + ":mmap", lambda: describe_all(torch.load(p, mmap=True)))
    check(f + ":aligned", lambda: aligned(p))
check("tn_sd.pt:module", lambda: [build_module().load_state_dict(torch.load(os.path.join(d, "tn_sd.pt"))) and None,
                                  describe_all(dict(torch.load(os.path.join(d, "tn_sd.pt"))))][1])
check("tn_plain.pt", lambda: torch.load(os.path.join(d, "tn_plain.pt")) == plain_objects())
check("tn.safetensors", lambda: {k: [str(v.dtype), list(v.shape), contiguous_bytes(v)]
                                  for k, v in st.load_file(os.path.join(d, "tn.safetensors")).items()})
check("pickle", lambda: all(pickle.loads(bytes.fromhex(h)) == plain_objects() for h in want["pickle"]))
if "gen" in want:
    check("pickle_gen", lambda: bytes(pickle.loads(bytes.fromhex(want["gen"])).get_state().tolist()).hex())
if "tensor_pickle" in want:
    check("tensor_pickle", lambda: describe_all(pickle.loads(bytes.fromhex(want["tensor_pickle"]))))
print(json.dumps(res))
'''


@pytest.fixture(scope="module")
def tn_written(updir, tmp_path_factory):
    """Everything torchnative writes, then one upstream process reading it all back.
    Returns (what torchnative meant to write, what upstream read, errors on our side)."""
    d = str(tmp_path_factory.mktemp("torchnative"))
    expect, errors, files = {}, {}, []

    def attempt(name, fn):
        try:
            fn()
        except Exception as e:  # recorded and asserted per test
            errors[name] = f"{type(e).__name__}: {e}"

    objs = build()

    def save_objs():
        torch.save(objs, os.path.join(d, "tn.pt"))
        expect["tn.pt"] = describe_all(objs)
        files.append("tn.pt")
    attempt("tn.pt", save_objs)

    def save_buffer():
        buf = io.BytesIO()
        torch.save(objs, buf)
        with open(os.path.join(d, "tn_buf.pt"), "wb") as f:
            f.write(buf.getvalue())
        expect["tn_buf.pt"] = describe_all(objs)
        files.append("tn_buf.pt")
    attempt("tn_buf.pt", save_buffer)

    def save_options():
        from torch.utils.serialization import config
        old = config.save.storage_alignment
        config.save.storage_alignment = 256
        torch.serialization.set_crc32_options(False)
        try:
            torch.save(objs, os.path.join(d, "tn_opts.pt"))
        finally:
            config.save.storage_alignment = old
            torch.serialization.set_crc32_options(True)
        expect["tn_opts.pt"] = describe_all(objs)
        files.append("tn_opts.pt")
    attempt("tn_opts.pt", save_options)

    def resave_upstream():
        loaded = torch.load(os.path.join(updir[0], "up.pt"))
        torch.save(loaded, os.path.join(d, "tn_resave.pt"))
        expect["tn_resave.pt"] = updir[1]["objs"]
        files.append("tn_resave.pt")
    attempt("tn_resave.pt", resave_upstream)

    def save_sd():
        m = build_module()
        with torch.no_grad():
            m[0].weight.copy_(torch.arange(231.0).reshape(33, 7) / 100)
            m[1].num_batches_tracked.fill_(3)
        sd = m.state_dict()
        torch.save(sd, os.path.join(d, "tn_sd.pt"))
        expect["tn_sd.pt"] = describe_all(dict(sd))
        files.append("tn_sd.pt")
    attempt("tn_sd.pt", save_sd)

    attempt("tn_plain.pt", lambda: torch.save(plain_objects(), os.path.join(d, "tn_plain.pt")))

    def save_safe():
        import safetensors.torch as st
        safe = {k: objs[k].clone() for k in SAFE_KEYS}
        st.save_file(safe, os.path.join(d, "tn.safetensors"))
        expect["tn.safetensors"] = {k: [str(v.dtype), list(v.shape), contiguous_bytes(v)]
                                    for k, v in safe.items()}
    attempt("tn.safetensors", save_safe)

    want = {"files": files, "pickle": [pickle.dumps(plain_objects(), protocol=p).hex() for p in (2, 5)]}
    def gen_pickle():
        g = torch.Generator().manual_seed(4321)
        torch.rand(4, generator=g)
        expect["gen"] = bytes(g.get_state().tolist()).hex()
        want["gen"] = pickle.dumps(g).hex()
    attempt("gen", gen_pickle)

    def tensor_pickle():
        want["tensor_pickle"] = pickle.dumps({"a": objs["f32_t"], "b": objs["bf16"]}).hex()
        expect["tensor_pickle"] = describe_all({"a": objs["f32_t"], "b": objs["bf16"]})
    attempt("tensor_pickle", tensor_pickle)

    with open(os.path.join(d, "tn.json"), "w") as f:
        json.dump(want, f)
    got = _ref(REF_READ.replace("DIR", repr(d)))
    return expect, got, errors


def _check_file(tn_written, name):
    expect, got, errors = tn_written
    assert name not in errors, errors[name]
    assert not isinstance(got[name], dict) or "error" not in got[name], got[name]
    _assert_same(got[name], expect[name])
    assert got[name + ":mmap"] == got[name]
    assert got[name + ":aligned"] is True


def test_torchnative_checkpoint_loads_on_upstream(tn_written):
    _check_file(tn_written, "tn.pt")


def test_torchnative_buffer_checkpoint_loads_on_upstream(tn_written):
    _check_file(tn_written, "tn_buf.pt")


def test_torchnative_checkpoint_with_options_loads_on_upstream(tn_written):
    """storage_alignment 256 and crc32 off."""
    _check_file(tn_written, "tn_opts.pt")


def test_upstream_checkpoint_roundtrips_through_torchnative(tn_written):
    _check_file(tn_written, "tn_resave.pt")


def test_torchnative_state_dict_loads_on_upstream(tn_written):
    _check_file(tn_written, "tn_sd.pt")
    expect, got, _ = tn_written
    assert got["tn_sd.pt:module"] == expect["tn_sd.pt"]


def test_torchnative_plain_objects_load_on_upstream(tn_written):
    expect, got, errors = tn_written
    assert "tn_plain.pt" not in errors, errors["tn_plain.pt"]
    assert got["tn_plain.pt"] is True
    assert got["pickle"] is True


def test_torchnative_generator_pickle_loads_on_upstream(tn_written):
    expect, got, errors = tn_written
    assert "gen" not in errors, errors["gen"]
    assert got["pickle_gen"] == expect["gen"]


def test_torchnative_safetensors_load_on_upstream(tn_written):
    expect, got, errors = tn_written
    assert "tn.safetensors" not in errors, errors["tn.safetensors"]
    assert got["tn.safetensors"] == expect["tn.safetensors"]


def test_torchnative_tensor_pickle_loads_on_upstream(tn_written):
    expect, got, errors = tn_written
    assert "tensor_pickle" not in errors, errors["tensor_pickle"]
    assert got["tensor_pickle"] == expect["tensor_pickle"]

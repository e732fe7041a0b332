"""k-quant fixtures for tests/test_quant_k.py and bench/quant.py: a small numpy quantiser for
GGUF's Q4_K and Q6_K blocks (gguf-py dequantises them but has no quantiser for them), and a
re-quantised copy of the bundled SmolLM2 GGUF with the k-quants where a row allows them.

    python tests/quant_k_model.py OUT.gguf          # writes the re-quantised model

The quantiser is a plain min/max one (not llama.cpp's importance-weighted search): enough
for valid blocks whose dequantisation is close to the input; the tests check its output
with gguf-py's dequantisation, never with itself.

SmolLM2-135M's hidden size (576) is not a multiple of 256, so only rows of 1536 elements
(ffn_down) can hold k-quant super-blocks; llama.cpp's own Q4_K_M falls back to other types
for the rest too. Here ffn_down gets Q4_K_M's choice (Q6_K in the layers llama.cpp's
use_more_bits picks, Q4_K elsewhere), dequantised from the bundled file's Q4_1 with gguf-py
and re-quantised; every other tensor keeps the bundled file's bytes.
"""
import os
import struct
import sys

import numpy as np

Q4_K, Q6_K = 12, 14


def _f16(a):
    return a.astype(np.float16)


def quantize_q4_k(x):
    """(n, k) float32, k % 256 == 0 -> (n, k/256 * 144) uint8 Q4_K blocks."""
    x = np.asarray(x, dtype=np.float32)
    n, k = x.shape
    nb = k // 256
    xb = x.reshape(n, nb, 8, 32)
    lo, hi = np.minimum(xb.min(-1), 0), np.maximum(xb.max(-1), 0)
    scale, mins = (hi - lo) / 15, -lo
    d, dmin = _f16(scale.max(-1) / 63), _f16(mins.max(-1) / 63)
    df, dmf = d.astype(np.float32)[..., None], dmin.astype(np.float32)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(df > 0, np.rint(scale / df), 0).clip(0, 63).astype(np.uint8)
        mn = np.where(dmf > 0, np.rint(mins / dmf), 0).clip(0, 63).astype(np.uint8)
        ds, dm = (df * sc)[..., None], (dmf * mn)[..., None]
        q = np.where(ds > 0, np.rint((xb + dm) / ds), 0).clip(0, 15).astype(np.uint8)
    packed = np.empty((n, nb, 12), np.uint8)
    packed[..., 0:4] = sc[..., :4] | ((sc[..., 4:] >> 4) << 6)
    packed[..., 4:8] = mn[..., :4] | ((mn[..., 4:] >> 4) << 6)
    packed[..., 8:12] = (sc[..., 4:] & 15) | ((mn[..., 4:] & 15) << 4)
    qs = (q[:, :, 0::2, :] | (q[:, :, 1::2, :] << 4)).reshape(n, nb, 128)
    out = np.concatenate([d.view(np.uint8).reshape(n, nb, 2), dmin.view(np.uint8).reshape(n, nb, 2), packed, qs], -1)
    return out.reshape(n, nb * 144)


def quantize_q6_k(x):
    """(n, k) float32, k % 256 == 0 -> (n, k/256 * 210) uint8 Q6_K blocks."""
    x = np.asarray(x, dtype=np.float32)
    n, k = x.shape
    nb = k // 256
    xb = x.reshape(n, nb, 16, 16)
    scale = np.abs(xb).max(-1) / 31
    d = _f16(scale.max(-1) / 127)
    df = d.astype(np.float32)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(df > 0, np.rint(scale / df), 0).clip(-128, 127).astype(np.int8)
        ds = (df * sc)[..., None]
        q = np.where(ds != 0, np.rint(xb / ds), 0).clip(-32, 31).astype(np.int16)
    u = (q + 32).astype(np.uint8).reshape(n, nb, 2, 4, 32)  # half h, group t, element l
    lo = u & 15
    ql = np.concatenate([lo[:, :, :, 0] | (lo[:, :, :, 2] << 4), lo[:, :, :, 1] | (lo[:, :, :, 3] << 4)], -1)
    qh = sum(((u[:, :, :, t] >> 4) << (2 * t)).astype(np.uint8) for t in range(4)).astype(np.uint8)
    out = np.concatenate([ql.reshape(n, nb, 128), qh.reshape(n, nb, 64), sc.view(np.uint8).reshape(n, nb, 16),
                          d.view(np.uint8).reshape(n, nb, 2)], -1)
    return out.reshape(n, nb * 210)


QUANTIZERS = {Q4_K: quantize_q4_k, Q6_K: quantize_q6_k}


def use_more_bits(layer, n_layer):
    """llama.cpp's Q4_K_M rule for the layers whose ffn_down gets Q6_K."""
    return layer < n_layer // 8 or layer >= 7 * n_layer // 8 or (layer - n_layer // 8) % 3 == 2


def kquant_plan(g):
    """{tensor name: k-quant type} for the bundled model's tensors whose rows allow it."""
    n_layer = g.metadata["llama.block_count"]
    plan = {}
    for name, info in g.tensors.items():
        if len(info.shape) == 2 and info.shape[1] % 256 == 0 and name.endswith("ffn_down.weight"):
            plan[name] = Q6_K if use_more_bits(int(name.split(".")[1]), n_layer) else Q4_K
    return plan


def write_requantized(src, dst, plan):
    """Copies the GGUF file `src` to `dst` with each tensor of `plan` re-quantised to its
    type (dequantised by gguf-py first); the metadata bytes and every other tensor's bytes
    are copied as they are."""
    import gguf

    from torchnative.gguf_file import GGML_TYPES, GGUFFile

    g = GGUFFile(src)
    mm = g._mm
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", mm, 4)
    g._pos = 24  # skip the metadata entries with the parser's own readers: its end is the table's start
    for _ in range(n_kv):
        key = g._string()
        g._value(g._read("<I"), key, set())
    kv = bytes(mm[24:g._pos])
    align = g.metadata.get("general.alignment", 32)
    table, datas, off = [], [], 0
    for name, info in g.tensors.items():
        data = bytes(mm[info.offset:info.offset + info.nbytes])
        gtype = info.type
        if name in plan:
            w = gguf.quants.dequantize(np.frombuffer(data, np.uint8).reshape(info.shape[0], -1),
                                       gguf.GGMLQuantizationType(info.type)).astype(np.float32)
            gtype = plan[name]
            data = QUANTIZERS[gtype](w).tobytes()
            assert len(data) == info.shape[0] * info.shape[1] // 256 * GGML_TYPES[gtype][2]
        dims = list(reversed(info.shape))
        raw = name.encode()
        table.append(struct.pack("<Q", len(raw)) + raw + struct.pack("<I", len(dims)) +
                     struct.pack(f"<{len(dims)}Q", *dims) + struct.pack("<IQ", gtype, off))
        datas.append(data)
        off += (len(data) + align - 1) // align * align
    head = b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv) + kv + b"".join(table)
    tmp = dst + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(head)
        fh.write(b"\0" * ((-len(head)) % align))
        for data in datas:
            fh.write(data)
            fh.write(b"\0" * ((-len(data)) % align))
    os.replace(tmp, dst)


def build_model(dst):
    """The bundled SmolLM2 GGUF re-quantised with kquant_plan; returns the plan."""
    from torchnative.cli import bundled_model
    from torchnative.gguf_file import GGUFFile

    d, f = bundled_model()
    src = os.path.join(d, f)
    plan = kquant_plan(GGUFFile(src))
    write_requantized(src, dst, plan)
    return plan


if __name__ == "__main__":
    print(build_model(sys.argv[1]))

"""Smaller updates: int8 quantisation (a float32 scale per block of 256 values) and top-k
sparsification (uint32 index + float32 value per kept entry). The client keeps what the
encoding lost and adds it to its next delta (error feedback, Seide et al. 2014 /
Karimireddy et al. 2019), so nothing is lost for good, only delayed."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

__all__ = ["Int8", "TopK", "make_compressor"]


class Int8:
    """Symmetric per-block int8: q = round(x / s), s = max|x| / 127 over each block."""

    block = 256

    def encode(self, vec: np.ndarray) -> Tuple[bytes, dict]:
        x = np.asarray(vec, np.float32)
        n = x.size
        pad = (-n) % self.block
        xb = np.concatenate([x, np.zeros(pad, np.float32)]).reshape(-1, self.block)
        scale = (np.abs(xb).max(axis=1) / 127.0).astype(np.float32)
        safe = np.where(scale > 0, scale, 1.0).astype(np.float32)
        q = np.clip(np.rint(xb / safe[:, None]), -127, 127).astype(np.int8)
        return scale.tobytes() + q.reshape(-1)[:n].tobytes(), {"enc": "int8", "compression": "int8"}

    def decode(self, payload: bytes, meta: dict, numel: int) -> np.ndarray:
        nblocks = -(-numel // self.block)
        if len(payload) != 4 * nblocks + numel:
            raise ValueError(f"int8 update has {len(payload)} bytes, expected {4 * nblocks + numel}")
        scale = np.frombuffer(payload[:4 * nblocks], np.float32)
        q = np.frombuffer(payload[4 * nblocks:], np.int8).astype(np.float32)
        return q * np.repeat(scale, self.block)[:numel]


class TopK:
    """Keeps the `fraction` of entries largest in magnitude (at least one)."""

    def __init__(self, fraction: float):
        if not 0 < fraction <= 1:
            raise ValueError(f"top-k fraction must be in (0, 1], got {fraction}")
        self.fraction = float(fraction)

    def encode(self, vec: np.ndarray) -> Tuple[bytes, dict]:
        x = np.asarray(vec, np.float32)
        k = max(1, int(round(self.fraction * x.size)))
        idx = np.sort(np.argpartition(np.abs(x), x.size - k)[x.size - k:]).astype(np.uint32)
        return idx.tobytes() + x[idx].tobytes(), {"enc": "topk", "compression": f"topk:{self.fraction}"}

    def decode(self, payload: bytes, meta: dict, numel: int) -> np.ndarray:
        if len(payload) % 8:
            raise ValueError(f"top-k update has {len(payload)} bytes, not a multiple of 8")
        k = len(payload) // 8
        idx = np.frombuffer(payload[:4 * k], np.uint32)
        val = np.frombuffer(payload[4 * k:], np.float32)
        if k and int(idx.max()) >= numel:
            raise ValueError(f"top-k update indexes entry {int(idx.max())} of a {numel}-entry model")
        out = np.zeros(numel, np.float32)
        out[idx] = val
        return out


def make_compressor(spec) -> Optional[object]:
    """None, "int8" or "topk:<fraction>" (e.g. "topk:0.01")."""
    if spec is None:
        return None
    if spec == "int8":
        return Int8()
    if isinstance(spec, str) and spec.startswith("topk:"):
        try:
            frac = float(spec[5:])
        except ValueError:
            raise ValueError(f"compression {spec!r}: the top-k fraction must be a number") from None
        return TopK(frac)
    raise ValueError(f"compression must be None, 'int8' or 'topk:<fraction>', got {spec!r}")

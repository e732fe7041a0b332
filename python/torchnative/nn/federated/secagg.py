"""Secure aggregation by pairwise masks (the masking layer of Bonawitz et al. 2017,
"Practical Secure Aggregation for Privacy-Preserving Machine Learning"): each pair of
clients agrees on a seed by X25519 key exchange; client i adds PRG(seed_ij) for every
peer j > i and subtracts it for every j < i, in the ring of integers mod 2^64 on
fixed-point values, so the masks cancel exactly in the sum and the coordinator sees only
the sum. A client that drops after the keys were exchanged leaves its pairs' masks
uncancelled: the survivors then reveal their seeds with the dropped clients (never with
each other), and the coordinator removes those masks.

Not implemented (documented in docs/FEDERATED.md): the self-masks and Shamir-shared
secrets of the full protocol, which protect a client whose update arrives after it was
declared dropped from a coordinator that lies about dropouts."""
from __future__ import annotations

import hashlib
from typing import Dict, Iterable

import numpy as np

__all__ = ["KeyPair", "encode_fixed", "decode_fixed", "mask", "unmask", "pair_seed", "FRAC_BITS"]

FRAC_BITS = 24   # fixed-point resolution 2^-24 ~ 6e-8


class KeyPair:
    """An X25519 key pair (the `cryptography` package, a Flower dependency)."""

    def __init__(self):
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
        self._priv = X25519PrivateKey.generate()
        self.public = self._priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def shared(self, peer_public: bytes) -> bytes:
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
        return self._priv.exchange(X25519PublicKey.from_public_bytes(peer_public))


def pair_seed(shared_secret: bytes, salt: str, i: int, j: int) -> int:
    """The PRG seed of the pair {i, j} for this round (`salt` names the round)."""
    a, b = min(i, j), max(i, j)
    h = hashlib.sha256(shared_secret + f"|{salt}|{a}|{b}".encode()).digest()
    return int.from_bytes(h[:16], "little")


def _prg(seed: int, n: int) -> np.ndarray:
    return np.random.PCG64(seed).random_raw(n).astype(np.uint64)


def encode_fixed(vec: np.ndarray) -> np.ndarray:
    """Float vector -> ring elements (two's complement of round(x * 2^FRAC_BITS))."""
    x = np.rint(np.asarray(vec, np.float64) * (1 << FRAC_BITS))
    if not np.all(np.isfinite(x)):
        raise ValueError("secure aggregation: the update has non-finite values")
    if np.any(np.abs(x) >= 2.0 ** 62):
        raise ValueError("secure aggregation: a value is too large for the fixed-point ring")
    return x.astype(np.int64).view(np.uint64)


def decode_fixed(ring: np.ndarray) -> np.ndarray:
    return ring.view(np.int64).astype(np.float64) / (1 << FRAC_BITS)


def mask(ring: np.ndarray, me: int, keys: KeyPair, peers: Dict[int, bytes], salt: str) -> np.ndarray:
    """Adds this client's pairwise masks to its encoded vector."""
    out = ring.copy()
    with np.errstate(over="ignore"):
        for j, pub in peers.items():
            if j == me:
                continue
            m = _prg(pair_seed(keys.shared(pub), salt, me, j), ring.size)
            out = out + m if me < j else out - m
    return out


def reveal(me: int, keys: KeyPair, peers: Dict[int, bytes], dropped: Iterable[int], salt: str) -> Dict[int, int]:
    """A survivor's seeds with the dropped peers (and only those)."""
    return {j: pair_seed(keys.shared(peers[j]), salt, me, j) for j in dropped if j != me}


def unmask(total: np.ndarray, revealed: Dict[int, Dict[int, int]]) -> np.ndarray:
    """Removes the masks a survivor i shared with dropped j: i added PRG when i < j and
    subtracted it when i > j. `revealed[i][j]` is that seed."""
    out = total.copy()
    with np.errstate(over="ignore"):
        for i, seeds in revealed.items():
            for j, seed in seeds.items():
                m = _prg(seed, total.size)
                out = out - m if i < j else out + m
    return out

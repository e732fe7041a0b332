"""Secure aggregation (Bonawitz et al., CCS 2017, "Practical Secure Aggregation for
Privacy-Preserving Machine Learning"), the honest-but-curious variant: pairwise masks
from X25519 key agreement plus a self-mask from each client's own seed b_u, with b_u and
the pairwise-mask secret key Shamir-shared t-of-n among the clients, so that the
coordinator learns only the sum of the surviving clients' updates, even when it lies
about who dropped. This file is the protocol; the transports (engine.py over the store,
simulate.py in memory) only carry its messages.

One attempt, for the clients U1 that advertised keys (docs/FEDERATED.md has the table):
  1. advertise   each client u makes two key pairs, c_u (encrypting shares) and s_u
                 (mask agreement), and publishes both public keys.
  2. share keys  u draws b_u, splits b_u and s_u's secret key into t-of-|U1| Shamir
                 shares and sends share v to peer v encrypted (AES-GCM) under the c_u/c_v
                 key; U2 = the clients whose shares arrived.
  3. upload      y_u = x_u + PRG(b_u) + sum_{v in U2, u<v} PRG(s_uv) - sum_{v in U2, u>v}
                 PRG(s_uv) in the ring Z/2^64 (fixed point); U3 = the uploads that arrived.
  4. unmask      each u in U3 reveals, per peer v in U2, EITHER its share of b_v (v in U3)
                 OR its share of s_v's secret key (v dropped), never both for one v; the
                 coordinator reconstructs from >= t responses and removes the masks.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
from typing import Dict, Iterable, List, Sequence, Tuple

import numpy as np

__all__ = ["KeyPair", "ClientSession", "Refused", "BelowThreshold", "threshold", "shamir_split",
           "shamir_reconstruct", "unmask_sum", "parse_public", "encode_fixed", "decode_fixed", "encode_weighted",
           "decode_mean", "pair_seed", "FRAC_BITS", "PRIME"]

FRAC_BITS = 24        # fixed-point resolution 2^-24 ~ 6e-8
PRIME = 2 ** 521 - 1  # a Mersenne prime above every secret shared (256-bit keys, 128-bit seeds)
_SEED_BITS = 128


class Refused(RuntimeError):
    """A client refuses a request that would reveal more than the protocol allows."""


class BelowThreshold(RuntimeError):
    """Fewer than t clients (or shares) remain: the sum cannot be unmasked this attempt."""


def threshold(n: int) -> int:
    """t for n clients that advertised keys: a strict majority, floor(n/2) + 1. Clients
    refuse a smaller t (a coordinator could otherwise lower it to reconstruct alone)."""
    return n // 2 + 1


# ---- Shamir secret sharing over GF(PRIME) ------------------------------------------------

def shamir_split(secret: int, t: int, xs: Sequence[int]) -> Dict[int, int]:
    """Shares of `secret` at the points `xs` (distinct, non-zero mod PRIME): the values of
    a random polynomial of degree t - 1 whose constant term is the secret. Any t shares
    determine it; t - 1 shares are uniformly distributed whatever the secret."""
    if not 0 <= secret < PRIME:
        raise ValueError("shamir_split: the secret must be in [0, PRIME)")
    if not 1 <= t <= len(xs):
        raise ValueError(f"shamir_split: threshold t={t} must be in [1, {len(xs)}] for {len(xs)} shares")
    if len(set(x % PRIME for x in xs)) != len(xs) or any(x % PRIME == 0 for x in xs):
        raise ValueError("shamir_split: share points must be distinct and non-zero")
    coeffs = [secret] + [secrets.randbelow(PRIME) for _ in range(t - 1)]
    out = {}
    for x in xs:
        acc = 0
        for a in reversed(coeffs):
            acc = (acc * x + a) % PRIME
        out[x] = acc
    return out


def _lagrange_at_zero(xs: Sequence[int]) -> List[int]:
    """Coefficients l_i with f(0) = sum l_i f(x_i) for any polynomial of degree < len(xs)."""
    out = []
    for i, xi in enumerate(xs):
        num, den = 1, 1
        for j, xj in enumerate(xs):
            if j != i:
                num = num * (-xj) % PRIME
                den = den * (xi - xj) % PRIME
        out.append(num * pow(den, -1, PRIME) % PRIME)
    return out


def shamir_reconstruct(shares: Dict[int, int], t: int) -> int:
    """The secret from {point: share}; raises BelowThreshold with fewer than t shares
    (interpolating them would silently give a wrong value)."""
    if len(shares) < t:
        raise BelowThreshold(f"Shamir reconstruction needs t={t} shares, got {len(shares)}")
    xs = sorted(shares)[:t]
    return sum(c * shares[x] for c, x in zip(_lagrange_at_zero(xs), xs)) % PRIME


# ---- keys, masks, fixed point ------------------------------------------------------------

class KeyPair:
    """An X25519 key pair (the `cryptography` package, a Flower dependency)."""

    def __init__(self, secret: bytes = None):
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
        self._priv = (X25519PrivateKey.generate() if secret is None
                      else X25519PrivateKey.from_private_bytes(secret))
        self.public = self._priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def secret_int(self) -> int:
        """The private key as an integer (to be Shamir-shared)."""
        from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
        return int.from_bytes(self._priv.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()), "little")

    @classmethod
    def from_int(cls, secret: int) -> "KeyPair":
        if not 0 <= secret < 2 ** 256:
            raise ValueError("an X25519 private key has 32 bytes")
        return cls(secret.to_bytes(32, "little"))

    def shared(self, peer_public: bytes) -> bytes:
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
        return self._priv.exchange(X25519PublicKey.from_public_bytes(peer_public))


def pair_seed(shared_secret: bytes, salt: str, i: int, j: int) -> int:
    """The PRG seed of the pair {i, j} for this attempt (`salt` names it)."""
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


def encode_weighted(vec: np.ndarray, weight: float) -> np.ndarray:
    """A client's contribution [weight * vec, weight] in the ring: summed over clients and
    decoded, its last entry is the total weight that divides the rest into the mean."""
    return encode_fixed(np.concatenate([np.asarray(vec, np.float64) * weight, [weight]]))


def decode_mean(ring_sum: np.ndarray) -> np.ndarray:
    """The weighted mean from the unmasked ring sum of encode_weighted vectors (ValueError
    if the sum is not a valid one)."""
    plain = decode_fixed(ring_sum)
    if not np.all(np.isfinite(plain)) or plain[-1] <= 0:
        raise ValueError("secure aggregation: the unmasked sum is invalid")
    return plain[:-1] / plain[-1]


def _ids(xs: Iterable) -> List[int]:
    return sorted(int(x) for x in xs)


# ---- the client --------------------------------------------------------------------------

class ClientSession:
    """Client `me`'s side of one attempt (`salt` names it: keys and b_u are never reused).
    Call in order: public(), share_keys(), receive_shares(), mask(), reveal(). Every
    message is bytes; a request that breaks the protocol raises Refused."""

    def __init__(self, me: int, salt: str):
        self.me, self.salt = int(me), str(salt)
        self._c, self._s = KeyPair(), KeyPair()
        self._b = secrets.randbits(_SEED_BITS)
        self._peers: Dict[int, Tuple[bytes, bytes]] = {}   # U1: v -> (c public, s public)
        self.t = 0
        self._u2: List[int] = []
        self._held: Dict[int, Tuple[int, int]] = {}   # u in U2 -> (share of s_u's key, share of b_u)
        self._revealed: Dict[int, str] = {}           # v -> "b" or "s": what this client gave away

    def public(self) -> bytes:
        """Round 1's message: both public keys."""
        return json.dumps({"c": self._c.public.hex(), "s": self._s.public.hex()}).encode()

    def share_keys(self, peers: Dict[int, bytes], t: int) -> Dict[int, bytes]:
        """Round 2: given U1's public keys ({v: public()}) and the threshold, the encrypted
        shares for each peer v != me."""
        self._peers = {int(v): parse_public(m) for v, m in peers.items()}
        n = len(self._peers)
        if self.me not in self._peers:
            raise Refused(f"secure aggregation: client {self.me} is not among the peers {_ids(self._peers)}")
        if not threshold(n) <= int(t) <= n:
            raise Refused(f"secure aggregation: threshold t={t} for {n} clients; clients accept "
                          f"{threshold(n)} <= t <= {n}")
        self.t = int(t)
        xs = [v + 1 for v in self._peers]   # share points: client id + 1 (never 0)
        sk = shamir_split(self._s.secret_int(), self.t, xs)
        bs = shamir_split(self._b, self.t, xs)
        self._held = {self.me: (sk[self.me + 1], bs[self.me + 1])}
        return {v: self._seal(v, sk[v + 1], bs[v + 1]) for v in self._peers if v != self.me}

    def receive_shares(self, u2: Sequence[int], ciphertexts: Dict[int, bytes]) -> None:
        """Round 2's end: U2 (the clients whose shares reached the coordinator) and the
        ciphertexts they addressed to me. Raises Refused for a U2 outside U1 or below t,
        ValueError for a ciphertext that does not decrypt or names other clients."""
        u2 = _ids(u2)
        if self.me not in u2 or not set(u2) <= set(self._peers):
            raise Refused(f"secure aggregation: U2 {u2} must contain client {self.me} and lie within U1 "
                          f"{_ids(self._peers)}")
        if len(u2) < self.t:
            raise Refused(f"secure aggregation: {len(u2)} clients shared keys, below the threshold t={self.t}")
        for u in u2:
            if u != self.me:
                if u not in ciphertexts:
                    raise ValueError(f"secure aggregation: no shares from client {u} for client {self.me}")
                self._held[u] = self._open(u, ciphertexts[u])
        self._u2 = u2

    def mask(self, ring: np.ndarray) -> np.ndarray:
        """Round 3: the masked upload y_u of an encoded vector (mod 2^64)."""
        if not self._u2:
            raise Refused("secure aggregation: mask() before receive_shares()")
        with np.errstate(over="ignore"):
            out = ring + _prg(self._b, ring.size)
            for v in self._u2:
                if v != self.me:
                    m = _prg(pair_seed(self._s.shared(self._peers[v][1]), self.salt, self.me, v), ring.size)
                    out = out + m if self.me < v else out - m
        return out

    def reveal(self, alive: Sequence[int], dropped: Sequence[int]) -> bytes:
        """Round 4: for each v in `alive` my share of b_v, for each v in `dropped` my share
        of v's mask key. Refused (and nothing revealed) if a client is in both lists or was
        asked the other way before, if a client is outside U2, if I am not alive, or if
        fewer than t are alive."""
        alive, dropped = _ids(alive), _ids(dropped)
        why = None
        both = sorted(set(alive) & set(dropped))
        flipped = [v for v in alive if self._revealed.get(v) == "s"] + \
                  [v for v in dropped if self._revealed.get(v) == "b"]
        if not self._u2:
            why = "no shares received this attempt"
        elif both:
            why = f"asked for both the self-mask seed and the mask key of client(s) {both}"
        elif flipped:
            why = f"asked for the other secret of client(s) {sorted(flipped)} than revealed before"
        elif not set(alive) | set(dropped) <= set(self._u2):
            why = f"asked about client(s) {sorted(set(alive) | set(dropped) - set(self._u2))} outside U2"
        elif self.me not in alive:
            why = f"client {self.me} is listed as dropped"
        elif len(alive) < self.t:
            why = f"{len(alive)} surviving client(s), below the threshold t={self.t}"
        if why is not None:
            raise Refused(f"secure aggregation: client {self.me} refuses to unmask: {why}")
        for v in alive:
            self._revealed[v] = "b"
        for v in dropped:
            self._revealed[v] = "s"
        return json.dumps({"b": {str(v): hex(self._held[v][1]) for v in alive},
                           "s": {str(v): hex(self._held[v][0]) for v in dropped}}).encode()

    # AES-GCM under a key derived from the c-key agreement, bound to (salt, sender, receiver)
    def _aead(self, v: int):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        key = hashlib.sha256(self._c.shared(self._peers[v][0]) + f"|share|{self.salt}".encode()).digest()
        return AESGCM(key)

    def _seal(self, v: int, s_share: int, b_share: int) -> bytes:
        nonce = os.urandom(12)
        body = json.dumps({"from": self.me, "to": v, "s": hex(s_share), "b": hex(b_share)}).encode()
        return nonce + self._aead(v).encrypt(nonce, body, f"{self.salt}|{self.me}|{v}".encode())

    def _open(self, u: int, blob: bytes) -> Tuple[int, int]:
        from cryptography.exceptions import InvalidTag
        try:
            body = json.loads(self._aead(u).decrypt(blob[:12], blob[12:], f"{self.salt}|{u}|{self.me}".encode()))
        except (InvalidTag, ValueError) as e:
            raise ValueError(f"secure aggregation: the shares from client {u} do not decrypt") from e
        if body.get("from") != u or body.get("to") != self.me:
            raise ValueError(f"secure aggregation: the shares from client {u} name {body.get('from')} -> {body.get('to')}")
        return int(body["s"], 16), int(body["b"], 16)


def parse_public(msg: bytes) -> Tuple[bytes, bytes]:
    """(c public, s public) from a ClientSession.public() message (ValueError if malformed)."""
    try:
        d = json.loads(msg)
        c, s = bytes.fromhex(d["c"]), bytes.fromhex(d["s"])
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"secure aggregation: malformed public keys: {e}") from e
    if len(c) != 32 or len(s) != 32:
        raise ValueError("secure aggregation: an X25519 public key has 32 bytes")
    return c, s


# ---- the coordinator ---------------------------------------------------------------------

def unmask_sum(total: np.ndarray, salt: str, t: int, peers: Dict[int, bytes], alive: Sequence[int],
               dropped: Sequence[int], responses: Dict[int, bytes]) -> np.ndarray:
    """The plain sum of the alive clients' encoded vectors from `total` (the ring sum of
    their uploads): each b_v (v alive) and each dropped v's mask key are reconstructed
    from the responses ({u: reveal()}), and the self-masks and the pairwise masks the
    alive clients share with dropped ones are removed. Raises BelowThreshold with fewer
    than t responses, ValueError for a malformed one."""
    alive, dropped = _ids(alive), _ids(dropped)
    got = {}
    for u, msg in responses.items():
        try:
            d = json.loads(msg)
            got[int(u)] = ({int(v): int(x, 16) for v, x in d["b"].items()},
                           {int(v): int(x, 16) for v, x in d["s"].items()})
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"secure aggregation: malformed unmasking response from client {u}: {e}") from e
        if sorted(got[int(u)][0]) != alive or sorted(got[int(u)][1]) != dropped:
            raise ValueError(f"secure aggregation: client {u} answered for other clients than asked")
    if len(got) < t:
        raise BelowThreshold(f"secure aggregation: {len(got)} unmasking response(s), below the threshold t={t}")
    who = sorted(got)[:t]
    xs = [u + 1 for u in who]
    lag = _lagrange_at_zero(xs)

    def secret(kind, v):
        return sum(c * got[u][kind][v] for c, u in zip(lag, who)) % PRIME

    out = total.copy()
    with np.errstate(over="ignore"):
        for v in alive:
            out = out - _prg(secret(0, v), total.size)
        for v in dropped:
            key = secret(1, v)
            if key >= 2 ** 256:
                raise ValueError(f"secure aggregation: the shares of client {v}'s key are inconsistent")
            kv = KeyPair.from_int(key)
            for u in alive:
                m = _prg(pair_seed(kv.shared(parse_public(peers[u])[1]), salt, u, v), total.size)
                out = out - m if u < v else out + m   # u added +m when u < v
    return out

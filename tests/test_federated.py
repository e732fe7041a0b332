"""torchnative.nn.federated in one process: every aggregator against a direct numpy
computation of its rule (written here from the papers / Flower's documented behaviour,
on client weights rather than deltas), robust aggregators against a Byzantine client,
the RDP accountant against opacus's analysis, secure aggregation (Shamir sharing, exact
sums under dropouts, a malicious coordinator refused, in the protocol and through the
Engine's store), compression with error feedback, selection, validation, parameter
filters, checkpoint/resume and simulate()."""
import datetime
import functools
import json
import math
import os

import numpy as np
import pytest
import torch

from torchnative.nn import federated as F
from torchnative.nn.federated import secagg as sa
from torchnative.nn.federated.core import Coordinator, ParamSpace, decode_update, prepare_update, ClientState
from torchnative.nn.federated.privacy import DEFAULT_ORDERS, eps_from_rdp, rdp_subsampled_gaussian


def _clients(seed=0, k=5, d=37):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    client_w = [w + rng.normal(scale=0.3, size=d) for _ in range(k)]
    n = [int(x) for x in rng.integers(5, 100, size=k)]
    return w, client_w, n


def _run(agg, w, client_w, n, rounds=3, shift=None):
    """Runs `rounds` aggregations; client weights move with the global (as they would)."""
    out = w
    for t in range(1, rounds + 1):
        deltas = [cw - w for cw in client_w]   # every round the same client deltas, applied to the new global
        out = agg.aggregate(out, deltas, n, t)
    return out


def test_fedavg_fedprox_weighted_mean():
    w, cw, n = _clients()
    expect = sum(ni * c for ni, c in zip(n, cw)) / sum(n)
    assert np.allclose(F.FedAvg().aggregate(w, [c - w for c in cw], n, 1), expect, rtol=0, atol=1e-12)
    p = F.FedProx(proximal_mu=0.3)
    assert p.client_config == {"proximal_mu": 0.3}
    assert np.allclose(p.aggregate(w, [c - w for c in cw], n, 1), expect, atol=1e-12)


def test_fedavgm_momentum():
    w, cw, n = _clients(1)
    deltas = [c - w for c in cw]
    avg = sum(ni * d for ni, d in zip(n, deltas)) / sum(n)
    agg = F.FedAvgM(server_learning_rate=0.7, server_momentum=0.9)
    g, m, ref = None, None, w.copy()
    cur = w
    for t in range(1, 4):
        cur = agg.aggregate(cur, deltas, n, t)
        g = -avg                               # pseudo-gradient: current - fedavg result
        m = g if m is None else 0.9 * m + g
        ref = ref - 0.7 * m
        assert np.allclose(cur, ref, atol=1e-12)


def _adaptive_ref(kind, w, deltas, n, rounds, eta, beta_1, beta_2, tau):
    avg = sum(ni * d for ni, d in zip(n, deltas)) / sum(n)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    x = w.copy()
    for t in range(1, rounds + 1):
        d = avg
        m = beta_1 * m + (1 - beta_1) * d
        if kind == "adam":
            v = beta_2 * v + (1 - beta_2) * d ** 2
            lr = eta * math.sqrt(1 - beta_2 ** (t + 1)) / (1 - beta_1 ** (t + 1))
        elif kind == "yogi":
            v = v - (1 - beta_2) * d ** 2 * np.sign(v - d ** 2)
            lr = eta
        else:
            v = v + d ** 2
            lr = eta
        x = x + lr * m / (np.sqrt(v) + tau)
    return x


@pytest.mark.parametrize("kind,agg,hp", [
    ("adam", F.FedAdam(), (1e-1, 0.9, 0.99, 1e-9)),
    ("yogi", F.FedYogi(), (1e-2, 0.9, 0.99, 1e-3)),
    ("adagrad", F.FedAdagrad(), (1e-1, 0.0, 0.0, 1e-9)),
    ("adam", F.FedAdam(eta=0.03, beta_1=0.5, beta_2=0.9, tau=1e-3), (0.03, 0.5, 0.9, 1e-3)),
])
def test_adaptive_server_optimizers(kind, agg, hp):
    """Flower's defaults (eta, beta_1, beta_2, tau) and update rules, three rounds."""
    assert (agg.eta, agg.beta_1, agg.beta_2, agg.tau) == hp
    w, cw, n = _clients(2)
    deltas = [c - w for c in cw]
    cur = w
    for t in range(1, 4):
        cur = agg.aggregate(cur, deltas, n, t)
    assert np.allclose(cur, _adaptive_ref(kind, w, deltas, n, 3, *hp), rtol=1e-12, atol=1e-12)


def test_median_and_trimmed_mean():
    w, cw, n = _clients(3, k=7)
    W = np.stack(cw)
    assert np.allclose(F.FedMedian().aggregate(w, [c - w for c in cw], n, 1), np.median(W, axis=0), atol=1e-12)
    # beta 0.2 of 7 clients cuts int(1.4) = 1 from each side
    s = np.sort(W, axis=0)
    assert np.allclose(F.FedTrimmedAvg().aggregate(w, [c - w for c in cw], n, 1), s[1:6].mean(axis=0), atol=1e-12)
    assert np.allclose(F.FedTrimmedAvg(0.3).aggregate(w, [c - w for c in cw], n, 1), s[2:5].mean(axis=0), atol=1e-12)
    with pytest.raises(ValueError, match="beta"):
        F.FedTrimmedAvg(0.5)


def test_krum_and_multikrum():
    w, cw, n = _clients(4, k=6)
    k, f = 6, 1
    D = np.array([[np.sum((a - b) ** 2) for b in cw] for a in cw])
    scores = [np.sort(np.delete(D[i], i))[:k - f - 2].sum() for i in range(k)]
    best = int(np.argmin(scores))
    kr = F.Krum(num_malicious_clients=f)
    assert np.allclose(kr.aggregate(w, [c - w for c in cw], n, 1), cw[best], atol=1e-10)
    assert kr.last_selected == [best]
    keep = list(np.argsort(scores)[:3])
    expect = sum(n[i] * cw[i] for i in keep) / sum(n[i] for i in keep)
    mk = F.MultiKrum(num_malicious_clients=f, num_clients_to_keep=3)
    assert np.allclose(mk.aggregate(w, [c - w for c in cw], n, 1), expect, atol=1e-10)
    assert sorted(mk.last_selected) == sorted(int(i) for i in keep)


@pytest.mark.parametrize("agg", [F.FedMedian(), F.FedTrimmedAvg(0.2), F.Krum(1), F.MultiKrum(1)])
def test_robust_aggregators_resist_one_byzantine_client(agg):
    """Five honest clients near the truth, one sending a huge update: the robust rules
    stay near the honest mean, FedAvg does not."""
    rng = np.random.default_rng(5)
    w = np.zeros(50)
    honest = [rng.normal(loc=1.0, scale=0.05, size=50) for _ in range(5)]
    evil = -1e4 * np.ones(50)
    deltas = honest + [evil]
    n = [10] * 6
    out = agg.aggregate(w, deltas, n, 1)
    assert np.max(np.abs(out - np.mean(honest, axis=0))) < 0.2
    assert np.max(np.abs(F.FedAvg().aggregate(w, deltas, n, 1) - 1.0)) > 1000
    if isinstance(agg, F.Krum):
        assert 5 not in agg.last_selected


def test_secure_aggregators_need_a_linear_rule():
    m = torch.nn.Linear(2, 2)
    sp = ParamSpace(m)
    with pytest.raises(ValueError, match="Krum needs each client's update"):
        Coordinator(m, sp, F.Krum(), 1, 0, None, 1.0, None, 1, None, True, None, None, 0)
    with pytest.raises(NotImplementedError, match="FedMedian needs every client's update"):
        F.FedMedian().apply_mean(np.zeros(2), np.zeros(2), 1)


# ---- privacy --------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _opacus_rdp():
    """opacus's RDP analysis (opacus/accountants/analysis/rdp.py, the functions its
    RDPAccountant sums; numpy and scipy only), loaded from its file: importing the opacus
    package also imports its optimizers and per-sample-gradient machinery, seconds that
    prove nothing here."""
    import importlib.util
    here = importlib.util.find_spec("opacus").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location("opacus_rdp_analysis",
                                                  os.path.join(here, "accountants", "analysis", "rdp.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("q,sigma,steps", [(0.1, 1.1, 10), (0.01, 0.8, 1000), (1.0, 2.0, 5), (0.5, 0.6, 3),
                                           (0.05, 0.3, 10)])
def test_rdp_accountant_matches_opacus(q, sigma, steps):
    ref = _opacus_rdp()
    ours = rdp_subsampled_gaussian(q, sigma, steps)
    theirs = np.array(ref.compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=DEFAULT_ORDERS))
    assert np.allclose(ours, theirs, rtol=1e-6, atol=0)
    eps, order = eps_from_rdp(DEFAULT_ORDERS, ours, 1e-5)
    eps_ref, order_ref = ref.get_privacy_spent(orders=DEFAULT_ORDERS, rdp=theirs, delta=1e-5)
    assert abs(eps - eps_ref) < 1e-6 * eps_ref and order == order_ref


def test_accountant_per_round_against_opacus():
    """The accountant used in a simulated DP-FedAvg run reports, after each round, the
    epsilon opacus reports for the same steps (its RDPAccountant's sum: r steps of the
    sampled Gaussian at q = 3/10, sigma = 1.3)."""
    ref = _opacus_rdp()
    rng = np.random.default_rng(0)
    data = [[(torch.tensor(rng.normal(size=(8, 4)), dtype=torch.float32), torch.tensor(rng.integers(0, 3, 8)))]
            for _ in range(10)]
    dp = F.DPFedAvg(clip_norm=0.5, noise_multiplier=1.3, delta=1e-5)
    hist = F.simulate(lambda: torch.nn.Linear(4, 3), data, rounds=4, aggregator=F.FedAvg(), clients_per_round=3,
                      dp=dp, seed=1)
    for r, rec in enumerate(hist, start=1):
        rdp = ref.compute_rdp(q=0.3, noise_multiplier=1.3, steps=r, orders=DEFAULT_ORDERS)
        eps_ref, _ = ref.get_privacy_spent(orders=DEFAULT_ORDERS, rdp=rdp, delta=1e-5)
        assert abs(rec["epsilon"] - eps_ref) < 1e-6 * rec["epsilon"]
    assert hist[0]["epsilon"] < hist[-1]["epsilon"]


def test_dp_clipping_and_noise_scale():
    v = np.array([3.0, 4.0], np.float32)
    c, norm = F.privacy.clip_to_norm(v, 1.0) if hasattr(F, "privacy") else __import__(
        "torchnative.nn.federated.privacy", fromlist=["x"]).clip_to_norm(v, 1.0)
    assert norm == 5.0 and np.allclose(c, [0.6, 0.8])
    # noise std on the mean is z*C/m: measure it over many coordinates
    m = torch.nn.Linear(1000, 1, bias=False)
    with torch.no_grad():
        m.weight.zero_()
    sp = ParamSpace(m)
    co = Coordinator(m, sp, F.FedAvg(), 1, 0, None, 1.0, None, 1, F.DPFedAvg(2.0, 1.5), False, None, None, 0)
    co.planned, co.candidates = 4, 10
    zeros = [(i, np.zeros(1000, np.float32), 1) for i in range(4)]
    out = co.aggregate(1, 0, zeros)
    assert abs(np.std(out) - 1.5 * 2.0 / 4) < 0.05


# ---- secure aggregation -----------------------------------------------------------------

def test_shamir_reconstructs_with_t_shares_and_refuses_fewer():
    secret = int.from_bytes(os.urandom(32), "little")
    shares = sa.shamir_split(secret, 3, [1, 2, 3, 4, 5])
    for pick in ([1, 2, 3], [2, 4, 5], [1, 3, 5], [1, 2, 3, 4, 5]):
        assert sa.shamir_reconstruct({x: shares[x] for x in pick}, 3) == secret
    with pytest.raises(sa.BelowThreshold, match="needs t=3 shares, got 2"):
        sa.shamir_reconstruct({1: shares[1], 4: shares[4]}, 3)
    # two shares of a degree-2 polynomial say nothing: read as a degree-1 one they give another value
    assert sa.shamir_reconstruct({1: shares[1], 4: shares[4]}, 2) != secret
    with pytest.raises(ValueError, match="threshold t=6"):
        sa.shamir_split(secret, 6, [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="distinct and non-zero"):
        sa.shamir_split(secret, 2, [0, 1, 2])


class _Protocol:
    """Drives secagg.ClientSession for `vecs` ({client: vector}) as a coordinator would,
    with the message passing in memory: clients in `no_shares` advertise keys but never
    share them (U1 minus U2), clients in `no_upload` share keys but never upload (U2 minus
    U3)."""

    def __init__(self, vecs, no_shares=(), no_upload=(), salt="r1"):
        self.salt = salt
        self.s = {c: sa.ClientSession(c, salt) for c in vecs}
        self.pubs = {c: x.public() for c, x in self.s.items()}            # U1
        self.t = sa.threshold(len(self.pubs))
        sealed = {u: x.share_keys(self.pubs, self.t) for u, x in self.s.items() if u not in no_shares}
        self.u2 = sorted(sealed)
        for v in self.u2:
            self.s[v].receive_shares(self.u2, {u: sealed[u][v] for u in self.u2 if u != v})
        self.up = {c: self.s[c].mask(sa.encode_fixed(vecs[c])) for c in self.u2 if c not in no_upload}
        self.alive = sorted(self.up)                                        # U3
        self.dropped = [c for c in self.u2 if c not in self.alive]

    def total(self):
        with np.errstate(over="ignore"):
            return sum(self.up.values(), np.zeros_like(next(iter(self.up.values()))))


def test_secure_sum_exact_with_dropouts_before_and_after_upload():
    """7 clients advertise keys (t = 4); client 0 never shares its keys; client 1 dies after
    sharing them, before uploading; client 2 dies after uploading (it never answers the
    unmasking request). The answers of 3, 4, 5, 6 give the coordinator the exact ring sum
    of the uploads of 2-6; with one answer fewer the attempt fails loudly."""
    rng = np.random.default_rng(1)
    vecs = {c: rng.normal(size=200) for c in range(7)}
    p = _Protocol(vecs, no_shares=[0], no_upload=[1])
    assert p.t == 4 and p.u2 == [1, 2, 3, 4, 5, 6] and p.alive == [2, 3, 4, 5, 6] and p.dropped == [1]
    still_masked = sa.decode_fixed(p.total())
    assert not np.allclose(still_masked, sum(vecs[c] for c in p.alive), atol=1.0)
    # a client asked with fewer than t survivors refuses (and reveals nothing)
    with pytest.raises(sa.Refused, match="below the threshold t=4"):
        p.s[3].reveal([3, 5, 6], [1, 2, 4])
    answers = {u: p.s[u].reveal(p.alive, p.dropped) for u in (3, 4, 5, 6)}
    exact = sum((sa.encode_fixed(vecs[c]) for c in p.alive), np.zeros(200, np.uint64))
    got = sa.unmask_sum(p.total(), p.salt, p.t, p.pubs, p.alive, p.dropped, answers)
    assert np.array_equal(got, exact)
    assert np.allclose(sa.decode_fixed(got), sum(vecs[c] for c in p.alive), atol=1e-6)
    del answers[6]
    with pytest.raises(sa.BelowThreshold, match="3 unmasking response"):
        sa.unmask_sum(p.total(), p.salt, p.t, p.pubs, p.alive, p.dropped, answers)


def test_malicious_coordinator_cannot_unmask_a_live_client():
    """The attack on pairwise masks alone: the coordinator claims live client 2 dropped and
    obtains its mask key from the others' shares. The pairwise masks then come off y_2, but
    its self-mask PRG(b_2) stays: y_2 is still uncorrelated with the update. Asking for
    b_2's shares too, in the same request or a later one, is refused."""
    rng = np.random.default_rng(2)
    vecs = {c: rng.normal(size=20000) for c in range(5)}
    p = _Protocol(vecs)
    lie_alive, lie_dropped = [0, 1, 3, 4], [2]
    answers = {u: p.s[u].reveal(lie_alive, lie_dropped) for u in lie_alive}
    # the coordinator's reconstruction of client 2's key removes the pairwise masks of y_2
    from torchnative.nn.federated.secagg import _prg
    who = sorted(answers)[:p.t]
    k2 = sa.KeyPair.from_int(sa.shamir_reconstruct({u + 1: int(json.loads(answers[u])["s"]["2"], 16) for u in who},
                                                   p.t))
    y2 = p.up[2].copy()
    with np.errstate(over="ignore"):
        for v in p.u2:
            if v != 2:
                m = _prg(sa.pair_seed(k2.shared(sa.parse_public(p.pubs[v])[1]), p.salt, 2, v), y2.size)
                y2 = y2 - m if 2 < v else y2 + m
    assert abs(np.corrcoef(sa.decode_fixed(y2), vecs[2])[0, 1]) < 0.05
    # without the self-mask the update would be in the clear: b_2 is what still hides it
    with np.errstate(over="ignore"):
        b2 = sa.shamir_reconstruct({u + 1: p.s[u]._held[2][1] for u in who}, p.t)
        assert np.array_equal(sa.decode_fixed(y2 - _prg(b2, y2.size)), sa.decode_fixed(sa.encode_fixed(vecs[2])))
    # the clients refuse to hand over b_2 as well: in one request, and after the lie
    for u in (0, 1, 3, 4):
        with pytest.raises(sa.Refused, match=r"other secret of client\(s\) \[2\]"):
            p.s[u].reveal([0, 1, 2, 3, 4], [])
    q = _Protocol(vecs, salt="r2")
    with pytest.raises(sa.Refused, match=r"both the self-mask seed and the mask key of client\(s\) \[2\]"):
        q.s[0].reveal([0, 1, 2, 3, 4], [2])
    with pytest.raises(sa.Refused, match="listed as dropped"):
        q.s[0].reveal([1, 2, 3, 4], [0])
    # a threshold below a majority is refused at key sharing
    with pytest.raises(sa.Refused, match="threshold t=2 for 5 clients"):
        sa.ClientSession(0, "r3").share_keys(q.pubs, 2)


def test_masked_upload_alone_reveals_nothing():
    """One client's upload is uncorrelated with its update (|r| < 0.05 over 20,000
    coordinates, ~7 standard errors), and so is the sum of all but one; shares that were
    tampered with in transit do not decrypt."""
    rng = np.random.default_rng(3)
    vecs = {c: rng.normal(size=20000) for c in range(4)}
    p = _Protocol(vecs)
    for c in p.alive:
        assert abs(np.corrcoef(sa.decode_fixed(p.up[c]), vecs[c])[0, 1]) < 0.05
    with np.errstate(over="ignore"):
        three = p.up[0] + p.up[1] + p.up[2]
    assert abs(np.corrcoef(sa.decode_fixed(three), vecs[0] + vecs[1] + vecs[2])[0, 1]) < 0.05
    s0, s1 = sa.ClientSession(0, "x"), sa.ClientSession(1, "x")
    pubs = {0: s0.public(), 1: s1.public()}
    sealed = s0.share_keys(pubs, 2)
    s1.share_keys(pubs, 2)
    bad = bytearray(sealed[1])
    bad[-1] ^= 1
    with pytest.raises(ValueError, match="do not decrypt"):
        s1.receive_shares([0, 1], {0: bytes(bad)})


def test_simulated_secure_aggregation_equals_plain():
    """With secure aggregation (t = 4 of 6) the global model is FedAvg's to fixed-point
    precision, with dropouts too; an attempt with fewer than t survivors is reported and
    retried (as the plain run with min_clients=4 does: the same attempts, the same model),
    and a round that never reaches t raises."""
    rng = np.random.default_rng(3)
    data = [[(torch.tensor(rng.normal(size=(6, 5)), dtype=torch.float32), torch.tensor(rng.integers(0, 2, 6)))]
            for _ in range(6)]
    mk = lambda: torch.nn.Linear(5, 2)  # noqa: E731
    weights, hist = {}, {}
    for secure in (False, True):
        torch.manual_seed(0)
        m = mk()
        hist[secure] = F.simulate(mk, data, rounds=3, aggregator=F.FedAvg(), seed=0, secure_aggregation=secure,
                                  dropout=0.3, model=m, min_clients=1 if secure else 4)
        weights[secure] = ParamSpace(m).get()
    assert np.allclose(weights[True], weights[False], atol=1e-5)
    retries = [x for h in hist[True] for x in h["retries"]]
    assert retries and all("below the secure-aggregation threshold t=4" in x["reason"] for x in retries)
    assert [h["participants"] for h in hist[True]] == [h["participants"] for h in hist[False]]
    with pytest.raises(RuntimeError, match="secure-aggregation threshold"):
        F.simulate(mk, data[:3], rounds=1, aggregator=F.FedAvg(), secure_aggregation=True, dropout=0.6,
                   max_retries=0)


def _engine_in_threads(secure, world=3, rounds=2):
    """A federation of Engines in threads of this process over one HashStore (rank 0
    coordinates and trains too); rank 0's history and final weights. Training here draws
    no random numbers, so the threads' interleaving cannot change a result."""
    import threading
    import torch.distributed as dist
    store = dist.HashStore()
    rng = np.random.default_rng(9)
    data = [[(torch.tensor(rng.normal(size=(8, 4)), dtype=torch.float32), torch.tensor(rng.integers(0, 2, 8)))]
            for _ in range(world)]
    out, errors = {}, []

    def member(rank):
        try:
            torch.manual_seed(0)
            m = torch.nn.Linear(4, 2)
            e = F.Engine(m, rounds=rounds, data=data[rank], seed=0, secure_aggregation=secure, store=store, rank=rank,
                         world_size=world, round_timeout=20, join_timeout=30, name=f"thr{int(secure)}")
            out[rank] = (e.participate(), ParamSpace(m).get())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=member, args=(r,), daemon=True) for r in range(world)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and not any(t.is_alive() for t in threads), errors
    return out[0]


def test_engine_secure_aggregation_with_a_training_coordinator():
    """The Engine's store transport under secure aggregation, rank 0 training as one of
    the three clients (its shares, masks and answers go through the same protocol): every
    round has all three and the model is the plain run's to fixed-point precision."""
    hist, w = _engine_in_threads(True)
    plain_hist, plain_w = _engine_in_threads(False)
    assert [h["participants"] for h in hist] == [[0, 1, 2]] * 2 and not any(h["retries"] for h in hist)
    assert np.allclose(w, plain_w, atol=1e-5) and not np.array_equal(w, _engine_start_weights())


def test_engine_clients_refuse_a_malicious_unmasking_request():
    """The test plays a coordinator over the store for two real Engine clients and, after
    their masked uploads, asks each for both the self-mask share and the mask-key share of
    client 2: each answers with a refusal instead of shares."""
    import threading
    import torch.distributed as dist
    from torchnative.nn.federated.engine import pack
    store = dist.HashStore()
    rng = np.random.default_rng(10)
    data = [(torch.tensor(rng.normal(size=(8, 4)), dtype=torch.float32), torch.tensor(rng.integers(0, 2, 8)))]
    errors = []

    def client(rank):
        try:
            F.Engine(torch.nn.Linear(4, 2), rounds=1, data=data, secure_aggregation=True, store=store, rank=rank,
                     world_size=3, name="mal", client_timeout=60).participate()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def key(*parts):
        return "tnfed/mal/" + "/".join(str(p) for p in parts)

    def wait(*keys):
        store.wait(list(keys), datetime.timedelta(seconds=30))

    threads = [threading.Thread(target=client, args=(r,), daemon=True) for r in (1, 2)]
    for t in threads:
        t.start()
    try:
        wait(key("join", 1), key("join", 2))
        s = store.add(key("seq"), 1)
        store.set(key("model", s), pack({"round": 1}, ParamSpace(torch.nn.Linear(4, 2)).get().tobytes()))
        store.set(key("plan", s), json.dumps({"round": 1, "attempt": 0, "selected": [1, 2],
                                              "config": {"secagg": True}, "timeout": 20}))
        wait(key("pk", s, 1), key("pk", s, 2))
        pubs = {str(c): store.get(key("pk", s, c)).decode() for c in (1, 2)}
        store.set(key("peers", s), json.dumps({"t": 2, "keys": pubs}))
        wait(key("shares", s, 1), key("shares", s, 2))
        store.set(key("u2", s), json.dumps({"u2": [1, 2]}))
        wait(key("upd", s, 1), key("upd", s, 2))
        store.set(key("unmask", s), json.dumps({"alive": [1, 2], "dropped": [2]}))
        wait(key("reveal", s, 1), key("reveal", s, 2))
        answers = [json.loads(store.get(key("reveal", s, c))) for c in (1, 2)]
    finally:
        store.set(key("plan", store.add(key("seq"), 1)), json.dumps({"stop": True}))
        for t in threads:
            t.join(60)
    assert not errors, errors
    for a in answers:
        assert set(a) == {"refused"} and "both the self-mask seed and the mask key of client(s) [2]" in a["refused"]


def _engine_start_weights():
    torch.manual_seed(0)
    return ParamSpace(torch.nn.Linear(4, 2)).get()


# ---- compression ------------------------------------------------------------------------

def test_int8_and_topk_roundtrip_and_error_feedback():
    rng = np.random.default_rng(4)
    d = rng.normal(size=1000).astype(np.float32)
    q = F.Int8()
    payload, meta = q.encode(d)
    assert len(payload) == 1000 + 4 * 4
    assert np.max(np.abs(q.decode(payload, meta, 1000) - d)) <= np.abs(d).max() / 127 / 2 + 1e-6
    t = F.TopK(0.1)
    payload, meta = t.encode(d)
    back = t.decode(payload, meta, 1000)
    assert np.count_nonzero(back) == 100 and len(payload) == 800
    assert np.all(np.abs(d[back != 0]).min() >= np.abs(d[back == 0]).max())
    # error feedback: over rounds the sum of what was sent tracks the sum of the deltas
    st = ClientState()
    sent = np.zeros(1000)
    for _ in range(30):
        vec, hdr, pl = prepare_update(d, {"compression": "topk:0.1"}, st)
        assert np.array_equal(decode_update(hdr, pl, 1000), vec)
        sent += vec
    assert np.max(np.abs(sent - 30 * d)) <= np.abs(st.residual).max() + 1e-3
    with pytest.raises(ValueError, match="compression must be"):
        prepare_update(d, {"compression": "zip"}, ClientState())


# ---- selection, validation, parameter filters --------------------------------------------

def test_selection_is_seeded():
    a = F.select_clients(range(100), 3, 0, seed=7, fraction=0.1, clients_per_round=None, min_clients=2)
    assert len(a) == 10 and a == F.select_clients(range(100), 3, 0, 7, 0.1, None, 2)
    assert a != F.select_clients(range(100), 4, 0, 7, 0.1, None, 2)
    assert len(F.select_clients(range(100), 1, 0, 7, 0.01, None, 5)) == 5
    assert len(F.select_clients(range(10), 1, 0, 7, 1.0, 4, 1)) == 4
    assert F.select_clients(range(3), 1, 0, 7, 1.0, 10, 1) == [0, 1, 2]


def test_poisoned_updates_rejected_and_logged(caplog):
    m = torch.nn.Linear(3, 2)
    sp = ParamSpace(m)
    co = Coordinator(m, sp, F.FedAvg(), 1, 0, None, 1.0, None, 1, None, False, None, None, 0)
    good = np.zeros(8, np.float32)
    nan = good.copy()
    nan[3] = np.nan
    inf = good.copy()
    inf[0] = np.inf
    assert co.check(1, good, 5, 0.1) is None
    with caplog.at_level("WARNING", logger="torchnative.nn.federated"):
        assert "non-finite" in co.check(2, nan, 5, 0.1)
        assert "non-finite" in co.check(3, inf, 5, 0.1)
        assert "wrong shape" in co.check(4, np.zeros(9, np.float32), 5, 0.1)
        assert "example count" in co.check(5, good, 0, 0.1)
    assert sum("rejected" in r.message for r in caplog.records) == 4


def test_simulate_rejects_nan_client_and_retries_below_minimum():
    rng = np.random.default_rng(6)
    data = [[(torch.tensor(rng.normal(size=(6, 4)), dtype=torch.float32), torch.tensor(rng.integers(0, 2, 6)))]
            for _ in range(4)]
    data[2] = [(torch.full((6, 4), float("nan")), torch.zeros(6, dtype=torch.long))]   # a poisoned client
    h = F.simulate(lambda: torch.nn.Linear(4, 2), data, rounds=2, aggregator=F.FedAvg(), seed=0)
    assert all(r["participants"] == [0, 1, 3] for r in h)
    assert all(r["rejected"][0]["client"] == 2 and "non-finite" in r["rejected"][0]["reason"] for r in h)
    m = torch.nn.Linear(4, 2)
    F.simulate(None, data, rounds=2, aggregator=F.FedAvg(), seed=0, model=m)
    assert torch.isfinite(m.weight).all()
    # every selected client is lost on some attempts: the round is retried, then completes
    h = F.simulate(lambda: torch.nn.Linear(4, 2), data[:2], rounds=3, aggregator=F.FedAvg(), seed=0,
                   min_clients=2, dropout=0.5, max_retries=20)
    assert any(r["retries"] for r in h) and all(len(r["participants"]) == 2 for r in h)
    with pytest.raises(RuntimeError, match="fewer than min_clients=3"):
        F.simulate(lambda: torch.nn.Linear(4, 2), data[:2], rounds=1, aggregator=F.FedAvg(), min_clients=3,
                   max_retries=1)


def test_parameter_filters():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.norm = torch.nn.LayerNorm(4)
            self.head = torch.nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.norm(self.fc(x)))

    sp = ParamSpace(Net(), "norm")
    assert sp.names == ["norm.weight", "norm.bias"] and sp.numel == 8
    assert ParamSpace(Net(), lambda n, p: n.startswith("head")).names == ["head.weight", "head.bias"]
    with pytest.raises(ValueError, match="selects no parameter"):
        ParamSpace(Net(), "lora")
    with pytest.raises(ValueError, match="params must be"):
        ParamSpace(Net(), "everything")
    # only the norm parameters move in a federated run; the rest stay each client's own
    rng = np.random.default_rng(0)
    data = [[(torch.tensor(rng.normal(size=(8, 4)), dtype=torch.float32), torch.tensor(rng.integers(0, 2, 8)))]
            for _ in range(3)]
    torch.manual_seed(0)
    m = Net()
    fc0 = m.fc.weight.detach().clone()
    n0 = m.norm.weight.detach().clone()
    F.simulate(None, data, rounds=2, aggregator=F.FedAvg(), params="norm", model=m,
               optimizer=lambda p: torch.optim.SGD(p, lr=0.5))
    assert not torch.equal(m.norm.weight, n0)
    assert torch.equal(m.fc.weight, fc0)   # the global model never received the local layers


def test_lora_filter_with_peft():
    peft = pytest.importorskip("peft")

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj = torch.nn.Linear(6, 6)
            self.out = torch.nn.Linear(6, 2)

        def forward(self, x):
            return self.out(self.q_proj(x))

    m = peft.get_peft_model(Tiny(), peft.LoraConfig(r=2, target_modules=["q_proj"]))
    sp = ParamSpace(m, "lora")
    assert sp.numel == 2 * 6 * 2 and all("lora_" in n for n in sp.names)


def test_checkpoint_resume(tmp_path):
    rng = np.random.default_rng(7)
    data = [[(torch.tensor(rng.normal(size=(6, 4)), dtype=torch.float32), torch.tensor(rng.integers(0, 2, 6)))]
            for _ in range(3)]
    mk = lambda: torch.nn.Linear(4, 2)  # noqa: E731
    ck = str(tmp_path / "ck.pkl")
    torch.manual_seed(0)
    full_model = mk()
    full = F.simulate(mk, data, rounds=4, aggregator=F.FedAdam(eta=0.05), seed=3, model=full_model)
    torch.manual_seed(0)
    m1 = mk()
    F.simulate(mk, data, rounds=2, aggregator=F.FedAdam(eta=0.05), seed=3, checkpoint=ck, model=m1)
    assert os.path.exists(ck)
    m2 = mk()   # the checkpoint's weights replace its own
    resumed = F.simulate(mk, data, rounds=4, aggregator=F.FedAdam(eta=0.05), seed=3, checkpoint=ck, model=m2)
    assert [r["round"] for r in resumed] == [1, 2, 3, 4]
    assert torch.equal(m2.weight, full_model.weight)   # server-optimizer state resumed too
    with pytest.raises(ValueError, match="checkpoint .* is for FedAdam"):
        F.simulate(mk, data, rounds=5, aggregator=F.FedAvg(), checkpoint=ck)


def test_bad_arguments():
    m = torch.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="aggregator must be"):
        F.simulate(lambda: m, [[]], rounds=1, aggregator="fedavg")
    with pytest.raises(ValueError, match="fraction"):
        F.simulate(lambda: m, [[]], rounds=1, aggregator=F.FedAvg(), fraction=0)
    with pytest.raises(ValueError, match="no batch"):
        F.simulate(lambda: m, [[]], rounds=1, aggregator=F.FedAvg())
    with pytest.raises(ValueError, match="client_data is empty"):
        F.simulate(lambda: m, [], rounds=1, aggregator=F.FedAvg())
    with pytest.raises(ValueError, match="transport"):
        F.Engine(m, transport="mpi")
    with pytest.raises(RuntimeError, match="init_process_group"):
        F.Engine(m, data=[]).participate()


def test_secure_aggregation_with_a_nan_client():
    """Under secure aggregation the server cannot inspect a masked update, so a non-finite
    one is stopped before masking (never encoded into the ring); the round runs on."""
    with pytest.raises(ValueError, match="non-finite"):
        sa.encode_fixed(np.array([1.0, np.nan]))
    rng = np.random.default_rng(8)
    data = [[(torch.tensor(rng.normal(size=(6, 4)), dtype=torch.float32), torch.tensor(rng.integers(0, 2, 6)))]
            for _ in range(4)]
    data[1] = [(torch.full((6, 4), float("nan")), torch.zeros(6, dtype=torch.long))]
    torch.manual_seed(0)
    m = torch.nn.Linear(4, 2)
    h = F.simulate(None, data, rounds=2, aggregator=F.FedAvg(), seed=0, secure_aggregation=True, model=m)
    assert all(r["participants"] == [0, 2, 3] and r["rejected"][0]["client"] == 1 for r in h)
    assert torch.isfinite(m.weight).all()

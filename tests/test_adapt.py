"""torchnative.adapt's delta machinery on our core: the base is never written and stays
shared, reset() is bit-identical to the base, lifetimes end on their events, destinations
receive what they should, users' deltas switch, delta files are verified against the base,
and the NaN and collapse guards fire. (The methods' numerics against upstream torch:
tests/test_adapt_methods.py.)"""
import os
import sys
import time

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import adapt_run  # noqa: E402
from torchnative import adapt  # noqa: E402
from torchnative.adapt import events  # noqa: E402


def cnn(seed=0):
    torch.manual_seed(seed)
    m = adapt_run.CNN()
    with torch.no_grad():  # non-trivial running statistics, so batch statistics differ from them
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 2.0)
    return m.eval()


def batch(seed, n=16):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 8, 8, generator=g)


def snapshot(m):
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)


def assert_base_untouched(m, snap, w=None):
    """Every base tensor equals the snapshot bit for bit. With a wrapper, read through its
    base table (the model's state_dict shows the applied delta's tensors)."""
    sd = m.state_dict() if w is None else {k: w.base_tensor(k) for k in snap}
    assert sorted(sd) == sorted(snap)
    for k, v in snap.items():
        assert same(sd[k], v), f"base tensor {k} was modified"


@pytest.fixture(autouse=True)
def _close_wrappers():
    made = []
    orig = adapt.wrap

    def tracking(*a, **k):
        w = orig(*a, **k)
        made.append(w)
        return w
    adapt.wrap = tracking
    yield
    adapt.wrap = orig
    for w in made:
        w.close()


# ---- the delta over the base ----------------------------------------------------------------
@pytest.mark.parametrize("method", ["bn_adapt", "tent", "eata", "sar", "cotta", "ttt", "memo"])
def test_reset_is_bit_identical_and_base_untouched(method):
    m = cnn()
    x = batch(1)
    with torch.no_grad():
        ref = m(x)
    snap = snapshot(m)
    params_before = {n: p for n, p in m.named_parameters()}
    meth = {"bn_adapt": lambda: adapt.BNAdapt(), "tent": lambda: adapt.Tent(lr=1e-2),
            "eata": lambda: adapt.EATA(10, e_margin=10.0, lr=1e-2),
            "sar": lambda: adapt.SAR(10, margin=10.0, lr=1e-2), "cotta": lambda: adapt.CoTTA(n_aug=2),
            "ttt": lambda: adapt.TTT("ext", "ssh", lr=1e-2), "memo": lambda: adapt.MEMO(n_aug=4)}[method]()
    w = adapt.wrap(m, meth, guard=None, lifetime=adapt.Session()).online()
    for i in range(3):
        out = w(batch(10 + i))
    w.offline()
    with torch.no_grad():
        served = w(x)
    assert not same(served, ref), "the adapted model serves the base's outputs: nothing was adapted"
    assert w.delta is not None and w.delta.steps == 3
    assert_base_untouched(m, snap, w)  # bit for bit, while the delta is applied ...
    w.reset()
    assert w.delta is None
    with torch.no_grad():
        assert same(w(x), ref)  # ... and served output identical to the base after reset
        assert same(m(x), ref)
    assert_base_untouched(m, snap)
    for n, p in m.named_parameters():  # the same Parameter objects are back in place
        assert p is params_before[n], n
    assert [mod.training for mod in m.modules()] == [False] * len(list(m.modules()))
    assert out is not None


def test_delta_holds_only_what_the_method_adapts():
    m = cnn()
    w = adapt.wrap(m, adapt.Tent()).online()
    w(batch(1))
    d = w.delta
    norms = {f"{n}.{p}" for n, mod in m.named_modules() if isinstance(mod, torch.nn.BatchNorm2d) for p in ("weight", "bias")}
    assert set(d.tensors) == norms
    assert d.nbytes(state=False) == sum(m.get_parameter(k).numel() * 4 for k in norms)
    # non-adapted tensors are the base objects themselves (shared, never copied)
    assert m.ext[0].weight is w.base_tensor("ext.0.weight")
    # the adapted tensors have their own storage; the base's are where they were
    assert m.ext[1].weight is d.tensors["ext.1.weight"]
    assert m.ext[1].weight.data_ptr() != w.base_tensor("ext.1.weight").data_ptr()
    assert not any(p.requires_grad for p in (w.base_tensor(k) for k in norms))
    # Tent normalises by batch statistics: the running statistics are hidden while applied
    assert m.ext[1].running_mean is None and m.ext[1].track_running_stats is False
    w.reset()
    assert m.ext[1].running_mean is w.base_tensor("ext.1.running_mean") and m.ext[1].track_running_stats is True


def test_verify_base_detects_a_write():
    m = cnn()
    w = adapt.wrap(m, adapt.Tent())
    assert w.verify_base()
    with torch.no_grad():
        m.ext[0].weight[0, 0, 0, 0] += 1.0
    assert not w.verify_base()


# ---- lifetimes --------------------------------------------------------------------------------
def test_episodic_drops_the_delta_after_every_request():
    m = cnn()
    x = batch(1)
    w = adapt.wrap(m, adapt.Tent(lr=1e-2), lifetime=adapt.Episodic(), guard=None).online()
    a = w(x)
    assert w.delta is None and w.counters["expired"] == 1
    b = w(x)  # starts again from the base: the same answer
    assert same(a, b)
    w2 = adapt.wrap(cnn(), adapt.Tent(lr=1e-2), lifetime=adapt.Session(), guard=None).online()
    w2(x)
    assert not same(w2(x), a)  # a session keeps adapting


def test_session_ends_on_session_end():
    w = adapt.wrap(cnn(), adapt.Tent(), guard=None).online()
    w(batch(1))
    events.emit("background")
    events.emit("low_memory")
    assert w.delta is not None
    events.emit("session_end")
    assert w.delta is None and w.counters["expired"] == 1
    w(batch(2))
    w.end_session()
    assert w.delta is None and w.counters["expired"] == 2


@pytest.mark.parametrize("event", ["background", "user_switch", "sync_window", "low_memory", "my_app_event"])
def test_until_event(event):
    w = adapt.wrap(cnn(), adapt.Tent(), lifetime=adapt.Until(event), guard=None).online()
    w(batch(1))
    others = [e for e in ["background", "sync_window", "low_memory", "session_end", "my_app_event"] if e != event]
    for e in others:
        events.emit(e)
    assert w.delta is not None, "the delta ended on an event it does not wait for"
    events.emit(event)
    assert w.delta is None and w.counters["expired"] == 1


def test_persistent_saves_on_events_and_reloads(tmp_path):
    path = str(tmp_path / "{user}.delta")
    m = cnn()
    x = batch(3)
    w = adapt.wrap(m, adapt.Tent(lr=1e-2), lifetime=adapt.Persistent(path), guard=None).online()
    w(batch(1))
    w(batch(2))
    w.offline()
    with torch.no_grad():
        want = w(x)
    events.emit("background")
    assert os.path.exists(path.format(user="default"))
    assert w.delta is not None  # persistent: saving does not end it
    events.emit("session_end")
    assert w.delta is not None
    w.close()
    # a new process would do this: the same base, a new wrapper, the delta comes back
    m2 = cnn()
    w2 = adapt.wrap(m2, adapt.Tent(lr=1e-2), lifetime=adapt.Persistent(path), guard=None)
    w2.switch_user("default")  # already the user: nothing to load yet
    assert w2.delta is None
    w2.load(path.format(user="default"))
    with torch.no_grad():
        assert same(w2(x), want)


def test_persistent_refused_on_another_base(tmp_path):
    path = str(tmp_path / "d.delta")
    w = adapt.wrap(cnn(0), adapt.Tent(), guard=None).online()
    w(batch(1))
    w.save(path)
    other = adapt.wrap(cnn(1), adapt.Tent(), guard=None)
    with pytest.raises(adapt.BaseMismatchError, match="another base"):
        other.load(path)
    assert other.delta is None
    # one changed weight is another base, too
    m = cnn(0)
    with torch.no_grad():
        m.cls[-1].bias[0] += 1e-3
    with pytest.raises(adapt.BaseMismatchError):
        adapt.wrap(m, adapt.Tent()).load(path)
    # as a Persistent lifetime: the user's file is refused on switching to them
    w3 = adapt.wrap(cnn(1), adapt.Tent(), lifetime=adapt.Persistent(str(tmp_path / "{user}.delta")))
    os.replace(path, str(tmp_path / "alice.delta"))
    with pytest.raises(adapt.BaseMismatchError):
        w3.switch_user("alice")


def test_delta_files_verified_before_use(tmp_path):
    from safetensors.torch import load_file, save_file
    from safetensors import safe_open
    w = adapt.wrap(cnn(), adapt.Tent(), guard=None).online()
    w(batch(1))
    path = str(tmp_path / "d.delta")
    w.save(path)
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
    t = load_file(path)

    def variant(name, tensors, md=meta):
        p = str(tmp_path / name)
        save_file(tensors, p, metadata=md)
        return p
    fresh = adapt.wrap(cnn(), adapt.Tent())
    bad_shape = dict(t, **{"full.ext.1.weight": torch.zeros(3)})
    with pytest.raises(adapt.DeltaFormatError, match="ext.1.weight"):
        fresh.load(variant("shape", bad_shape))
    bad_name = dict(t, **{"full.nope.weight": torch.zeros(3)})
    with pytest.raises(adapt.DeltaFormatError, match="nope.weight"):
        fresh.load(variant("name", bad_name))
    with pytest.raises(adapt.DeltaFormatError, match="format"):
        fresh.load(variant("fmt", t, dict(meta, format="something/else")))
    with pytest.raises(adapt.DeltaFormatError, match="'tent'"):
        adapt.wrap(cnn(), adapt.BNAdapt()).load(path)
    (tmp_path / "junk").write_bytes(b"not a delta")
    with pytest.raises(adapt.DeltaFormatError):
        fresh.load(str(tmp_path / "junk"))
    with pytest.raises(FileNotFoundError):
        fresh.load(str(tmp_path / "missing"))
    assert fresh.delta is None


# ---- destinations ---------------------------------------------------------------------------
def test_destination_keep_and_restore():
    x = batch(5)
    w = adapt.wrap(cnn(), adapt.Tent(lr=1e-2), lifetime=adapt.Until("background"), on_expiry="keep",
                   guard=None).online()
    w(batch(1))
    w.offline()
    with torch.no_grad():
        adapted = w(x)
    events.emit("background")
    assert w.delta is None and "default" in w.kept
    w.restore()
    with torch.no_grad():
        assert same(w(x), adapted)


def test_destination_save(tmp_path):
    w = adapt.wrap(cnn(), adapt.Tent(), lifetime=adapt.Until("low_memory"),
                   on_expiry=adapt.Save(str(tmp_path / "{user}-{event}.delta")), guard=None).online()
    w(batch(1))
    events.emit("low_memory")
    p = tmp_path / "default-low_memory.delta"
    assert p.exists() and w.delta is None
    w2 = adapt.wrap(cnn(), adapt.Tent())
    w2.load(str(p))
    assert w2.delta.steps == 1


def test_destination_hand_to_federated():
    got = []
    m = cnn()
    w = adapt.wrap(m, adapt.Tent(lr=1e-2), lifetime=adapt.Until("sync_window"),
                   on_expiry=lambda update, meta: got.append((update, meta)), guard=None).online()
    w(batch(1))
    w(batch(2))
    values = {k: v.detach().clone() for k, v in w.delta.tensors.items()}
    events.emit("sync_window")
    assert len(got) == 1 and w.delta is None and w.counters["handed"] == 1
    update, meta = got[0]
    assert meta["method"] == "tent" and meta["samples"] == 32 and meta["steps"] == 2
    assert meta["reason"] == "sync_window" and meta["base_hash"] == w.base_hash
    assert set(update) == set(values) and set(meta["kinds"].values()) == {"full_diff"}
    for k, v in update.items():
        assert torch.equal(v, values[k] - w.base_tensor(k))  # adapted minus base
    assert any(bool(v.abs().max() > 0) for v in update.values())


# ---- users ------------------------------------------------------------------------------------
def test_users_switch_on_user_switch():
    m = cnn()
    x = batch(9)
    with torch.no_grad():
        base = m(x)
    w = adapt.wrap(m, adapt.Tent(lr=1e-2), guard=None, user="alice").online()
    w(batch(1))
    w(batch(2))
    events.emit("user_switch", user="bob")
    assert w.user == "bob" and w.delta is None  # bob has no delta yet: the base
    w.offline()
    with torch.no_grad():
        assert same(w(x), base)
    w.online()
    w(batch(3) * 0.5)
    w.offline()
    with torch.no_grad():
        bob = w(x)
        events.emit("user_switch", user="alice")
        alice = w(x)
        events.emit("user_switch", user="bob")
        assert same(w(x), bob)
        events.emit("user_switch", user="alice")
        assert same(w(x), alice)
    assert not same(alice, bob) and not same(alice, base)
    assert set(w.deltas) == {"alice", "bob"}
    # deltas share the base: every non-adapted parameter is the one base object
    assert m.ext[0].weight is w.base_tensor("ext.0.weight")
    assert w.deltas["alice"].tensors["ext.1.weight"] is not w.deltas["bob"].tensors["ext.1.weight"]


def test_until_user_switch_ends_the_outgoing_delta():
    got = []
    w = adapt.wrap(cnn(), adapt.Tent(), lifetime=adapt.Until("user_switch"),
                   on_expiry=lambda u, meta: got.append(meta["user"]), guard=None, user="alice").online()
    w(batch(1))
    events.emit("user_switch", user="bob")
    assert got == ["alice"] and w.deltas == {}


def test_lora_deltas_switch_without_touching_weights():
    torch.manual_seed(0)
    llm = adapt_run.tiny_llama().eval()
    ids = torch.randint(0, 256, (1, 16))
    with torch.no_grad():
        base = llm(input_ids=ids).logits
    snap = snapshot(llm)
    w = adapt.wrap(llm, adapt.TLM(lr=1e-2, p0=1.0), guard=None, user="u1").online()
    w(input_ids=ids)
    w(input_ids=ids)
    d1 = w.delta
    assert set(d1.tensors) == set() and len(d1.lora) == 4  # q_proj, v_proj of 2 layers
    w.switch_user("u2")
    w(input_ids=ids.flip(1))
    w.offline()
    with torch.no_grad():
        o2 = w(input_ids=ids).logits
        w.switch_user("u1")
        o1 = w(input_ids=ids).logits
    assert not same(o1, o2) and not same(o1, base)
    q = llm.model.layers[0].self_attn.q_proj.weight
    assert q is w.base_tensor("model.layers.0.self_attn.q_proj.weight")
    assert_base_untouched(llm, snap, w)
    times = []
    for i in range(200):
        t0 = time.perf_counter()
        w.switch_user("u2" if i % 2 == 0 else "u1")
        times.append(time.perf_counter() - t0)
    assert sorted(times)[100] < 1e-3, f"median switch {sorted(times)[100] * 1e3:.3f} ms"
    w.reset(all_users=True)
    with torch.no_grad():
        assert same(w(input_ids=ids).logits, base)


# ---- safety -----------------------------------------------------------------------------------
class PoisonTent(adapt.Tent):
    """Tent whose n-th update turns the delta's values to NaN."""

    def __init__(self, at):
        super().__init__()
        self.at, self.n = at, 0

    def adapt(self, w, x):
        out = super().adapt(w, x)
        self.n += 1
        if self.n == self.at:
            with torch.no_grad():
                next(iter(w.delta.tensors.values())).fill_(float("nan"))
        return out


def test_nan_delta_is_discarded_and_the_base_served():
    m = cnn()
    snap = snapshot(m)
    x = batch(4)
    with torch.no_grad():
        base = m(x)
    w = adapt.wrap(m, PoisonTent(at=2), guard=None).online()
    w(batch(1))
    out = w(x)  # this update goes NaN
    assert w.counters["nan_discards"] == 1 and w.delta is None
    assert same(out, base)  # the request is answered by the base
    assert_base_untouched(m, snap)
    out = w(x)  # adaptation starts again from the base
    assert torch.isfinite(out).all() and w.delta is not None


@pytest.fixture(scope="module")
def digits_model():
    """The CNN trained for 60 Adam steps on scikit-learn digits, and held-out digits."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = torch.from_numpy((d.data / 16.0).astype(np.float32).reshape(-1, 1, 8, 8))
    y = torch.from_numpy(d.target.astype(np.int64))
    torch.manual_seed(0)
    m = adapt_run.CNN()
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for i in range(60):
        idx = torch.arange(i * 64, i * 64 + 64) % 1200
        loss = torch.nn.functional.cross_entropy(m(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return m.eval(), x[1200:]


def test_collapse_guard_resets(digits_model):
    g = adapt.CollapseGuard(min_diversity=0.2, warmup=3)
    spread = torch.eye(10) * 5
    assert not any(g.observe(spread) for _ in range(5))
    one = torch.zeros(10, 10)
    one[:, 3] = 10
    hits = [g.observe(one) for _ in range(40)]
    assert hits[-1] and not hits[0]
    # in the wrapper: a stream whose predictions are all one class is reset
    m = cnn()
    x = batch(1)[:1].repeat(16, 1, 1, 1)  # one image, 16 times: no diversity
    w = adapt.wrap(m, adapt.Tent(), guard=adapt.CollapseGuard(warmup=3)).online()
    for _ in range(40):
        w(x)
    assert w.counters["collapse_resets"] >= 1
    m, xt = digits_model
    w2 = adapt.wrap(m, adapt.Tent(), guard=adapt.CollapseGuard(warmup=3)).online()
    for i in range(10):
        w2(xt[i * 32:(i + 1) * 32])  # real digits: diverse predictions, no reset
    assert w2.guard.diversity > 0.5
    assert w2.counters["collapse_resets"] == 0


def test_sar_model_recovery():
    # reset_constant above any reachable loss average: SAR recovers (drops the delta) every step
    w = adapt.wrap(cnn(), adapt.SAR(10, margin=10.0, reset_constant=100.0), guard=None).online()
    w(batch(1))
    assert w.counters["method_resets"] == 1 and w.delta is None
    w2 = adapt.wrap(cnn(), adapt.SAR(10, margin=10.0, reset_constant=0.0), guard=None).online()
    w2(batch(1))
    assert w2.counters["method_resets"] == 0 and w2.delta is not None


# ---- events and errors ------------------------------------------------------------------------
def test_events_subscribe_cancel_and_weak():
    seen = []
    s = events.subscribe("sync_window", lambda n, p: seen.append((n, p)))
    assert events.emit("sync_window", round=3) >= 1
    s.cancel()
    events.emit("sync_window")
    assert seen == [("sync_window", {"round": 3})]
    w = adapt.wrap(cnn(), adapt.Tent())
    w.close()
    n = events.subscribers("*")
    w2 = adapt.Adapted(cnn(), adapt.Tent())
    assert events.subscribers("*") == n + 1
    del w2
    import gc
    gc.collect()
    events.emit("background")  # the dropped wrapper is not called, and its subscription goes
    assert events.subscribers("*") == n


def test_bad_input_raises_clear_errors():
    m = cnn()
    with pytest.raises(TypeError, match="nn.Module"):
        adapt.wrap(object(), adapt.Tent())
    with pytest.raises(TypeError, match="method"):
        adapt.wrap(m, "tent")
    with pytest.raises(ValueError):
        adapt.Until()
    with pytest.raises(TypeError, match="on_expiry"):
        adapt.wrap(m, adapt.Tent(), on_expiry="ship-it")
    with pytest.raises(TypeError, match="lifetime"):
        adapt.wrap(m, adapt.Tent(), lifetime="forever")
    with pytest.raises(TypeError):
        events.emit("")
    with pytest.raises(ValueError):
        events.emit("*")
    with pytest.raises(ValueError, match="no submodule 'nope'"):
        adapt.wrap(m, adapt.TTT("nope", "ssh")).online()(batch(1))
    with pytest.raises(adapt.DeltaError, match="no delta"):
        adapt.wrap(m, adapt.Tent()).save("/nonexistent/x")
    with pytest.raises(KeyError):
        adapt.wrap(m, adapt.Tent()).restore("nobody")
    with pytest.raises(ValueError, match="no Linear"):
        adapt.wrap(m, adapt.TLM(targets=("zz",))).online()(batch(1))


@pytest.mark.asan_skip  # the sanitized build serves all tensor data from malloc (src/core/tensor.c BIG_BLOCKS)
def test_low_memory_returns_the_allocators_idle_blocks():
    x = torch.ones(1 << 20)  # 4 MiB: a mapped block of src/core/alloc.c
    del x
    assert torch._C._tn_storage_stats(False)["cached"] >= 4 << 20
    events.emit("low_memory")
    assert torch._C._tn_storage_stats(False)["cached"] == 0

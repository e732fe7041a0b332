"""Operator graphs (torchnative.graphs): capture at the door, replay without Python.

A replay must give exactly what running the captured code eagerly again gives: the same
kernels run in the same order on the same memory, so results are compared bit for bit.
What capture cannot see (data read into Python, random operators, Python-side state the
forward changes, shapes that depend on data) must refuse, never replay something wrong.
Model level: SmolLM2 (float32, bfloat16) and every tiny causal architecture generate the
same tokens and bit-identical logits with graphs as without, and the float32 tokens match
upstream's generation with the same static cache.
"""
import gc
import inspect
import json
import os
import sys

import pytest
import torch

from conftest import ROOT, run_reference

sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import torchnative.graphs as G  # noqa: E402

PROMPT = "What is the capital of France?"


def capture(fn):
    g = G.Graph()
    with G.graph(g):
        out = fn()
    return g, out


def test_replay_recomputes_from_new_inputs():
    torch.manual_seed(0)
    x, w, b = torch.randn(5, 33), torch.randn(33, 17), torch.randn(17)

    def f():
        h = torch.relu(x @ w + b)
        return (h.sum(-1, keepdim=True) * 2).view(-1), h.t()

    g, (y, ht) = capture(f)
    assert g.failure is None
    c = g.counts()
    assert c["skip"] >= 2 and c["into"] >= 4, c  # view and t() skipped; functional ops copied into place
    for seed in (1, 2):
        x.copy_(torch.randn(5, 33, generator=torch.Generator().manual_seed(seed)))
        g.replay()
        y_ref, ht_ref = f()
        assert torch.equal(y, y_ref) and torch.equal(ht, ht_ref)
    assert not torch.equal(y, torch.zeros_like(y))


def test_replay_computes_into_the_captured_results():
    # elementwise (tensor iterator), a reduction and cat allocate their result where the
    # replayed step's captured result already is, so nothing is copied afterwards
    torch.manual_seed(0)
    x, w = torch.randn(8, 16), torch.randn(16)

    def f():
        a = x * w
        b = a.pow(2).mean(-1, keepdim=True)
        c = torch.cat([a, b], -1)
        return torch.rsqrt(c.abs() + 1e-6)

    g, out = capture(f)
    assert g.counts()["into"] == 7 and g.counts()["direct"] == 0  # not replayed yet
    for seed in (1, 2):
        x.copy_(torch.randn(8, 16, generator=torch.Generator().manual_seed(seed)))
        g.replay()
        assert torch.equal(out, f())
        assert g.counts()["direct"] == 7, g.counts()


def test_replay_in_place_and_views_of_state():
    acc, x = torch.zeros(4, 3), torch.arange(12.0).view(4, 3)

    def f():
        acc.add_(x)
        acc[1:].mul_(2)

    g, _ = capture(f)
    expect = acc.clone()
    for _ in range(3):
        g.replay()
        expect.add_(x)
        expect[1:].mul_(2)
    assert torch.equal(acc, expect)
    assert g.counts()["rerun"] == 2


def test_graph_keeps_its_tensors_alive():
    x = torch.randn(64)

    def f():
        t = x * 3
        return (t + 1).sum()

    g, s = capture(f)
    del f
    gc.collect()
    x.fill_(1.0)
    g.replay()
    assert s.item() == 64 * 4.0


@pytest.mark.parametrize("what,fn", [
    ("item()", lambda x: float(x.sum())),
    ("tolist()", lambda x: x.tolist()),
    ("scalar argument", lambda x: torch.arange(x.sum().long())),
    ("numpy", lambda x: x.numpy()),
    ("random operator", lambda x: torch.randn(3, generator=torch.Generator().manual_seed(0))),
])
def test_capture_refuses_what_it_cannot_replay(what, fn):
    x = torch.ones(3)
    g = G.Graph()
    with G.graph(g):
        fn(x)
    assert g.failure is not None and what.split()[0] in g.failure, g.failure
    with pytest.raises(RuntimeError, match="cannot be replayed"):
        g.replay()


def test_random_operator_on_default_generator_draws_as_eager():
    torch.manual_seed(0)
    g, r = capture(lambda: torch.randn(5) * 2)
    assert g.failure is None
    torch.manual_seed(1)
    g.replay()
    torch.manual_seed(1)
    assert torch.equal(r, torch.randn(5) * 2)


def test_data_dependent_shape_fails_at_replay():
    x = torch.tensor([1.0, 0.0, 2.0])
    g, nz = capture(lambda: x.nonzero())
    x.copy_(torch.tensor([1.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match="data-dependent shapes"):
        g.replay()


def test_capture_state_errors():
    torch._C._tn_graph_capture_begin()
    try:
        with pytest.raises(RuntimeError, match="already capturing"):
            torch._C._tn_graph_capture_begin()
    finally:
        inner = torch._C._tn_graph_capture_end()
    assert inner.failure is None
    with pytest.raises(RuntimeError, match="no graph capture is active"):
        torch._C._tn_graph_capture_end()
    with pytest.raises(RuntimeError, match="nothing was captured"):
        G.Graph().replay()
    g, _ = capture(lambda: torch.ones(2) + 1)
    g.reset()
    with pytest.raises(RuntimeError, match="nothing was captured"):
        g.replay()


def test_profiled_replay_reports_steps():
    a = torch.randn(64, 64)
    g, _ = capture(lambda: (a @ a).relu())
    g.replay(profile=True)
    steps = g.steps()
    assert [s[0] for s in steps] == ["matmul.default", "relu.default"]
    assert all(kind == "into" and ns > 0 for _, kind, ns in steps)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_decode_linears_replay_as_one_gemv_region(dtype):
    """q/k/v-style linears on one input (views in between) replay as one GEMV region
    written straight into the captured results: the same bits as eager."""
    torch.manual_seed(0)
    x = torch.randn(1, 1, 96).to(dtype)
    ws = [torch.randn(n, 96).to(dtype) for n in (64, 32, 32)]
    w_other = torch.randn(16, 64).to(dtype)

    def f():
        q = torch.nn.functional.linear(x, ws[0]).view(1, 1, 4, 16).transpose(1, 2)
        k = torch.nn.functional.linear(x, ws[1]).view(1, 1, 2, 16)
        v = torch.nn.functional.linear(x, ws[2])
        return q, k, v, torch.nn.functional.linear(q.reshape(1, 64), w_other)

    g, outs = capture(f)
    for seed in (3, 4):
        x.copy_(torch.randn(1, 1, 96, generator=torch.Generator().manual_seed(seed)).to(dtype))
        g.replay(profile=True)
        for a, b in zip(outs, f()):
            assert torch.equal(a, b)
    lin = [(kind, ns) for name, kind, ns in g.steps() if name == "linear.default"]
    assert len(lin) == 4
    # the leader carries the region's time; its two members and nothing else ran on their own
    assert lin[0][1] > 0 and lin[1][1] == 0 and lin[2][1] == 0 and lin[3][1] > 0, lin


# ---- chains run as one step (src/ops/graph_fuse.c) -------------------------------------

def _norm_rope(n, rows, heads=3):
    """transformers' own LlamaRMSNorm and apply_rotary_pos_emb on captured inputs."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm, apply_rotary_pos_emb
    norm = LlamaRMSNorm(n, eps=1e-6).eval()
    with torch.no_grad():
        norm.weight.copy_(torch.randn(n))
    d = n // heads if (n // heads) % 2 == 0 else 2
    x = torch.randn(1, rows, n)
    q = torch.randn(1, rows, heads * d)
    cos, sin = torch.randn(1, rows, d), torch.randn(1, rows, d)

    def f():
        y = norm(x)
        qh = (q + y[..., :heads * d]).view(1, rows, heads, d).transpose(1, 2)
        kh = q.view(1, rows, heads, d).transpose(1, 2)
        qe, ke = apply_rotary_pos_emb(qh, kh, cos, sin)
        return y, qe, ke
    return f, (x, q, cos, sin), norm


def _special(shape, seed):
    """normal values with zero rows, huge and tiny (subnormal) elements mixed in"""
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(shape, generator=g) * torch.tensor([1e-3, 1.0, 1e3])[torch.randint(0, 3, shape, generator=g)]
    flat = t.view(-1)
    flat[torch.randint(0, flat.numel(), (3,), generator=g)] = 1e-40
    flat[torch.randint(0, flat.numel(), (2,), generator=g)] = 3e18
    if t.dim() > 1 and t.shape[-2] > 1:
        t[..., 0, :] = 0.0
    return t


@pytest.mark.parametrize("n,rows", [(8, 1), (64, 1), (576, 1), (100, 3), (1000, 2), (4096, 1)])
def test_norm_and_rotary_chains_replay_bit_identical(n, rows):
    """RMSNorm (6 steps) and each rotary embedding (5 steps) replay as one chain each, with
    the bits the steps give one by one: zero rows, huge and subnormal elements included."""
    torch.manual_seed(n + rows)
    with torch.inference_mode():
        f, ins, _ = _norm_rope(n, rows)
        g, outs = capture(f)
        for seed in (1, 2, 3):
            for k, t in enumerate(ins):
                t.copy_(_special(t.shape, seed * 10 + k))
            g.replay()
            for a, b in zip(outs, f()):
                assert torch.equal(a, b)
        assert g.counts()["chained"] == 6 + 5 + 5, g.counts()


def test_chain_keeps_steps_whose_intermediates_are_held():
    """An intermediate someone else holds (here returned) must still be computed: the
    RMSNorm chain does not form, the rotary ones still do."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    x, w = torch.randn(2, 64), torch.randn(64)
    q, cos, sin = torch.randn(1, 2, 2, 16), torch.randn(1, 1, 16), torch.randn(1, 1, 16)

    def f():
        var = x.pow(2).mean(-1, keepdim=True)
        y = w * (x * torch.rsqrt(var + 1e-5))
        return (var, y) + apply_rotary_pos_emb(q, q, cos, sin)

    with torch.inference_mode():
        g, outs = capture(f)
        x.copy_(torch.randn(2, 64))
        q.copy_(torch.randn(1, 2, 2, 16))
        g.replay()
        for a, b in zip(outs, f()):
            assert torch.equal(a, b)
    assert g.counts()["chained"] == 5 + 5, g.counts()


def test_chain_falls_back_when_its_tensors_change():
    """A weight given new memory after planning (set_), or grad mode on with a weight that
    requires grad: the steps run one by one, with the new values."""
    f, ins, norm = _norm_rope(64, 2)
    with torch.inference_mode():
        g, outs = capture(f)
        g.replay()
    assert g.counts()["chained"] == 16
    with torch.no_grad():
        norm.weight.set_(torch.randn(64))
    with torch.inference_mode():
        g.replay()
        assert g.counts()["chained"] == 10, g.counts()
        for a, b in zip(outs, f()):
            assert torch.equal(a, b)
    with torch.enable_grad():
        g.replay()
    assert g.counts()["chained"] == 10  # the rotary inputs do not require grad


@pytest.mark.parametrize("n", [8, 13, 1536])
def test_swiglu_chain_moves_silu_past_the_up_product(n):
    """transformers' LlamaMLP: silu(gate(x)) * up(x), with the up product between the silu
    and its product. The silu step moves after it and the two replay as one chain, with
    the bits of the steps (the silu loop is the elementwise family's own)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaMLP
    torch.manual_seed(n)
    mlp = LlamaMLP(LlamaConfig(hidden_size=16, intermediate_size=n, num_attention_heads=2, num_key_value_heads=2)).eval()
    x = torch.randn(1, 1, 16)
    with torch.inference_mode():
        g, out = capture(lambda: mlp(x))
        for seed in (1, 2):
            x.copy_(_special((1, 1, 16), seed) * 4)
            g.replay()
            assert torch.equal(out, mlp(x))
    assert g.counts()["chained"] == 2, g.counts()
    names = [s[0] for s in g.steps()]
    assert names.index("silu.default") == names.index("mul.Tensor") - 1, names


def test_static_cache_update_chain():
    """transformers' StaticLayer.update (arange, add, add_, two index_copy_) replays as one
    chain: the same cache contents and `_version` bumps as eager; a position past the cache
    runs the steps, which raise index_copy_'s IndexError as eager does."""
    from transformers.cache_utils import StaticLayer
    torch.manual_seed(0)

    k0, v0 = torch.randn(1, 2, 1, 8), torch.randn(1, 2, 1, 8)

    def layers():
        layer = StaticLayer(max_cache_len=6)
        k, v = k0.clone(), v0.clone()
        layer.update(k, v)  # lazy initialisation, eagerly
        return layer, k, v

    with torch.inference_mode():
        (lg, kg, vg), (le, ke, ve) = layers(), layers()
        g, _ = capture(lambda: lg.update(kg, vg))
        le.update(ke, ve)
        for step in range(4):  # positions 2 to 5 (0: the eager update, 1: the captured one)
            for a, b in ((kg, ke), (vg, ve)):
                x = torch.randn(1, 2, 1, 8)
                a.copy_(x), b.copy_(x)
            versions = lg.keys._version, lg.values._version, lg.cumulative_length._version
            g.replay()
            le.update(ke, ve)
            assert g.counts()["chained"] == 5, g.counts()
            assert torch.equal(lg.keys, le.keys) and torch.equal(lg.values, le.values)
            assert torch.equal(lg.cumulative_length, le.cumulative_length)
            assert (lg.keys._version, lg.values._version, lg.cumulative_length._version) == tuple(x + 1 for x in versions)
        assert int(lg.cumulative_length) == 6
        with pytest.raises(IndexError, match="out of bounds"):
            le.update(ke, ve)
        with pytest.raises(IndexError, match="out of bounds"):
            g.replay()
        assert g.counts()["chained"] == 0


# ---- models ---------------------------------------------------------------------------

def _generate(model, ids, n, **extra):
    with torch.inference_mode():
        return model.generate(**ids, do_sample=False, max_new_tokens=n, min_new_tokens=n, output_logits=True,
                              return_dict_in_generate=True, **extra)


@pytest.fixture(scope="module")
def smollm2():
    from transformers import AutoTokenizer
    import bundled  # the bundled GGUF dequantised once per machine: this test is about replay
    d = bundled.directory()
    tok = AutoTokenizer.from_pretrained(d)
    ids = tok.apply_chat_template([{"role": "user", "content": PROMPT}], add_generation_prompt=True,
                                  return_tensors="pt", return_dict=True)
    return d, ids


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_smollm2_decode_graphs_identical(smollm2, dtype):
    from transformers import AutoModelForCausalLM
    d, ids = smollm2
    model = AutoModelForCausalLM.from_pretrained(d, dtype=getattr(torch, dtype)).eval()
    n = 24
    eager = _generate(model, ids, n, cache_implementation="static")
    w = G.accelerate_decode(model)
    assert "logits_to_keep" in inspect.signature(model.forward).parameters  # transformers reads it
    graphed = _generate(model, ids, n, cache_implementation="static")
    st = w.stats()
    assert st["captures"] == 1 and st["replays"] == n - 3, st  # prefill and 1st decode eager, 2nd captured
    assert torch.equal(eager.sequences, graphed.sequences)
    for a, b in zip(eager.logits, graphed.logits):
        assert torch.equal(a, b)
    # a dynamic cache changes shape every step: the wrapper leaves it alone
    dyn = _generate(model, ids, 8)
    assert w.stats()["replays"] == st["replays"]
    assert torch.equal(dyn.sequences, eager.sequences[:, :dyn.sequences.shape[1]])
    if dtype == "float32":
        ref = run_reference(f"""
import json, sys, torch
sys.path.insert(0, {os.path.join(ROOT, 'python')!r})
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained({d!r})
m = AutoModelForCausalLM.from_pretrained({d!r}, dtype=torch.float32).eval()
ids = tok.apply_chat_template([{{"role": "user", "content": {PROMPT!r}}}], add_generation_prompt=True,
                              return_tensors="pt", return_dict=True)
with torch.inference_mode():
    out = m.generate(**ids, do_sample=False, max_new_tokens={n}, min_new_tokens={n}, cache_implementation="static")
print(json.dumps(out[0].tolist()))
""")
        assert graphed.sequences[0].tolist() == ref
    G.remove_decode_graphs(model)
    assert not isinstance(model.forward, G.DecodeGraphs)


# Causal architectures whose static cache keeps no Python-side counter: all must replay.
# gemma2 / gemma3_text (sliding-window layers count tokens in Python), mpt and mamba (no
# static cache) must run eagerly instead.
NOT_REPLAYED = {"gemma2", "gemma3_text", "mpt", "mamba"}


def test_tiny_architectures_graphs_identical():
    import subprocess
    import make_tiny_models as M
    from conftest import REF_PYTHON
    from transformers import AutoModelForCausalLM
    models_dir = os.path.join(ROOT, "build", "tiny_models")
    build = subprocess.run([REF_PYTHON, os.path.join(ROOT, "tools", "make_tiny_models.py"), models_dir],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-4000:]
    ids = {"input_ids": torch.tensor([[3, 17, 5, 42, 8, 11, 29]])}
    replayed, problems = set(), []
    names = [n for n, (cls, _) in M.MODELS.items() if cls == "AutoModelForCausalLM"]
    for name in names:
        model = AutoModelForCausalLM.from_pretrained(os.path.join(models_dir, name)).eval()
        eager = _generate(model, ids, 40, cache_implementation="static")  # crosses the 32-token windows
        w = G.accelerate_decode(model)
        graphed = _generate(model, ids, 40, cache_implementation="static")
        if w.stats()["replays"]:
            replayed.add(name)
        if not torch.equal(eager.sequences, graphed.sequences) or not all(
                torch.equal(a, b) for a, b in zip(eager.logits, graphed.logits)):
            problems.append(name)
    assert problems == [], f"graphs changed the results of {problems}"
    assert replayed == set(names) - NOT_REPLAYED, sorted(replayed ^ (set(names) - NOT_REPLAYED))

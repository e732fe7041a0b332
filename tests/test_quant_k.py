"""Quantised inference with GGUF's k-quants (issue 20): Q4_K and Q6_K super-blocks read in
place by aten::_tn_quant_linear (kernels/quant.h, "k-quants"; activations as llama.cpp's
Q8_K blocks).

1. The operators against gguf-py's dequantisation (the package transformers' GGUF loader
   uses): dequantise bit for bit; the product within the 8-bit activation rounding bound of
   x @ dequantised W, on our core and on upstream torch (with the input gradient); errors.
   Blocks come from random bytes and from tests/quant_k_model.py's numpy quantiser.
2. A real model: the bundled SmolLM2 GGUF with ffn_down re-quantised to Q4_K_M's Q4_K /
   Q6_K mix (tests/quant_k_model.py, written into build/ at test time), loaded kept
   quantised, against the same file dequantised to float32 by transformers and against
   llama.cpp on the same file (skipped, with the reason, when llama_cpp_python is not in
   .venv-ref); with llama.cpp's own RMSNorm and SwiGLU (tests/ggml_norm_swiglu.py) put in
   place of transformers', each token evaluated alone gives llama.cpp's logits bit for bit.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import REF_PYTHON, ROOT, run_reference

quant = pytest.importorskip("torchnative.quant")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quant_k_model as qk  # noqa: E402
from torchnative.gguf_file import GGUFFile  # noqa: E402

KTYPES = {"q4_k": 12, "q6_k": 14}
BLOCK_BYTES = {12: 144, 14: 210}
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", TQDM_DISABLE="1",
           TOKENIZERS_PARALLELISM="false")


def gguf_dequantize(blocks, qtype):
    import gguf
    return gguf.quants.dequantize(np.asarray(blocks), gguf.GGMLQuantizationType(qtype)).astype(np.float32)


def random_blocks(qtype, n, k, seed=0):
    """n rows of k random elements: random bytes with sane binary16 d (and dmin)."""
    rng = np.random.default_rng(seed)
    bb, nb = BLOCK_BYTES[qtype], k // 256
    b = rng.integers(0, 256, size=(n, nb, bb), dtype=np.uint8)
    d = rng.uniform(0.0005, 0.003, size=(n, nb)).astype(np.float16).view(np.uint8).reshape(n, nb, 2)
    if qtype == 12:
        b[:, :, 0:2] = d
        b[:, :, 2:4] = rng.uniform(0.001, 0.01, size=(n, nb)).astype(np.float16).view(np.uint8).reshape(n, nb, 2)
    else:
        b[:, :, 208:210] = d
    return b.reshape(n, nb * bb)


def quantised_blocks(qtype, n, k, seed=0):
    """Blocks of a Gaussian weight from the numpy quantiser (and the weight)."""
    w = (np.random.default_rng(seed).standard_normal((n, k)) * 0.05).astype(np.float32)
    return qk.QUANTIZERS[qtype](w), w


def rounding_bound(x, w):
    """|quantised product - x·wᵀ| <= Σ_p |x_p - d q_p| |w_p| plus float32 summation: Q8_K
    rounds each x_p to d q_p with |x_p - d q_p| <= amax/254 (amax: max |x| of p's 256-block;
    d is float32, so no binary16 term), slack 1.05 and 1e-6 of Σ|x w|."""
    xb = x.reshape(*x.shape[:-1], -1, 256)
    amax = xb.abs().amax(-1, keepdim=True).expand_as(xb).reshape(x.shape)
    return 1.05 * ((amax / 254) @ w.abs().T) + 1e-6 * (x.abs() @ w.abs().T)


# ---- 1. the operators --------------------------------------------------------------------
@pytest.mark.parametrize("name", list(KTYPES))
@pytest.mark.parametrize("source", ["random", "quantised"])
def test_dequantize_matches_gguf_py(name, source):
    q = KTYPES[name]
    b = random_blocks(q, 37, 512) if source == "random" else quantised_blocks(q, 37, 512)[0]
    ours = quant.dequantize(torch.from_numpy(b), q).numpy()
    assert ours.shape == (37, 512)
    np.testing.assert_array_equal(ours, gguf_dequantize(b, q))


@pytest.mark.parametrize("name", list(KTYPES))
def test_numpy_quantiser_round_trips_through_gguf_py(name):
    """The fixture quantiser writes blocks gguf-py reads back as the weight, within the
    format's step (1/15 of a 32-element range for Q4_K, 1/63 of a 16-element range for Q6_K)."""
    q = KTYPES[name]
    b, w = quantised_blocks(q, 16, 1536, seed=2)
    err = np.abs(gguf_dequantize(b, q) - w).max(-1) / np.abs(w).max(-1)
    assert err.max() <= (0.08 if q == 12 else 0.02), err.max()


@pytest.mark.parametrize("name", list(KTYPES))
@pytest.mark.parametrize("shape", [(1, 1536), (3, 5, 256), (70, 512), (0, 256), (1, 4096)])
def test_linear_matches_dequantised_matmul(name, shape):
    q, k = KTYPES[name], shape[-1]
    b = torch.from_numpy(random_blocks(q, 67, k, seed=len(shape) + k))
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 2
    y = quant.quant_linear(x, b, q)
    w = torch.from_numpy(gguf_dequantize(b.numpy(), q))
    ref = x @ w.T
    assert y.shape == ref.shape and y.dtype == torch.float32
    if ref.numel():
        ratio = ((y - ref).abs() / rounding_bound(x, w)).max().item()
        print(f"{name} {tuple(shape)}: worst error / rounding bound = {ratio:.3f}")
        assert ratio <= 1
    if x.numel() > 1000:  # the activations really are rounded to 8 bits
        assert (y - ref).abs().max().item() > 0


@pytest.mark.parametrize("name", list(KTYPES))
def test_linear_and_gradient_against_upstream(name, tmp_path):
    """Upstream torch multiplies by gguf-py's dequantisation of the same blocks; its
    gradient of x is grad @ W, which our backward formula must give too."""
    q = KTYPES[name]
    b = quantised_blocks(q, 48, 512, seed=3)[0]
    x = np.random.default_rng(4).standard_normal((6, 512)).astype(np.float32)
    g = np.random.default_rng(5).standard_normal((6, 48)).astype(np.float32)
    np.savez(tmp_path / "in.npz", b=b, x=x, g=g)
    run_reference(f"""
import json, numpy as np, torch, gguf
d = np.load({str(tmp_path / 'in.npz')!r})
w = torch.from_numpy(gguf.quants.dequantize(d['b'], gguf.GGMLQuantizationType({q})).astype(np.float32))
x = torch.from_numpy(d['x']).requires_grad_()
y = x @ w.T
y.backward(torch.from_numpy(d['g']))
np.savez({str(tmp_path / 'ref.npz')!r}, y=y.detach().numpy(), gx=x.grad.numpy())
print(json.dumps(1))
""")
    ref = np.load(tmp_path / "ref.npz")
    xt = torch.from_numpy(x).requires_grad_()
    y = quant.quant_linear(xt, torch.from_numpy(b), q)
    assert type(y.grad_fn).__name__ == "TnQuantLinearBackward0"
    y.backward(torch.from_numpy(g))
    bound = rounding_bound(xt.detach(), torch.from_numpy(gguf_dequantize(b, q))).numpy()
    assert (np.abs(y.detach().numpy() - ref["y"]) <= bound).all()
    np.testing.assert_allclose(xt.grad.numpy(), ref["gx"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", list(KTYPES))
def test_linear_against_ggml(name, tmp_path):
    """ggml's own Q8_K quantiser and k-quant dot products (llama.cpp's CPU library, called
    through ctypes by tests/quant_k_ggml.py). The integer sums are the same; the AVX2
    kernels also take ggml's float steps, so there the results are bit-identical (other
    tiers: float32 summation order, 1e-5 of the largest output)."""
    q = KTYPES[name]
    b = quantised_blocks(q, 40, 1536, seed=6)[0]
    # 11 rows: a whole 8-row tile of the AVX2 prefill kernel and a 3-row tail (AVX-512: 4 + 4 + 3)
    x = (np.random.default_rng(7).standard_normal((11, 1536)) * 2).astype(np.float32)
    x[1, 5] = 300.0  # a massive activation, as SmolLM2's ffn_down inputs have
    x[2, :256] = 0.0  # an all-zero block
    np.savez(tmp_path / "in.npz", x=x, b=b)
    r = subprocess.run([REF_PYTHON, os.path.join(ROOT, "tests", "quant_k_ggml.py"), str(tmp_path / "in.npz"),
                        str(tmp_path / "out.npy"), str(q)], capture_output=True, text=True, timeout=600)
    if r.returncode == 3:
        pytest.skip("llama_cpp_python is not installed in .venv-ref (scripts/setup.sh --llama-cpp installs it)")
    assert r.returncode == 0, r.stderr[-3000:]
    ref = np.load(tmp_path / "out.npy")
    ours = quant.quant_linear(torch.from_numpy(x), torch.from_numpy(b), q).numpy()
    if torch._C._tn_isa()[0] == "avx2":
        np.testing.assert_array_equal(ours, ref)
    else:
        assert np.abs(ours - ref).max() <= 1e-5 * np.abs(ref).max()


def test_linear_threads_and_tiers_agree():
    """No result depends on the thread count; the kernels the host can run differ from the
    portable C reference only in float32 summation order (TN_FORCE_ISA=scalar, fresh process)."""
    b = torch.from_numpy(random_blocks(12, 300, 1536, seed=9))
    b6 = torch.from_numpy(random_blocks(14, 300, 1536, seed=10))
    x = torch.randn(9, 1536, generator=torch.Generator().manual_seed(3))
    old = torch.get_num_threads()
    outs = []
    try:
        for t in (1, 2):
            torch.set_num_threads(t)
            outs.append((quant.quant_linear(x, b, 12), quant.quant_linear(x[:1], b6, 14)))
    finally:
        torch.set_num_threads(old)
    assert all(torch.equal(a, c) for a, c in zip(outs[0], outs[1]))
    code = ("import sys, torch, numpy as np; from torchnative import quant; d = np.load(sys.argv[1]); "
            "np.savez(sys.argv[2], y=quant.quant_linear(torch.from_numpy(d['x']), torch.from_numpy(d['b']), 12).numpy())")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(os.path.join(tmp, "in.npz"), x=x.numpy(), b=b.numpy())
        r = subprocess.run([sys.executable, "-c", code, os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")],
                           env=dict(ENV, TN_FORCE_ISA="scalar"), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        scalar = torch.from_numpy(np.load(os.path.join(tmp, "out.npz"))["y"])
    y = outs[0][0]
    assert ((y - scalar).abs().max() / y.abs().max()).item() <= 1e-5


def test_linear_errors():
    b = torch.from_numpy(random_blocks(12, 4, 512))
    with pytest.raises(ValueError, match=r"unsupported quantisation type 13 .*12 = q4_k, 14 = q6_k"):
        quant.quant_linear(torch.randn(2, 512), b, 13)
    with pytest.raises(RuntimeError, match="input has 256 features but the q4_k weight's rows hold 512"):
        quant.quant_linear(torch.randn(2, 256), b, 12)
    with pytest.raises(RuntimeError, match="input has 544 features"):  # not a multiple of 256
        quant.quant_linear(torch.randn(2, 544), b, 12)
    with pytest.raises(RuntimeError, match="whole number of q6_k blocks"):
        quant.quant_linear(torch.randn(2, 512), b, 14)
    m = quant.quant_linear(torch.empty(2, 3, 512, device="meta"), b.to("meta"), 12)
    assert m.shape == (2, 3, 4) and m.is_meta


# ---- 2. the model ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def kfile():
    """The re-quantised SmolLM2 GGUF in build/ (made once, reused while the quantiser and
    the bundled file are unchanged: the name carries their sizes and the quantiser's mtime)."""
    from torchnative.cli import bundled_model
    d, f = bundled_model()
    stamp = f"{os.path.getsize(os.path.join(d, f))}-{int(os.path.getmtime(qk.__file__))}"
    path = os.path.join(ROOT, "build", "models", f"SmolLM2-135M-Instruct.ffn_down-Q4_K_M-{stamp}.gguf")
    plan = qk.kquant_plan(GGUFFile(os.path.join(d, f)))
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        qk.write_requantized(os.path.join(d, f), path, plan)
    return path, plan


def test_kquant_model_loads_kept_quantised(kfile):
    path, plan = kfile
    assert sorted(set(plan.values())) == [12, 14] and len(plan) == 30
    g = GGUFFile(path)
    model = quant.from_gguf(path)
    for name, q in plan.items():
        mod = model.model.layers[int(name.split(".")[1])].mlp.down_proj
        assert isinstance(mod, quant.QuantLinear) and mod.qtype == q
        info = g.tensors[name]
        with open(path, "rb") as fh:  # the blocks are the file's, mapped
            fh.seek(info.offset)
            assert fh.read(64) == bytes(mod.blocks.reshape(-1)[:64].tolist())
        np.testing.assert_array_equal(quant.dequantize(mod.blocks[:3], q).numpy(),
                                      gguf_dequantize(g.tensor_data(name).numpy()[:3], q))


@pytest.fixture(scope="module")
def runs(kfile, tmp_path_factory):
    path = kfile[0]
    tmp = tmp_path_factory.mktemp("quant_k")
    ours = tmp / "ours.npz"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "quant_run.py"), str(ours), path, "16"],
                       capture_output=True, text=True, env=ENV, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    llama = tmp / "llama.npz"
    r = subprocess.run([REF_PYTHON, os.path.join(ROOT, "tests", "quant_llama_cpp.py"), path, str(ours), str(llama)],
                       capture_output=True, text=True, env=ENV, timeout=1800)
    if r.returncode == 3:
        llama = None
    else:
        assert r.returncode == 0, r.stderr[-3000:]
    o = np.load(ours)
    n = len([k for k in o.files if k.startswith("ids")])
    return o, (np.load(llama) if llama else None), n


def _leading_agreement(a, b):
    eq = a[:min(len(a), len(b))] == b[:min(len(a), len(b))]
    return len(eq) if eq.all() else int(np.argmin(eq))


def test_kquant_model_vs_float32_dequantised(runs):
    o, _, n = runs
    report = [{"max_logit_diff": float(np.abs(o[f"quant_logits{i}"] - o[f"float_logits{i}"]).max()),
               "argmax_agree": float((o[f"quant_logits{i}"].argmax(-1) == o[f"float_logits{i}"].argmax(-1)).mean()),
               "argmax_disagree": int((o[f"quant_logits{i}"].argmax(-1) != o[f"float_logits{i}"].argmax(-1)).sum()),
               "leading_tokens_agree": _leading_agreement(o[f"quant_tokens{i}"], o[f"float_tokens{i}"])}
              for i in range(n)]
    print(json.dumps(report))
    # the bounds of the Q4_1 model's test (tests/test_quant.py): the rest of the model is
    # that file's blocks, with the same 8-bit activation rounding. Argmax agreement moves
    # with the float32 summation order of the Q4_1 products, which the 8-bit rounding of
    # the next activations amplifies: >= 0.9 with the file's layout, 33 of 37 positions
    # (0.892) on all prompts with the repacked layout (session 21); 0.85 is 31 of 37.
    # Session 41: silu took upstream's bits (the vector exp in SLEEF's form) and this model's
    # disagreements went from 3-4 to 5-6 positions of the prompts' 37-39 (the largest logit
    # difference from 2.95 to 2.43): its Q8_K blocks round ffn_down's input, silu(gate) * up,
    # 256 values to one scale, so last-bit changes there move near-ties. Bounded as a count:
    # at most 7 positions of a prompt (0.81 of 37).
    assert max(r["max_logit_diff"] for r in report) <= 4.0, report
    assert max(r["argmax_disagree"] for r in report) <= 7, report


def _llama_report(o, lc, n):
    return [{"first_alone_max_diff": float(np.abs(o[f"quant_logits{i}"][0] - lc[f"first_alone{i}"]).max()),
             "first_position_max_diff": float(np.abs(o[f"quant_logits{i}"][0] - lc[f"logits{i}"][0]).max()),
             "llama_batch_vs_alone": float(np.abs(lc[f"logits{i}"][0] - lc[f"first_alone{i}"]).max()),
             "max_logit_diff": float(np.abs(o[f"quant_logits{i}"] - lc[f"logits{i}"]).max()),
             "rms_logit_diff": float(np.sqrt(((o[f"quant_logits{i}"] - lc[f"logits{i}"]) ** 2).mean())),
             "argmax_agree": float((o[f"quant_logits{i}"].argmax(-1) == lc[f"logits{i}"].argmax(-1)).mean()),
             "float32_argmax_agree": float((o[f"float_logits{i}"].argmax(-1) == lc[f"logits{i}"].argmax(-1)).mean()),
             "leading_tokens_agree": _leading_agreement(o[f"quant_tokens{i}"], lc[f"tokens{i}"][:len(o[f"quant_tokens{i}"])])}
            for i in range(n)]


def test_kquant_model_vs_llama_cpp(runs):
    """Measured on the AVX2 VM (docs/INFERENCE.md, k-quants): first position 0.25 from
    llama.cpp's batched prompt, 0.21 from its first token evaluated alone (llama.cpp itself
    moves by 0.16 between the two; the 0.21 is its RMSNorm and SwiGLU formulas: the next
    tests); all positions max 2.0, rms 0.38; argmax 89-90 % where the float32-dequantised
    model agrees with llama.cpp at 97 %."""
    o, lc, n = runs
    if lc is None:
        pytest.skip("llama_cpp_python is not installed in .venv-ref (scripts/setup.sh --llama-cpp installs it)")
    report = _llama_report(o, lc, n)
    print(json.dumps(report))
    assert max(r["first_position_max_diff"] for r in report) <= 0.3, report
    assert max(r["max_logit_diff"] for r in report) <= 3.0, report
    assert min(r["argmax_agree"] for r in report) >= 0.85, report


@pytest.fixture(scope="module")
def llama_alone(kfile, runs, tmp_path_factory):
    """llama.cpp's logits of the prompts' first 12 distinct tokens, each evaluated alone (one
    row: the vec_dot path), and the directory of its ggml libraries; None without llama_cpp."""
    o, _, n = runs
    tokens = list(dict.fromkeys(int(t) for i in range(n) for t in o[f"ids{i}"]))[:12]
    out = tmp_path_factory.mktemp("quant_k_alone") / "alone.npz"
    r = subprocess.run([REF_PYTHON, os.path.join(ROOT, "tests", "ggml_norm_swiglu.py"), kfile[0], str(out),
                        ",".join(map(str, tokens))], capture_output=True, text=True, env=ENV, timeout=1800)
    if r.returncode == 3:
        return None
    assert r.returncode == 0, r.stderr[-3000:]
    return np.load(out)


def test_kquant_model_with_ggml_norm_and_swiglu_bit_identical_to_llama_cpp(kfile, llama_alone):
    """Why this file's first token was 0.21 from llama.cpp (docs/INFERENCE.md, k-quants):
    not the k-quant path but llama.cpp's float32 RMSNorm (mean of squares summed in double)
    and SwiGLU (its own vector expf), which differ from transformers' formulas by 1-3 ulps.
    Q8_K keeps its block scale in float32, so an ulp on the largest |x| of a 256-block moves
    every output of that product by an ulp (Q8_0/Q8_1 round their scale to binary16, which
    absorbs it: the Q4_1 file is bit-identical without this); the drift then crosses an 8-bit
    rounding boundary somewhere in the 30 layers for some tokens. With ggml's own two
    operators (ctypes) in place of transformers', every token alone is llama.cpp's logits bit
    for bit; with transformers' (ours = upstream torch's: the next test) token 1, the prompts'
    first, is 0.21 off (measured, AVX2 VM)."""
    from ggml_norm_swiglu import GGMLNormSwiGLU

    if llama_alone is None:
        pytest.skip("llama_cpp_python is not installed in .venv-ref (scripts/setup.sh --llama-cpp installs it)")
    tokens = [int(t) for t in llama_alone["tokens"]]
    # the file's own layout: its kernels add a block's lanes in llama.cpp's order (the default
    # load's repacked Q4_1 rows add in the reference kernel's, tests/test_quant.py)
    model = quant.from_gguf(kfile[0], repack_layout=False)

    def diffs():
        with torch.inference_mode():
            return {t: float(np.abs(model(torch.tensor([[t]])).logits[0, 0].numpy() - llama_alone[f"alone{t}"]).max())
                    for t in tokens}

    transformers_formulas = diffs()
    n_layers = len(model.model.layers)
    assert GGMLNormSwiGLU(str(llama_alone["libdir"])).use_in(model) == 3 * n_layers + 1
    ggml_formulas = diffs()
    print(json.dumps({"transformers' RMSNorm and SiLU": transformers_formulas, "ggml's": ggml_formulas}))
    assert all(d == 0 for d in ggml_formulas.values()), ggml_formulas


def test_kquant_model_rms_norm_is_upstream_torch_s(kfile, tmp_path):
    """The other side of the previous test: transformers' LlamaRMSNorm on our core gives
    upstream torch's values bit for bit on the inputs every norm of the kept-quantised model
    sees (a whole prompt), so the formula difference from llama.cpp is not ours."""
    model = quant.from_gguf(kfile[0])
    seen = {}
    norms = {name: mod for name, mod in model.named_modules() if type(mod).__name__.endswith("RMSNorm")}
    for name, mod in norms.items():
        mod.register_forward_hook(lambda mod, args, out, name=name: seen.__setitem__(
            name, (args[0].detach().numpy().copy(), out.detach().numpy().copy())))
    with torch.inference_mode():
        model(torch.tensor([[1, 9690, 198, 2683, 314, 253, 17, 4000, 1000, 12345]]))
    assert len(seen) == len(norms) == 2 * len(model.model.layers) + 1
    np.savez(tmp_path / "in.npz", **{f"x{i}": seen[k][0] for i, k in enumerate(norms)},
             **{f"w{i}": norms[k].weight.detach().numpy() for i, k in enumerate(norms)},
             eps=np.array([norms[k].variance_epsilon for k in norms]))
    run_reference(f"""
import json, numpy as np, torch
from transformers.models.llama.modeling_llama import LlamaRMSNorm
d = np.load({str(tmp_path / 'in.npz')!r})
out = {{}}
for i in range(len(d['eps'])):
    m = LlamaRMSNorm(d[f'w{{i}}'].shape[0], eps=float(d['eps'][i]))
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(d[f'w{{i}}']))
        out[f'y{{i}}'] = m(torch.from_numpy(d[f'x{{i}}'])).numpy()
np.savez({str(tmp_path / 'ref.npz')!r}, **out)
print(json.dumps(1))
""")
    ref = np.load(tmp_path / "ref.npz")
    for i, k in enumerate(norms):
        np.testing.assert_array_equal(seen[k][1], ref[f"y{i}"], err_msg=k)

"""Quantised inference (issue 20): GGUF weights kept in their blocks.

1. The operators (aten::_tn_quant_linear / _tn_quant_dequantize, src/ops/quant_linear.c)
   against a dequantise-then-multiply on our core and on upstream torch (weights
   dequantised by gguf-py, the package transformers' GGUF loader uses), their backward,
   and their errors.
2. Loading (torchnative.quant.from_gguf): the config transformers builds, embeddings and
   norms as the file has them, the tied lm_head sharing the embedding's blocks, the
   blocks mapped from the file, and one-line errors for truncated or corrupted files and
   unsupported types.
3. The model: greedy tokens and prompt logits of the kept-quantised path against the
   float32-dequantised path (tests/quant_run.py), and against llama.cpp's own logits on the
   same file (tests/quant_llama_cpp.py under .venv-ref; skipped, with the reason, only when
   llama_cpp_python is not installed there: `scripts/setup.sh --llama-cpp`). Decoding with
   operator graphs gives the eager tokens.

Tolerances are measured (docs/INFERENCE.md, "Quantised inference", has the numbers).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import REF_PYTHON, ROOT, run_reference

quant = pytest.importorskip("torchnative.quant")
from torchnative.cli import bundled_model  # noqa: E402
from torchnative.gguf_file import GGUFFile  # noqa: E402

QTYPES = {"q4_0": 2, "q4_1": 3, "q8_0": 8}
BLOCK_BYTES = {2: 18, 3: 20, 8: 34}


def rounding_bound(x, w):
    """A bound on |quantised product - x·wᵀ| that follows from the activation rounding
    (kernels/quant.h): each x_p is replaced by d·q with |x_p - (amax/127)·q| <= amax/254
    (amax: the max |x| of p's 32-block) and d = binary16(amax/127) (relative error
    <= 2^-11), so |error_p| <= amax/254 + |x_p|·2^-11 (slack 1.05 and float32 summation,
    1e-6 of Σ|x w|). The worst measured error is 9-11 % of it at k = 576, 28-32 % at
    k = 64."""
    xb = x.reshape(*x.shape[:-1], -1, 32)
    amax = xb.abs().amax(-1, keepdim=True).expand_as(xb).reshape(x.shape)
    per = amax / 254 + x.abs() * 2.0 ** -11
    return 1.05 * (per @ w.abs().T) + 1e-6 * (x.abs() @ w.abs().T)
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", TQDM_DISABLE="1",
           TOKENIZERS_PARALLELISM="false")


def gguf_path():
    d, f = bundled_model()
    return os.path.join(d, f)


def random_blocks(qtype, n, k, seed=0):
    """n rows of k random elements in ggml blocks (numpy uint8 (n, k/32 * block bytes))."""
    rng = np.random.default_rng(seed)
    bb, nb = BLOCK_BYTES[qtype], k // 32
    b = rng.integers(0, 256, size=(n, nb, bb), dtype=np.uint8)
    b[:, :, 0:2] = (rng.uniform(0.005, 0.03, size=(n, nb)).astype(np.float16)).view(np.uint8).reshape(n, nb, 2)
    if qtype == 3:
        b[:, :, 2:4] = (rng.uniform(-0.2, -0.05, size=(n, nb)).astype(np.float16)).view(np.uint8).reshape(n, nb, 2)
    return b.reshape(n, nb * bb)


def gguf_dequantize(blocks, qtype):
    import gguf
    return gguf.quants.dequantize(blocks, gguf.GGMLQuantizationType(qtype)).astype(np.float32)


# ---- 1. the operators --------------------------------------------------------------------
@pytest.mark.parametrize("name", list(QTYPES))
def test_dequantize_matches_gguf_py(name):
    q = QTYPES[name]
    b = random_blocks(q, 37, 96)
    ours = quant.dequantize(torch.from_numpy(b), q).numpy()
    assert ours.shape == (37, 96)
    np.testing.assert_array_equal(ours, gguf_dequantize(b, q))


@pytest.mark.parametrize("name", list(QTYPES))
@pytest.mark.parametrize("shape", [(1, 576), (3, 5, 576), (70, 64), (0, 32)])
def test_linear_matches_dequantised_matmul(name, shape):
    q, k = QTYPES[name], shape[-1]
    b = torch.from_numpy(random_blocks(q, 67, k, seed=len(shape)))
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 2
    y = quant.quant_linear(x, b, q)
    w = quant.dequantize(b, q)
    ref = x @ w.T
    assert y.shape == ref.shape and y.dtype == torch.float32
    if ref.numel():
        ratio = ((y - ref).abs() / rounding_bound(x, w)).max().item()
        print(f"{name} {tuple(shape)}: worst error / rounding bound = {ratio:.3f}")
        assert ratio <= 1
    # not trivially equal: the activations really are rounded to 8 bits
    if x.numel() > 1000:
        assert (y - ref).abs().max().item() > 0


@pytest.mark.parametrize("name", list(QTYPES))
def test_linear_and_gradient_against_upstream(name, tmp_path):
    """Upstream torch multiplies by gguf-py's dequantisation of the same blocks; its
    gradient of x is grad @ W, which our backward formula must give too."""
    q = QTYPES[name]
    b = random_blocks(q, 48, 128, seed=3)
    x = np.random.default_rng(4).standard_normal((6, 128)).astype(np.float32)
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


def test_linear_errors():
    b = torch.from_numpy(random_blocks(3, 4, 64))
    with pytest.raises(ValueError, match="unsupported quantisation type 13"):
        quant.quant_linear(torch.randn(2, 64), b, 13)
    with pytest.raises(RuntimeError, match="input has 96 features but the q4_1 weight's rows hold 64"):
        quant.quant_linear(torch.randn(2, 96), b, 3)
    with pytest.raises(RuntimeError, match="uint8"):
        quant.quant_linear(torch.randn(2, 64), b.float(), 3)
    with pytest.raises(RuntimeError, match="float32 input"):
        quant.quant_linear(torch.randn(2, 64, dtype=torch.float64), b, 3)
    with pytest.raises(RuntimeError, match="whole number of q8_0 blocks"):
        quant.quant_linear(torch.randn(2, 64), b, 8)


def test_linear_non_contiguous_input_and_meta():
    q = 3
    b = torch.from_numpy(random_blocks(q, 16, 64))
    x = torch.randn(64, 5).T  # rows of 64, non-contiguous
    np.testing.assert_array_equal(quant.quant_linear(x, b, q).numpy(), quant.quant_linear(x.contiguous(), b, q).numpy())
    m = quant.quant_linear(torch.empty(2, 3, 64, device="meta"), b.to("meta"), q)
    assert m.shape == (2, 3, 16) and m.is_meta


@pytest.mark.parametrize("name", list(QTYPES))
def test_x8_layout_ops(name):
    """_tn_quant_repack: the 8-row interleaved layout (kernels/quant.h) dequantises to the same
    floats, and its product (the x8 kernels, bit for bit the base format's reference kernel,
    tests/c/test_quant.c) agrees with the base layout's up to float summation order, for
    decode and prefill row counts, with the gradient of x through it."""
    q = QTYPES[name]
    b = torch.from_numpy(random_blocks(q, 72, 576, seed=7))
    bx = quant._call("_tn_quant_repack", b, q)
    assert bx.shape == b.shape and bx.dtype == torch.uint8 and not torch.equal(bx, b)
    assert quant.fast_layout(q) in (q, 256 | q)
    np.testing.assert_array_equal(quant.dequantize(bx, 256 | q).numpy(), quant.dequantize(b, q).numpy())
    for m in (1, 3, 17):
        x = torch.randn(m, 576, generator=torch.Generator().manual_seed(m), requires_grad=True)
        y = quant.quant_linear(x, bx, 256 | q)
        want = quant.quant_linear(x.detach(), b, q)  # float32 sums in another order
        torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5 * want.abs().max().item())
        y.sum().backward()
        torch.testing.assert_close(x.grad, quant.dequantize(b, q).sum(0).expand(m, -1))
    same, layout = quant.repack(b, q)
    assert layout == quant.fast_layout(q) and (layout == q) == (same is b)


def test_x8_layout_errors():
    b = torch.from_numpy(random_blocks(3, 12, 64))
    with pytest.raises(RuntimeError, match="12 rows, not a multiple of 8"):
        quant._call("_tn_quant_repack", b, 3)
    with pytest.raises(ValueError, match="exists for q4_0, q4_1 and q8_0, not q4_k"):
        quant._call("_tn_quant_repack", torch.zeros(8, 144, dtype=torch.uint8), 12)
    with pytest.raises(RuntimeError, match="multiple of 8 rows"):
        quant.quant_linear(torch.randn(2, 64), b, 256 | 3)
    with pytest.raises(ValueError, match="unsupported quantisation type 260"):
        quant.fast_layout(260)
    # a tensor whose rows do not come in groups of 8 is left in its layout by repack()
    same, layout = quant.repack(b, 3)
    assert same is b and layout == 3


# ---- 2. loading --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qmodel():
    return quant.from_gguf(gguf_path())


@pytest.fixture(scope="module")
def qmodel_mapped():
    return quant.from_gguf(gguf_path(), repack_layout=False)


def test_model_structure_and_blocks_are_mapped(qmodel_mapped):
    qmodel = qmodel_mapped
    path = gguf_path()
    g = GGUFFile(path)
    attn = qmodel.model.layers[0].self_attn
    assert type(qmodel).__name__ == "LlamaForCausalLM"
    assert isinstance(attn.v_proj, quant.QuantLinear) and isinstance(qmodel.model.embed_tokens, quant.QuantEmbedding)
    # the tied lm_head shares the embedding's Q8_0 blocks, and those are the file's mapping
    assert qmodel.lm_head.blocks.data_ptr() == qmodel.model.embed_tokens.blocks.data_ptr()
    assert qmodel.lm_head.qtype == 8
    v = g.tensors["blk.0.attn_v.weight"]
    with open(path, "rb") as f:
        f.seek(v.offset)
        assert f.read(64) == bytes(attn.v_proj.blocks.reshape(-1)[:64].tolist())
    # every float parameter is a norm weight with the file's values; no weight is float
    params = dict(qmodel.named_parameters())
    assert all(p.dim() == 1 for p in params.values()) and len(params) == 61
    np.testing.assert_array_equal(params["model.norm.weight"].detach().numpy(),
                                  g.tensor_f32("output_norm.weight").numpy())


def test_repacked_layers_hold_the_files_weights(qmodel, qmodel_mapped):
    """The default load copies the linear layers' blocks once into the layout this host's
    kernels read fastest (kernels/quant.h "the x8 layouts": 8-row groups on AVX2 and AVX-512 hosts): every
    layer dequantises to the mapped file's matrix, the products agree with the mapped
    layers' up to float summation order, and the embedding stays the file's mapping."""
    fast = {t: quant.fast_layout(t) for t in (3, 8)}
    mapped = dict(qmodel_mapped.named_modules())
    n = 0
    for name, mod in qmodel.named_modules():
        if not isinstance(mod, quant.QuantLinear):
            continue
        ref = mapped[name]
        assert mod.qtype == fast[ref.qtype], name
        if n < 8 or name == "lm_head":
            np.testing.assert_array_equal(quant.dequantize(mod.blocks, mod.qtype).numpy(),
                                          quant.dequantize(ref.blocks, ref.qtype).numpy())
            x = torch.randn(5, mod.in_features, generator=torch.Generator().manual_seed(n))
            want = ref(x)  # float32 sums in another order: 1e-5 of the output's scale
            torch.testing.assert_close(mod(x), want, rtol=1e-5, atol=1e-5 * want.abs().max().item())
        n += 1
    assert n == 30 * 7 + 1
    emb = qmodel.model.embed_tokens
    assert isinstance(emb, quant.QuantEmbedding) and emb.qtype == 8
    assert torch.equal(emb.blocks, qmodel_mapped.model.embed_tokens.blocks)
    if fast[3] != 3:
        assert "qtype=Q4_1x8" in repr(qmodel.model.layers[0].mlp.down_proj)


def test_release_drops_pages_but_keeps_the_bytes():
    """GGUFFile.release (after a repack copied a tensor) drops its resident pages; the
    mapping is private and never written, so the bytes read back are still the file's."""
    g = GGUFFile(gguf_path())
    name = "blk.2.ffn_down.weight"
    t = g.tensor_data(name)
    before = t.clone()
    g.release(name)
    assert torch.equal(t, before)
    with open(gguf_path(), "rb") as f:
        f.seek(g.tensors[name].offset)
        assert f.read(4096) == bytes(t.reshape(-1)[:4096].tolist())


def test_q_k_rows_reverse_permuted_like_transformers(qmodel):
    """attn_q / attn_k block rows permuted once at load give the matrix transformers'
    loader builds by dequantising and then reverse-permuting."""
    from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor
    g = GGUFFile(gguf_path())
    proc = LlamaTensorProcessor(config=qmodel.config.to_dict())
    for gname, mod in (("blk.3.attn_q.weight", qmodel.model.layers[3].self_attn.q_proj),
                       ("blk.3.attn_k.weight", qmodel.model.layers[3].self_attn.k_proj)):
        raw = g.tensor_data(gname).numpy()
        expect = proc.process(weights=gguf_dequantize(raw, 3), name=gname).weights
        np.testing.assert_array_equal(quant.dequantize(mod.blocks, mod.qtype).numpy(), expect)


def test_config_matches_transformers_gguf_config():
    from transformers import AutoConfig
    d, f = bundled_model()
    ours = quant.config_from_gguf(GGUFFile(gguf_path())).to_dict()
    theirs = AutoConfig.from_pretrained(d, gguf_file=f).to_dict()
    for key in ("_name_or_path", "transformers_version"):
        ours.pop(key, None), theirs.pop(key, None)
    assert ours == theirs


def test_embedding_rows_are_the_dequantised_rows(qmodel):
    g = GGUFFile(gguf_path())
    ids = torch.tensor([[0, 5, 49151], [17, 17, 300]])
    rows = qmodel.model.embed_tokens(ids)
    expect = gguf_dequantize(g.tensor_data("token_embd.weight").numpy()[ids.reshape(-1).numpy()], 8)
    np.testing.assert_array_equal(rows.reshape(-1, 576).numpy(), expect)


def _copy_with(tmp_path, name, edit=None, size=None):
    src = gguf_path()
    dst = tmp_path / name
    shutil.copyfile(src, dst)
    if size is not None:
        os.truncate(dst, size)
    if edit is not None:
        with open(dst, "r+b") as f:
            head = f.read(4 << 20)
            edit(f, head)
    return str(dst)


def _set_type(tensor, ggml_type):
    """An edit setting `tensor`'s ggml type field in the tensor table."""
    def edit(f, head):
        name = tensor.encode()
        at = head.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
        ndim = struct.unpack_from("<I", head, at)[0]
        f.seek(at + 4 + 8 * ndim)
        f.write(struct.pack("<I", ggml_type))
    return edit


def test_load_errors_are_one_line_value_errors(tmp_path):
    size = os.path.getsize(gguf_path())
    cases = [
        (_copy_with(tmp_path, "half.gguf", size=size // 2), r"truncated GGUF file: tensor '.*' needs bytes"),
        (_copy_with(tmp_path, "head.gguf", size=3000), r"truncated GGUF file \(header or metadata"),
        (_copy_with(tmp_path, "magic.gguf", edit=lambda f, h: (f.seek(0), f.write(b"GGUX"))), "not a GGUF file"),
        (_copy_with(tmp_path, "unknown.gguf", edit=_set_type("blk.0.attn_q.weight", 99)),
         "tensor 'blk.0.attn_q.weight' has unknown ggml type 99"),
        (_copy_with(tmp_path, "q5.gguf", edit=_set_type("blk.2.ffn_up.weight", 6)),
         r"tensor 'blk.2.ffn_up.weight' is Q5_0; the kept-quantised path reads Q4_0, Q4_1, Q8_0, Q4_K, Q6_K"),
        (str(tmp_path / "missing.gguf"), "cannot open GGUF file"),
    ]
    for path, pattern in cases:
        with pytest.raises(ValueError, match=pattern) as e:
            quant.from_gguf(path)
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith(path), msg


def test_cli_default_runs_kept_quantised():
    r = subprocess.run([sys.executable, "-m", "torchnative", "generate", "Name a colour.", "--max-new-tokens", "8"],
                       capture_output=True, text=True, env=ENV, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "(kept quantised)" in r.stderr and re.search(r"torchnative: [1-8] tokens in", r.stderr), r.stderr[-3000:]
    bad = subprocess.run([sys.executable, "-m", "torchnative", "generate", "hi", "--model",
                          os.path.join(ROOT, "README.md")], capture_output=True, text=True, env=ENV, timeout=600)
    assert bad.returncode == 1


def test_graph_decode_gives_eager_tokens(qmodel):
    """Static cache + operator graphs (the CLI's decode) capture _tn_quant_linear at the
    door and replay it: the same greedy tokens as eager decoding."""
    from torchnative.graphs import accelerate_decode, remove_decode_graphs
    # the CLI's default question in SmolLM2's chat template
    ids = torch.tensor([[1, 9690, 198, 2683, 359, 253, 5356, 5646, 11173, 3365, 3511, 308, 34519, 28, 7018, 411, 407,
                         19712, 8182, 2, 198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198, 1, 520, 9531, 198]])
    kw = dict(attention_mask=torch.ones_like(ids), max_new_tokens=24, min_new_tokens=24, do_sample=False)
    with torch.inference_mode():
        eager = qmodel.generate(ids, **kw)
    graphs = accelerate_decode(qmodel)
    try:
        with torch.inference_mode():
            fast = qmodel.generate(ids, cache_implementation="static", **kw)
        st = graphs.stats()
    finally:
        remove_decode_graphs(qmodel)
    assert st["replays"] >= 20, st
    assert fast.tolist() == eager.tolist()


# ---- 3. the model: against float32-dequantised and llama.cpp --------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("quant")
    ours = tmp / "ours.npz"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "quant_run.py"), str(ours)],
                       capture_output=True, text=True, env=ENV, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    llama = tmp / "llama.npz"
    r = subprocess.run([REF_PYTHON, os.path.join(ROOT, "tests", "quant_llama_cpp.py"), gguf_path(), str(ours), str(llama)],
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


def test_kept_quantised_vs_float32_dequantised(runs):
    o, _, n = runs
    report = []
    for i in range(n):
        q, f = o[f"quant_logits{i}"], o[f"float_logits{i}"]
        report.append({"max_logit_diff": float(np.abs(q - f).max()),
                       "argmax_agree": float((q.argmax(-1) == f.argmax(-1)).mean()),
                       "leading_tokens_agree": _leading_agreement(o[f"quant_tokens{i}"], o[f"float_tokens{i}"]),
                       "tokens_agree": int((o[f"quant_tokens{i}"] == o[f"float_tokens{i}"]).sum())})
    print(json.dumps(report))
    # measured (docs/INFERENCE.md): max |diff| 2.62 on logits up to 38 (8-bit activations
    # amplified over 30 layers by the model's massive-activation channel), prompt-position
    # argmax agreement 97-100 %; greedy continuations agree for 0-64 leading tokens
    assert max(r["max_logit_diff"] for r in report) <= 4.0, report
    assert min(r["argmax_agree"] for r in report) >= 0.9, report


def test_kept_quantised_vs_llama_cpp(runs):
    o, lc, n = runs
    if lc is None:
        pytest.skip("llama_cpp_python is not installed in .venv-ref (scripts/setup.sh --llama-cpp installs it)")
    report = []
    for i in range(n):
        q, ref = o[f"quant_logits{i}"], lc[f"logits{i}"]
        report.append({"first_position_max_diff": float(np.abs(q[0] - ref[0]).max()),
                       "max_logit_diff": float(np.abs(q - ref).max()),
                       "rms_logit_diff": float(np.sqrt(((q - ref) ** 2).mean())),
                       "float32_max_logit_diff": float(np.abs(o[f"float_logits{i}"] - ref).max()),
                       "argmax_agree": float((q.argmax(-1) == ref.argmax(-1)).mean()),
                       "leading_tokens_agree": _leading_agreement(o[f"quant_tokens{i}"], lc[f"tokens{i}"]),
                       "float32_leading_tokens_agree": _leading_agreement(o[f"float_tokens{i}"], lc[f"tokens{i}"]),
                       "rms_float32_logit_diff": float(np.sqrt(((o[f"float_logits{i}"] - ref) ** 2).mean()))})
    mapped = [float(np.abs(o[f"mapped_logits{i}"][0] - lc[f"logits{i}"][0]).max()) for i in range(n)]
    print(json.dumps(report), "file layout, first position:", mapped)
    # The first position (attention over one token, so no rotary or softmax rounding), the
    # file's own layout: measured bit-identical on AVX2 and AVX-512 hosts (our kernels add
    # a block's lanes in llama.cpp's order).
    assert max(mapped) <= 1e-3, mapped
    # The default load's repacked layout (8-row groups, AVX2 and AVX-512 hosts) adds each row's blocks
    # in the reference kernel's order instead: the float32 sums differ from llama.cpp's in
    # the last bits, and rounding the next layer's activations to 8 bits turns some of
    # those into whole steps of d_x: measured 0.082 on all four prompts (session 21).
    assert max(r["first_position_max_diff"] for r in report) <= 0.25, report
    # Later positions: rotary/attention rounding differs in float32, and the 8-bit
    # activation rounding amplifies it; measured max 2.05, rms 0.31-0.36 (float32-
    # dequantised vs llama.cpp: max 2.55, rms 0.44-0.48), argmax agreement 100 %.
    # Correction (session 26): with correctly rounded float32 sin/cos (the rotary tables;
    # 5,904 of 262,144 table values moved by an ulp) max 1.69 and rms 0.29-0.31, but
    # position 15 of the shared chat prefix flips in every prompt (and position 37 of one):
    # llama.cpp's own logits rank the two tokens 0.152 (0.018) apart. So an argmax
    # disagreement is allowed only at such a near-tie of the reference, never where it
    # decides clearly.
    # Correction (session 39): with the repacked layout on an AVX-512 VNNI host as well,
    # prompt 2's position 27 flips where llama.cpp ranks its two tokens 0.375 apart (ours
    # 0.049 the other way; max |diff| at that position 0.72, rms over the prompt 0.30); the
    # file's layout agrees there and at every position. A near-tie is now a gap within
    # 0.5, about 1.7 rms of the differences (0.27-0.30), for both layouts.
    assert max(r["max_logit_diff"] for r in report) <= 3.0, report
    assert min(r["argmax_agree"] for r in report) >= 0.9, report
    for i in range(n):
        ref = lc[f"logits{i}"]
        for name in ("quant_logits", "mapped_logits"):
            q = o[f"{name}{i}"]
            rt, qt = ref[:len(q)].argmax(-1), q.argmax(-1)
            gaps = [float(ref[p, rt[p]] - ref[p, qt[p]]) for p in np.nonzero(rt != qt)[0]]
            assert all(g <= 0.5 for g in gaps), (name, i, gaps)


# ---- 4. quantising a float model (torchnative.quantize, python/torchnative/quantize_model.py)
from torchnative import quantize_model as qm  # noqa: E402


def _np_int4_reference(w, g, scale_dtype):
    """numpy's symmetric int4 grouping of w (n, k) as quantize_model documents it."""
    n, k = w.shape
    wg = w.astype(np.float32).reshape(n, k // g, g)
    s = np.maximum(np.abs(wg).max(-1) / np.float32(7.5), np.float32(1e-12)).astype(np.float32)
    if scale_dtype == torch.bfloat16:
        s = torch.from_numpy(s).to(torch.bfloat16).float().numpy()
    q = np.clip(np.round(wg / s[..., None]), -8, 7)
    return q.reshape(n, k).astype(np.int64), s


@pytest.mark.parametrize("g", qm.GROUP_SIZES)
@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.bfloat16])
def test_int4_groups_packing_and_dequantize(g, scale_dtype):
    w = np.random.default_rng(g).standard_normal((9, 512)).astype(np.float32) * 0.05
    packed, scales = qm.quantize_int4_groups(torch.from_numpy(w), g, scale_dtype)
    q, s = _np_int4_reference(w, g, scale_dtype)
    assert packed.dtype == torch.uint8 and packed.shape == (9, 256) and scales.dtype == scale_dtype
    np.testing.assert_array_equal(scales.float().numpy(), s)
    # kernels/quant.h's chunk layout: element 32c+j low nibble of byte 16c+j, 32c+16+j high, + 8
    u = (q + 8).reshape(9, 16, 2, 16)
    np.testing.assert_array_equal(packed.numpy(), (u[:, :, 0, :] | (u[:, :, 1, :] << 4)).reshape(9, 256))
    deq = qm._call("_tn_quant_i4_dequantize", packed, scales, g).numpy()
    np.testing.assert_array_equal(deq, (q.reshape(9, 512 // g, g) * s[..., None]).reshape(9, 512).astype(np.float32))


def _fake_quant_rows(x):
    """Per-token int8 rounding (kernels/quant.h) in numpy float32, returned as float64."""
    a = np.abs(x).max(-1, keepdims=True)
    inv = np.where(a > 0, np.float32(127) / np.where(a > 0, a, 1), 0).astype(np.float32)
    return (np.round(x * inv).astype(np.float64) * (a.astype(np.float64) / 127)), a


@pytest.mark.parametrize("g", qm.GROUP_SIZES)
@pytest.mark.parametrize("shape", [(1, 768), (3, 5, 512), (70, 256), (0, 256)])
def test_8da4w_linear_matches_fake_quantised_product(g, shape):
    """y = (per-token fake-quantised x) @ dequantised Wᵀ: only float32 summation order
    differs (the int32 group sums are exact). Measured worst |Δ| / Σ|x' w|: ~1e-7."""
    k = shape[-1]
    if k % g:
        pytest.skip("group does not divide k")
    w = torch.randn(67, k, generator=torch.Generator().manual_seed(g)) * 0.05
    packed, scales = qm.quantize_int4_groups(w, g, torch.bfloat16 if g == 64 else torch.float32)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(k)) * 3
    y = qm._call("_tn_quant_linear_8da4w", x, packed, scales, g)
    assert y.shape == (*shape[:-1], 67) and y.dtype == torch.float32
    wd = qm._call("_tn_quant_i4_dequantize", packed, scales, g).numpy().astype(np.float64)
    xq, _ = _fake_quant_rows(x.numpy().reshape(-1, k))
    ref = (xq @ wd.T).reshape(y.shape)
    scale = np.abs(xq) @ np.abs(wd).T
    if ref.size:
        worst = (np.abs(y.numpy().reshape(-1, 67) - ref.reshape(-1, 67)) / (scale + 1e-30)).max()
        print(f"8da4w g={g} {shape}: worst |Δ| / Σ|x' w| = {worst:.3g}")
        assert worst <= 1e-5
        # the activations really are rounded: the unrounded product differs by far more
        exact = x.numpy().reshape(-1, k).astype(np.float64) @ wd.T
        assert np.abs(exact - ref.reshape(-1, 67)).max() > 100 * np.abs(y.numpy().reshape(-1, 67) - ref.reshape(-1, 67)).max()


def test_8da4w_op_errors():
    w = torch.randn(8, 128)
    packed, scales = qm.quantize_int4_groups(w, 64)
    f = lambda *a: qm._call("_tn_quant_linear_8da4w", *a)  # noqa: E731
    with pytest.raises(RuntimeError, match="group_size must be a positive multiple of 32, got 48"):
        f(torch.randn(2, 128), packed, scales, 48)
    with pytest.raises(RuntimeError, match="rows hold 128 int4 values, expected 96"):
        f(torch.randn(2, 96), packed, scales, 32)
    with pytest.raises(RuntimeError, match=r"expected scales \(8, 4\)"):
        f(torch.randn(2, 128), packed, scales, 32)
    with pytest.raises(RuntimeError, match="float32 input"):
        f(torch.randn(2, 128, dtype=torch.float64), packed, scales, 64)
    with pytest.raises(RuntimeError, match="2-D uint8"):
        f(torch.randn(2, 128), packed.to(torch.int8), scales, 64)


@pytest.mark.parametrize("g", qm.GROUP_SIZES)
@pytest.mark.parametrize("n", [8, 67])
def test_8da4w_x8_layout_matches_plain(g, n):
    """_tn_quant_i4_repack's interleaved layout (kernels/quant.h "8da4w in the x8 layout"):
    the product over it equals the plain one within the ISA variants' summation-order bound
    (bit for bit on a host whose plain kernel is the reference's order: tests/c/test_quant.c
    compares the kernels exactly), on n % 8 != 0 rows too, for decode and prefill shapes."""
    k = 512
    w = torch.randn(n, k, generator=torch.Generator().manual_seed(n + g)) * 0.05
    packed, scales = qm.quantize_int4_groups(w, g, torch.bfloat16 if g == 64 else torch.float32)
    px = qm._call("_tn_quant_i4_repack", packed, scales, g)
    assert px.dtype == torch.uint8 and px.shape == (n, k // 2 + 4 * (k // g))
    for m in (1, 5, 70):
        x = torch.randn(m, k, generator=torch.Generator().manual_seed(m)) * 3
        y0 = qm._call("_tn_quant_linear_8da4w", x, packed, scales, g)
        y1 = qm._call("_tn_quant_linear_8da4w_x8", x, px, g)
        assert y1.shape == (m, n)
        assert (y1 - y0).abs().max() <= 1e-5 * y0.abs().max()
    # the scales really are inside: changing one changes that row's outputs only
    s2 = scales.clone()
    s2[n - 1, 0] *= 2
    d = qm._call("_tn_quant_linear_8da4w_x8", x, qm._call("_tn_quant_i4_repack", packed, s2, g), g) - y1
    assert d[:, : n - 1].abs().max() == 0 and d[:, n - 1].abs().max() > 0


def test_8da4w_x8_op_errors():
    packed, scales = qm.quantize_int4_groups(torch.randn(8, 128), 64)
    px = qm._call("_tn_quant_i4_repack", packed, scales, 64)
    f = lambda *a: qm._call("_tn_quant_linear_8da4w_x8", *a)  # noqa: E731
    with pytest.raises(RuntimeError, match="packed rows of 80 bytes expected .group_size 32., got 72"):
        f(torch.randn(2, 128), px, 32)
    with pytest.raises(RuntimeError, match="not a multiple of group_size 64"):
        f(torch.randn(2, 96), px, 64)
    with pytest.raises(RuntimeError, match="group_size must be a positive multiple of 32, got 48"):
        f(torch.randn(2, 128), px, 48)
    with pytest.raises(RuntimeError, match="float32 input"):
        f(torch.randn(2, 128, dtype=torch.float64), px, 64)
    with pytest.raises(RuntimeError, match="2-D uint8"):
        f(torch.randn(2, 128), px.to(torch.int8), 64)
    with pytest.raises(RuntimeError, match=r"expected scales \(8, 4\)"):
        qm._call("_tn_quant_i4_repack", packed, scales, 32)


def test_8da4w_module_repacks_once_and_saves_plain(tmp_path):
    """Linear8da4w keeps the interleaved copy where fast_layout asks for it, outside its
    state_dict; a load rebuilds it from the plain tensors; outputs survive the round trip."""
    lin = torch.nn.Linear(256, 13)
    mod = qm.Linear8da4w.from_linear(lin, 64)
    x8 = quant.fast_layout(qm.I4) == (quant.X8 | qm.I4)
    assert (mod.weight_x8 is not None) == x8
    assert set(mod.state_dict()) == {"weight_int4", "scales", "bias"}
    x = torch.randn(3, 256)
    y = mod(x)
    fresh = qm.Linear8da4w(256, 13, 64, bias=True)
    fresh.load_state_dict(mod.state_dict())
    assert torch.equal(fresh(x), y)
    if x8:
        assert torch.equal(fresh.weight_x8, mod.weight_x8)
        fresh.weight_x8 = None  # the plain path agrees within the variants' bound
        assert (fresh(x) - y).abs().max() <= 1e-5 * y.abs().max()


def test_quantize_errors_name_the_layer():
    from transformers import LlamaConfig, LlamaForCausalLM
    import torchnative

    config = LlamaConfig(vocab_size=64, hidden_size=96, intermediate_size=192, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2)
    model = LlamaForCausalLM(config)
    with pytest.raises(ValueError, match=r"layer 'model.layers.0.self_attn.q_proj' has in_features=96, which group_size=64"):
        torchnative.quantize(model, "8da4w", group_size=64)
    assert type(model.model.layers[0].self_attn.q_proj) is torch.nn.Linear  # nothing swapped
    with pytest.raises(ValueError, match="group_size must be one of"):
        torchnative.quantize(model, "8da4w", group_size=48)
    with pytest.raises(ValueError, match="unknown method 'int3'"):
        torchnative.quantize(model, "int3")
    with pytest.raises(ValueError, match="not quantised by torchnative.quantize"):
        qm.save(model, "unused.safetensors")


def _quantize_run(which, tmp_path):
    out = tmp_path / f"{which}.json"
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "quantize_run.py"), which, str(out)],
                       capture_output=True, text=True, timeout=1200, env=ENV)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(out.read_text())


# Measured (tests/quantize_run.py; docs/INFERENCE.md, "Quantising a float model"): each
# quantised layer agrees with its fake-quantised float product on the inputs it saw to
# <= 1.1e-6 of max|y|. Whole models agree to 5e-7 of max|logits| unless a per-token
# activation rounding flips between the two paths (the float products before a layer
# differ in summation order): 2.5e-3 / 5.3e-3 on the tiny llama at G = 64 / 128, and in
# SmolLM2, whose massive-activation channel makes one flip a large step compounded over
# 30 layers, 0.18-0.25 at 8da4w (int8: 2.3e-6). Against the plain float model the 8da4w
# logits move by 0.17-0.23 on the tiny llama and 0.57-0.60 on SmolLM2 (int8: 0.012 / 0.05).
# Prompt positions whose argmax agrees: SmolLM2 8da4w vs the reference 0.72 (G = 32) and
# 0.87 (G = 64); vs the float model 0.59 / 0.56.
PER_LAYER_TOL = 1e-5
FAKE_QUANT_TOL = 2e-2
SMOLLM2_8DA4W_ARGMAX = 0.65


def test_quantize_tiny_llama_vs_fake_quantised_reference(tmp_path):
    res = _quantize_run("tiny", tmp_path)
    assert set(res) == {"8da4w_32", "8da4w_64", "8da4w_128", "8da4w_256", "int8"}
    for key, r in res.items():
        print(key, r)
        assert r["swapped"] == 14 and r["lm_head"] == "Linear"   # 7 linears per layer, lm_head kept float
        assert r["per_layer_rel"] <= PER_LAYER_TOL
        assert r["vs_fake_quant"]["logits_rel"] <= FAKE_QUANT_TOL
        assert r["vs_fake_quant"]["tokens_agree"] == r["vs_fake_quant"]["tokens"]
        assert r["vs_float"]["logits_rel"] > 5 * r["vs_fake_quant"]["logits_rel"]
        assert r["reload_identical"] and r["load_state_dict_identical"]


def test_quantize_smollm2_vs_fake_quantised_reference(tmp_path):
    res = _quantize_run("smollm2", tmp_path)
    assert set(res) == {"8da4w_32", "8da4w_64", "int8"}
    for key, r in res.items():
        print(key, r)
        assert r["swapped"] == 30 * 7 and r["lm_head"] == "Linear"
        assert r["per_layer_rel"] <= PER_LAYER_TOL
        if key == "int8":
            assert r["vs_fake_quant"]["logits_rel"] <= FAKE_QUANT_TOL
            assert r["vs_fake_quant"]["tokens_agree"] == r["vs_fake_quant"]["tokens"]
            assert r["vs_float"]["logits_rel"] > 5 * r["vs_fake_quant"]["logits_rel"]
        else:  # rounding flips compound (above): closer to the reference than to the float model
            assert r["vs_fake_quant"]["argmax_agree"] >= SMOLLM2_8DA4W_ARGMAX
            assert r["vs_fake_quant"]["logits_rel"] < 0.6 * r["vs_float"]["logits_rel"]

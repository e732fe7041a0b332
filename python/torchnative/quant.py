"""Quantised inference: a transformers causal LM whose linear weights stay in a GGUF file's
blocks (Q4_0, Q4_1, Q8_0, and the k-quants Q4_K, Q6_K), mapped from the file and never
copied or dequantised.

    from torchnative.quant import from_gguf
    model = from_gguf("SmolLM2-135M-Instruct.Q4_1.gguf")   # the genuine LlamaForCausalLM
    model.generate(...)

The model is built by transformers from the file's metadata on the meta device, then each
nn.Linear is swapped for a QuantLinear over the file's blocks (the way transformers' own
quantizers replace nn.Linear), the token embedding for a QuantEmbedding over its blocks
(the tied lm_head shares them), the norms get the file's F32 values, and buffers computed
at construction (rotary inv_freq) are rebuilt on the CPU. QuantLinear's forward is one
operator, aten::_tn_quant_linear (src/ops/quant_linear.c), called through the door, so
autograd (input gradient grad @ dequantize(W)) and torchnative.graphs capture see it.

GGUF stores the rows of attn_q / attn_k permuted relative to Hugging Face (llama.cpp's
converter interleaves the rotary halves); transformers' loader reverse-permutes after
dequantising. Here whole block rows are permuted once at load (a row of blocks is a row of
the matrix), which copies those two matrices (docs/DESIGN.md, "Quantised inference").
Errors are one-line ValueErrors naming the file or tensor.
"""

import torch
from torch import nn

from torchnative.gguf_file import GGUFFile

# ggml types the kernels read in place (kernels/quant.h)
KEPT_TYPES = {2: "Q4_0", 3: "Q4_1", 8: "Q8_0", 12: "Q4_K", 14: "Q6_K"}
# the same blocks repacked 8 rows at a time (kernels/quant.h "the x8 layouts"): 256 | type
X8 = 256
LAYOUTS = {**KEPT_TYPES, **{X8 | t: KEPT_TYPES[t] + "x8" for t in (2, 3, 8)}}
# architectures whose weight names and row permutation this loader knows
SUPPORTED_ARCHITECTURES = ("llama",)

_op_index = {}


def _call(name, *args):
    """Calls torchnative's own operator aten::<name> through the door (torch._C._tn_call_op)."""
    i = _op_index.get(name)
    if i is None:
        look = getattr(torch._C, "_tn_op_lookup", None)
        i = look(f"aten::{name}", "") if look else -1
        if i < 0:
            raise NotImplementedError(f"aten::{name} is torchnative's operator; this torch has no such operator")
        _op_index[name] = i
    return torch._C._tn_call_op(i, *args)


def quant_linear(x, blocks, qtype):
    """x (..., k) float32 @ dequantize(blocks)ᵀ: blocks (n, k/QK * block bytes) uint8 (QK = 32,
    256 for Q4_K / Q6_K)."""
    return _call("_tn_quant_linear", x, blocks, qtype)


def dequantize(blocks, qtype):
    """Block rows (..., k/QK * block bytes) uint8 -> (..., k) float32."""
    return _call("_tn_quant_dequantize", blocks, qtype)


def fast_layout(qtype):
    """The layout (a qtype) this host's products run fastest from: 256 | qtype where the
    8-row interleaved kernels are the faster ones (AVX2 hosts, Q4_0 / Q4_1 / Q8_0), else
    qtype."""
    return _call("_tn_quant_fast_layout", qtype)


def repack(blocks, qtype):
    """(blocks, qtype) in this host's fastest layout: a one-time copy into the 8-row
    interleaved layout where fast_layout says so and the rows come in groups of 8, else the
    same blocks (still the file's mapping)."""
    fq = fast_layout(qtype)
    if fq == qtype or blocks.dim() != 2 or blocks.shape[0] % 8:
        return blocks, qtype
    return _call("_tn_quant_repack", blocks, qtype), fq


class QuantLinear(nn.Module):
    """nn.Linear's contract (in_features, out_features, optional bias) over GGUF blocks.
    The blocks are a non-persistent buffer: the model's parameters stay the float ones."""

    def __init__(self, blocks, qtype, in_features, out_features, bias=None):
        super().__init__()
        self.register_buffer("blocks", blocks, persistent=False)
        self.qtype, self.in_features, self.out_features = qtype, in_features, out_features
        self.bias = bias

    def forward(self, x):
        y = quant_linear(x, self.blocks, self.qtype)
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"qtype={LAYOUTS[self.qtype]}, bias={self.bias is not None}")


class QuantEmbedding(nn.Module):
    """nn.Embedding over GGUF blocks: gathers the rows' blocks, dequantises them."""

    def __init__(self, blocks, qtype, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.register_buffer("blocks", blocks, persistent=False)
        self.qtype, self.num_embeddings, self.embedding_dim = qtype, num_embeddings, embedding_dim
        self.padding_idx = padding_idx

    def forward(self, ids):
        rows = dequantize(self.blocks.index_select(0, ids.reshape(-1)), self.qtype)
        return rows.view(*ids.shape, self.embedding_dim)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, qtype={KEPT_TYPES[self.qtype]}"


def config_from_gguf(g):
    """The transformers config of the file, from its metadata through transformers' own
    GGUF key mapping (what AutoConfig.from_pretrained(gguf_file=) builds, without decoding
    the tokenizer's arrays)."""
    from transformers import AutoConfig
    from transformers.modeling_gguf_pytorch_utils import GGUF_TO_TRANSFORMERS_MAPPING

    arch = g.architecture()
    name = g.metadata.get("general.name", "")
    if arch not in SUPPORTED_ARCHITECTURES or "mistral" in str(name).lower():
        raise ValueError(f"{g.path}: architecture {arch!r} is not supported by the kept-quantised loader "
                         f"(supported: {', '.join(SUPPORTED_ARCHITECTURES)}); use --dtype float32")
    renames = GGUF_TO_TRANSFORMERS_MAPPING["config"]
    cfg = {"tie_word_embeddings": "output.weight" not in g.tensors}
    for key, value in g.metadata.items():
        prefix, _, rest = key.partition(".")
        new = renames.get(prefix, {}).get(rest, -1)
        if new is None or new == -1 or (isinstance(value, tuple) and value and value[0] == "array"):
            continue
        cfg[new] = value
    if "vocab_size" not in cfg:
        tokens = g.metadata.get("tokenizer.ggml.tokens")
        if isinstance(tokens, tuple):
            cfg["vocab_size"] = tokens[2]
    model_type = cfg.pop("model_type")
    return AutoConfig.for_model(model_type, **cfg)


def _reverse_permute_rows(blocks, n_head):
    """GGUF's attn_q / attn_k row order -> Hugging Face's: rows (head, d, pair) become
    (head, pair, d), as transformers' LlamaTensorProcessor does to the float matrix."""
    n, rb = blocks.shape
    dim = n // n_head // 2
    return blocks.reshape(n_head, dim, 2, rb).transpose(1, 2).reshape(n, rb).contiguous()


def _gguf_names(model, arch, num_layers):
    """{Hugging Face parameter name: GGUF tensor name}, from gguf-py's tensor name map (the
    table transformers' get_gguf_hf_weights_map reads; that function rebuilds it for every
    submodule, ~50 ms each, so the one top-level lookup it needs is done here)."""
    from gguf import MODEL_ARCH_NAMES, get_tensor_name_map

    arch_id = next(k for k, v in MODEL_ARCH_NAMES.items() if v == arch)
    name_map = get_tensor_name_map(arch_id, num_layers)
    out = {}
    for hf_name in model.state_dict(keep_vars=True):
        base, _, suffix = hf_name.rpartition(".")
        gname = name_map.get_name(base)
        if gname is not None:
            out[hf_name] = f"{gname}.{suffix}"
    return out


def _set_module(model, name, module):
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, module)


def from_gguf(path, *, repack_layout=True, return_timings=False):
    """Builds the transformers causal LM of a GGUF file with its linear weights kept in the
    file's blocks. ValueError (one line, naming the file or tensor) for a truncated or
    corrupted file, an unsupported architecture or a linear weight in a type the kernels do
    not read (Q5_0, Q2_K, Q5_K, ...: use the float path, --dtype float32).
    repack_layout: the linear layers' Q4_0 / Q4_1 / Q8_0 blocks are copied once into the
    layout this host's kernels read fastest (`repack`; the embedding keeps the file's
    mapping); False keeps every weight in the file's mapping."""
    import time

    from transformers import AutoModelForCausalLM

    t0 = time.perf_counter()
    g = GGUFFile(path)
    config = config_from_gguf(g)
    t1 = time.perf_counter()
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    t2 = time.perf_counter()
    hf_to_gguf = _gguf_names(model, g.architecture(), config.num_hidden_layers)
    n_head, n_kv = config.num_attention_heads, config.num_key_value_heads
    embed = model.get_input_embeddings()
    embed_name = next(n for n, m in model.named_modules() if m is embed)
    shared = {}  # gguf tensor name -> its QuantEmbedding / blocks (tied lm_head)
    embedded = {hf_to_gguf.get(embed_name + ".weight")}  # read by the embedding from the mapping
    for name, module in list(model.named_modules()):
        if isinstance(module, nn.Linear):
            gname = hf_to_gguf.get(name + ".weight")
            if gname not in g.tensors and getattr(config, "tie_word_embeddings", False) and \
                    module is model.get_output_embeddings():
                gname = hf_to_gguf.get(embed_name + ".weight")
            if gname not in g.tensors:
                raise ValueError(f"{g.path}: no tensor for {name}.weight (expected {gname!r})")
            info = g.tensors[gname]
            if info.type not in KEPT_TYPES:
                raise ValueError(f"{g.path}: tensor {gname!r} is {info.type_name}; the kept-quantised path reads "
                                 f"{', '.join(KEPT_TYPES.values())} (use --dtype float32 to dequantise)")
            if info.shape != (module.out_features, module.in_features):
                raise ValueError(f"{g.path}: tensor {gname!r} has shape {list(info.shape)}, "
                                 f"{name} expects {[module.out_features, module.in_features]}")
            blocks = shared.get(gname)
            if blocks is None:
                blocks = g.tensor_data(gname)
                if ".attn_q." in gname:
                    blocks = _reverse_permute_rows(blocks, n_head)
                elif ".attn_k." in gname:
                    blocks = _reverse_permute_rows(blocks, n_kv)
                shared[gname] = blocks
            bias = None
            if module.bias is not None:
                bname = hf_to_gguf.get(name + ".bias")
                if bname not in g.tensors:
                    raise ValueError(f"{g.path}: no tensor for {name}.bias")
                bias = nn.Parameter(g.tensor_f32(bname), requires_grad=False)
            qtype = info.type
            if repack_layout:
                blocks, qtype = repack(blocks, qtype)
                if qtype != info.type and gname not in embedded:
                    g.release(gname)  # the copy replaced the mapping's only use
            _set_module(model, name, QuantLinear(blocks, qtype, module.in_features, module.out_features, bias))
        elif module is embed:
            gname = hf_to_gguf.get(name + ".weight")
            if gname not in g.tensors:
                raise ValueError(f"{g.path}: no tensor for {name}.weight (expected {gname!r})")
            info = g.tensors[gname]
            if info.type not in KEPT_TYPES:
                raise ValueError(f"{g.path}: tensor {gname!r} is {info.type_name}; the kept-quantised path reads "
                                 f"{', '.join(KEPT_TYPES.values())} (use --dtype float32 to dequantise)")
            blocks = shared.setdefault(gname, g.tensor_data(gname))
            _set_module(model, name, QuantEmbedding(blocks, info.type, module.num_embeddings, module.embedding_dim,
                                                    module.padding_idx))
    # float parameters (norms): the file's values
    for pname, p in list(model.named_parameters()):
        gname = hf_to_gguf.get(pname)
        if gname not in g.tensors:
            raise ValueError(f"{g.path}: no tensor for parameter {pname} (expected {gname!r})")
        owner, _, attr = pname.rpartition(".")
        mod = model.get_submodule(owner)
        value = g.tensor_f32(gname)
        if tuple(value.shape) != tuple(p.shape):
            raise ValueError(f"{g.path}: tensor {gname!r} has shape {list(value.shape)}, {pname} expects {list(p.shape)}")
        setattr(mod, attr, nn.Parameter(value, requires_grad=p.requires_grad))
    # buffers computed at construction (rotary inv_freq): rebuild those modules on the CPU
    for name, module in list(model.named_modules()):
        if any(b.is_meta for b in module.buffers(recurse=False)):
            if not name.endswith("rotary_emb"):
                raise ValueError(f"{g.path}: cannot materialise buffers of {name} ({type(module).__name__})")
            _set_module(model, name, type(module)(config=config))
    left = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]
    if left:
        raise ValueError(f"{g.path}: no value for {left[0]} (and {len(left) - 1} more)")
    model.eval()
    t3 = time.perf_counter()
    if return_timings:
        return model, {"parse_config": t1 - t0, "build_meta": t2 - t1, "swap_and_load": t3 - t2, "total": t3 - t0}
    return model


__all__ = ["from_gguf", "QuantLinear", "QuantEmbedding", "quant_linear", "dequantize", "fast_layout", "repack",
           "config_from_gguf", "KEPT_TYPES", "LAYOUTS"]

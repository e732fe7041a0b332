"""Quantising a float model (torchnative.quantize is this module's quantize): quantize(model,
"8da4w", group_size=G) or quantize(model, "int8") swaps a transformers causal LM's nn.Linear layers for
quantised ones in place, and save() / load() keep the result in safetensors.

    model = AutoModelForCausalLM.from_pretrained(...)          # float32
    torchnative.quantize(model, "8da4w", group_size=64)         # lm_head stays float
    from torchnative.quantize_model import save, load
    save(model, "m.safetensors")
    fresh = AutoModelForCausalLM.from_config(model.config)
    load(fresh, "m.safetensors")                                # rebuilds the modules

Methods (the kernels and their error bounds: src/kernels/quant.h):
  "8da4w"  symmetric int4 weights in groups of G input features (G = 32, 64, 128, 256;
           one scale per group, scale = max|w| / 7.5 and q = clamp(round(w / scale), -8, 7),
           torchao's symmetric int4 grouping), activations quantised per token to int8
           (symmetric, amax / 127) at run time, int32 sums per group:
           aten::_tn_quant_linear_8da4w.
  "int8"   weight-only int8, one scale per output channel (max|w| / 127), float
           activations: upstream's aten::_weight_int8pack_mm, so the module runs on
           upstream torch too.
The packed weights and scales are persistent buffers (weight_int4 + scales, weight_int8 +
scales), so model.state_dict() / load_state_dict() carry them like any buffer. Where this
host's 8da4w kernel runs faster from the 8-row interleaved layout (quant.fast_layout(I4),
x86 hosts with AVX2; kernels/quant.h "8da4w in the x8 layout"), an 8da4w layer also keeps a copy of
weight and scales in it, made once when the layer is quantised or loaded (a non-persistent
buffer, so files keep the plain layout; it costs the weight's bytes again in memory).
"""
import json

import torch
from torch import nn

from torchnative.quant import X8, _call, fast_layout

METHODS = ("8da4w", "int8")
GROUP_SIZES = (32, 64, 128, 256)
_META_KEY = "torchnative.quantize"
# kernels/quant.h TN_QTYPE_I4: asks fast_layout about 8da4w's int4 groups
I4 = 512


def _pack_int4(q):
    """(n, k) integers in [-8, 7] -> (n, k/2) uint8 in kernels/quant.h's chunk layout: per 32
    elements, 16 bytes whose low nibbles hold elements 0..15 and high nibbles 16..31, + 8."""
    n, k = q.shape
    u = (q.to(torch.int16) + 8).to(torch.uint8).reshape(n, k // 32, 2, 16)
    return (u[:, :, 0, :] | (u[:, :, 1, :] << 4)).reshape(n, k // 2).contiguous()


def quantize_int4_groups(weight, group_size, scale_dtype=torch.float32):
    """Float weight (n, k) -> (packed (n, k/2) uint8, scales (n, k/G) scale_dtype): symmetric
    int4 per group (the module docstring's rounding). The quants are computed with the
    scales as stored (rounded to scale_dtype), so dequantising gives s * q exactly."""
    n, k = weight.shape
    w = weight.detach().float().reshape(n, k // group_size, group_size)
    scales = (w.abs().amax(-1) / 7.5).clamp_min(1e-12).to(scale_dtype)
    q = torch.round(w / scales.float().unsqueeze(-1)).clamp(-8, 7).reshape(n, k)
    return _pack_int4(q), scales


def quantize_int8_channels(weight):
    """Float weight (n, k) -> (int8 (n, k), float32 scales (n,)): symmetric per output row."""
    w = weight.detach().float()
    scales = (w.abs().amax(-1) / 127).clamp_min(1e-12)
    return torch.round(w / scales.unsqueeze(-1)).clamp(-127, 127).to(torch.int8), scales


class Linear8da4w(nn.Module):
    """nn.Linear's contract over int4 grouped weights with int8 per-token activations."""

    def __init__(self, in_features, out_features, group_size, bias=False, scale_dtype=torch.float32):
        super().__init__()
        self.in_features, self.out_features, self.group_size = in_features, out_features, group_size
        self.register_buffer("weight_int4", torch.zeros(out_features, in_features // 2, dtype=torch.uint8))
        self.register_buffer("scales", torch.zeros(out_features, in_features // group_size, dtype=scale_dtype))
        self.bias = nn.Parameter(torch.zeros(out_features), requires_grad=False) if bias else None
        self.register_buffer("weight_x8", None, persistent=False)

    @classmethod
    def from_linear(cls, linear, group_size, scale_dtype=torch.float32):
        m = cls(linear.in_features, linear.out_features, group_size, linear.bias is not None, scale_dtype)
        m.weight_int4, m.scales = quantize_int4_groups(linear.weight, group_size, scale_dtype)
        if linear.bias is not None:
            m.bias = nn.Parameter(linear.bias.detach().float().clone(), requires_grad=False)
        m.repack()
        return m

    def repack(self):
        """Remakes weight_x8, the interleaved copy of weight_int4 and scales the forward reads
        where this host prefers it (None elsewhere). Called on quantising and loading; call it
        again after changing weight_int4 or scales in place."""
        x8 = fast_layout(I4) == X8 | I4 and self.weight_int4.device.type == "cpu"
        self.weight_x8 = _call("_tn_quant_i4_repack", self.weight_int4, self.scales, self.group_size) if x8 else None

    def _load_from_state_dict(self, *args, **kwargs):
        super()._load_from_state_dict(*args, **kwargs)
        self.repack()

    def dequantized_weight(self):
        """The weight the module multiplies by, (out_features, in_features) float32."""
        return _call("_tn_quant_i4_dequantize", self.weight_int4, self.scales, self.group_size)

    def forward(self, x):
        if self.weight_x8 is not None:
            y = _call("_tn_quant_linear_8da4w_x8", x.float(), self.weight_x8, self.group_size)
        else:
            y = _call("_tn_quant_linear_8da4w", x.float(), self.weight_int4, self.scales, self.group_size)
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, group_size={self.group_size}, "
                f"scales={str(self.scales.dtype).removeprefix('torch.')}, bias={self.bias is not None}")


class LinearInt8(nn.Module):
    """nn.Linear's contract over int8 weights with one float32 scale per output channel."""

    def __init__(self, in_features, out_features, bias=False):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight_int8", torch.zeros(out_features, in_features, dtype=torch.int8))
        self.register_buffer("scales", torch.zeros(out_features))
        self.bias = nn.Parameter(torch.zeros(out_features), requires_grad=False) if bias else None

    @classmethod
    def from_linear(cls, linear):
        m = cls(linear.in_features, linear.out_features, linear.bias is not None)
        m.weight_int8, m.scales = quantize_int8_channels(linear.weight)
        if linear.bias is not None:
            m.bias = nn.Parameter(linear.bias.detach().float().clone(), requires_grad=False)
        return m

    def dequantized_weight(self):
        return self.weight_int8.float() * self.scales.unsqueeze(-1)

    def forward(self, x):
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features).contiguous()
        y = torch.ops.aten._weight_int8pack_mm(x2, self.weight_int8, self.scales.to(x2.dtype))
        y = y.reshape(*lead, self.out_features)
        return y if self.bias is None else y + self.bias.to(y.dtype)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def _targets(model, skip):
    """(name, nn.Linear) pairs to quantise: every nn.Linear except the output embedding
    (lm_head) and the names in skip."""
    out_emb = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    for name, module in model.named_modules():
        if type(module) is nn.Linear and name not in skip and not (out_emb is module and "lm_head" in skip):
            yield name, module


def _set_module(model, name, module):
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, module)


def _check(method, group_size, targets):
    if method not in METHODS:
        raise ValueError(f"quantize: unknown method {method!r} (supported: {', '.join(METHODS)})")
    if method == "8da4w":
        if group_size not in GROUP_SIZES:
            raise ValueError(f"quantize: 8da4w group_size must be one of {GROUP_SIZES}, got {group_size!r}")
        for name, lin in targets:
            if lin.in_features % group_size:
                raise ValueError(f"quantize: layer {name!r} has in_features={lin.in_features}, "
                                 f"which group_size={group_size} does not divide")


def quantize(model, method, group_size=None, *, include_lm_head=False, skip=(), scale_dtype=torch.float32):
    """Swaps model's nn.Linear layers for quantised modules in place and returns model.
    method: "8da4w" (group_size required) or "int8". lm_head (the output embedding) stays
    float unless include_lm_head; embeddings and norms always stay float; `skip` names more
    modules to leave. scale_dtype: torch.float32 or torch.bfloat16 (8da4w scales). Every
    layer is checked before any is swapped: ValueError naming the layer whose in_features
    the group size does not divide."""
    skip = set(skip) | (set() if include_lm_head else {"lm_head"})
    targets = list(_targets(model, skip))
    _check(method, group_size, targets)
    layout = {}
    with torch.no_grad():
        for name, lin in targets:
            if method == "8da4w":
                q = Linear8da4w.from_linear(lin, group_size, scale_dtype)
            else:
                q = LinearInt8.from_linear(lin)
            _set_module(model, name, q)
            layout[name] = {"method": method, "group_size": group_size}
    model.torchnative_quantization = layout
    return model


def prepare(model, layout, scale_dtype=torch.float32):
    """Swaps in empty quantised modules as `layout` ({module name: {"method", "group_size"}},
    what quantize records and save() stores) describes, for load_state_dict to fill."""
    for name, spec in layout.items():
        lin = model.get_submodule(name)
        if not isinstance(lin, nn.Linear):
            raise ValueError(f"prepare: {name!r} is {type(lin).__name__}, not nn.Linear")
        if spec["method"] == "8da4w":
            _check("8da4w", spec["group_size"], [(name, lin)])
            q = Linear8da4w(lin.in_features, lin.out_features, spec["group_size"], lin.bias is not None, scale_dtype)
        elif spec["method"] == "int8":
            q = LinearInt8(lin.in_features, lin.out_features, lin.bias is not None)
        else:
            raise ValueError(f"prepare: {name!r}: unknown method {spec['method']!r}")
        _set_module(model, name, q)
    model.torchnative_quantization = dict(layout)
    return model


def save(model, path):
    """Writes the quantised model's state_dict (packed weights, scales, float parameters) to
    a safetensors file, with the layout in its metadata."""
    from safetensors.torch import save_model

    layout = getattr(model, "torchnative_quantization", None)
    if layout is None:
        raise ValueError("save: the model was not quantised by torchnative.quantize")
    save_model(model, str(path), metadata={_META_KEY: json.dumps(layout)})


def load(model, path):
    """Rebuilds the quantised modules of a file written by save() on a float model of the
    same architecture (e.g. AutoModelForCausalLM.from_config(config)) and loads every
    tensor; returns model."""
    from safetensors import safe_open
    from safetensors.torch import load_model

    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        scale_dtypes = {k.rsplit(".", 1)[0]: f.get_slice(k).get_dtype() for k in f.keys() if k.endswith(".scales")}
    if _META_KEY not in meta:
        raise ValueError(f"{path}: not a model saved by torchnative.quantize.save (no {_META_KEY!r} metadata)")
    layout = json.loads(meta[_META_KEY])
    bf16 = {n for n, d in scale_dtypes.items() if d == "BF16"}
    for name, spec in layout.items():
        prepare(model, {name: spec}, torch.bfloat16 if name in bf16 else torch.float32)
    model.torchnative_quantization = layout
    load_model(model, str(path))
    return model


__all__ = ["quantize", "prepare", "save", "load", "Linear8da4w", "LinearInt8", "quantize_int4_groups",
           "quantize_int8_channels", "METHODS", "GROUP_SIZES"]

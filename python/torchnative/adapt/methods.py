"""Test-time adaptation methods, each one small class on one interface (Method): which
tensors its delta holds (spec), how one served request adapts it (adapt), and how the
delta serves without adapting (predict). Algorithms and default hyper-parameters follow
the reference implementations; docs/ADAPT.md lists each default and where it comes from.

    BNAdapt  batch-norm statistics from the test batches (Schneider et al. 2020; tent/norm.py)
    Tent     entropy minimisation over norm affine parameters (Wang et al. 2021)
    EATA     entropy + redundancy filters, Fisher regulariser (Niu et al. 2022)
    SAR      sharpness-aware reliable entropy minimisation, model recovery (Niu et al. 2023)
    MEMO     marginal entropy over augmentations, per test point (Zhang et al. 2022)
    CoTTA    mean teacher, augmentation-averaged pseudo-labels, stochastic restore (Wang et al. 2022)
    TTT      rotation-prediction self-supervision through a shared extractor (Sun et al. 2020)
    TLM      input-perplexity minimisation of a causal LM with a LoRA delta (Hu et al. 2025)"""
import math

import torch
import torch.nn.functional as F

from . import augment
from .delta import Delta
from .lifetimes import Episodic, Session

NORMS = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm, torch.nn.GroupNorm)
BATCHNORMS = (torch.nn.modules.batchnorm._BatchNorm,)


def softmax_entropy(x):
    """Entropy of softmax(x) per row (Tent's softmax_entropy)."""
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


def marginal_entropy(outputs):
    """MEMO's loss: entropy of the average predicted distribution over augmentations."""
    logits = outputs - outputs.logsumexp(dim=-1, keepdim=True)
    avg_logits = logits.logsumexp(dim=0) - math.log(logits.shape[0])
    avg_logits = torch.clamp(avg_logits, min=torch.finfo(avg_logits.dtype).min)
    return -(avg_logits * torch.exp(avg_logits)).sum(dim=-1), avg_logits


def cosine_similarity_rows(a, b, eps=1e-8):
    """F.cosine_similarity(a, b, dim=1) as upstream computes it (each side divided by its
    norm clamped to eps, then the product summed) — written out because the core does not
    implement aten::cosine_similarity yet."""
    an = torch.linalg.vector_norm(a, 2, dim=1, keepdim=True).clamp_min(eps)
    bn = torch.linalg.vector_norm(b, 2, dim=1, keepdim=True).clamp_min(eps)
    return ((a / an) * (b / bn)).sum(1)


def _name(mname, attr):
    return f"{mname}.{attr}" if mname else attr


class Spec:
    """What a delta holds. grad: base tensors copied as trainable Parameters; copy: base
    tensors copied without gradient (statistics); nulls, attrs, train: see Delta; lora:
    Linear module names that get rank-r factors (scale alpha / r)."""

    def __init__(self, grad=(), copy=(), nulls=(), attrs=None, train=None, lora=(), r=8, alpha=16):
        self.grad, self.copy, self.nulls = list(grad), list(copy), list(nulls)
        self.attrs = dict(attrs or {})
        self.train = train
        self.lora, self.r, self.alpha = list(lora), r, alpha


class Method:
    """The interface every method implements (subclasses override spec/adapt, and
    optimizer/predict/default_lifetime where they differ)."""
    name = "method"

    def default_lifetime(self):
        return Session()

    def setup(self, w):
        """Called once by adapt.wrap (EATA computes its Fisher information here)."""

    def spec(self, w):
        raise NotImplementedError(f"{type(self).__name__}.spec")

    def optimizer(self, params):
        return None

    def new_delta(self, w, user=None, init=True):
        """A fresh delta over w's base: copies of what spec() names, LoRA A initialised as
        peft does (Kaiming-uniform, a=sqrt(5)) and B zero, so a new delta changes nothing."""
        s = self.spec(w)
        tensors = {}
        for n in s.grad:
            tensors[n] = torch.nn.Parameter(w.base_tensor(n).detach().clone(), requires_grad=True)
        for n in s.copy:
            tensors[n] = w.base_tensor(n).detach().clone()
        lora = {}
        mods = w._mods
        for n in s.lora:
            lin = mods[n]
            a = torch.empty(s.r, lin.in_features, dtype=lin.weight.dtype)
            if init:
                torch.nn.init.kaiming_uniform_(a, a=math.sqrt(5))
            b = torch.zeros(lin.out_features, s.r, dtype=lin.weight.dtype)
            lora[n] = (torch.nn.Parameter(a), torch.nn.Parameter(b))
        return Delta(self.name, tensors, s.nulls, s.attrs, s.train, lora, s.alpha / s.r if s.lora else 1.0, user=user)

    def init_state(self, w, d):
        """The method's working state for delta d (its optimizer, ...)."""
        params = d.parameters()
        opt = self.optimizer(params) if params else None
        if opt is not None:
            d.state["opt"] = opt

    def adapt(self, w, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.adapt")

    def predict(self, w, *args, **kwargs):
        """Serving with the delta, no update (offline)."""
        with torch.no_grad():
            return w.forward(*args, **kwargs)

    def logits(self, out):
        """Class logits (N, C) of an output, for the collapse guard (None: not a classifier)."""
        return out if isinstance(out, torch.Tensor) and out.dim() == 2 else None

    def batch_size(self, *args, **kwargs):
        x = args[0] if args else next((v for v in kwargs.values() if isinstance(v, torch.Tensor)), None)
        return int(x.shape[0]) if isinstance(x, torch.Tensor) and x.dim() else 1

    def __repr__(self):
        keys = [k for k in vars(self) if not k.startswith("_") and not isinstance(vars(self)[k], (torch.Tensor, dict))]
        return f"{type(self).__name__}({', '.join(f'{k}={vars(self)[k]!r}' for k in keys)})"


# ---- shared pieces ------------------------------------------------------------------------
def _norm_spec(w, exclude=(), batch_stats=True):
    """Tent/EATA/SAR's configure_model: norm layers' affine parameters trainable; BatchNorm
    normalises by batch statistics (running statistics hidden, track_running_stats off);
    the whole model in training mode (the references call model.train())."""
    grad, nulls, attrs = [], [], {}
    for mname, m in w._mods.items():
        if not isinstance(m, NORMS) or any(e in mname for e in exclude):
            continue
        for pn in ("weight", "bias"):
            if m._parameters.get(pn) is not None:
                grad.append(_name(mname, pn))
        if batch_stats and isinstance(m, BATCHNORMS):
            for bn in ("running_mean", "running_var"):
                if m._buffers.get(bn) is not None:
                    nulls.append(_name(mname, bn))
            attrs[(mname, "track_running_stats")] = False
    if batch_stats:  # BatchNorms outside the adapted set still use batch statistics
        for mname, m in w._mods.items():
            if isinstance(m, BATCHNORMS) and (mname, "track_running_stats") not in attrs:
                for bn in ("running_mean", "running_var"):
                    if m._buffers.get(bn) is not None:
                        nulls.append(_name(mname, bn))
                attrs[(mname, "track_running_stats")] = False
    return Spec(grad=grad, nulls=nulls, attrs=attrs, train=set(w._mods))


def _all_params(w):
    """Every parameter, in named_modules order then registration order (the order CoTTA's
    stochastic restore draws its masks in)."""
    return [_name(mn, pn) for mn, m in w._mods.items() for pn, p in m._parameters.items() if p is not None]


def _sgd(lr, momentum=0.0, weight_decay=0.0):
    return lambda ps: torch.optim.SGD(ps, lr=lr, momentum=momentum, weight_decay=weight_decay)


def _adam(lr, betas=(0.9, 0.999), weight_decay=0.0):
    return lambda ps: torch.optim.Adam(ps, lr=lr, betas=betas, weight_decay=weight_decay)


# ---- the methods ----------------------------------------------------------------------------
class BNAdapt(Method):
    """Test-time batch-norm statistics: BatchNorm layers in training mode, normalising by
    the test batch and updating running statistics held in the delta with `momentum`
    (tent/norm.py defaults: momentum 0.1). No gradient. Offline, the adapted running
    statistics serve in eval mode."""
    name = "bn_adapt"

    def __init__(self, momentum=0.1):
        self.momentum = momentum

    def spec(self, w):
        copy, attrs, train = [], {}, set()
        for mname, m in w._mods.items():
            if isinstance(m, BATCHNORMS) and m.track_running_stats:
                copy += [_name(mname, b) for b in ("running_mean", "running_var", "num_batches_tracked")
                         if m._buffers.get(b) is not None]
                attrs[(mname, "momentum")] = self.momentum
                train.add(mname)
        return Spec(copy=copy, attrs=attrs, train=train)

    def adapt(self, w, x):
        with torch.no_grad():
            return w.forward(x)

    def predict(self, w, x):
        bns = [m for m in w._mods.values() if isinstance(m, BATCHNORMS)]
        modes = [m.training for m in bns]
        for m in bns:
            m.training = False
        try:
            with torch.no_grad():
                return w.forward(x)
        finally:
            for m, t in zip(bns, modes):
                m.training = t


class Tent(Method):
    """Tent: minimise the mean prediction entropy of each test batch over the norm layers'
    affine parameters, BatchNorm on batch statistics. Defaults of tent's CIFAR-10-C config:
    Adam, lr 1e-3, betas (0.9, 0.999), one step per batch. Returns the outputs computed
    before the update (as the reference)."""
    name = "tent"

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), weight_decay=0.0, steps=1, optimizer="adam", momentum=0.9):
        if optimizer not in ("adam", "sgd"):
            raise ValueError(f"Tent: optimizer must be 'adam' or 'sgd', got {optimizer!r}")
        self.lr, self.betas, self.weight_decay, self.steps = lr, betas, weight_decay, steps
        self.opt_name, self.momentum = optimizer, momentum

    def spec(self, w):
        return _norm_spec(w)

    def optimizer(self, params):
        if self.opt_name == "adam":
            return _adam(self.lr, self.betas, self.weight_decay)(params)
        return _sgd(self.lr, self.momentum, self.weight_decay)(params)

    def adapt(self, w, x):
        opt = w.delta.state["opt"]
        with torch.enable_grad():
            for _ in range(self.steps):
                outputs = w.forward(x)
                loss = softmax_entropy(outputs).mean(0)
                loss.backward()
                opt.step()
                opt.zero_grad()
        return outputs


class EATA(Method):
    """EATA: Tent's loss restricted to reliable (entropy < e_margin) and non-redundant
    (cosine similarity to the running mean prediction < d_margin) samples, re-weighted by
    1/exp(entropy - e_margin), plus the Fisher-weighted anti-forgetting penalty
    fisher_alpha * sum F (theta - theta_base)^2. The Fisher is computed at wrap time from
    `fisher_data` (batches of in-distribution inputs, pseudo-labelled by the model).
    Reference defaults (EATA's ImageNet-C script): SGD lr 0.00025 momentum 0.9,
    e_margin 0.4 ln C, d_margin 0.05, fisher_alpha 2000."""
    name = "eata"

    def __init__(self, num_classes, fisher_data=None, fisher_alpha=2000.0, e_margin=None, d_margin=0.05,
                 lr=0.00025, momentum=0.9, steps=1):
        self.num_classes = num_classes
        self.e_margin = 0.4 * math.log(num_classes) if e_margin is None else e_margin
        self.d_margin, self.fisher_alpha = d_margin, fisher_alpha
        self.lr, self.momentum, self.steps = lr, momentum, steps
        self._fisher_data = fisher_data
        self.fishers = None

    def spec(self, w):
        return _norm_spec(w)

    def optimizer(self, params):
        return _sgd(self.lr, self.momentum)(params)

    def setup(self, w):
        if self._fisher_data is None:
            return
        d = self.new_delta(w)
        fishers, n = {}, 0
        with w.using(d), torch.enable_grad():
            for n, x in enumerate(self._fisher_data, 1):
                out = w.forward(x)
                loss = F.cross_entropy(out, out.max(1)[1])
                loss.backward()
                for name, p in d.tensors.items():
                    if p.grad is not None:
                        g2 = p.grad.detach().clone() ** 2
                        fishers[name] = g2 if name not in fishers else g2 + fishers[name]
                        p.grad = None
        if n == 0:
            raise ValueError("EATA: fisher_data yielded no batch")
        self.fishers = {k: (v / n, w.base_tensor(k).detach().clone()) for k, v in fishers.items()}
        self._fisher_data = None

    def init_state(self, w, d):
        super().init_state(w, d)
        d.state["probs"] = None
        d.state["updates"] = 0

    @staticmethod
    def _update_probs(current, new):
        if current is None:
            return None if new.size(0) == 0 else new.mean(0).detach()
        if new.size(0) == 0:
            return current
        return (0.9 * current + (1 - 0.9) * new.mean(0)).detach()

    def adapt(self, w, x):
        d = w.delta
        opt, st = d.state["opt"], d.state
        with torch.enable_grad():
            for _ in range(self.steps):
                outputs = w.forward(x)
                entropys = softmax_entropy(outputs)
                ids1 = torch.where(entropys < self.e_margin)
                ids2 = torch.where(ids1[0] > -0.1)
                entropys = entropys[ids1]
                if st["probs"] is not None:
                    cos = cosine_similarity_rows(st["probs"].unsqueeze(0), outputs[ids1].softmax(1))
                    ids2 = torch.where(torch.abs(cos) < self.d_margin)
                    entropys = entropys[ids2]
                    probs = self._update_probs(st["probs"], outputs[ids1][ids2].softmax(1))
                else:
                    probs = self._update_probs(st["probs"], outputs[ids1].softmax(1))
                coeff = 1 / torch.exp(entropys.clone().detach() - self.e_margin)
                loss = entropys.mul(coeff).mean(0)
                if self.fishers is not None:
                    ewc = 0
                    for name, p in d.tensors.items():
                        if name in self.fishers:
                            f, anchor = self.fishers[name]
                            ewc += self.fisher_alpha * (f * (p - anchor) ** 2).sum()
                    loss = loss + ewc
                if x[ids1][ids2].size(0) != 0:
                    loss.backward()
                    opt.step()
                    st["updates"] += int(entropys.size(0))
                opt.zero_grad()
                st["probs"] = probs
        return outputs


class SAR(Method):
    """SAR: entropy minimisation on reliable samples (entropy < margin, 0.4 ln C) with a
    sharpness-aware (SAM, rho 0.05) step over the norm affine parameters, and model
    recovery: when the moving average (0.9) of the second-pass loss falls below
    reset_constant (0.2) the delta is dropped. Reference defaults: SGD lr 0.00025 momentum
    0.9 (batch 64). `exclude`: module-name fragments left out (SAR skips the top blocks)."""
    name = "sar"

    def __init__(self, num_classes, lr=0.00025, momentum=0.9, rho=0.05, margin=None, reset_constant=0.2,
                 exclude=(), steps=1):
        self.num_classes = num_classes
        self.margin = 0.4 * math.log(num_classes) if margin is None else margin
        self.lr, self.momentum, self.rho = lr, momentum, rho
        self.reset_constant, self.exclude, self.steps = reset_constant, tuple(exclude), steps

    def spec(self, w):
        return _norm_spec(w, exclude=self.exclude)

    def optimizer(self, params):
        return _sgd(self.lr, self.momentum)(params)

    def init_state(self, w, d):
        super().init_state(w, d)
        d.state["ema"] = None

    def adapt(self, w, x):
        d = w.delta
        opt, params = d.state["opt"], d.parameters()
        for _ in range(self.steps):
            with torch.enable_grad():
                opt.zero_grad()
                outputs = w.forward(x)
                entropys = softmax_entropy(outputs)
                ids1 = torch.where(entropys < self.margin)
                loss = entropys[ids1].mean(0)
                loss.backward()
                # SAM first step: climb to w + e(w)
                old = {}
                with torch.no_grad():
                    norms = [p.grad.norm(p=2) for p in params if p.grad is not None]
                    grad_norm = torch.norm(torch.stack(norms), p=2)
                    scale = self.rho / (grad_norm + 1e-12)
                    for p in params:
                        if p.grad is None:
                            continue
                        old[p] = p.data.clone()
                        p.add_(p.grad * scale.to(p))
                opt.zero_grad()
                entropys2 = softmax_entropy(w.forward(x))[ids1]
                ids2 = torch.where(entropys2 < self.margin)
                loss_second = entropys2[ids2].mean(0)
                value = loss_second.item()
                if not math.isnan(value):
                    ema = d.state["ema"]
                    d.state["ema"] = value if ema is None else 0.9 * ema + (1 - 0.9) * value
                loss_second.backward()
                # SAM second step: back to w, then the base optimizer's step
                with torch.no_grad():
                    for p in params:
                        if p in old:
                            p.copy_(old[p])
                opt.step()
                opt.zero_grad()
            if d.state["ema"] is not None and d.state["ema"] < self.reset_constant:
                w.method_reset()  # model recovery
                break
        return outputs


class MEMO(Method):
    """MEMO: for each test point, one SGD step (lr 0.005, the CIFAR setting) on the marginal
    entropy of the model's predictions over `n_aug` (32) AugMix augmentations, then predict
    the point with the adapted model; the delta is dropped after every point (episodic).
    All parameters are adapted (as the reference). BatchNorm uses MEMO's prior-mixed
    statistics: prior N/(N+1) of the source statistics, N = prior_strength (16)."""
    name = "memo"

    def __init__(self, lr=0.005, momentum=0.0, n_aug=32, steps=1, prior_strength=16, augment_fn=None):
        self.lr, self.momentum, self.n_aug, self.steps = lr, momentum, n_aug, steps
        self.prior = None if prior_strength is None or prior_strength < 0 else prior_strength / (prior_strength + 1)
        self.augment_fn = augment_fn or augment.augmix

    def default_lifetime(self):
        return Episodic()

    def spec(self, w):
        attrs = {}
        if self.prior is not None:
            for mname, m in w._mods.items():
                if isinstance(m, BATCHNORMS):
                    attrs[(mname, "forward")] = _prior_bn_forward(m, self.prior)
        return Spec(grad=_all_params(w), attrs=attrs, train=None)

    def optimizer(self, params):
        return _sgd(self.lr, self.momentum)(params)

    def adapt(self, w, x):
        d = w.delta
        base = {k: w.base_tensor(k) for k in d.tensors}
        outs = []
        for i in range(x.shape[0]):
            if i:  # every point starts from the base (episodic within the request too)
                with torch.no_grad():
                    for k, t in d.tensors.items():
                        t.copy_(base[k])
                self.init_state(w, d)
            opt = d.state["opt"]
            xi = x[i]
            with torch.enable_grad():
                for _ in range(self.steps):
                    inputs = torch.stack([self.augment_fn(xi) for _ in range(self.n_aug)])
                    opt.zero_grad()
                    loss, _ = marginal_entropy(w.forward(inputs))
                    loss.backward()
                    opt.step()
            with torch.no_grad():
                outs.append(w.forward(xi.unsqueeze(0)))
        return torch.cat(outs)


def _prior_bn_forward(bn, prior):
    """MEMO's BatchNorm forward: normalise by prior * source statistics + (1 - prior) *
    the batch's (unbiased variance), as MEMO's _modified_bn_forward."""
    def forward(input):
        est_mean = torch.zeros(bn.running_mean.shape)
        est_var = torch.ones(bn.running_var.shape)
        F.batch_norm(input, est_mean, est_var, None, None, True, 1.0, bn.eps)
        running_mean = prior * bn.running_mean + (1 - prior) * est_mean
        running_var = prior * bn.running_var + (1 - prior) * est_var
        return F.batch_norm(input, running_mean, running_var, bn.weight, bn.bias, False, 0, bn.eps)
    return forward


class CoTTA(Method):
    """CoTTA (CIFAR-10-C defaults): the student (all parameters, BatchNorm on batch
    statistics) learns with Adam (lr 1e-3) from the mean teacher's predictions — averaged
    over n_aug = 32 augmentations when the source model (anchor: the base weights) is
    unsure (mean max-probability < ap = 0.92); the teacher follows the student by EMA
    (mt_alpha 0.999); after each step every weight/bias element is restored to its base
    value with probability rst = 0.01. Returns the teacher's predictions. The teacher is a
    second delta over the same base; the anchor is the base itself (no copy)."""
    name = "cotta"

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), mt_alpha=0.999, rst=0.01, ap=0.92, n_aug=32, steps=1,
                 augment_fn=None):
        self.lr, self.betas, self.mt, self.rst, self.ap = lr, betas, mt_alpha, rst, ap
        self.n_aug, self.steps = n_aug, steps
        self.augment_fn = augment_fn or augment.cotta_transform

    def spec(self, w):
        s = _norm_spec(w)
        s.grad = _all_params(w)
        return s

    def optimizer(self, params):
        return _adam(self.lr, self.betas)(params)

    def init_state(self, w, d):
        super().init_state(w, d)
        with torch.no_grad():
            teacher = {k: v.detach().clone() for k, v in d.tensors.items()}
        d.state["teacher"] = Delta(self.name + "/teacher", teacher, d.nulls, d.attrs, d.train)
        d.state["anchor"] = Delta(self.name + "/anchor", {}, d.nulls, d.attrs, d.train)
        d.state["restore"] = [(mn, pn) for mn, m in w._mods.items() for pn in m._parameters
                              if pn in ("weight", "bias") and _name(mn, pn) in d.tensors]

    def adapt(self, w, x):
        d = w.delta
        st = d.state
        opt = st["opt"]
        for _ in range(self.steps):
            with torch.enable_grad():
                outputs = w.forward(x)
            with torch.no_grad():
                with w.using(st["anchor"]):
                    anchor_prob = torch.nn.functional.softmax(w.forward(x), dim=1).max(1)[0]
                with w.using(st["teacher"]):
                    standard_ema = w.forward(x)
                    outputs_emas = [w.forward(self.augment_fn(x)).detach() for _ in range(self.n_aug)]
                if anchor_prob.mean(0) < self.ap:
                    outputs_ema = torch.stack(outputs_emas).mean(0)
                else:
                    outputs_ema = standard_ema
            with torch.enable_grad():
                loss = (-(outputs_ema.softmax(1) * outputs.log_softmax(1)).sum(1)).mean(0)
                loss.backward()
            opt.step()
            opt.zero_grad()
            with torch.no_grad():
                for k, t in st["teacher"].tensors.items():  # teacher: EMA of the student
                    t.copy_(self.mt * t + (1 - self.mt) * d.tensors[k])
                for mn, pn in st["restore"]:  # stochastic restore towards the base
                    k = _name(mn, pn)
                    p = d.tensors[k]
                    mask = (torch.rand(p.shape) < self.rst).float()
                    p.copy_(w.base_tensor(k) * mask + p * (1. - mask))
        return outputs_ema

    def predict(self, w, x):
        with torch.no_grad(), w.using(w.delta.state["teacher"]):
            return w.forward(x)


class TTT(Method):
    """TTT (online): before answering, one SGD step (lr 0.001, no momentum: TTT's test
    script) on the rotation-prediction loss of the shared extractor `ext` and the
    self-supervised head `head` (both submodule names of the model; the head maps ext's
    output to 4 rotation logits and was trained jointly at the source). Every image of
    the batch in its four rotations ("expand"). The delta holds ext's and head's
    parameters; the answer comes from the updated model."""
    name = "ttt"

    def __init__(self, ext, head, lr=0.001, momentum=0.0, steps=1, rotation="expand"):
        self.ext, self.head = ext, head
        self.lr, self.momentum, self.steps, self.rotation = lr, momentum, steps, rotation

    def spec(self, w):
        for n in (self.ext, self.head):
            if n not in w._mods:
                raise ValueError(f"TTT: the model has no submodule {n!r}")
        pre = (self.ext + ".", self.head + ".")
        grad = [n for n in _all_params(w) if n.startswith(pre)]
        return Spec(grad=grad, train=None)

    def optimizer(self, params):
        return _sgd(self.lr, self.momentum)(params)

    def adapt(self, w, x):
        opt = w.delta.state["opt"]
        ext, head = w._mods[self.ext], w._mods[self.head]
        with torch.enable_grad():
            for _ in range(self.steps):
                xr, yr = augment.rotate_batch(x, self.rotation)
                loss = F.cross_entropy(head(ext(xr)), yr)
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            return w.forward(x)


class TLM(Method):
    """TLM-style test-time learning for causal LMs: minimise the input's perplexity with a
    LoRA delta on `targets` (q_proj, v_proj; r 8, alpha 16), sample-efficiently: a sequence
    takes part only when its perplexity exceeds p0 (e^3) and is weighted by
    lam * perplexity (lam 0.1), the weight held constant. AdamW. Called with input_ids
    (N, T) (and optionally attention_mask); returns the model output computed before the
    update. The reference's training code is not published (its README: "TODO"); the rule
    and constants follow the paper."""
    name = "tlm"

    def __init__(self, targets=("q_proj", "v_proj"), r=8, alpha=16, lr=5e-5, weight_decay=0.0, lam=0.1,
                 p0=math.e ** 3, steps=1):
        self.targets, self.r, self.alpha = tuple(targets), r, alpha
        self.lr, self.weight_decay, self.lam, self.p0, self.steps = lr, weight_decay, lam, p0, steps

    def spec(self, w):
        lora = [n for n, m in w._mods.items() if isinstance(m, torch.nn.Linear) and n.rpartition(".")[2] in self.targets]
        if not lora:
            raise ValueError(f"TLM: no Linear layer named {self.targets} in the model")
        return Spec(lora=lora, r=self.r, alpha=self.alpha)

    def optimizer(self, params):
        return torch.optim.AdamW(params, lr=self.lr, weight_decay=self.weight_decay)

    @staticmethod
    def log_perplexity(logits, input_ids, attention_mask=None):
        """Mean next-token NLL per sequence (N,): the log of each input's perplexity."""
        lg = logits[:, :-1].float()
        tgt = input_ids[:, 1:]
        nll = F.cross_entropy(lg.reshape(-1, lg.shape[-1]), tgt.reshape(-1), reduction="none").view(tgt.shape)
        if attention_mask is None:
            return nll.mean(1)
        m = attention_mask[:, 1:].to(nll.dtype)
        return (nll * m).sum(1) / m.sum(1).clamp_min(1)

    def adapt(self, w, input_ids=None, attention_mask=None, **kwargs):
        if input_ids is None:
            raise TypeError("TLM adapts on input_ids=")
        opt = w.delta.state["opt"]
        d = w.delta
        with torch.enable_grad():
            for _ in range(self.steps):
                out = w.forward(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
                logppl = self.log_perplexity(out.logits, input_ids, attention_mask)
                ppl = torch.exp(logppl.detach())
                weight = torch.where(ppl > self.p0, self.lam * ppl, torch.zeros_like(ppl))
                d.state["last_ppl"] = ppl.tolist()
                if bool((weight > 0).any()):
                    loss = (weight * logppl).mean()
                    loss.backward()
                    opt.step()
                    opt.zero_grad()
        return out

    def predict(self, w, *args, **kwargs):
        with torch.no_grad():
            return w.forward(*args, **kwargs)

    def logits(self, out):
        return None

    def batch_size(self, *args, **kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        return int(ids.shape[0]) if ids is not None else 1

"""Safety checks run after every adaptation step: the collapse guard (prediction diversity
and entropy, as SAR's model recovery) and the finite-values test of a delta (delta.py)."""
import math

import torch


class CollapseGuard:
    """Detects collapse of an adapting classifier from its logits (N, C).

    Two signals, each an exponential moving average over batches (momentum 0.9, SAR's):
    - diversity: entropy of the histogram of predicted classes (argmax) divided by ln C
      (1 when every class is predicted equally often, 0 when one class takes every
      prediction); collapse when it falls below `min_diversity`;
    - entropy: mean per-sample entropy (nats); collapse when it falls below `min_entropy`
      (None: not used; SAR's recovery uses 0.2 on its own filtered loss, see methods.SAR).
    Judged only after `warmup` batches. reset() forgets the averages."""

    def __init__(self, min_diversity=0.2, min_entropy=None, momentum=0.9, warmup=10):
        if min_diversity is None and min_entropy is None:
            raise ValueError("CollapseGuard needs min_diversity or min_entropy")
        self.min_diversity = min_diversity
        self.min_entropy = min_entropy
        self.momentum = momentum
        self.warmup = warmup
        self.reset()

    def reset(self):
        self.n = 0
        self.marginal = None
        self.entropy = None
        self.diversity = None

    def observe(self, logits):
        """Feeds one batch of logits; returns True when the model has collapsed."""
        if not isinstance(logits, torch.Tensor) or logits.dim() != 2 or logits.shape[1] < 2:
            return False
        with torch.no_grad():
            lg = logits.detach().float()
            p = lg.softmax(1)
            ent = float(-(p * lg.log_softmax(1)).sum(1).mean())
            marg = (lg.argmax(1).unsqueeze(1) == torch.arange(lg.shape[1])).float().mean(0)
        m = self.momentum
        self.marginal = marg if self.marginal is None else m * self.marginal + (1 - m) * marg
        self.entropy = ent if self.entropy is None else m * self.entropy + (1 - m) * ent
        q = self.marginal.clamp_min(1e-12)
        self.diversity = float(-(q * q.log()).sum()) / math.log(q.numel())
        self.n += 1
        if self.n < self.warmup:
            return False
        if self.min_diversity is not None and self.diversity < self.min_diversity:
            return True
        return self.min_entropy is not None and self.entropy < self.min_entropy

    def __repr__(self):
        return f"CollapseGuard(min_diversity={self.min_diversity}, min_entropy={self.min_entropy})"

"""Label-preserving augmentations of image batches (N, C, H, W, values in [0, 1]) for MEMO
and CoTTA, and TTT's rotations. Written over plain tensor operators so the same code runs on
torchnative and on upstream torch; random draws come from torch's global generator (its
stream is the same on both), one draw per decision, in a fixed order.

The references use PIL/torchvision (MEMO: AugMix; CoTTA: ColorJitterPro, RandomAffine,
GaussianBlur, flip, Gaussian noise). Kept here: what is label-preserving on digits and
expressible without a resampling kernel — integer translations, brightness, contrast,
gamma, posterize, solarize, autocontrast, Gaussian noise. Dropped: rotation/shear/scale
(no grid_sample kernel in the core yet), horizontal flip (not label-preserving on digits),
blur, equalize."""
import torch


def _u(lo, hi):
    return float(torch.rand(()) * (hi - lo) + lo)


def translate(x, dy, dx):
    """Shifts by whole pixels, filling with zeros (the digits' background)."""
    if dy == 0 and dx == 0:
        return x
    h, w = x.shape[-2:]
    out = torch.zeros_like(x)
    ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
    xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
    out[..., yd, xd] = x[..., ys, xs]
    return out


def autocontrast(x):
    lo = x.amin(dim=(-2, -1), keepdim=True)
    hi = x.amax(dim=(-2, -1), keepdim=True)
    return (x - lo) / (hi - lo).clamp_min(1e-6)


def posterize(x, bits):
    q = float(2 ** bits - 1)
    return torch.round(x * q) / q


def solarize(x, threshold):
    return torch.where(x >= threshold, 1.0 - x, x)


def _augmix_op(x, max_shift):
    k = int(torch.randint(0, 6, ()))
    if k == 0:
        return autocontrast(x)
    if k == 1:
        return posterize(x, int(torch.randint(3, 7, ())))
    if k == 2:
        return solarize(x, _u(0.5, 1.0))
    if k == 3:
        return translate(x, int(torch.randint(-max_shift, max_shift + 1, ())), 0)
    if k == 4:
        return translate(x, 0, int(torch.randint(-max_shift, max_shift + 1, ())))
    return (x - x.mean(dim=(-2, -1), keepdim=True)) * _u(0.6, 1.4) + x.mean(dim=(-2, -1), keepdim=True)


def augmix(x, width=3, depth=(1, 3)):
    """AugMix (Hendrycks et al. 2020) over the ops above: `width` chains of 1-3 ops mixed
    with Dirichlet(1) weights, then mixed with the input by Beta(1, 1). x: one image
    (C, H, W) or a batch; one augmentation per call."""
    max_shift = max(1, x.shape[-1] // 8)
    e = -torch.log(torch.rand(width).clamp_min(1e-12))  # Dirichlet(1, ..., 1) = normalised Exp(1)
    ws = e / e.sum()
    m = float(torch.rand(()))  # Beta(1, 1) is uniform
    mix = torch.zeros_like(x)
    for i in range(width):
        y = x
        for _ in range(int(torch.randint(depth[0], depth[1] + 1, ()))):
            y = _augmix_op(y, max_shift)
        mix = mix + float(ws[i]) * y
    return ((1 - m) * x + m * mix).clamp(0, 1)


def cotta_transform(x, noise=0.005):
    """CoTTA's test-time augmentation for small images (the part kept, see the module
    docstring): brightness x[0.6, 1.4], contrast x[0.7, 1.3], gamma [0.7, 1.3], a shift of
    up to 1/16 of the side (at least one pixel), Gaussian noise (std 0.005), clipped to [0, 1]."""
    x = (x * _u(0.6, 1.4)).clamp(0, 1)
    mean = x.mean(dim=(-3, -2, -1), keepdim=True)
    x = ((x - mean) * _u(0.7, 1.3) + mean).clamp(0, 1)
    x = x.clamp_min(1e-8) ** _u(0.7, 1.3)
    s = max(1, x.shape[-1] // 16)
    x = translate(x, int(torch.randint(-s, s + 1, ())), int(torch.randint(-s, s + 1, ())))
    x = x + torch.randn(x.shape) * noise
    return x.clamp(0, 1)


def rotate(x, k):
    """Rotates a batch (N, C, H, W) by k * 90 degrees counter-clockwise (TTT's rotations)."""
    k %= 4
    if k == 0:
        return x
    if k == 1:
        return x.flip(3).transpose(2, 3)
    if k == 2:
        return x.flip(3).flip(2)
    return x.transpose(2, 3).flip(3)


def rotate_batch(x, mode="expand"):
    """TTT's rotate_batch: "expand" stacks the four rotations of every image (labels
    0,1,2,3 blockwise); "rand" rotates each image by a random multiple of 90 degrees."""
    n = x.shape[0]
    if mode == "expand":
        labels = torch.arange(4).repeat_interleave(n)
        return torch.cat([rotate(x, k) for k in range(4)]), labels
    if mode == "rand":
        labels = torch.randint(4, (n,))
        return torch.stack([rotate(x[i:i + 1], int(labels[i]))[0] for i in range(n)]), labels
    raise ValueError(f"rotate_batch: mode must be 'expand' or 'rand', got {mode!r}")

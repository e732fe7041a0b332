"""torchnative: the genuine torch Python tree on a torch._C written in C."""
__version__ = "0.1.0"


def quantize(model, method, group_size=None, **kwargs):
    """Quantises model's nn.Linear layers in place ("8da4w" with group_size, or "int8"):
    torchnative.quantize_model.quantize, which documents the methods and save/load."""
    from torchnative.quantize_model import quantize as _quantize

    return _quantize(model, method, group_size, **kwargs)

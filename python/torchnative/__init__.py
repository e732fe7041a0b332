"""torchnative: the genuine torch Python tree on a torch._C written in C."""
__version__ = "0.1.0"

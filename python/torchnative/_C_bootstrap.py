"""Called by torch._C's init to add the part of the surface that is written in Python.

Must not import torch (torch is being imported when this runs)."""


def install(module):
    pass

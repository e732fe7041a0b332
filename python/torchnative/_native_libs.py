"""Locates the native libraries torch._C may load at init (must not import torch)."""
import os


def openblas_path():
    """Path of the OpenBLAS shared library shipped by scipy-openblas32, or None."""
    try:
        import scipy_openblas32 as sob
    except ImportError:
        return None
    path = os.path.join(sob.get_lib_dir(), "lib" + sob.get_library() + ".so")
    return path if os.path.exists(path) else None

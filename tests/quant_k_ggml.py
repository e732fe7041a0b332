"""ggml's own k-quant products for tests/test_quant_k.py (run with .venv-ref's Python, where
`scripts/setup.sh --llama-cpp` installs llama_cpp_python, which ships ggml's CPU library):
each row of x quantised by ggml's quantize_row_q8_K, then ggml_vec_dot_q4_K_q8_K /
ggml_vec_dot_q6_K_q8_K against each weight row, the functions llama.cpp's matmul calls.

    python tests/quant_k_ggml.py IN.npz OUT.npy QTYPE      (IN.npz: x (m, k) float32, b blocks)

Exit status 3 when llama_cpp is not installed (the test skips).
"""
import ctypes
import os
import sys

import numpy as np


def main():
    try:
        import llama_cpp
    except ImportError:
        sys.exit(3)
    inp, out, qtype = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-cpu.so"))
    lib.ggml_cpu_init()  # ggml's conversion tables
    quantize = lib.quantize_row_q8_K
    quantize.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    dot = getattr(lib, {12: "ggml_vec_dot_q4_K_q8_K", 14: "ggml_vec_dot_q6_K_q8_K"}[qtype])
    dot.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                    ctypes.c_size_t, ctypes.c_int]
    d = np.load(inp)
    x, w = np.ascontiguousarray(d["x"], np.float32), np.ascontiguousarray(d["b"], np.uint8)
    m, k = x.shape
    y = np.zeros((m, w.shape[0]), np.float32)
    xq = np.zeros(k // 256 * 292, np.uint8)  # block_q8_K: float d, 256 int8, 16 int16
    s = np.zeros(1, np.float32)
    for i in range(m):
        quantize(x[i].ctypes.data, xq.ctypes.data, k)
        for r in range(w.shape[0]):
            dot(k, s.ctypes.data, 0, w[r].ctypes.data, 0, xq.ctypes.data, 0, 1)
            y[i, r] = s[0]
    np.save(out, y)


if __name__ == "__main__":
    main()

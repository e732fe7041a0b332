"""The comparison cases, by family. Each op that has a kernel must be covered by at least
one case (tests/test_ops.py checks it). Inputs cross vector widths and tails (SIZES),
include non-contiguous layouts and broadcasting; invalid inputs compare exception classes."""
from optest.harness import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, SIZES, Case, In

CASES: list[Case] = []


def add(name, fn, inputs, covers, **kw):
    CASES.append(Case(name, fn, inputs, covers, **kw))


# ---- creation / conversion -------------------------------------------------------------
for n in SIZES:
    add(f"from_numpy_f32_{n}", "lambda t, a: a", [In((n,)), In((n,))], ["from_numpy"])
add("from_numpy_transposed", "lambda a: a", [In((7, 33), layout="transposed")], [])
add("tensor_infer_float", "lambda: torch.tensor([1, 2.5, 3])", [], [])
add("tensor_infer_int", "lambda: torch.tensor([[1, 2], [3, 4]])", [], [])
add("tensor_infer_bool", "lambda: torch.tensor([True, False])", [], [])
add("tensor_dtype_arg", "lambda: torch.tensor([1.7, -2.2, 3.9], dtype=torch.int32)", [], [])
add("tensor_ragged_error", "lambda: torch.tensor([[1, 2], [3]])", [], [])
add("tensor_scalar", "lambda: torch.tensor(3.5)", [], [])
add("item_float", "lambda a: a.sum().item() if False else a[0].item()", [In((7,))], [])
add("tolist_2d", "lambda a: a.tolist()", [In((3, 4), 'int32', 'int')], [])
add("size_stride", "lambda a: (tuple(a.size()), a.stride(), a.dim(), a.numel())", [In((3, 4, 5))], [])
add("size_neg_dim", "lambda a: a.size(-1)", [In((3, 4, 5))], [])
add("size_bad_dim", "lambda a: a.size(3)", [In((3, 4, 5))], [])

"""Gradient cases: every row of src/autograd/formulas.def is covered by at least one case
(tests/test_autograd_grads.py checks it). Inputs reuse the operator harness's seeded data;
'transposed' and 'strided' layouts give non-contiguous inputs, shapes of unequal rank give
broadcasting."""
from gradtest.harness import GradCase as G
from gradtest.harness import In

f = "float32"
A = In((4, 5))
B = In((4, 5))
AT = In((4, 5), layout="transposed")
AS = In((4, 5), layout="strided")
ROW = In((5,))
POS = In((4, 5), kind="pos")
UNIT = In((4, 5), kind="unit")
M34, M45 = In((3, 4)), In((4, 5))
SQ = In((3, 4, 4))
IDX = In((6,), "int64", "index", high=4)
# cases also compared in bfloat16 (tolerance: harness.TOL)
BF = ("float64", "float32", "bfloat16")

# svd/svdvals second-order gradients in float32 go through 1 / (s_i^2 - s_j^2) and the
# singular vectors, which amplify the LAPACK's rounding: on an AVX2 AMD host upstream's
# (MKL) float32 second derivative is 1.2e-3 from the float64 one and ours 5.7e-5, and the
# two differ by up to 7.4e-5 in the case below (session 17); float64 keeps the default.
SVD_F32 = {"float32": (2e-4, 2e-4)}

CASES = [
    # elementwise (broadcast and non-contiguous operands)
    G("add", "lambda a, b: torch.add(a, b, alpha=2.5)", [A, ROW], (0, 1), ["add_Tensor"], double=True, dtypes=BF),
    G("add_scalar", "lambda a: a + 3", [AT], (0,), ["add_Scalar"]),
    G("fft_r2c_c2r", "lambda a: (torch.view_as_real(torch.fft.rfft(a, dim=0, norm='ortho')), torch.view_as_real(torch.fft.fft(a)), torch.fft.irfft(torch.fft.rfft(a), n=7), torch.fft.irfft(torch.view_as_complex(torch.stack((a, a.flip(0)), -1)), n=8, norm='forward'), torch.fft.hfft(torch.view_as_complex(torch.stack((a, a * 2), -1)), n=9))",
      [In((4, 5))], (0,), ["_fft_r2c", "_fft_c2r", "conj_physical"]),
    G("sub", "lambda a, b: torch.sub(a, b, alpha=0.5)", [AS, B], (0, 1), ["sub_Tensor"]),
    G("sub_scalar", "lambda a: a - 2", [A], (0,), ["sub_Scalar"]),
    G("rsub", "lambda a, b: torch.rsub(a, b, alpha=3)", [A, B], (0, 1), ["rsub_Tensor"]),
    G("rsub_scalar", "lambda a: 2 - a", [A], (0,), ["rsub_Scalar"]),
    G("mul", "lambda a, b: a * b", [AT, ROW], (0, 1), ["mul_Tensor"], double=True, dtypes=BF),
    G("mul_scalar", "lambda a: a * 1.5", [A], (0,), ["mul_Scalar"]),
    G("div", "lambda a, b: a / b", [A, POS], (0, 1), ["div_Tensor"], double=True, dtypes=BF),
    G("true_divide", "lambda a, b: torch.true_divide(a, b)", [A, POS], (0, 1), ["true_divide_Tensor"]),
    G("div_scalar", "lambda a: a / 3", [A], (0,), ["div_Scalar"]),
    G("neg", "lambda a: -a", [A], (0,), ["neg"]),
    G("pow_scalar", "lambda a: a ** 3", [A], (0,), ["pow_Tensor_Scalar"], double=True),
    G("pow_half", "lambda a: a ** 0.5", [POS], (0,), ["pow_Tensor_Scalar"]),
    G("pow_tensor", "lambda a, b: a ** b", [POS, UNIT], (0, 1), ["pow_Tensor_Tensor"]),
    G("square", "lambda a: torch.square(a)", [A], (0,), ["square"]),
    G("sqrt", "lambda a: a.sqrt()", [POS], (0,), ["sqrt"], double=True),
    G("rsqrt", "lambda a: a.rsqrt()", [POS], (0,), ["rsqrt"]),
    G("reciprocal", "lambda a: a.reciprocal()", [POS], (0,), ["reciprocal"]),
    G("exp", "lambda a: a.exp()", [UNIT], (0,), ["exp"], double=True, dtypes=BF),
    G("log", "lambda a: a.log()", [POS], (0,), ["log"], double=True),
    G("log1p", "lambda a: a.log1p()", [POS], (0,), ["log1p"]),
    G("tanh", "lambda a: a.tanh()", [A], (0,), ["tanh"], double=True, dtypes=BF),
    G("sigmoid", "lambda a: a.sigmoid()", [A], (0,), ["sigmoid"], double=True, dtypes=BF),
    G("relu", "lambda a: torch.relu(a)", [A], (0,), ["relu"], dtypes=BF),
    G("gelu", "lambda a: F.gelu(a)", [A], (0,), ["gelu"], dtypes=BF),
    G("gelu_tanh", "lambda a: F.gelu(a, approximate='tanh')", [A], (0,), ["gelu"]),
    G("silu", "lambda a: F.silu(a)", [A], (0,), ["silu"], dtypes=BF),
    G("sin_cos", "lambda a: a.sin() + a.cos()", [A], (0,), ["sin", "cos"], double=True),
    G("erf", "lambda a: torch.erf(a)", [A], (0,), ["erf"]),
    G("ndtr_diff", "lambda a, p: (torch.special.ndtr(a), torch.diff(a, dim=0), torch.diff(a, n=2, dim=1, prepend=p, append=p), torch.diff(a[:1], n=3))", [A, In((4, 2))], (0, 1), ["erf", "sub_Tensor"], double=True),
    G("abs", "lambda a: a.abs()", [A], (0,), ["abs"]),
    G("rounding", "lambda a: a.sign() + a.floor() + a.ceil() + a.round() + a.trunc() + a",
      [A], (0,), ["sign", "floor", "ceil", "round", "trunc"]),
    G("clamp", "lambda a: a.clamp(-0.5, 0.7)", [A], (0,), ["clamp"]),
    G("clamp_min_max", "lambda a: a.clamp_min(-0.3) * a.clamp_max(0.4)", [A], (0,), ["clamp_min", "clamp_max"]),
    G("hardtanh", "lambda a: F.hardtanh(a, -0.5, 0.5)", [A], (0,), ["hardtanh"]),
    G("leaky_relu", "lambda a: F.leaky_relu(a, 0.2)", [A], (0,), ["leaky_relu"]),
    G("softplus", "lambda a: F.softplus(a * 10, beta=2, threshold=5)", [A], (0,), ["softplus"]),
    G("elu", "lambda a: F.elu(a, alpha=1.3)", [A], (0,), ["elu"]),
    G("masked_fill", "lambda a, m: a.masked_fill(m, 2.0)", [A, In((4, 5), "bool", "bool")], (0,),
      ["masked_fill_Scalar"]),
    G("masked_fill_tensor", "lambda a, m, v: a.masked_fill(m, v)", [A, In((4, 5), "bool", "bool"), In(())],
      (0, 2), ["masked_fill_Tensor"]),
    G("where", "lambda c, a, b: torch.where(c, a, b)", [In((4, 5), "bool", "bool"), A, ROW], (1, 2),
      ["where_self"]),
    G("maximum", "lambda a, b: torch.maximum(a, b) + torch.minimum(a, b.round())", [A, B], (0, 1),
      ["maximum", "minimum"]),
    G("addcmul", "lambda a, b, c: torch.addcmul(a, b, c, value=0.5)", [A, B, ROW], (0, 1, 2), ["addcmul"]),
    G("addcdiv", "lambda a, b, c: torch.addcdiv(a, b, c, value=2)", [A, B, POS], (0, 1, 2), ["addcdiv"]),
    G("lerp", "lambda a, b: torch.lerp(a, b, 0.3)", [A, B], (0, 1), ["lerp_Scalar"]),
    G("to_dtype", "lambda a: a.to(torch.float64 if a.dtype == torch.float32 else torch.float32) * 2", [A], (0,),
      ["_to_copy"]),
    G("clone_alias", "lambda a: a.clone() * torch.ops.aten.alias(a)", [A], (0,), ["clone", "alias"]),
    G("lift_fresh_copy", "lambda a: torch.ops.aten.lift_fresh_copy.default(a) * 2 + "
      "torch.ops.aten._reshape_alias.default(a, (5, 4), (1, 5)).t()", [A], (0,), ["lift_fresh_copy", "_reshape_alias"]),
    G("inplace_mul", "lambda a, b: (a * 1).mul_(b).add_(b)", [A, B], (0, 1), ["mul_Tensor", "add_Tensor"]),
    G("inplace_zero_fill", "lambda a: (a * 1).zero_() + (a * 2).fill_(3) + a", [A], (0,), ["zero_", "fill__Scalar"]),
    G("copy", "lambda a, b: (a * 1).copy_(b) * a", [A, B], (0, 1), ["copy_"]),
    # reductions
    G("sum", "lambda a: a.sum()", [AT], (0,), ["sum"], dtypes=BF),
    G("sum_dim", "lambda a: a.sum(1) + a.sum((0, 1), keepdim=True)", [In((3, 4, 5))], (0,), ["sum_dim_IntList"]),
    G("mean", "lambda a: a.mean()", [A], (0,), ["mean"]),
    G("mean_dim", "lambda a: a.mean(-1, keepdim=True) * a.mean(0)", [A], (0,), ["mean_dim"], double=True, dtypes=BF),
    G("amax", "lambda a: a.amax(1).sum() + a.amin(0) + a.round().amax(0)", [A], (0,), ["amax", "amin"]),
    G("max_dim", "lambda a: a.max(1).values.sum() + a.min(0, keepdim=True).values", [A], (0,), ["max_dim", "min_dim"]),
    G("logsumexp", "lambda a: torch.logsumexp(a, 1)", [A], (0,), ["logsumexp"]),
    G("var_std", "lambda a: a.var(1).sum() + a.std(0, correction=0) + a.var(0, unbiased=False) + a.std(1).sum() + a.var() + "
      "a.std()", [A], (0,), ["var_correction", "std_correction", "var_dim", "std_dim", "var", "std"]),
    G("vector_norm", "lambda a: torch.linalg.vector_norm(a, dim=1) + torch.linalg.vector_norm(a, 1)", [A], (0,),
      ["linalg_vector_norm"]),
    G("cumsum", "lambda a: a.cumsum(1)", [A], (0,), ["cumsum"]),
    # products
    G("mm", "lambda a, b: a @ b", [M34, M45], (0, 1), ["mm", "matmul"], double=True, dtypes=BF),
    G("addmm", "lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2)", [ROW, M34, M45], (0, 1, 2), ["addmm"]),
    G("bmm", "lambda a, b: torch.bmm(a, b)", [In((2, 3, 4)), In((2, 4, 5))], (0, 1), ["bmm"]),
    G("baddbmm", "lambda c, a, b: torch.baddbmm(c, a, b, alpha=0.5)", [In((3, 5)), In((2, 3, 4)), In((2, 4, 5))],
      (0, 1, 2), ["baddbmm"]),
    G("matmul_batched", "lambda a, b: torch.matmul(a, b)", [In((2, 3, 4)), M45], (0, 1), ["matmul"], dtypes=BF),
    G("matmul_vec", "lambda a, b, v: torch.matmul(a, v) + torch.matmul(v, b).sum()", [M34, M45, In((4,))],
      (0, 1, 2), ["matmul"]),
    G("linear", "lambda x, w, b: F.linear(x, w, b)", [In((2, 3, 4)), In((5, 4)), ROW], (0, 1, 2), ["linear"], dtypes=BF),
    G("products_input_only", "lambda x, w, b: F.linear(x, w) + x @ w.t() + torch.matmul(x, w.t()) * b + "
      "torch.addmm(b, x, w.t()) + x.mul(b[:4].sum()).sum()", [In((3, 4)), In((5, 4)), ROW], (0,),
      ["linear", "mm", "matmul", "addmm", "mul_Tensor"]),
    G("products_weight_only", "lambda x, w, b: F.linear(x, w) + x @ w.t() + torch.matmul(x, w.t()) * b + "
      "torch.addmm(b, x, w.t()) + torch.bmm(x[None], w.t()[None])[0] / b", [In((3, 4)), In((5, 4)), ROW], (1,),
      ["linear", "mm", "matmul", "addmm", "bmm", "div_Tensor"]),
    G("linear_nobias", "lambda x, w: F.linear(x, w)", [In((3, 4)), In((5, 4))], (0, 1), ["linear"]),
    G("dot_mv_outer", "lambda a, v, w: torch.dot(v, v) + torch.mv(a, v).sum() + torch.outer(v, w).sum()",
      [M34, In((4,)), In((3,))], (0, 1, 2), ["dot", "mv", "outer"]),
    # linear algebra beyond products: well-conditioned inputs (a + n·I), and functions of the
    # results that do not depend on the sign of eigen/singular vectors (abs, products)
    G("det", "lambda a: (torch.linalg.det(a + 4 * torch.eye(4, dtype=a.dtype)), torch.det(a[0] + 4 * torch.eye(4, dtype=a.dtype)))", [SQ], (0,), ["linalg_det", "det"], double=True),
    G("slogdet", "lambda a: (torch.linalg.slogdet(a + 4 * torch.eye(4, dtype=a.dtype))[1], torch.slogdet(a[0] - 4 * torch.eye(4, dtype=a.dtype))[1], torch.logdet(a[1] @ a[1].mT + torch.eye(4, dtype=a.dtype)))", [SQ], (0,), ["linalg_slogdet", "slogdet", "logdet"], double=True),
    G("inv", "lambda a: (torch.linalg.inv(a + 4 * torch.eye(4, dtype=a.dtype)), torch.inverse(a[0] - 4 * torch.eye(4, dtype=a.dtype)))", [SQ], (0,), ["linalg_inv", "inverse"], double=True),
    G("solve", "lambda a, b: (torch.linalg.solve(a + 4 * torch.eye(4, dtype=a.dtype), b), torch.linalg.solve(a + 4 * torch.eye(4, dtype=a.dtype), b[..., 0]), torch.linalg.solve(a[0] + 4 * torch.eye(4, dtype=a.dtype), b.mT, left=False), torch.linalg.solve_ex(a + 4 * torch.eye(4, dtype=a.dtype), b)[0])", [SQ, In((3, 4, 2))], (0, 1), ["linalg_solve", "linalg_solve_ex"], double=True),
    G("cholesky", "lambda a: (lambda s: (torch.linalg.cholesky(s), torch.linalg.cholesky(s, upper=True), torch.linalg.cholesky_ex(s)[0], torch.cholesky(s[0])))(a @ a.mT + 4 * torch.eye(4, dtype=a.dtype))", [SQ], (0,), ["linalg_cholesky", "linalg_cholesky_ex", "cholesky"], double=True),
    G("cholesky_raw", "lambda a: torch.linalg.cholesky(a.tril() + 6 * torch.eye(4, dtype=a.dtype))", [SQ], (0,), ["linalg_cholesky"]),
    G("cholesky_solve", "lambda b, l: (torch.cholesky_solve(b, l.tril() + 4 * torch.eye(4, dtype=l.dtype)), torch.cholesky_solve(b, l.triu() + 4 * torch.eye(4, dtype=l.dtype), upper=True))", [In((3, 4, 2)), SQ], (0, 1), ["cholesky_solve"], double=True),
    G("cholesky_inverse", "lambda l: (torch.cholesky_inverse(l.tril() + 4 * torch.eye(4, dtype=l.dtype)), torch.cholesky_inverse(l.triu() + 4 * torch.eye(4, dtype=l.dtype), upper=True))", [SQ], (0,), ["cholesky_inverse"], double=True),
    G("triangular_solve", "lambda b, a: (torch.triangular_solve(b, a + 4 * torch.eye(4, dtype=a.dtype))[0], torch.triangular_solve(b, a + 4 * torch.eye(4, dtype=a.dtype), upper=False, transpose=True)[0], torch.triangular_solve(b, a, unitriangular=True)[0])", [In((3, 4, 2)), SQ], (0, 1), ["triangular_solve"], double=True),
    G("solve_triangular", "lambda a, b: (torch.linalg.solve_triangular(a + 4 * torch.eye(4, dtype=a.dtype), b, upper=True), torch.linalg.solve_triangular(a + 4 * torch.eye(4, dtype=a.dtype), b.mT, upper=False, left=False), torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True))", [SQ, In((3, 4, 2))], (0, 1), ["linalg_solve_triangular"], double=True),
    G("qr", "lambda a, w: (*torch.linalg.qr(a), *torch.linalg.qr(a.mT[..., :3, :]), *torch.linalg.qr(a[0, :4], mode='complete'), *torch.qr(w))", [In((3, 5, 4)), In((3, 5))], (0, 1), ["linalg_qr", "qr"], double=True),
    G("qr_r_err", "lambda a: torch.linalg.qr(a, mode='r')[1]", [In((5, 4))], (0,), ["linalg_qr"], error="RuntimeError"),
    G("eigh", "lambda a: (lambda w, v: (w, v.abs(), (v * w.exp().unsqueeze(-2)) @ v.mT))(*torch.linalg.eigh(a + a.mT))", [SQ], (0,), ["linalg_eigh"], double=True),
    G("eigh_triangle", "lambda a: (lambda w, v: (w, v.abs()))(*torch.linalg.eigh(a, UPLO='U'))", [SQ], (0,), ["linalg_eigh"]),
    G("eigvalsh", "lambda a: (torch.linalg.eigvalsh(a), torch.linalg.eigvalsh(a, UPLO='U'))", [SQ], (0,), ["linalg_eigvalsh"], double=True),
    G("svd", "lambda a, w: tuple(t for x in (a, w) for f in (False, True) for t in (lambda u, s, v: (u[..., :s.shape[-1]].abs(), s, v[..., :s.shape[-1], :].abs(), (u[..., :s.shape[-1]] * s.unsqueeze(-2)) @ v[..., :s.shape[-1], :]))(*torch.linalg.svd(x, full_matrices=f)))", [In((3, 5, 4)), In((3, 5))], (0, 1), ["linalg_svd"], double=True, tol=SVD_F32),
    G("svd_old", "lambda a: (lambda u, s, v: (u.abs(), s, v.abs()))(*torch.svd(a))", [In((3, 5, 4))], (0,), ["svd"]),
    # pinv: its derivative scales rounding by about the condition number squared, so float32
    # is compared at 1e-3 (float64, with second order, at the default 1e-10)
    G("pinv", "lambda a, w: (torch.linalg.pinv(a), torch.linalg.pinv(w, rtol=0.05), torch.linalg.pinv(a, atol=torch.tensor(0.1, dtype=torch.float64)), torch.linalg.pinv(a[0].mT @ a[0], hermitian=True), torch.linalg.pinv(a.mT @ a, atol=0.5, hermitian=True), torch.pinverse(w), torch.linalg.pinv(w, 1e-3), torch.linalg.pinv(w[:0]))", [In((3, 5, 4)), In((3, 5))], (0, 1), ["linalg_pinv_atol_rtol_tensor"], double=True, dtypes=("float64",)),
    G("pinv_f32", "lambda a, w: (torch.linalg.pinv(a), torch.linalg.pinv(w, rtol=0.05), torch.linalg.pinv(a, atol=torch.tensor(0.1, dtype=torch.float64)), torch.linalg.pinv(a[0].mT @ a[0], hermitian=True), torch.linalg.pinv(a.mT @ a, atol=0.5, hermitian=True), torch.pinverse(w), torch.linalg.pinv(w, 1e-3), torch.linalg.pinv(w[:0]))", [In((3, 5, 4)), In((3, 5))], (0, 1), ["linalg_pinv_atol_rtol_tensor"], dtypes=("float32",), rtol=1e-3, atol=1e-3),
    G("svdvals", "lambda a, w: (torch.linalg.svdvals(a), torch.linalg.svdvals(w), *(lambda u, s, v: (u.abs(), s))(*torch.ops.aten._linalg_svd.default(w)))", [In((3, 5, 4)), In((3, 5))], (0, 1), ["linalg_svdvals", "_linalg_svd"], double=True, tol=SVD_F32),
    G("matrix_exp", "lambda a: (torch.linalg.matrix_exp(a), torch.matrix_exp(a[0] * 0.3))", [SQ], (0,), ["linalg_matrix_exp", "matrix_exp"], double=True),
    G("lu", "lambda a: (*torch.linalg.lu(a)[1:], torch.linalg.lu_factor(a)[0], torch.linalg.lu_factor_ex(a[0])[0])", [SQ], (0,), ["linalg_lu", "linalg_lu_factor", "linalg_lu_factor_ex"], double=True),
    G("linalg_compositions", "lambda a, x, y: (torch.linalg.matrix_norm(a), torch.linalg.matrix_norm(a, 'nuc'), torch.linalg.matrix_norm(a, 2), torch.linalg.matrix_norm(a, -1), torch.linalg.norm(a[0], float('inf')), torch.linalg.cond(a + 4 * torch.eye(4, dtype=a.dtype)), torch.linalg.matrix_power(a, 3), torch.linalg.matrix_power(a + 4 * torch.eye(4, dtype=a.dtype), -2), torch.linalg.multi_dot([a[0], a[1], a[2]]), torch.linalg.vecdot(x, y), torch.cross(x, y, dim=-1), torch.linalg.vander(x[0]), torch.linalg.tensorinv(a[0].reshape(2, 2, 4) + torch.eye(4, dtype=a.dtype).reshape(2, 2, 4) * 4, ind=2), torch.linalg.tensorsolve(a[0] + 4 * torch.eye(4, dtype=a.dtype), x[0, :]  .new_ones(4) * x[0, 0]))", [SQ, In((4, 3)), In((4, 3))], (0, 1, 2), ["linalg_svdvals", "linalg_inv"], double=True),
    # views and data movement
    G("views", "lambda a: a.view(20).reshape(5, 4).t().unsqueeze(0).squeeze(0).flatten() * 1",
      [A], (0,), ["view", "reshape", "t", "unsqueeze", "squeeze_dim", "flatten_using_ints"]),
    G("reshape_nc", "lambda a: a.reshape(20) * 2", [AT], (0,), ["reshape", "_unsafe_view"]),
    G("view_as", "lambda a, b: a.view_as(b.t()).reshape_as(b) * 1", [A, B], (0,), ["view_as", "reshape_as"]),
    G("unflatten_squeeze", "lambda a: a.unflatten(1, (5, 1)).squeeze().unsqueeze(-1).squeeze((2,)) * 1", [A], (0,),
      ["unflatten_int", "squeeze", "squeeze_dims"]),
    G("transpose", "lambda a: a.transpose(0, 2).permute(1, 0, 2).mT.swapaxes(0, 1) * 1", [In((2, 3, 4))], (0,),
      ["transpose_int", "permute", "mT", "swapaxes"]),
    G("numpy_T", "lambda a: a.T.swapdims(0, 1).T * 1", [A], (0,), ["numpy_T", "swapdims"]),
    G("contiguous", "lambda a: a.contiguous() * 1", [AT], (0,), ["contiguous"]),
    G("expand", "lambda a, b: a.expand(3, 4, 5) * 1 + b.expand_as(torch.empty(4, 5)) + "
      "torch.broadcast_to(b, (2, 5)).sum()", [In((4, 1)), ROW], (0, 1), ["expand", "expand_as", "broadcast_to"]),
    G("select_slice", "lambda a: a[1] * 2 + a[:, 1:4:2].sum(1).sum() + a.narrow(1, 1, 2).sum()",
      [A], (0,), ["select_int", "slice_Tensor", "narrow"]),
    G("select_slice_double", "lambda a: (a[1] ** 2).sum() + (a[:, 1:4:2] ** 3).sum() + (a.narrow(1, 1, 2) ** 2).sum()",
      [A], (0,), ["select_int", "slice_Tensor", "narrow"], double=True),
    G("pad", "lambda a: F.pad(a, (1, 2, 0, 1)) ** 2", [A], (0,), ["constant_pad_nd"], double=True),
    G("scatter", "lambda a, i, s: a.scatter_add(1, i, s) + a.scatter(1, torch.arange(3).repeat(4, 1) + 1, s * 2)",
      [A, In((4, 3), "int64", "index", high=5), In((4, 3))], (0, 2), ["scatter_add", "scatter_src"]),
    G("index_select", "lambda a, i: a.index_select(0, i)", [A, IDX], (0,), ["index_select"]),
    G("gather", "lambda a, i: a.gather(1, i)", [A, In((4, 3), "int64", "index", high=5)], (0,), ["gather"]),
    G("index", "lambda a, i: a[i]", [A, IDX], (0,), ["index_Tensor"]),
    G("cat_stack", "lambda a, b: torch.cat([a, b], 1).sum(0).sum() + torch.stack([a, b], 0).sum((0, 1))", [A, B], (0, 1),
      ["cat", "stack"]),
    G("split", "lambda a: a.split(2, 1)[0].sum() + a.split([1, 4], 1)[1].sum() * 2 + a.chunk(2, 0)[1].sum()",
      [A], (0,), ["split_Tensor", "split_with_sizes", "chunk"]),
    G("unbind", "lambda a: a.unbind(1)[2] * 3", [A], (0,), ["unbind_int"]),
    G("repeat", "lambda a: a.repeat(2, 1, 3)", [A], (0,), ["repeat"]),
    G("embedding", "lambda w, i: F.embedding(i, w, padding_idx=1)", [In((4, 5)), In((2, 3), "int64", "index", high=4)],
      (0,), ["embedding"], dtypes=BF),
    # nn (the *_fo twins run the first-order path: upstream's fused backward operators)
    G("softmax_fo", "lambda a: F.softmax(a, 0) + F.log_softmax(a, 1)", [AT], (0,), ["_softmax", "_log_softmax"], dtypes=BF),
    G("tanh_sigmoid_fo", "lambda a: a.tanh() * a.sigmoid()", [AS], (0,), ["tanh", "sigmoid"]),
    G("softmax", "lambda a: F.softmax(a, 1)", [A], (0,), ["_softmax"], double=True),
    G("log_softmax", "lambda a: F.log_softmax(a, -1)", [A], (0,), ["_log_softmax"], double=True),
    G("cross_entropy", "lambda a, t: F.cross_entropy(a, t)", [A, In((4,), "int64", "index", high=5)], (0,),
      ["nll_loss_forward", "_log_softmax"], dtypes=BF),
    G("cross_entropy_w", "lambda a, t, w: F.cross_entropy(a, t, weight=w, ignore_index=2, reduction='sum')",
      [A, In((4,), "int64", "index", high=5), In((5,), kind="pos")], (0,), ["nll_loss_forward"]),
    G("nll_weight_requires_grad", "lambda a, t, w: F.nll_loss(a, t, weight=w)",
      [A, In((4,), "int64", "index", high=5), In((5,), kind="pos")], (0, 2), ["nll_loss_forward"],
      error="RuntimeError"),
    G("cross_entropy_ls", "lambda a, t: F.cross_entropy(a, t, label_smoothing=0.1)",
      [A, In((4,), "int64", "index", high=5)], (0,), ["nll_loss_forward"]),
    G("cross_entropy_prob", "lambda a, t: F.cross_entropy(a, t.softmax(1))", [A, B], (0,), ["_log_softmax"]),
    # session 35: label smoothing with class weights (ours refused it), and with probabilities
    G("cross_entropy_ls_weight", "lambda a, t, w: F.cross_entropy(a, t, weight=w, ignore_index=2, label_smoothing=0.2)",
      [A, In((4,), "int64", "index", high=5), In((5,), kind="pos")], (0,), ["nll_loss_forward", "_log_softmax"]),
    G("cross_entropy_prob_ls_weight", "lambda a, t, w: F.cross_entropy(a, t.softmax(1), weight=w, label_smoothing=0.3, reduction='none')",
      [A, B, In((5,), kind="pos")], (0, 1, 2), ["_log_softmax"]),
    G("nll_none", "lambda a, t: F.nll_loss(F.log_softmax(a, 1), t, reduction='none')",
      [A, In((4,), "int64", "index", high=5)], (0,), ["nll_loss_forward"]),
    G("nll_2d", "lambda a, t: F.nll_loss(a, t)", [In((2, 3, 4, 4)), In((2, 4, 4), "int64", "index", high=3)], (0,),
      ["nll_loss2d_forward"]),
    # ctc_loss: the lengths as lists and as tensors both run _ctc_loss.default; the .Tensor overload directly
    G("ctc_loss", "lambda a: [F.ctc_loss(a.log_softmax(2), torch.tensor([[1, 2, 2, 3, 1], [4, 4, 4, 1, 2], [5, 1, 5, 1, 5]]), il, tl, reduction=r, zero_infinity=z) "
      "for il, tl in (([8, 6, 2], [5, 3, 4]), (torch.tensor([8, 7, 0]), torch.tensor([5, 1, 0]))) for r, z in (('mean', False), ('sum', True), ('none', True))]",
      [In((8, 3, 6))], (0,), ["_ctc_loss", "_log_softmax"]),
    G("ctc_loss_tensor", "lambda a: torch.ops.aten._ctc_loss.Tensor(a.log_softmax(2), torch.tensor([1, 2, 3, 3, 1, 2]), torch.tensor([8, 5]), torch.tensor([4, 2]), 0, False)[0]",
      [In((8, 2, 4))], (0,), ["_ctc_loss_Tensor"]),
    # embedding_bag: sum (per-sample weights, scale_grad_by_freq with upstream's divisor), mean, max; padding, include_last_offset
    G("embedding_bag", "lambda w, p: [F.embedding_bag(torch.tensor([1, 2, 4, 4, 0, 5, 3, 3]), w, torch.tensor([0, 0, 3, 8]), mode=m, padding_idx=pi, include_last_offset=inc, scale_grad_by_freq=fq, "
      "per_sample_weights=p if ps else None) * torch.arange(1., 6.) for m, fq, ps in (('sum', False, True), ('sum', True, True), ('sum', True, False), ('mean', False, False), ('mean', True, False), ('max', False, False)) "
      "for pi in (None, 4) for inc in (False, True)]",
      [In((6, 5)), In((8,))], (0, 1), ["_embedding_bag"], dtypes=BF),
    G("embedding_bag_psw_only", "lambda w, p: F.embedding_bag(torch.tensor([1, 2, 4, 4, 0, 5, 3, 3]), w, torch.tensor([0, 0, 3]), per_sample_weights=p, padding_idx=2, mode='sum')",
      [In((6, 5)), In((8,))], (1,), ["_embedding_bag"]),
    G("mse_l1", "lambda a, b: F.mse_loss(a, b) + F.l1_loss(a, b, reduction='sum') + "
      "F.smooth_l1_loss(a, b, beta=0.5)", [A, B], (0, 1), ["mse_loss", "l1_loss", "smooth_l1_loss"]),
    G("bce_logits", "lambda a, y, w: F.binary_cross_entropy_with_logits(a, y, weight=w)",
      [A, In((4, 5), kind="unit"), ROW], (0, 1), ["binary_cross_entropy_with_logits"]),
    G("bce_logits_pw", "lambda a, y, p: F.binary_cross_entropy_with_logits(a, y.abs(), pos_weight=p)",
      [A, In((4, 5), kind="unit"), In((5,), kind="pos")], (0,), ["binary_cross_entropy_with_logits"]),
    G("dropout_train", "lambda a: (torch.manual_seed(0), F.dropout(a, 0.3, training=True))[1]", [A], (0,),
      ["native_dropout"]),
    G("broadcast_tensors", "lambda a, b: torch.broadcast_tensors(a, b)", [A, ROW], (0, 1), ["broadcast_tensors"]),
    G("dropout_eval", "lambda a: F.dropout(a, 0.5, training=False) * 2", [A], (0,), []),
    G("layer_norm", "lambda x, w, b: F.layer_norm(x, (5,), w, b)", [In((2, 3, 5)), ROW, ROW], (0, 1, 2),
      ["native_layer_norm"], dtypes=BF),
    G("rms_norm", "lambda x, w: F.rms_norm(x, (5,), w, eps=1e-6)", [In((2, 3, 5)), ROW], (0, 1),
      ["_fused_rms_norm"], dtypes=BF),
    G("batch_norm_train", "lambda x, w, b: F.batch_norm(x, torch.zeros(3, dtype=x.dtype), torch.ones(3, dtype=x.dtype), "
      "w, b, training=True)", [In((4, 3, 2, 2)), In((3,)), In((3,))], (0, 1, 2), ["native_batch_norm"]),
    G("batch_norm_eval", "lambda x, w, b: F.batch_norm(x, torch.linspace(-1, 1, 3, dtype=x.dtype), "
      "torch.linspace(0.5, 2, 3, dtype=x.dtype), w, b, training=False)", [In((4, 3, 2, 2)), In((3,)), In((3,))],
      (0, 1, 2), ["native_batch_norm"]),
    G("max_pool2d", "lambda x: F.max_pool2d(x, 2)", [In((2, 3, 6, 6))], (0,), ["max_pool2d_with_indices"]),
    G("max_pool2d_s", "lambda x: F.max_pool2d(x, 3, stride=2, padding=1)", [In((1, 2, 7, 7))], (0,),
      ["max_pool2d_with_indices"]),
    G("conv2d", "lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1)",
      [In((2, 3, 6, 6)), In((4, 3, 3, 3)), In((4,))], (0, 1, 2), ["convolution"]),
    G("conv2d_groups", "lambda x, w: F.conv2d(x, w, stride=2, groups=2, dilation=1)",
      [In((1, 4, 7, 7)), In((6, 2, 3, 3))], (0, 1), ["convolution"]),
    G("conv1d", "lambda x, w: F.conv1d(x, w, padding=2)", [In((2, 3, 9)), In((4, 3, 5))], (0, 1), ["convolution"]),
    G("conv3d", "lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=(1, 0, 2), dilation=(1, 2, 1), groups=2) + 0 * "
      "F.conv3d(x, w, padding='same', groups=2)[:, :, :3, :4, :9].sum()",
      [In((2, 4, 5, 6, 7)), In((6, 2, 3, 2, 3)), In((6,))], (0, 1, 2), ["convolution"], double=True),
    G("conv_unbatched", "lambda x, w, y, v: F.conv3d(x, w, padding='same').sum((1, 2, 3)) + F.conv2d(y, v).sum((1, 2)).sum()",
      [In((4, 5, 6, 7)), In((6, 4, 2, 2, 2)), In((4, 5, 6)), In((6, 4, 2, 2))], (0, 1, 2, 3), ["convolution"]),
    G("conv_transpose3d", "lambda x, w, b: F.conv_transpose3d(x, w, b, stride=(2, 1, 3), padding=(1, 0, 1), "
      "output_padding=(1, 0, 2), groups=2)", [In((2, 4, 3, 4, 3)), In((4, 3, 3, 2, 3)), In((6,))], (0, 1, 2),
      ["convolution"], double=True),
    # in-place writes into views of a tensor that needed no grad (CopySlices / AsStridedBackward0),
    # differentiated twice: the window of the gradient is an as_strided of a tensor with a history
    G("copy_into_diagonal", "lambda a: (lambda z: (z.diagonal().copy_(a[0]), (z ** 3).sum())[1])(a.new_zeros(5, 5))",
      [A], (0,), ["copy_", "diagonal"], double=True),
    G("setitem_column", "lambda a: (lambda z: (z.__setitem__((slice(None), 1), a[:, 0] * 2), (z.exp() * z).sum())[1])(a.new_zeros(4, 3))",
      [A], (0,), ["copy_", "select_int"], double=True),
    G("diag_embed_twice", "lambda a: (torch.diag_embed(a, offset=1) ** 2).sum() * a.sum()", [A], (0,), ["diag_embed"],
      double=True),
    G("as_strided", "lambda a: a.as_strided((3, 2), (2, 5), 1).sin() * a.as_strided((2, 2), (5, 1))[0:1].sum()",
      [A], (0,), ["as_strided"], double=True),
    G("sdpa", "lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)",
      [In((1, 2, 5, 4)), In((1, 2, 5, 4)), In((1, 2, 5, 4))], (0, 1, 2), ["_scaled_dot_product_flash_attention_for_cpu"], dtypes=BF),
    G("sdpa_gqa_mask", "lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True, "
      "scale=0.3)", [In((2, 4, 5, 8)), In((2, 2, 6, 8)), In((2, 2, 6, 8)), In((5, 6))], (0, 1, 2),
      ["_scaled_dot_product_flash_attention_for_cpu"]),
    G("sdpa_3d", "lambda q, k, v: F.scaled_dot_product_attention(q, k, v)",
      [In((2, 5, 4)), In((2, 6, 4)), In((2, 6, 4))], (0, 1, 2), []),
    # with dropout: upstream's math path, the mask drawn after the seed (each step recorded)
    G("sdpa_dropout", "lambda q, k, v: (torch.manual_seed(5), F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True))[1]",
      [In((2, 5, 4)), In((2, 6, 4)), In((2, 6, 4))], (0, 1, 2), [], dtypes=BF),
    G("repeat_interleave", "lambda a: a.repeat_interleave(3, 1) * 1 + a.repeat_interleave(2).sum()", [A], (0,),
      ["repeat_interleave_self_int"]),
]

# complex reductions, scans, norms and pow (issue 22, branch cplx): real inputs viewed as
# complex (the last dim of 2 holds the parts), complex results viewed as real again
_ZC = "torch.view_as_complex(a)"
CASES += [
    G("cplx_sum_mean", f"lambda a: torch.view_as_real(torch.stack(({_ZC}.sum(0), {_ZC}.mean(0) * 2, {_ZC}.t().sum(1))))",
      [In((4, 5, 2))], (0,), ["sum_dim_IntList", "mean_dim"]),
    G("cplx_sum_all", f"lambda a: torch.view_as_real({_ZC}.sum() * {_ZC}.mean())", [In((4, 5, 2))], (0,), ["sum", "mean"]),
    G("cplx_prod", f"lambda a: torch.view_as_real(torch.cat(({_ZC}.prod(0), {_ZC}.prod().reshape(1))))", [In((4, 5, 2), kind="unit")], (0,),
      ["prod_dim_int", "prod"]),
    G("cplx_cumsum_cumprod", f"lambda a: torch.view_as_real(torch.cat(({_ZC}.cumsum(1), {_ZC}.cumprod(0), {_ZC}.t().cumprod(1).t())))",
      [In((4, 5, 2), kind="unit")], (0,), ["cumsum", "cumprod"]),
    G("cplx_vector_norm", "lambda a: (torch.linalg.vector_norm(torch.view_as_complex(a)), torch.linalg.vector_norm(torch.view_as_complex(a), 1, dim=0), torch.linalg.vector_norm(torch.view_as_complex(a).t(), 2, dim=0, keepdim=True))",
      [In((4, 5, 2))], (0,), ["linalg_vector_norm"]),
    G("cplx_pow", f"lambda a, b: torch.view_as_real(torch.cat(({_ZC} ** 2, {_ZC} ** 3, {_ZC} ** 0.5, {_ZC} ** -1, {_ZC} ** (1.5 - 0.5j), {_ZC} ** torch.view_as_complex(b), 2.5 ** {_ZC}, (1 + 2j) ** {_ZC}, {_ZC}.reciprocal(), {_ZC}.rsqrt())))",
      [In((4, 5, 2), kind="pos"), In((4, 5, 2), kind="unit")], (0, 1), ["pow_Tensor_Scalar", "pow_Tensor_Tensor", "pow_Scalar", "reciprocal", "rsqrt"]),
    G("cplx_var_std_logsumexp", f"lambda a: ({_ZC}.var(0), {_ZC}.std(1), torch.view_as_real(torch.var_mean({_ZC}, 0)[1]), torch.std_mean({_ZC}, 1)[0], torch.view_as_real(torch.logsumexp({_ZC}, 1)))",
      [In((4, 5, 2))], (0,), ["var_dim", "std_dim", "logsumexp"]),
    # complex products and holomorphic functions: grad times the conjugate derivative
    G("cplx_products", "lambda a, b, v: (lambda A, B, V: tuple(torch.view_as_real(t) for t in (A[0] @ B[0], torch.bmm(A, B), torch.matmul(A, B[0]), torch.matmul(V, B[1]), torch.addmm(A[0] @ B[0], A[1], B[1], beta=0.5, alpha=2), torch.baddbmm(torch.bmm(A, B), A, B, alpha=1.5), torch.dot(V, A[0, 1]).reshape(1), torch.mv(A[1], V), torch.outer(V, A[1, 2]), torch.matmul(V, A[0, 0]).reshape(1))))(torch.view_as_complex(a), torch.view_as_complex(b), torch.view_as_complex(v))",
      [In((2, 3, 4, 2)), In((2, 4, 5, 2)), In((4, 2))], (0, 1, 2), ["mm", "bmm", "matmul", "addmm", "baddbmm", "dot", "mv", "outer"]),
    G("cplx_holomorphic", f"lambda a: torch.view_as_real(torch.stack(({_ZC}.exp(), {_ZC}.log(), {_ZC}.sqrt(), {_ZC}.sin(), {_ZC}.cos(), torch.square({_ZC}))))",
      [In((4, 5, 2), kind="pos")], (0,), ["exp", "log", "sqrt", "sin", "cos", "square"]),
]

# complex elementwise with upstream's own formulas (issue 22, branch cplx2): the fused
# sigmoid / tanh backward kernels' complex rows, addcmul / addcdiv / lerp with complex
# values and weights, logaddexp, and logcumsumexp's backward (complex in one piece, real
# split by the gradient's sign); first order only: a complex second order through a
# formula that conjugates a saved result (exp, sigmoid, tanh) loses the graph (open)
_ZB = "torch.view_as_complex(b)"
_ZD = "torch.view_as_complex(c)"
CASES += [
    G("cplx_elementwise_upstream_formulas", f"lambda a: torch.view_as_real(torch.stack(({_ZC}.sigmoid(), {_ZC}.tanh(), {_ZC}.log2(), {_ZC}.log10(), {_ZC}.log1p(), {_ZC}.expm1(), {_ZC}.exp2())))",
      [In((4, 5, 2), kind="unit")], (0,), ["sigmoid", "tanh", "log1p"]),
    G("cplx_ternary", f"lambda a, b, c: torch.view_as_real(torch.stack((torch.addcmul({_ZC}, {_ZB}, {_ZD}, value=2 - 1j), torch.addcmul({_ZC}, {_ZB}, {_ZD}, value=0.5), torch.addcdiv({_ZC}, {_ZB}, {_ZD}, value=0.5j), torch.addcdiv({_ZC}, {_ZB}, {_ZD}, value=1.5), torch.lerp({_ZC}, {_ZB}, 0.3), torch.lerp({_ZC}, {_ZB}, 0.25 - 0.5j), torch.lerp({_ZC}, {_ZB}, {_ZD}), torch.logaddexp({_ZC}, {_ZB}))))",
      [In((4, 5, 2)), In((4, 5, 2)), In((4, 5, 2), kind="pos")], (0, 1, 2), ["addcmul", "addcdiv", "lerp_Scalar"]),
    G("sinc", "lambda a: torch.sinc(a * 1.5) * torch.sinc(a.t().t()[0].abs())", [A], (0,), ["sinc"]),
    G("cplx_sinc", f"lambda a: torch.view_as_real(torch.sinc({_ZC}))", [In((4, 5, 2))], (0,), ["sinc"]),
    G("cplx_pads", f"lambda a, b: (lambda z, z4: (torch.view_as_real(torch.nn.functional.pad(z, (2, 1), mode='reflect') * (1 + 2j)), torch.view_as_real(torch.nn.functional.pad(z, (2, 3), mode='replicate')), torch.view_as_real(torch.nn.functional.pad(z4, (1, 2, 2, 1), mode='reflect')), torch.view_as_real(torch.nn.functional.pad(z4, (1, 1, 2, 1), mode='replicate'))))({_ZC}, {_ZB})",
      [In((2, 3, 5, 2)), In((2, 3, 4, 5, 2))], (0, 1), []),
    G("cplx_silu_inplace", f"lambda a: torch.view_as_real(torch.nn.functional.silu({_ZC} * 1, inplace=True))", [In((4, 5, 2))], (0,), ["silu"]),
    G("logcumsumexp", "lambda a: (a.logcumsumexp(1), a.logcumsumexp(0) * torch.linspace(-1, 1, 5, dtype=a.dtype), a.t().logcumsumexp(0))", [In((4, 5))], (0,), ["logcumsumexp"]),
    # rms_norm's formula with xhat, rstd and the weight conjugated; a real operand of a
    # complex product takes the real part of its gradient
    G("cplx_l1_rms_renorm", f"lambda a, b, w: (torch.nn.functional.l1_loss({_ZC}, {_ZB}), torch.view_as_real(torch.nn.functional.rms_norm({_ZC}, (5,))), torch.view_as_real(torch.nn.functional.rms_norm({_ZC}, (5,), torch.view_as_complex(w), eps=1e-3)), torch.view_as_real(torch.renorm({_ZC}, 2, 0, 1.0)), torch.view_as_real({_ZB} * a[..., 0]))",
      [In((4, 5, 2)), In((4, 5, 2)), In((5, 2))], (0, 1, 2), ["l1_loss", "_fused_rms_norm"]),
    G("cplx_logcumsumexp", f"lambda a: torch.view_as_real(torch.cat(({_ZC}.logcumsumexp(1), {_ZC}.logcumsumexp(0), {_ZC}.t().logcumsumexp(0).t())))",
      [In((4, 5, 2))], (0,), ["logcumsumexp"]),
]

# Rows of formulas.def no case covers, with the reason (the coverage test reads this).
UNCOVERED = {
    "_convolution": "reached only from TorchScript-era callers; same formula as convolution",
    "_native_batch_norm_legit": "functional batch_norm reaches native_batch_norm here",
    "_native_batch_norm_legit_no_training": "functional batch_norm reaches native_batch_norm here",
    "_tn_quant_linear": "torchnative's own operator (no upstream); tests/test_quant.py compares its input "
                        "gradient with upstream's gradient of x @ dequantize(W).T",
}

# complex linear algebra (issue 22, session 22): inputs (3, 4, 4, 2) viewed as complex and
# shifted by 4·I to be well conditioned; results viewed as real again. Eigenvector phases
# enter only through |v| and reconstructions (upstream's gauge-invariance rule). First
# order only, as the other complex cases: a complex double backward records no graph yet
# (even exp's: `torch.autograd.grad(view_as_real(a.exp()).sum(), a, create_graph=True)`
# returns a gradient without grad_fn), which is engine work, not these formulas'.
_ZA = "(torch.view_as_complex(a) + 4 * torch.eye(4, dtype=torch.view_as_complex(a).dtype))"
_ZB = "torch.view_as_complex(b)"
_VR = "(lambda t: torch.view_as_real(t.resolve_conj()))"  # upstream returns some results as conjugate views
ZSQ, ZB = In((3, 4, 4, 2)), In((3, 4, 2, 2))
CASES += [
    G("cplx_det_inv", f"lambda a: ({_VR}(torch.linalg.det({_ZA})), {_VR}(torch.linalg.inv({_ZA})), {_VR}(torch.logdet({_ZA})), torch.linalg.slogdet({_ZA})[1], {_VR}(torch.linalg.slogdet({_ZA})[0] * 2))",
      [ZSQ], (0,), ["linalg_det", "linalg_inv", "logdet", "linalg_slogdet"]),
    G("cplx_solve", f"lambda a, b: ({_VR}(torch.linalg.solve({_ZA}, {_ZB})), {_VR}(torch.linalg.solve({_ZA}, {_ZB}.mT, left=False)), {_VR}(torch.linalg.solve({_ZA}, {_ZB}[..., 0])))",
      [ZSQ, ZB], (0, 1), ["linalg_solve"]),
    G("cplx_lu", f"lambda a, b: ({_VR}(torch.linalg.lu({_ZA})[1]), {_VR}(torch.linalg.lu({_ZA})[2]), {_VR}(torch.linalg.lu_factor({_ZA})[0]), {_VR}(torch.linalg.lu_solve(*torch.linalg.lu_factor({_ZA}), {_ZB})), {_VR}(torch.linalg.lu_solve(*torch.linalg.lu_factor({_ZA}), {_ZB}, adjoint=True)))",
      [ZSQ, ZB], (0, 1), ["linalg_lu", "linalg_lu_factor", "linalg_lu_solve"]),
    G("cplx_cholesky", f"lambda a, b: (lambda s: ({_VR}(torch.linalg.cholesky(s)), {_VR}(torch.linalg.cholesky(s, upper=True)), {_VR}(torch.cholesky_solve({_ZB}, torch.linalg.cholesky(s))), {_VR}(torch.cholesky_inverse(torch.linalg.cholesky(s)))))({_ZA} @ {_ZA}.mH)",
      [ZSQ, ZB], (0, 1), ["linalg_cholesky", "cholesky_solve", "cholesky_inverse"]),
    G("cplx_triangular", f"lambda a, b: ({_VR}(torch.linalg.solve_triangular({_ZA}.triu(), {_ZB}, upper=True)), {_VR}(torch.linalg.solve_triangular({_ZA}.tril(), {_ZB}.mT, upper=False, left=False)), {_VR}(torch.triangular_solve({_ZB}, {_ZA}.triu())[0]), {_VR}(torch.triangular_solve({_ZB}, {_ZA}.tril(), upper=False, transpose=True)[0]))",
      [ZSQ, ZB], (0, 1), ["linalg_solve_triangular", "triangular_solve"]),
    G("cplx_eigh", f"lambda a: (lambda w, v: (w, v.abs(), {_VR}(v @ torch.diag_embed(w.exp()).to(v.dtype) @ v.mH)))(*torch.linalg.eigh({_ZA} + {_ZA}.mH))",
      [ZSQ], (0,), ["linalg_eigh"], dtypes=("float64",)),  # float32: upstream's own gauge check (allclose at 1e-2) fails
    G("cplx_eigvalsh_svdvals_pinv", f"lambda a: (torch.linalg.eigvalsh({_ZA}), torch.linalg.svdvals({_ZA}), torch.linalg.matrix_norm({_ZA}, 'nuc'), {_VR}(torch.linalg.pinv({_ZA})))",
      [ZSQ], (0,), ["linalg_eigvalsh", "linalg_svdvals", "linalg_pinv_atol_rtol_tensor"]),
    G("cplx_svd", f"lambda a, w: tuple(t for x in ({_ZA}, torch.view_as_complex(w)) for f in (False, True) for t in (lambda u, s, v: (u[..., :s.shape[-1]].abs(), s, v[..., :s.shape[-1], :].abs()))(*torch.linalg.svd(x, full_matrices=f))) + (lambda u, s, v: (u.abs(), v.abs()))(*torch.svd(torch.view_as_complex(w)))",
      [ZSQ, In((3, 3, 5, 2))], (0, 1), ["linalg_svd", "svd"]),
    G("cplx_qr", f"lambda a, w: tuple({_VR}(t) for t in (*torch.linalg.qr(torch.view_as_complex(a)), *torch.linalg.qr(torch.view_as_complex(w)), *torch.linalg.qr(torch.view_as_complex(a)[..., :3, :], mode='complete'), *torch.qr(torch.view_as_complex(a)[..., :3])))",
      [In((3, 5, 4, 2)), In((3, 3, 5, 2))], (0, 1), ["linalg_qr", "qr"]),
    G("cplx_householder", f"lambda a, t: ({_VR}(torch.linalg.householder_product(torch.view_as_complex(a), torch.view_as_complex(t))), {_VR}(torch.linalg.householder_product(torch.view_as_complex(a), torch.view_as_complex(t)[..., :2])))",
      [In((3, 5, 4, 2)), In((3, 4, 2), kind="unit")], (0, 1), ["linalg_householder_product"]),
    G("cplx_matrix_exp_vecdot_cross", f"lambda a, b: ({_VR}(torch.linalg.matrix_exp({_ZA} * 0.2)), {_VR}(torch.linalg.vecdot({_ZA}[..., :2], {_ZB})), {_VR}(torch.linalg.cross({_ZA}[..., :3], {_ZA}[..., 1:])))",
      [ZSQ, ZB], (0, 1), ["linalg_matrix_exp", "linalg_cross"]),
]

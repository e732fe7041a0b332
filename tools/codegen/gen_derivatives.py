"""Generate derivative formulas from upstream's derivatives.yaml.

For every operator that has a kernel here (a TN_OP_IMPL row in src/ops/*.def), an entry
in torchgen's packaged derivatives.yaml and no hand-written row in
src/autograd/formulas.def, each input's backward formula (a C++ expression) is parsed by
a small recursive-descent parser and translated into a C formula over the vocabulary of
src/autograd/formulas.h: aten operators called through the door with AG(...) (the
overload resolved by the kinds of the arguments, every schema argument given) and the
helpers of src/autograd/formulas_vocab.h. A formula using anything the vocabulary lacks
is not emitted; the reason is recorded (`--report` prints them). An input whose formula
cannot be translated while another input's can refuses by name at backward time.

    python tools/codegen/gen_derivatives.py --out build/gen       # writes the tables
    python tools/codegen/gen_derivatives.py --report              # prints the counts

Outputs: formulas_generated.def (TN_GRAD rows, after the hand rows in formulas.c),
formulas_generated.c (the formula functions) and formulas_generated_nodiff.def (operators
whose entry gives no formula: their outputs never require grad). Deterministic: sorted by
operator.
"""
import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = ("/* generated from derivatives.yaml by tools/codegen/gen_derivatives.py — do not edit.\n"
          " * Source: torchgen/packaged/autograd/derivatives.yaml of the vendored torch. */\n")


class Skip(Exception):
    """A formula uses something the vocabulary lacks; the message says what."""


# ---- the parser --------------------------------------------------------------------------
_TOKEN = re.compile(r"""
    (?P<ws>\s+|/\*.*?\*/) |
    (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?) |
    (?P<str>"(?:[^"\\]|\\.)*") |
    (?P<id>[A-Za-z_][A-Za-z_0-9]*(?:::[A-Za-z_][A-Za-z_0-9]*)*) |
    (?P<op>::|<=|>=|==|!=|&&|\|\||->|[-+*/?:<>()\[\],.{}!&|~;=])
""", re.X | re.S)


def tokenize(s):
    out, i = [], 0
    while i < len(s):
        m = _TOKEN.match(s, i)
        if not m:
            raise Skip(f"cannot tokenize at {s[i:i + 20]!r}")
        i = m.end()
        if m.lastgroup == "ws":
            continue
        out.append((m.lastgroup, m.group()))
    out.append(("end", ""))
    return out


class Parser:
    """Expression grammar (C++ subset): ternary > || > && > | > & > equality > relational >
    additive > multiplicative > unary > postfix (calls, .method(), [index]) > primary."""

    def __init__(self, text):
        self.toks, self.i = tokenize(text), 0

    def peek(self, k=0):
        return self.toks[self.i + k]

    def take(self, val=None):
        t = self.toks[self.i]
        if val is not None and t[1] != val:
            raise Skip(f"parse: expected {val!r}, found {t[1]!r}")
        self.i += 1
        return t

    def parse(self):
        e = self.ternary()
        if self.peek()[0] != "end":
            raise Skip(f"parse: trailing {self.peek()[1]!r}")
        return e

    def ternary(self):
        c = self.binary(0)
        if self.peek()[1] == "?":
            self.take()
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return ("tern", c, a, b)
        return c

    LEVELS = [("||",), ("&&",), ("|",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("+", "-"), ("*", "/")]

    def binary(self, lvl):
        if lvl == len(self.LEVELS):
            return self.unary()
        e = self.binary(lvl + 1)
        while self.peek()[0] == "op" and self.peek()[1] in self.LEVELS[lvl]:
            op = self.take()[1]
            e = ("bin", op, e, self.binary(lvl + 1))
        return e

    def unary(self):
        t = self.peek()
        if t[0] == "op" and t[1] in ("-", "!", "+"):
            self.take()
            e = self.unary()
            return e if t[1] == "+" else ("un", t[1], e)
        return self.postfix(self.primary())

    def args(self, close):
        out = []
        if self.peek()[1] != close:
            while True:
                out.append(self.ternary())
                if self.peek()[1] != ",":
                    break
                self.take()
        self.take(close)
        return out

    def primary(self):
        kind, val = self.take()
        if kind == "num":
            is_int = re.fullmatch(r"\d+", val) is not None
            return ("num", int(val) if is_int else float(val), is_int)
        if kind == "str":
            return ("str", val[1:-1])
        if kind == "id":
            if self.peek()[1] == "<" and val in ("std::get", "std::tuple"):  # std::get<0>(x)
                j, depth = self.i, 0
                while True:
                    t = self.toks[j][1]
                    depth += t == "<"
                    depth -= t == ">"
                    j += 1
                    if depth == 0 or self.toks[j][0] == "end":
                        break
                if self.toks[j][1] == "(":
                    targ = "".join(x[1] for x in self.toks[self.i + 1:j - 1])
                    self.i = j
                    return ("tcall", val, targ)
            return ("id", val)
        if val == "(":
            e = self.ternary()
            self.take(")")
            return e
        if val == "{":
            return ("brace", self.args("}"))
        if val == "[":
            raise Skip("lambda expression")
        raise Skip(f"parse: unexpected {val!r}")

    def postfix(self, e):
        while True:
            v = self.peek()[1]
            if v == "(":
                self.take()
                a = self.args(")")
                if e[0] == "tcall":
                    e = ("call", f"{e[1]}<{e[2]}>", a)
                elif e[0] == "id":
                    e = ("call", e[1], a)
                elif e[0] == "member":
                    e = ("method", e[1], e[2], a)
                else:
                    raise Skip("call of an expression")
            elif v == ".":
                self.take()
                name = self.take()[1]
                if self.peek()[1] == "<":  # t.to<double>()
                    raise Skip(f"template method .{name}<>")
                e = ("member", e, name)
            elif v == "[":
                self.take()
                idx = self.ternary()
                self.take("]")
                e = ("index", e, idx)
            else:
                if e[0] == "member":
                    raise Skip(f"field access .{e[2]}")
                return e


# ---- values the translator passes around -------------------------------------------------
class Val:
    """kind: T tensor expr | N numeric literal (py) | D double expr | I int expr | B bool expr
    | V tn_value expr with schema type `ty` | SZ sizes of a geometry (expr = tn_value) | DT dtype
    expr | OPT options (expr = dtype expr) | STR string literal | NONE | TT tuple (expr = list of
    tensor exprs) | G geometry pointer."""

    def __init__(self, kind, expr, ty=None, py=None):
        self.kind, self.expr, self.ty, self.py = kind, expr, ty, py

    def __repr__(self):
        return f"Val({self.kind}, {self.expr})"


def decomposed_ops():
    """Op idents that run as their parts under autograd (src/autograd/decompose.c): the
    table's entries, and the composites listed in X-macros (`#define NAME(X) X(op) ...`),
    which the table maps to their own kernels written as door calls. No row is generated
    for them: the decomposition is recorded instead."""
    text = open(os.path.join(ROOT, "src", "autograd", "decompose.c")).read()
    ops = set(re.findall(r"\[TN_OP_(\w+)\] = d_", text))
    for body in re.findall(r"^#define \w+\(X\)((?:[^\n]*\\\n)*[^\n]*)", text, re.M):
        ops |= set(re.findall(r"\bX\((\w+)\)", body))
    return ops


def num(v, is_int):
    return Val("N", repr(v), py=(v, is_int))


CONSTS = {"M_PI": 3.141592653589793, "M_LN2": 0.6931471805599453, "M_SQRT2": 1.4142135623730951,
          "M_SQRT1_2": 0.7071067811865476, "M_2_SQRTPI": 1.1283791670955126, "M_LN10": 2.302585092994046,
          "M_E": 2.718281828459045}


def c_double(v):
    r = repr(float(v))
    return r if ("e" in r or "." in r or "inf" in r or "nan" in r) else r + ".0"


# Helpers of FunctionsManual that the vocabulary provides (formulas_vocab.c):
# name -> (C function, parameter kinds, result kind). Parameter kinds: T tensor; X tensor, or
# a Scalar made a 0-dim tensor; V a forward argument's tn_value, by pointer (NULL when
# omitted); S / D a number as double; I int64 (INT64_MIN when omitted); B bool; DT dtype; SZ /
# IL an int-list tn_value; M the grad_input_mask (built from NEED). A trailing "?" marks a
# parameter the formula may omit. Results: T, or TTn (n tensors through an out array).
HELPERS = {
    "maybe_multiply": ("ag_maybe_multiply", ["T", "S"], "T"),
    "atan2_backward": ("ag_atan2_backward", ["T", "T", "T", "M"], "TT2"),
    "copysign_tensor_self_backward": ("ag_copysign_tensor_self_backward", ["T", "T", "T"], "T"),
    "prod_backward": ("ag_prod_backward", ["T", "T", "T", "I?", "B?"], "T"),
    "cumprod_backward": ("ag_cumprod_backward", ["T", "T", "I", "T"], "T"),
    "evenly_distribute_backward": ("ag_evenly_distribute_backward", ["T", "T", "T"], "T"),
    "value_selecting_reduction_backward": ("ag_value_selecting_reduction_backward", ["T", "I", "T", "SZ", "B"], "T"),
    "masked_select_backward": ("ag_masked_select_backward", ["T", "T", "T"], "T"),
    "masked_scatter_backward": ("ag_masked_scatter_backward", ["T", "T", "SZ"], "T"),
    "infinitely_differentiable_native_group_norm_backward": (
        "ag_group_norm_backward", ["T", "T", "T", "T", "T", "T", "V", "I", "I", "I", "I", "D", "M"], "TT3"),
    "scatter_reduce_backward": ("ag_scatter_reduce_backward", ["T", "T", "I", "T", "T", "V", "B", "T"], "TT2"),
    "layer_norm_double_backward": ("ag_layer_norm_double_backward",
                                   ["T", "V", "T", "T", "T", "T", "T", "T", "IL", "M"], "TT3"),
    "batchnorm_double_backward": ("ag_batchnorm_double_backward",
                                  ["T", "V", "T", "T", "T", "T", "V", "V", "B", "D", "V", "V", "M"], "TT3"),
    "_convolution_double_backward": ("ag_convolution_double_backward",
                                     ["T", "T", "T", "T", "T", "T", "V", "V", "V", "B", "V", "I", "M"], "TT3"),
    "nansum_backward": ("ag_nansum_backward", ["T", "T", "V", "B"], "T"),
    "var_mean_backward": ("ag_var_mean_backward", ["T", "T", "T", "V", "V", "B"], "T"),
    "std_mean_backward": ("ag_std_mean_backward", ["T", "T", "T", "T", "V", "V", "B"], "T"),
    "aminmax_backward": ("ag_aminmax_backward", ["T", "V", "B", "T", "T", "T", "T"], "T"),
    "glu_double_backward_grad_output": ("ag_glu_double_backward_grad_output", ["T", "T", "I"], "T"),
    "glu_double_backward": ("ag_glu_double_backward", ["T", "T", "T", "I"], "T"),
    "huber_loss_double_backward_grad_output": ("ag_huber_loss_double_backward_grad_output",
                                               ["T", "T", "T", "T", "I", "D"], "T"),
    "huber_loss_double_backward": ("ag_huber_loss_double_backward", ["T", "T", "T", "I", "D"], "T"),
    "mse_loss_double_backward": ("ag_mse_loss_double_backward", ["T", "T", "I"], "T"),
    "smooth_l1_loss_double_backward": ("ag_smooth_l1_loss_double_backward", ["T", "T", "T", "I", "D"], "T"),
    "softplus_double_backward": ("ag_softplus_double_backward", ["T", "T", "S", "S"], "T"),
    "elu_double_backward": ("ag_elu_double_backward", ["T", "T", "S", "S", "S", "B", "T"], "T"),
    "gelu_double_backward": ("ag_gelu_double_backward", ["T", "T", "T", "V"], "T"),
    "softmax_double_backward": ("ag_softmax_double_backward", ["T", "T", "I", "T"], "T"),
    "log_sigmoid_double_backward": ("ag_log_sigmoid_double_backward", ["T", "T"], "T"),
    "max_pool_double_backward": ("ag_max_pool_double_backward", ["T", "T", "I"], "T"),
    "embedding_dense_double_backward": ("ag_embedding_dense_double_backward", ["T", "T", "I"], "T"),
    "native_dropout_double_backward": ("ag_native_dropout_double_backward", ["T", "T", "T", "D"], "T"),
    "binary_cross_entropy_double_backward_grad_output": ("ag_bce_double_backward_grad_output",
                                                         ["T", "T", "T", "V", "I"], "T"),
    "binary_cross_entropy_double_backward": ("ag_bce_double_backward", ["T", "T", "T", "T", "V", "I"], "T"),
    "binary_cross_entropy_double_backward_target": ("ag_bce_double_backward_target", ["T", "T", "T", "T", "V", "I"],
                                                    "T"),
    "norm_backward": ("ag_norm_backward", ["T", "T", "V", "T", "V?", "B?"], "T"),
    "infinitely_differentiable_logit_backward": ("ag_logit_backward", ["T", "T", "V"], "T"),
    "infinitely_differentiable_mish_backward": ("ag_mish_backward", ["T", "T"], "T"),
    "binary_cross_entropy_target_backward": ("ag_bce_target_backward", ["T", "T", "T", "V", "I"], "T"),
    "div_tensor_self_backward": ("ag_div_tensor_self_backward", ["T", "X", "DT", "V?"], "T"),
    "div_tensor_other_backward": ("ag_div_tensor_other_backward", ["T", "T", "T", "V?"], "T"),
    "sgn_backward": ("ag_sgn_backward", ["T", "T", "T"], "T"),
    "pow_backward_exponent": ("ag_pow_backward_exponent", ["T", "V", "T", "T"], "T"),
    "clamp_backward": ("ag_clamp_backward", ["T", "T", "V", "V"], "T"),
    "clamp_backward_min_max": ("ag_clamp_backward_min_max", ["T", "T", "V", "V", "M"], "TT2"),
    "linalg_lu_solve_LU": ("ag_linalg_lu_solve_LU", ["T", "T", "T", "T", "B", "B"], "T"),
    "householder_product_backward": ("ag_householder_product_backward", ["T", "T", "T", "T"], "TT2"),
}


class Tx:
    """Translates one formula of one operator into a C expression, recording which forward
    arguments and results it reads as values."""

    def __init__(self, gen, fn, info):
        self.gen, self.fn, self.info = gen, fn, info
        a = fn.func.arguments
        self.args = list(a.flat_positional) + list(a.flat_kwarg_only)
        self.argpos = {x.name: i for i, x in enumerate(self.args)}
        self.rets = [r.name for r in fn.func.returns]
        self.save_args, self.save_res = set(), set()

    # identifiers -------------------------------------------------------------------------
    def arg_type(self, name):
        return str(self.args[self.argpos[name]].type)

    def ident(self, name, geom_only=False):
        if name in self.argpos:
            i, ty = self.argpos[name], self.arg_type(name)
            if ty == "Tensor":
                if geom_only:
                    return Val("G", f"GEOM({i})", py=i)
                self.save_args.add(i)
                return Val("T", f"ARG({i})")
            if ty in ("int", "SymInt"):
                return Val("I", f"IARG({i})")
            if ty == "float":
                return Val("D", f"ARGV({i}).u.d")
            if ty == "bool":
                return Val("B", f"BARG({i})")
            if ty in ("Tensor?", "Tensor?[]", "Tensor[]"):
                self.save_args.add(i)  # lists keep their tensors in the node's argument copy
            elif "Tensor" in ty:
                raise Skip(f"argument {name} of type {ty}")
            return Val("V", f"ARGV({i})", ty=ty)
        if name == "grad":
            return Val("T", "GRAD(0)")
        if name.startswith("grad_") and name[5:] in self.rets:
            return Val("T", f"GRAD({self.rets.index(name[5:])})")
        m = re.fullmatch(r"result(\d*)", name)
        if m or name in self.rets:
            k = int(m.group(1) or 0) if m else self.rets.index(name)
            if geom_only:
                raise Skip("geometry of a result")
            self.save_res.add(k)
            return Val("T", f"RES({k})")
        if name in CONSTS:
            return Val("N", repr(CONSTS[name]), py=(CONSTS[name], False))
        if name in ("true", "false"):
            return Val("B", name)
        if name == "grad_input_mask":
            return Val("M", "mask")
        if name.startswith("c10::MemoryFormat::") or name.startswith("at::MemoryFormat::"):
            return Val("MF", "0")  # the layout of a temporary does not change its values
        if name in ("c10::nullopt", "std::nullopt"):
            return Val("NONE", "VN()")
        raise Skip(f"identifier {name}")

    # expressions -------------------------------------------------------------------------
    def ex(self, e):
        k = e[0]
        if k == "num":
            return num(e[1], e[2])
        if k == "str":
            return Val("STR", e[1])
        if k == "id":
            return self.ident(e[1])
        if k == "index":
            if e[1] == ("id", "grads") and e[2][0] == "num":
                return Val("T", f"GRAD({e[2][1]})")
            raise Skip("indexing")
        if k == "un":
            return self.unop(e[1], self.ex(e[2]))
        if k == "bin":
            return self.binop(e[1], self.ex(e[2]), self.ex(e[3]))
        if k == "tern":
            return self.ternary(e)
        if k == "call":
            return self.call(e[1], e[2])
        if k == "method":
            return self.method(e[1], e[2], e[3])
        if k == "brace":
            vals = [self.ex(x) for x in e[1]]
            if all(v.kind in ("I", "N") for v in vals):
                return Val("IL", "VIL((int64_t[]){%s}, %d)" % (", ".join(self.as_int(v) for v in vals), len(vals)))
            raise Skip("brace list of non-integers")
        raise Skip(f"expression {k}")

    def ternary(self, e):
        c = e[1]
        if c == ("call", "GradMode::is_enabled", []):
            # the always-differentiable branch is valid in both modes (same value)
            try:
                return self.ex(e[2])
            except Skip:
                return self.ex(e[3])
        if self.gradmode_disjunct(c):
            # "GradMode || <other conditions> ? A : B": A is the always-valid branch
            return self.ex(e[2])
        cv = self.ex(c)
        if cv.kind not in ("B",):
            raise Skip("ternary on a non-bool condition")
        if cv.expr in ("true", "false"):  # e.g. grad.defined(): gradients are never undefined here
            return self.ex(e[2] if cv.expr == "true" else e[3])
        a, b = self.ex(e[2]), self.ex(e[3])
        if a.kind == "T" and b.kind == "T":
            return Val("T", f"({cv.expr} ? {a.expr} : {b.expr})")
        if a.kind in ("N", "D", "I") and b.kind in ("N", "D", "I"):
            return Val("D", f"({cv.expr} ? {self.as_double(a)} : {self.as_double(b)})")
        raise Skip(f"ternary of {a.kind}/{b.kind}")

    def gradmode_disjunct(self, c):
        if c == ("call", "GradMode::is_enabled", []):
            return True
        return c[0] == "bin" and c[1] == "||" and (self.gradmode_disjunct(c[2]) or self.gradmode_disjunct(c[3]))

    # conversions ---------------------------------------------------------------------------
    def as_double(self, v):
        if v.kind == "N":
            return c_double(v.py[0])
        if v.kind in ("D", "I"):
            return f"(double)({v.expr})"
        if v.kind == "V" and v.ty in ("Scalar", "float", "int"):
            return f"ag_scalar(&{v.expr})"
        raise Skip(f"{v.kind} used as a number")

    def as_int(self, v):
        if v.kind == "N" and v.py[1]:
            return str(v.py[0])
        if v.kind == "I":
            return v.expr
        raise Skip(f"{v.kind} used as an int")

    def scalar_value(self, v):
        """A numeric value as a tn_value for a Scalar parameter."""
        if v.kind == "N":
            return f"VI({v.py[0]})" if v.py[1] else f"VD({c_double(v.py[0])})"
        if v.kind == "D":
            return f"VD({v.expr})"
        if v.kind == "I":
            return f"VI({v.expr})"
        if v.kind == "B":
            return f"VB({v.expr})"
        if v.kind == "V" and v.ty in ("Scalar", "int", "float", "bool"):
            return v.expr
        return None

    def to_value(self, v, pty):
        """v as a tn_value for a schema parameter of type pty, or None if it does not fit."""
        opt = pty.endswith("?")
        base = pty.rstrip("?")
        if v.kind == "NONE":
            return "VN()" if opt else None
        if v.kind == "V" and v.ty == pty:
            return v.expr
        if v.kind == "V" and v.ty.rstrip("?") == base and opt:
            return v.expr
        if base == "Tensor":
            return f"VT({v.expr})" if v.kind == "T" else None
        if base == "Scalar":
            return self.scalar_value(v)
        if base in ("int", "SymInt"):
            if v.kind == "I" or (v.kind == "N" and v.py[1]):
                return f"VI({self.as_int(v)})"
            if v.kind == "V" and v.ty in ("int", "SymInt"):
                return v.expr
            return None
        if base == "float":
            if v.kind in ("N", "D", "I"):
                return f"VD({self.as_double(v)})"
            return None
        if base == "bool":
            return f"VB({v.expr})" if v.kind == "B" else None
        if re.fullmatch(r"(int|SymInt)\[\d*\]", base):
            if v.kind == "IL":
                return v.expr
            if v.kind == "SZ":
                return v.expr
            if v.kind == "V" and re.fullmatch(r"(int|SymInt)\[\d*\]\??", v.ty):
                return v.expr
            if v.kind == "I" and re.fullmatch(r"(int|SymInt)\[1\]", base):
                return "VIL((int64_t[]){%s}, 1)" % v.expr
            return None
        if base == "str":
            if v.kind == "STR":
                return 'VS("%s")' % v.expr
            return None
        if base == "ScalarType":
            return f"VDT({v.expr})" if v.kind in ("DT", "OPT") else None
        if base == "bool[3]" or base == "bool[2]":
            return "VBL(mask, %s)" % base[5] if v.kind == "M" else None
        return None

    def default_value(self, a):
        d, ty = a.default, str(a.type)
        if d is None:
            return None
        if d == "None":
            return "VN()"
        if d in ("True", "False"):
            return f"VB({'true' if d == 'True' else 'false'})"
        if d == "Mean":
            return "VI(1)"
        if d == "Sum":
            return "VI(2)"
        base = ty.rstrip("?")
        if base in ("int", "SymInt") and re.fullmatch(r"-?\d+", d):
            return f"VI({d})"
        if base == "float" and re.fullmatch(r"-?[\d.]+(e-?\d+)?", d):
            return f"VD({c_double(float(d))})"
        if base == "Scalar" and re.fullmatch(r"-?[\d.]+(e-?\d+)?", d):
            return f"VI({d})" if re.fullmatch(r"-?\d+", d) else f"VD({c_double(float(d))})"
        if re.fullmatch(r"(int|SymInt)\[\d*\]", base):
            if d == "[]":
                return "VIL(NULL, 0)"
            vals = d.strip("[]").split(",")
            vals = [x.strip() for x in vals if x.strip()]
            m = re.fullmatch(r"(?:int|SymInt)\[(\d+)\]", base)
            if len(vals) == 1 and m:
                vals = vals * int(m.group(1))
            return "VIL((int64_t[]){%s}, %d)" % (", ".join(vals), len(vals))
        if base == "str" and d[:1] in "'\"":
            return 'VS("%s")' % d[1:-1]
        return None

    # calling aten operators through the door ---------------------------------------------
    def aten(self, name, vals, what):
        """Resolves aten::name for the given argument values; returns the call's C text."""
        if name.endswith("_symint"):
            name = name[: -len("_symint")]
        cands = self.gen.functional.get(name)
        if not cands and name.endswith("_") and name[:-1] in self.gen.functional:
            name = name[:-1]  # an in-place method on a temporary: its functional sibling
            cands = self.gen.functional[name]
        if not cands:
            raise Skip(f"{what} {name} (neither an aten operator nor a vocabulary helper)")
        best = None
        for f in cands:
            params = self.gen.cpp_params(f)
            if params is None or len(vals) > len(params):
                continue
            out, score = [], 0
            for v, p in zip(vals, params):
                if p == "OPTIONS":
                    if v.kind != "OPT":
                        break
                    out += [f"VDT({v.expr})", "VN()", "VN()", "VN()"]
                    score += 2
                    continue
                cv = self.to_value(v, str(p.type))
                if cv is None:
                    break
                score += 2 if (v.kind == "T") == (str(p.type).rstrip("?") == "Tensor") else 1
                out.append(cv)
            else:
                ok = True
                for p in params[len(vals):]:
                    if p == "OPTIONS":
                        out += ["VN()"] * 4
                        continue
                    dv = self.default_value(p)
                    if dv is None:
                        ok = False
                        break
                    out.append(dv)
                if ok and (best is None or score > best[0]):
                    best = (score, f, out)
        if best is None:
            raise Skip(f"no overload of aten::{name} takes ({', '.join(v.kind for v in vals)})")
        f, out = best[1], best[2]
        ident = self.gen.ident(f)
        if ident not in self.gen.impl:
            raise Skip(f"aten::{ident} has no kernel")
        if len(f.func.returns) > 1:
            return Val("TTOP", ident, py=(out, len(f.func.returns)))
        return Val("T", f"AG(c, {ident}, {', '.join(out)})")

    def helper(self, name, vals):
        spec = HELPERS.get(name)
        if spec is None:
            raise Skip(f"helper {name}")
        cname, kinds, res = spec
        if len(vals) > len(kinds) or any(not k.endswith("?") for k in kinds[len(vals):]):
            raise Skip(f"helper {name} with {len(vals)} arguments")
        parts = []
        for k, v in zip(kinds + [], vals + [None] * (len(kinds) - len(vals))):
            base = k.rstrip("?")
            if v is None:
                parts.append({"V": "NULL", "B": "false", "I": "INT64_MIN", "T": "NULL"}[base])
                continue
            if base == "T":
                if v.kind != "T":
                    raise Skip(f"helper {name}: tensor expected, {v.kind} given")
                parts.append(v.expr)
            elif base in ("S", "D"):
                parts.append(self.as_double(v))
            elif base == "X":  # a tensor, or a Scalar made a 0-dim tensor of grad's dtype
                if v.kind == "T":
                    parts.append(v.expr)
                else:
                    parts.append(f"ag_scalar_tensor(c, {self.as_double(v)}, GRAD(0)->dtype)")
            elif base == "V":
                parts.append(f"&{v.expr}" if v.kind == "V" else "NULL" if v.kind == "NONE" else None)
                if parts[-1] is None:
                    raise Skip(f"helper {name}: value expected, {v.kind} given")
            elif base == "I":
                if v.kind == "V" and v.ty in ("int?", "SymInt?"):
                    parts.append(f"(ARGV_NONE({v.expr}) ? INT64_MIN : {v.expr}.u.i)")
                else:
                    parts.append(self.as_int(v))
            elif base == "B":
                if v.kind != "B":
                    raise Skip(f"helper {name}: bool expected")
                parts.append(v.expr)
            elif base == "DT":
                if v.kind != "DT":
                    raise Skip(f"helper {name}: dtype expected")
                parts.append(v.expr)
            elif base == "SZ":
                if v.kind != "SZ":
                    raise Skip(f"helper {name}: sizes expected")
                parts.append(v.expr)
            elif base == "IL":
                if v.kind in ("IL", "SZ") or (v.kind == "V" and re.fullmatch(r"(int|SymInt)\[\d*\]", v.ty)):
                    parts.append(v.expr)
                else:
                    raise Skip(f"helper {name}: int list expected")
            elif base == "M":
                if v.kind != "M":
                    raise Skip(f"helper {name}: grad_input_mask expected")
                parts.append("mask")
        if res.startswith("TT"):
            return Val("TTH", cname, py=(parts, int(res[2:])))
        return Val("T", f"{cname}(c, {', '.join(parts)})")

    def call(self, name, args):
        short = re.sub(r"^(at::|c10::|std::)", "", name)
        if short == "handle_r_to_c":
            return self.ex(args[1])
        if short in ("GradMode::is_enabled",):
            return Val("B", "tn_grad_mode_enabled()")
        if short == "Tensor" and not args:
            return Val("NONE", "VN()")
        if short.startswith("tuple<") and not args:
            return Val("NONE", "VN()")
        if short == "_unsafe_index_put":  # index_put without the bounds checks: the same values
            return self.aten("index_put", [self.ex(a) for a in args], "function")
        if short == "slice_backward_wrapper":  # the wrapper only wraps optional ends
            return self.aten("slice_backward", [self.ex(a) for a in args], "function")
        if short in ("sqrt", "exp", "log") and len(args) == 1:
            v = self.ex(args[0])
            if v.kind in ("N", "D", "I"):
                return Val("D", f"{short}({self.as_double(v)})")
        if short == "zeros_like" and len(args) == 1:
            if args[0][0] == "id":
                g = self.ident(args[0][1], geom_only=True)
                if g.kind == "G":
                    return Val("T", f"ag_zeros(c, {g.expr})")
            v = self.ex(args[0])
            if v.kind == "T":
                return Val("T", f"ag_zeros_like(c, {v.expr})")
        if short == "scalar_tensor" and len(args) == 2:
            v, o = self.ex(args[0]), self.ex(args[1])
            if o.kind == "OPT":
                return Val("T", f"ag_scalar_tensor(c, {self.as_double(v)}, {o.expr})")
        if short in ("zeros", "zeros_symint") and len(args) == 2:
            s, o = self.ex(args[0]), self.ex(args[1])
            if o.kind == "OPT" and s.kind in ("SZ", "IL", "V"):
                return Val("T", f"ag_zeros_sized(c, {s.expr}, {o.expr})")
        if short == "TensorGeometry" and len(args) == 1 and args[0][0] == "id":
            g = self.ident(args[0][1], geom_only=True)
            if g.kind == "G":
                return g
        if short == "reverse_list" or short == "reverse_list_symint":
            v = self.ex(args[0])
            return Val("IL", f"ag_list_reverse(c, {v.expr})")
        if short == "neg_list":
            v = self.ex(args[0])
            return Val("IL", f"ag_list_neg(c, {v.expr})")
        if short.startswith("get<") and len(args) == 1:
            t = self.ex(args[0])
            k = int(short[4:-1])
            if t.kind in ("TTOP", "TTH"):
                return Val("T", self.tuple_item(t, k))
            raise Skip("std::get of a non-tuple")
        vals = [self.ex(a) for a in args]
        hname = short[: -len("_symint")] if short.endswith("_symint") else short
        if hname in HELPERS:
            return self.helper(hname, vals)
        if "::" in short:
            raise Skip(f"function {name}")
        return self.aten(short, vals, "function")

    def tuple_item(self, t, k):
        if t.kind == "TTOP":
            out, n = t.py
            return f"ag_op_item(c, TN_OP_{t.expr}, {k}, {len(out)}, (tn_value[]){{{', '.join(out)}}})"
        raise Skip("element of a helper's tuple")

    def method(self, obj, name, args):
        if obj[0] == "method" and obj[2] == "device" and not args:  # CPU only
            if name in ("is_cpu",):
                return Val("B", "true")
            if name in ("is_xpu", "is_cuda", "is_mps", "is_meta"):
                return Val("B", "false")
        if name == "suggest_memory_format" and not args:
            self.ex(obj)
            return Val("MF", "0")
        if name == "contiguous" and len(args) == 1 and self.ex(args[0]).kind == "MF":
            v = self.ex(obj)
            if v.kind == "T":
                return Val("T", f"ag_contiguous(c, {v.expr})")
        # geometry-only uses of an argument do not save the tensor
        if obj[0] == "id" and name in ("sym_sizes", "sizes", "sym_size", "size", "dim", "scalar_type", "dtype",
                                       "options", "is_complex", "sym_numel", "numel", "defined"):
            g = self.ident(obj[1], geom_only=True)
            if g.kind == "G":
                return self.geom_method(g.expr, name, args)
        if name in ("sym_sizes", "sizes", "sym_size", "size", "dim", "scalar_type", "dtype", "options",
                    "is_complex", "defined") and obj[0] != "id" or (obj[0] == "id" and obj[1] in ("grad",) and name in
                                                                  ("scalar_type", "options", "sym_sizes", "sizes",
                                                                   "dtype", "dim", "defined")):
            v = self.ex(obj)
            if v.kind == "T":
                return self.geom_method(f"ag_geom_of(c, {v.expr})", name, args)
        v = self.ex(obj)
        if name in ("conj", "conj_physical") and not args and v.kind == "T":
            return Val("T", f"ag_conj(c, {v.expr})")  # the identity for real dtypes
        if name in ("conj", "resolve_conj", "conj_physical") and not args:
            return v  # resolve_conj: no lazy conjugate bit here, the values are the tensor's
        if v.kind == "V" and v.ty in ("Scalar", "Scalar?") and name == "toDouble":
            return Val("D", f"ag_scalar(&{v.expr})")
        if v.kind == "V" and v.ty == "Tensor?" and name == "defined":
            return Val("B", f"({v.expr}.tag == TN_V_TENSOR)")
        if v.kind == "T" and name == "to" and len(args) == 1:
            d = self.ex(args[0])
            if d.kind == "DT":
                return Val("T", f"ag_cast(c, {v.expr}, {d.expr})")
        if v.kind == "T" and name == "contiguous" and not args:
            return Val("T", f"ag_contiguous(c, {v.expr})")
        if v.kind != "T":
            raise Skip(f"method .{name}() on {v.kind}")
        if name in ("new_zeros", "new_zeros_symint") and len(args) == 2:
            s, o = self.ex(args[0]), self.ex(args[1])
            if o.kind == "OPT":
                return Val("T", f"ag_zeros_sized(c, {s.expr}, {o.expr})")
        vals = [v] + [self.ex(a) for a in args]
        return self.aten(name, vals, "method")

    def geom_method(self, g, name, args):
        if name in ("sym_sizes", "sizes"):
            return Val("SZ", f"VIL(({g})->sizes, ({g})->ndim)")
        if name in ("sym_size", "size"):
            a = self.ex(args[0])
            return Val("I", f"ag_size(({g}), {self.as_int(a)})")
        if name == "dim":
            return Val("I", f"(int64_t)({g})->ndim")
        if name in ("scalar_type", "dtype"):
            return Val("DT", f"({g})->dtype")
        if name == "options":
            return Val("OPT", f"({g})->dtype")
        if name == "is_complex":
            return Val("B", f"tn_dtype_is_complex(({g})->dtype)")
        if name in ("sym_numel", "numel"):
            return Val("I", f"ag_numel({g})")
        if name == "defined":
            return Val("B", "true")
        raise Skip(f"method .{name}()")

    def unop(self, op, v):
        if op == "-":
            if v.kind == "N":
                return num(-v.py[0], v.py[1])
            if v.kind in ("D", "I"):
                return Val(v.kind, f"(-{v.expr})")
            if v.kind == "T":
                return Val("T", f"ag_neg(c, {v.expr})")
        if op == "!" and v.kind == "B":
            return Val("B", f"(!{v.expr})")
        raise Skip(f"unary {op} on {v.kind}")

    SCALARISH = ("N", "D", "I")
    CMP = {"<": "lt", ">": "gt", "<=": "le", ">=": "ge", "==": "eq", "!=": "ne"}
    FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}

    def is_scalar(self, v):
        return v.kind in self.SCALARISH or (v.kind == "V" and v.ty in ("Scalar",))

    def binop(self, op, a, b):
        if a.kind == "N" and b.kind == "N" and op in "+-*/":
            x, y = a.py[0], b.py[0]
            both_int = a.py[1] and b.py[1]
            r = {"+": x + y, "-": x - y, "*": x * y, "/": (x // y if both_int else x / y)}[op]
            return num(r, both_int)
        if a.kind in ("I", "N") and b.kind in ("I", "N") and op in "+-*" and (a.kind == "I" or a.py[1]) and \
                (b.kind == "I" or b.py[1]):
            return Val("I", f"({self.as_int(a)} {op} {self.as_int(b)})")
        if a.kind in self.SCALARISH and b.kind in self.SCALARISH:
            if op in "+-*/":
                return Val("D", f"({self.as_double(a)} {op} {self.as_double(b)})")
            if op in self.CMP:
                return Val("B", f"({self.as_double(a)} {op} {self.as_double(b)})")
        if op in ("&&", "||") and a.kind == "B" and b.kind == "B":
            return Val("B", f"({a.expr} {op} {b.expr})")
        if a.kind == "T" and b.kind == "T":
            ident = {"+": "add_Tensor", "-": "sub_Tensor", "*": "mul_Tensor", "/": "div_Tensor",
                     "&": "bitwise_and_Tensor", "|": "bitwise_or_Tensor"}.get(op)
            if op in self.CMP:
                ident = self.CMP[op] + "_Tensor"
            if ident is None:
                raise Skip(f"operator {op} on tensors")
            alpha = ", VI(1)" if op in "+-" else ""
            return self.door(ident, f"VT({a.expr}), VT({b.expr}){alpha}")
        if a.kind == "T" and self.is_scalar(b):
            s = self.scalar_value(b)
            if op in "+-":
                return self.door("add_Scalar" if op == "+" else "sub_Scalar", f"VT({a.expr}), {s}, VI(1)")
            if op in "*/":
                return self.door("mul_Scalar" if op == "*" else "div_Scalar", f"VT({a.expr}), {s}")
            if op in self.CMP:
                return self.door(self.CMP[op] + "_Scalar", f"VT({a.expr}), {s}")
        if self.is_scalar(a) and b.kind == "T":
            s = self.scalar_value(a)
            if op == "+":
                return self.door("add_Scalar", f"VT({b.expr}), {s}, VI(1)")
            if op == "*":
                return self.door("mul_Scalar", f"VT({b.expr}), {s}")
            if op == "-":  # fill(a).sub_(b): a - b
                return self.door("rsub_Scalar", f"VT({b.expr}), {s}, VI(1)")
            if op == "/":  # fill(a).div_(b): a / b
                if "div_Tensor" not in self.gen.impl or "full" not in self.gen.impl:
                    raise Skip("aten::div.Tensor or aten::full has no kernel")
                return Val("T", f"ag_rdiv(c, {self.as_double(a)}, {b.expr})")
            if op in self.CMP:
                return self.door(self.CMP[self.FLIP[op]] + "_Scalar", f"VT({b.expr}), {s}")
        raise Skip(f"operator {op} on {a.kind} and {b.kind}")

    def door(self, ident, args):
        if ident not in self.gen.impl:
            raise Skip(f"aten::{ident} has no kernel")
        return Val("T", f"AG(c, {ident}, {args})")


# ---- the generator -----------------------------------------------------------------------
class Gen:
    def __init__(self, yaml_dir):
        from torchgen.gen import parse_native_yaml
        from torchgen.packaged.autograd.load_derivatives import load_derivatives
        nf = os.path.join(yaml_dir, "ATen", "native", "native_functions.yaml")
        tags = os.path.join(yaml_dir, "ATen", "native", "tags.yaml")
        self.deriv_yaml = os.path.join(yaml_dir, "autograd", "derivatives.yaml")
        self.infos, _ = load_derivatives(self.deriv_yaml, nf, tags)
        fns = parse_native_yaml(nf, tags).native_functions
        self.functional, self.by_ident = {}, {}
        for f in fns:
            self.by_ident[self.ident(f)] = f
            if f.func.kind().name == "functional":
                self.functional.setdefault(str(f.func.name.name), []).append(f)
        self.impl = set()
        for path in sorted(glob.glob(os.path.join(ROOT, "src", "ops", "*.def"))):
            self.impl |= set(re.findall(r"^TN_OP_(?:IMPL|ALIAS)\((\w+),", open(path).read(), re.M))
        hand_text = open(os.path.join(ROOT, "src", "autograd", "formulas.def")).read()
        self.hand = set(re.findall(r"^TN_GRAD\((\w+),", hand_text, re.M))
        self.decomp = decomposed_ops()

    @staticmethod
    def ident(f):
        n = f.func.name
        return f"{n.name}_{n.overload_name}" if n.overload_name else str(n.name)

    @staticmethod
    def cpp_params(f):
        """The C++ API's positional parameters: schema order, with dtype/layout/device/
        pin_memory collapsed into one TensorOptions ("OPTIONS")."""
        a = f.func.arguments
        out = []
        for x in list(a.flat_positional) + list(a.flat_kwarg_only):
            if x.name in ("layout", "device", "pin_memory") and a.tensor_options is not None:
                continue
            if x.name == "dtype" and a.tensor_options is not None:
                out.append("OPTIONS")
                continue
            out.append(x)
        return out

    def candidates(self):
        """(ident, info) of every operator with a kernel and a derivatives.yaml entry."""
        out = []
        for _, by_key in self.infos.items():
            info = by_key.get("Default")
            if info is None:
                continue
            i = self.ident(info.func)
            if i in self.impl:
                out.append((i, info))
        return sorted(out, key=lambda x: x[0])

    def translate(self, ident, info):
        """Returns (C function text, save_args mask, save_res mask, per-input skips) or raises
        Skip when no input's formula translates."""
        fn = info.func
        tx = Tx(self, fn, info)
        body, skips, done = [], [], 0
        for d in info.derivatives:
            names = list(d.var_names)
            idx = []
            for n in names:
                if n not in tx.argpos:
                    raise Skip(f"derivative for {n}, not an argument")
                ty = tx.arg_type(n)
                if "[]" in ty:
                    skips.append((n, f"gradient of the list argument {n}"))
                    idx = None
                    break
                idx.append(tx.argpos[n])
            if idx is None:
                body.append(self.refuse(ident, names, skips[-1][1], tx))
                continue
            formula = d.original_formula
            formula = re.sub(r"fmap\(\s*(\w+\(\w+\))\s*,\s*\[\]\(c10::SymInt i\)\{return -i;\}\)", r"neg_list(\1)",
                             formula)
            if "not_implemented(" in formula:
                skips.append((",".join(names), "upstream: not_implemented"))
                body.append(self.refuse(ident, names, "not implemented upstream either", tx))
                continue
            try:
                saved = (set(tx.save_args), set(tx.save_res))
                e = Parser(formula).parse()
                v = tx.ex(e)
                body.append(self.emit_set(tx, names, idx, v, formula))
                done += v.kind != "NONE"
            except Skip as s:
                tx.save_args, tx.save_res = saved
                skips.append((",".join(names), str(s)))
                body.append(self.refuse(ident, names, str(s), tx))
        if done == 0:
            raise Skip("; ".join(f"{n}: {r}" for n, r in skips) if skips else "no formulas")
        sa = sum(1 << i for i in tx.save_args)
        sr = sum(1 << k for k in tx.save_res)
        if sa >= 1 << 32 or sr >= 1 << 32:
            raise Skip("saves an argument beyond the mask")
        text = [f"/* {fn.func} */", f"void gd_{ident}(tn_grad_ctx *c) {{"] + body + ["}", ""]
        return "\n".join(text), sa, sr, skips

    @staticmethod
    def refuse(ident, names, why, tx):
        conds = " || ".join(f"NEED({tx.argpos[n]})" for n in names if n in tx.argpos) or "false"
        msg = f"the derivative of aten::{ident} for {', '.join(names)} is not implemented by torchnative"
        why = why.replace("\\", "").replace('"', "'")
        return f'    if ({conds}) ag_refuse(c, "{msg} ({why})");'

    @staticmethod
    def emit_set(tx, names, idx, v, formula):
        comment = "    /* " + ", ".join(names) + ": " + formula.replace("*/", "* /").replace("/*", "/ *") + " */"
        if v.kind == "NONE":  # an undefined gradient: the input gets none, as upstream
            return f"{comment}\n    /* no gradient */"
        if len(names) == 1:
            if v.kind != "T":
                raise Skip(f"formula yields {v.kind}, not a tensor")
            return f"{comment}\n    if (NEED({idx[0]})) SET({idx[0]}, {v.expr});"
        need = " || ".join(f"NEED({i})" for i in idx)
        mask = "bool mask[%d] = {%s};" % (len(idx), ", ".join(f"NEED({i})" for i in idx))
        if v.kind == "TTOP":
            out, n = v.py
            call = f"ag_op_n(c, TN_OP_{v.expr}, {len(out)}, (tn_value[]){{{', '.join(out)}}}, o, {n});"
        elif v.kind == "TTH":
            parts, n = v.py
            call = f"{v.expr}(c, {', '.join(parts)}, o);"
        else:
            raise Skip("several inputs from one non-tuple expression")
        if n < len(idx):
            raise Skip("tuple shorter than the inputs")
        sets = "\n        ".join(f"if (NEED({i})) SET({i}, o[{k}]);" for k, i in enumerate(idx))
        return (f"{comment}\n    if ({need}) {{\n        {mask}\n        (void)mask;\n        tn_tensor *o[{max(n, 1)}];\n"
                f"        {call}\n        {sets}\n    }}")

    def run(self):
        rows, funcs, report = [], [], {"generated": [], "skipped": [], "hand": [], "partial": [], "nodiff": [],
                                         "decomp": []}
        for ident, info in self.candidates():
            if ident in self.hand:
                report["hand"].append(ident)
                continue
            if ident in self.decomp:
                report["decomp"].append(ident)
                continue
            if not info.derivatives:
                report["nodiff"].append(ident)
                continue
            try:
                text, sa, sr, skips = self.translate(ident, info)
            except Skip as s:
                report["skipped"].append((ident, str(s)))
                continue
            funcs.append(text)
            rows.append(f'TN_GRAD({ident}, "{info.op}", gd_{ident}, 0x{sa:x}, 0x{sr:x})')
            report["generated"].append(ident)
            if skips:
                report["partial"].append((ident, skips))
        # kernels autograd has nothing for: no derivatives.yaml entry, hand row or decomposition
        with_entry = {i for i, _ in self.candidates()}
        report["no_entry"] = sorted(
            i for i in self.impl if i in self.by_ident and self.by_ident[i].func.kind().name == "functional"
            and i not in with_entry and i not in self.hand and i not in self.decomp)
        report["no_entry_composite"] = [i for i in report["no_entry"]
                                        if self.by_ident[i].has_composite_implicit_autograd_kernel]
        # the others get upstream's NotImplemented node ("derivative for aten::X is not
        # implemented", a RuntimeError at backward time), unless the entry of their in-place
        # sibling serves them (uniform, cauchy, ... reuse uniform_'s)
        entry_names = {str(schema.name.name) for schema in self.infos}
        report["upstream_refuses"] = [i for i in report["no_entry"] if i not in report["no_entry_composite"]
                                      and str(self.by_ident[i].func.name.name) + "_" not in entry_names]
        return rows, funcs, report

    def write(self, out_dir, rows, funcs, nodiff, refused):
        os.makedirs(out_dir, exist_ok=True)
        nd = HEADER + ("/* Operators with a kernel whose derivatives.yaml entry gives no formula (outputs not\n"
                       " * differentiable): their outputs never require grad (decompose.c). */\n"
                       + "".join(f"TN_NODIFF_GENERATED({i})\n" for i in nodiff))
        rf = HEADER + ("/* Operators upstream has no derivative for (no derivatives.yaml entry, not a\n"
                       " * CompositeImplicitAutograd composite): backward through them raises upstream's\n"
                       " * RuntimeError \"derivative for aten::X is not implemented\" (record.c). */\n"
                       + "".join(f"TN_UPSTREAM_REFUSES({i})\n" for i in refused))
        d = HEADER + ("/* One row per generated formula (see src/autograd/formulas.def for the columns). */\n"
                      + "\n".join(rows) + "\n")
        c = HEADER + ("/* The generated derivative formulas, one per row of formulas_generated.def, over the\n"
                      " * vocabulary of autograd/formulas.h and autograd/formulas_vocab.h. */\n"
                      "#include <math.h>\n#include <stdint.h>\n\n#include \"autograd/formulas_vocab.h\"\n\n"
                      + "\n".join(funcs))
        for name, text in (("formulas_generated.def", d), ("formulas_generated.c", c),
                           ("formulas_generated_nodiff.def", nd), ("formulas_generated_refused.def", rf)):
            path = os.path.join(out_dir, name)
            if not os.path.exists(path) or open(path).read() != text:
                with open(path, "w") as fh:
                    fh.write(text)


def default_yaml_dir():
    import torchgen
    return os.path.join(os.path.dirname(torchgen.__file__), "packaged")


def print_report(report):
    n_gen, n_hand, n_skip = len(report["generated"]), len(report["hand"]), len(report["skipped"])
    total = n_gen + n_hand + n_skip + len(report["nodiff"]) + len(report["decomp"])
    print(f"operators with a kernel and a derivatives.yaml entry: {total}")
    print(f"  generated:        {n_gen} (of which {len(report['partial'])} refuse some inputs, listed below)")
    print(f"  hand-written:     {n_hand} (rows in src/autograd/formulas.def)")
    print(f"  not differentiable upstream (no formula, outputs never require grad): {len(report['nodiff'])}")
    print(f"  run as their parts under autograd (src/autograd/decompose.c): {len(report['decomp'])} "
          f"({', '.join(report['decomp'])})")
    print(f"  skipped:          {n_skip}")
    print("\nskipped (missing vocabulary):")
    for ident, why in report["skipped"]:
        print(f"  {ident}: {why}")
    print("\ngenerated, with inputs that refuse at backward time:")
    for ident, skips in report["partial"]:
        for names, why in skips:
            print(f"  {ident} [{names}]: {why}")
    print("\nnot differentiable upstream: " + ", ".join(report["nodiff"]))
    comp = report["no_entry_composite"]
    print(f"\nfunctional operators with a kernel but no derivatives.yaml entry, hand row or decomposition: "
          f"{len(report['no_entry'])}; upstream's composites among them (autograd needs a decomposition in "
          f"decompose.c, or refuses by name unless the outputs are never differentiable): {len(comp)}")
    print("  " + ", ".join(comp))
    print(f"\nof the others, backward raises upstream's RuntimeError (no derivative upstream either): "
          f"{len(report['upstream_refuses'])}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yaml-dir", default=None, help="torchgen/packaged of the vendored torch")
    ap.add_argument("--out", default=None)
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    gen = Gen(a.yaml_dir or default_yaml_dir())
    rows, funcs, report = gen.run()
    if a.out:
        gen.write(a.out, rows, funcs, report["nodiff"], report["upstream_refuses"])
    if a.report:
        print_report(report)
    elif not a.out:
        ap.error("give --out and/or --report")


if __name__ == "__main__":
    sys.exit(main())

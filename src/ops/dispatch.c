/* dispatch.c — the door: autograd recording, kernel lookup, derived in-place / out=
 * variants, refusal by name. */
#include "ops/dispatch.h"

#include "autograd/autograd.h"
#include "autograd/formulas.h"
#include "ops/elementwise_common.h"
#include "ops/graph.h"
#include "ops/iter.h"
#include "ops/mathbits.h"
#include "ops/vmap.h"

#include <stdio.h>
#include <string.h>

#define TN_MAX_RETS 8

static bool same_shape(const tn_tensor *a, const tn_tensor *b) {
    return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

/* Copies `src` into `dst` through aten::copy_ (dtype conversion included). */
static tn_status copy_into(tn_tensor *dst, tn_tensor *src) {
    tn_value a[3] = {tn_value_tensor(dst), tn_value_tensor(src), tn_value_bool(false)};
    tn_value r[1];
    tn_op_fn copy = tn_op_impl(TN_OP_copy_);
    if (!copy) return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::copy_.default is not implemented by torchnative");
    TN_TRY(copy(a, r));
    tn_tensor_release(r[0].u.t);
    return TN_OK;
}

static void release_rets(tn_value *r, int n) {
    for (int i = 0; i < n; i++)
        if (r[i].tag == TN_V_TENSOR) tn_tensor_release(r[i].u.t);
}

static tn_status refuse(tn_op_id op) {
    const tn_op_schema *s = &tn_op_schemas[op];
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s%s%s is not implemented by torchnative", s->name,
                    ".", s->overload[0] ? s->overload : "default");
}

/* Upstream's assert_no_internal_overlap: a written-to tensor in which two elements share
 * memory (a broadcast dimension: stride 0, size > 1) would receive two results in one place. */
static tn_status check_no_internal_overlap(const tn_tensor *t) {
    if (tn_tensor_numel(t) == 0) return TN_OK; /* no element is written */
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] == 0 && t->sizes[d] > 1)
            return tn_error(TN_ERR_RUNTIME, "unsupported operation: more than one element of the written-to tensor "
                            "refers to a single memory location. Please clone() the tensor before performing the "
                            "operation.");
    return TN_OK;
}

/* The functional's name without a trailing '_' ("float_power" for float_power_). */
static const char *base_name(const tn_op_schema *s, char *buf, size_t n) {
    snprintf(buf, n, "%s", s->name);
    size_t len = strlen(buf);
    if (len > 1 && buf[len - 1] == '_') buf[len - 1] = 0;
    return buf;
}

/* The out= rule of the op row (tn_out_rule) for a result of dtype `res` written into `dst`
 * (an out= tensor, or self when `inplace`): TN_OK, or upstream's refusal. */
static tn_status check_out_rule(tn_out_rule rule, const tn_op_schema *s, tn_dtype res, const tn_tensor *dst,
                                bool inplace) {
    char nb[96];
    if (dst->dtype == res) return TN_OK;
    switch (rule) {
    case TN_OUT_SAME_DTYPE:
        if (inplace) return TN_OK; /* self is an input: the can-cast check below speaks */
        return tn_error(TN_ERR_RUNTIME, "Found dtype %s but expected %s", tn_dtype_infos[dst->dtype].c10_name,
                        tn_dtype_infos[res].c10_name);
    case TN_OUT_EXACT:
    case TN_OUT_BOOL_EXACT:
    case TN_OUT_DTYPE_ARG: /* the functional ran in dst's dtype unless dtype= named another */
        if (inplace && rule != TN_OUT_DTYPE_ARG) return TN_OK;
        return tn_error(TN_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead",
                        tn_dtype_infos[res].cpp_name, tn_dtype_infos[dst->dtype].cpp_name);
    case TN_OUT_BOOL_ONLY:
        if (inplace || dst->dtype == TN_DTYPE_BOOL) return TN_OK;
        return tn_error(TN_ERR_RUNTIME, "%s does not support non-boolean outputs.", base_name(s, nb, sizeof nb));
    case TN_OUT_BOOL_RESULT:
        if (inplace || dst->dtype == TN_DTYPE_BOOL) return TN_OK;
        return tn_error(TN_ERR_RUNTIME, "%s only supports bool tensor for result, got: %s", base_name(s, nb, sizeof nb),
                        tn_dtype_infos[dst->dtype].c10_name);
    case TN_OUT_AS_INPUT:
        if (inplace) return TN_OK;
        return tn_error(TN_ERR_RUNTIME, "%s: dtype of out: %s should be same as input: %s", base_name(s, nb, sizeof nb),
                        tn_dtype_infos[dst->dtype].c10_name, tn_dtype_infos[res].c10_name);
    case TN_OUT_SCALAR_TYPE:
        if (inplace) return TN_OK;
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[res].c10_name,
                        tn_dtype_infos[dst->dtype].c10_name);
    case TN_OUT_RESULT_DTYPE:
        return tn_error(TN_ERR_RUNTIME, "the %s given to %s has dtype %s but the operation's result requires dtype %s",
                        inplace ? "base" : "output", inplace ? s->name : base_name(s, nb, sizeof nb),
                        tn_dtype_infos[dst->dtype].c10_name, tn_dtype_infos[res].c10_name);
    case TN_OUT_POOL_OUTPUT:
        if (inplace) return TN_OK;
        return tn_error(TN_ERR_RUNTIME, "expected dtype %s for `output` but got dtype %s", tn_dtype_infos[res].cpp_name,
                        tn_dtype_infos[dst->dtype].cpp_name);
    case TN_OUT_HISTC:
        return tn_error(TN_ERR_RUNTIME, "torch.histogram: input tensor and hist tensor should have the same dtype, but "
                        "got input %s and hist %s", tn_dtype_infos[res].cpp_name, tn_dtype_infos[dst->dtype].cpp_name);
    case TN_OUT_SEARCHSORTED: /* checked by upstream's CPU kernel; its meta function does not */
        if (inplace || tn_tensor_is_meta(dst)) return TN_OK;
        return tn_error(TN_ERR_RUNTIME, "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) "
                        "or Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype %s "
                        "and out_int32 flag is %s", tn_dtype_infos[dst->dtype].c10_name,
                        res == TN_DTYPE_INT32 ? "True" : "False");
    default:
        return TN_OK;
    }
}

/* The result dtype a rule that fixes it predicts from the inputs, before any kernel runs:
 * self's for the non-promoting ops and histc, bool for the boolean ones; UNDEFINED for the
 * rules whose dtype only the result tells. */
static tn_dtype out_rule_predicted(tn_out_rule rule, const tn_value *args) {
    if (rule == TN_OUT_BOOL_ONLY || rule == TN_OUT_BOOL_EXACT) return TN_DTYPE_BOOL;
    bool from_self = rule == TN_OUT_SAME_DTYPE || rule == TN_OUT_AS_INPUT || rule == TN_OUT_SCALAR_TYPE ||
                     rule == TN_OUT_HISTC;
    return from_self && args[0].tag == TN_V_TENSOR ? args[0].u.t->dtype : TN_DTYPE_UNDEFINED;
}

/* Upstream checks an out= dtype of the rules that fix it before the kernel runs, so a call
 * that would fail in the kernel as well reports the out= dtype (the predicted dtype above)
 * when the functional failed. */
static tn_status out_rule_before(tn_out_rule rule, const tn_op_schema *s, const tn_value *args, tn_status failed) {
    if (s->kind != TN_OP_KIND_OUT || s->nout != 1 || args[s->nargs - 1].tag != TN_V_TENSOR) return failed;
    tn_dtype predicted = out_rule_predicted(rule, args);
    if (predicted == TN_DTYPE_UNDEFINED) return failed;
    tn_status st = check_out_rule(rule, s, predicted, args[s->nargs - 1].u.t, false);
    return st != TN_OK ? st : failed;
}

/* A TensorIterator operator's written-to tensors (its out=, or its in-place self) against
 * itself and each input, in upstream's order: internal overlap first, then the inputs. */
static tn_status iter_overlap_checks(const tn_op_schema *s, const tn_value *args) {
    int first_out = s->kind == TN_OP_KIND_OUT ? s->nargs - s->nout : 1;
    int nw = s->kind == TN_OP_KIND_OUT ? s->nout : 1, w0 = s->kind == TN_OP_KIND_OUT ? first_out : 0;
    if (s->kind != TN_OP_KIND_OUT && s->kind != TN_OP_KIND_INPLACE) return TN_OK;
    for (int k = w0; k < w0 + nw; k++)
        if (args[k].tag == TN_V_TENSOR) TN_TRY(tn_iter_check_overlap(args[k].u.t, NULL));
    for (int k = w0; k < w0 + nw; k++) {
        if (args[k].tag != TN_V_TENSOR) continue;
        for (int i = s->kind == TN_OP_KIND_OUT ? 0 : 1; i < (s->kind == TN_OP_KIND_OUT ? first_out : s->nargs); i++) {
            if (args[i].tag == TN_V_TENSOR) TN_TRY(tn_iter_check_overlap(args[k].u.t, args[i].u.t));
            else if (args[i].tag == TN_V_TENSORLIST)
                for (int64_t j = 0; j < args[i].u.tlist.n; j++)
                    if (args[i].u.tlist.data[j]) TN_TRY(tn_iter_check_overlap(args[k].u.t, args[i].u.tlist.data[j]));
        }
    }
    return TN_OK;
}

/* The written-to tensor of a derived form whose row carries TN_OUT_DISJOINT, against
 * itself and every tensor input (upstream's assert_no_internal_overlap and
 * assert_no_overlap); with TN_OUT_COPIES_SELF, out against self as a copy checks it. An
 * out= that is itself an input and must be resized is compared as upstream's resized
 * (contiguous, same start) tensor: refused when both hold elements and the input is dense. */
static tn_status disjoint_one(const tn_tensor *w, const tn_tensor *in, const tn_tensor *r, bool resized, bool as_copy) {
    if (resized && in == w)
        return tn_tensor_numel(r) && tn_tensor_numel(in) && tn_tensor_is_non_overlapping_and_dense(in)
                   ? tn_check_no_overlap(w, in) : TN_OK;
    return as_copy ? tn_iter_check_overlap(w, in) : tn_check_no_overlap(w, in);
}

static tn_status disjoint_checks(const tn_op_schema *s, const tn_value *args, const tn_value *res, unsigned flags) {
    bool is_out = s->kind == TN_OP_KIND_OUT;
    int first_out = is_out ? s->nargs - s->nout : 1, in_end = is_out ? first_out : s->nargs;
    int w0 = is_out ? first_out : 0, nw = is_out ? s->nout : 1;
    for (int k = w0; k < w0 + nw; k++) {
        if (args[k].tag != TN_V_TENSOR) continue;
        const tn_tensor *w = args[k].u.t, *r = is_out && res && res[k - w0].tag == TN_V_TENSOR ? res[k - w0].u.t : NULL;
        bool resized = r && !same_shape(w, r);
        if (is_out && !resized) TN_TRY(tn_iter_check_overlap(w, NULL));
        for (int i = is_out ? 0 : 1; i < in_end; i++) {
            bool as_copy = i == 0 && is_out && (flags & TN_OUT_COPIES_SELF);
            if (args[i].tag == TN_V_TENSOR) TN_TRY(disjoint_one(w, args[i].u.t, r, resized, as_copy));
            else if (args[i].tag == TN_V_TENSORLIST)
                for (int64_t j = 0; j < args[i].u.tlist.n; j++)
                    if (args[i].u.tlist.data[j]) TN_TRY(disjoint_one(w, args[i].u.tlist.data[j], r, resized, false));
        }
    }
    return TN_OK;
}

/* A TensorIterator operator's out= that is also one of its inputs (the same tensor) is
 * read and written, so the iterator does not resize it: its shape must be the result's. */
static tn_status read_write_shapes(const tn_op_schema *s, const tn_value *args, const tn_value *res) {
    char b1[160], b2[160];
    if (s->kind != TN_OP_KIND_OUT) return TN_OK;
    int first_out = s->nargs - s->nout;
    for (int k = 0; k < s->nout; k++) {
        const tn_tensor *out = args[first_out + k].tag == TN_V_TENSOR ? args[first_out + k].u.t : NULL;
        const tn_tensor *r = res[k].tag == TN_V_TENSOR ? res[k].u.t : NULL;
        if (!out || !r || same_shape(out, r)) continue;
        bool read = false;
        for (int i = 0; i < first_out && !read; i++) read = args[i].tag == TN_V_TENSOR && args[i].u.t == out;
        if (read)
            return tn_error(TN_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                            tn_format_sizes(out->ndim, out->sizes, b1, sizeof b1),
                            tn_format_sizes(r->ndim, r->sizes, b2, sizeof b2));
    }
    return TN_OK;
}

/* The position of the functional's `ScalarType? dtype` argument, read from its schema
 * text (-1 when it has none). */
static int dtype_arg_index_scan(tn_op_id functional) {
    const char *p = strchr(tn_op_schemas[functional].schema, '(');
    if (!p) return -1;
    int idx = 0, depth = 0;
    const char *start = p + 1;
    for (const char *q = p + 1; *q; q++) {
        if (*q == '(' || *q == '[') { depth++; continue; }
        bool close = *q == ')' || *q == ']';
        if (close && depth > 0) { depth--; continue; }
        if (depth == 0 && (*q == ',' || close)) {
            while (start < q && *start == ' ') start++;
            if (!(q - start == 1 && *start == '*')) { /* not the keyword-only marker */
                if (q - start >= 17 && strncmp(start, "ScalarType? dtype", 17) == 0) return idx;
                idx++;
            }
            if (close) break;
            start = q + 1;
        }
    }
    return -1;
}

/* dtype_arg_index_scan, remembered per operator (a benign race: every thread stores the
 * same value). */
static int dtype_arg_index(tn_op_id functional) {
    static signed char memo[TN_OP_COUNT]; /* 0 unknown, else index + 2 (1: none) */
    if (!memo[functional]) memo[functional] = (signed char)(dtype_arg_index_scan(functional) + 2);
    return memo[functional] - 2;
}

/* The functional called on meta stand-ins of the inputs (their checks, no data): its status;
 * on success the first result's shape into nd/sizes and dtype into *dt (nd = -1 when that
 * result is not a tensor). */
static tn_status meta_result(const tn_op_schema *s, tn_op_fn fn, const tn_value *args, int *nd, int64_t *sizes, tn_dtype *dt) {
    int nf = s->nargs - s->nout, nowned = 0;
    tn_value margs[64], mrets[TN_MAX_RETS];
    tn_tensor *owned[64];
    tn_status st = TN_OK;
    memcpy(margs, args, sizeof(tn_value) * (size_t)nf);
    for (int i = 0; i < nf && st == TN_OK; i++)
        if (args[i].tag == TN_V_TENSOR && args[i].u.t) {
            if (!(owned[nowned] = tn_tensor_meta_like(args[i].u.t))) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
            else margs[i].u.t = owned[nowned++];
        }
    *nd = -1;
    if (st == TN_OK && (st = fn(margs, mrets)) == TN_OK) {
        if (mrets[0].tag == TN_V_TENSOR) {
            *nd = mrets[0].u.t->ndim;
            memcpy(sizes, mrets[0].u.t->sizes, sizeof(int64_t) * (size_t)*nd);
            *dt = mrets[0].u.t->dtype;
        }
        release_rets(mrets, tn_op_schemas[s->functional].nrets);
    }
    for (int i = 0; i < nowned; i++) tn_tensor_release(owned[i]);
    return st;
}

/* Whether out's storage, which cannot grow, is too small for a result of `nd` dims `sizes`
 * (an element count or a byte count past int64 is left to the kernel to report). */
static bool fixed_out_too_small(const tn_tensor *out, int nd, const int64_t *sizes) {
    int64_t n = 1, need;
    for (int d = 0; d < nd; d++)
        if (__builtin_mul_overflow(n, sizes[d], &n)) return false;
    if (__builtin_add_overflow(n, out->offset, &need) ||
        __builtin_mul_overflow(need, (int64_t)tn_dtype_itemsize(out->dtype), &need))
        return false;
    return n != 0 && !tn_storage_can_grow(out->storage, need);
}

/* A TensorIterator operator's out= is resized to the inputs' broadcast shape before its
 * kernel runs, after the operator's own checks: an out whose storage cannot grow to that
 * size (numpy's, a view of a non-resizable buffer) refuses before the kernel, as upstream's
 * (before: the orthogonal polynomials of degree 2**31 ran for minutes, then refused). The
 * operator's checks come first: the functional runs on meta stand-ins of its inputs, and
 * its error, if any, is the answer. cat and the stacks (a tensor list) are not broadcasts. */
static tn_status iter_out_resize_first(const tn_op_schema *s, tn_op_fn fn, const tn_value *args) {
    const tn_tensor *out = args[s->nargs - 1].tag == TN_V_TENSOR ? args[s->nargs - 1].u.t : NULL;
    /* an out whose storage grows to any size (the usual case) costs one test here */
    if (!out || !out->storage || s->nargs > 64 || tn_storage_can_grow(out->storage, INT64_MAX)) return TN_OK;
    int nd = 0, k;
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < s->nargs - 1; i++) {
        if (args[i].tag == TN_V_TENSORLIST) return TN_OK;
        if (args[i].tag != TN_V_TENSOR || !args[i].u.t) continue;
        int64_t next[TN_MAX_DIMS];
        if (tn_broadcast_shapes(nd, shape, args[i].u.t->ndim, args[i].u.t->sizes, &k, next) != TN_OK)
            return TN_OK; /* the kernel reports the shapes (the message set here is replaced) */
        memcpy(shape, next, sizeof(int64_t) * (size_t)k);
        nd = k;
    }
    bool same = nd == out->ndim;
    for (int d = 0; same && d < nd; d++) same = shape[d] == out->sizes[d];
    if (same) return TN_OK; /* upstream resizes a differing out only */
    if (!fixed_out_too_small(out, nd, shape)) return TN_OK;
    /* the resize would fail: the operator's checks first, on meta stand-ins */
    int rnd;
    int64_t rsizes[TN_MAX_DIMS];
    tn_dtype rdt;
    tn_status st = meta_result(s, fn, args, &rnd, rsizes, &rdt);
    /* a refusal of meta inputs says nothing. A dtype refusal ("... not implemented for
     * '<dtype>'") comes from the kernel: upstream's structured operators (igammac, also
     * through an alias such as special.gammaincc) resize out in their meta function,
     * before it; its autogenerated out= forms (__lshift__) run the kernel first */
    if (st != TN_OK && st != TN_ERR_NO_MEMORY &&
        (strstr(tn_error_message(), "meta") ||
         (tn_op_schemas[tn_op_resolve_alias((tn_op_id)s->functional)].structured &&
          strstr(tn_error_message(), "not implemented for"))))
        st = TN_OK;
    if (st != TN_OK) return st;
    return tn_error(TN_ERR_RUNTIME, "Trying to resize storage that is not resizable");
}

/* Whether the functional's upstream kernel resizes out before it reads an input: the
 * structured kernels (their meta function), and std / var (TN_OUT_CONVERT_SELF), which are
 * not structured but whose make_reduction resizes out first the same way (std(x, out=x) of
 * an expanded 2**40-element view reads one element there: a fuzzer hang of seed 43). */
static bool resizes_out_first(tn_out_rule rule, const tn_op_schema *s) {
    return tn_op_schemas[tn_op_resolve_alias((tn_op_id)s->functional)].structured || rule == TN_OUT_CONVERT_SELF;
}

/* Upstream's structured kernels resize out in their meta function, before the kernel reads
 * an input: when out= is itself one of the inputs (the same tensor object), the kernel reads
 * the input at the result's shape (torch.norm(x, out=x) is the norm of x resized to 0-dim;
 * with x an expanded view of 2**62 elements it answers at once). Done here when the result's
 * shape is a fixed point (the inputs resized give it again) and out's dtype takes the result;
 * otherwise (sum(x, 0, out=x): upstream's kernel then reads an input the output overwrote)
 * out keeps its geometry and the call goes on as for any out=. */
static tn_status structured_out_is_input(tn_out_rule rule, const tn_op_schema *s, tn_op_fn fn, const tn_value *args) {
    int nf = s->nargs - s->nout, nd, nd2;
    /* (a TensorIterator kernel never resizes an out that is also its input: it refuses the
     * shapes, as the iterator paths here do) */
    if (s->kind != TN_OP_KIND_OUT || s->nout != 1 || s->nargs > 64 || args[s->nargs - 1].tag != TN_V_TENSOR ||
        !resizes_out_first(rule, s) || tn_op_out_iter((tn_op_id)s->functional))
        return TN_OK;
    tn_tensor *out = args[s->nargs - 1].u.t;
    bool is_input = false;
    for (int i = 0; i < nf; i++) is_input |= args[i].tag == TN_V_TENSOR && args[i].u.t == out;
    if (!is_input || tn_tensor_is_meta(out) || !out->storage) return TN_OK;
    int64_t sizes[TN_MAX_DIMS], sizes2[TN_MAX_DIMS];
    tn_dtype dt, dt2;
    if (meta_result(s, fn, args, &nd, sizes, &dt) != TN_OK || nd < 0 || check_out_rule(rule, s, dt, out, false) != TN_OK ||
        !tn_dtype_can_cast(dt, out->dtype))
        return TN_OK;
    bool same = nd == out->ndim;
    for (int d = 0; same && d < nd; d++) same = sizes[d] == out->sizes[d];
    if (same) return TN_OK;
    /* a shrinking resize keeps the storage, so the old geometry can come back */
    int64_t n = 1, old_sizes[TN_MAX_DIMS], old_strides[TN_MAX_DIMS], old_offset = out->offset;
    int old_nd = out->ndim;
    for (int d = 0; d < nd; d++) n *= sizes[d];
    if (n > tn_tensor_numel(out)) return TN_OK;
    memcpy(old_sizes, out->sizes, sizeof(int64_t) * (size_t)old_nd);
    memcpy(old_strides, out->strides, sizeof(int64_t) * (size_t)old_nd);
    tn_storage *old_storage = out->storage;
    TN_TRY(tn_tensor_resize(out, nd, sizes));
    if (out->storage != old_storage) return TN_OK; /* (a grown storage: nothing to restore) */
    tn_status again = meta_result(s, fn, args, &nd2, sizes2, &dt2);
    /* the resized input refused (a dim now out of range, a 0-dim where 1-d is wanted):
     * upstream's kernel refuses it too, with out left resized */
    if (again != TN_OK && again != TN_ERR_NO_MEMORY && !strstr(tn_error_message(), "meta")) return again;
    bool fixed = again == TN_OK && nd2 == nd;
    for (int d = 0; fixed && d < nd; d++) fixed = sizes2[d] == sizes[d];
    if (!fixed) {
        out->ndim = old_nd;
        out->offset = old_offset;
        memcpy(out->sizes, old_sizes, sizeof(int64_t) * (size_t)old_nd);
        memcpy(out->strides, old_strides, sizeof(int64_t) * (size_t)old_nd);
    }
    return TN_OK;
}

/* In-place and out= through the functional sibling: compute, check, copy back. */
/* A structured kernel's or a reduction's out= whose storage cannot grow (a NumPy array's)
 * and is too small for the result: upstream resizes out first and refuses there, before any
 * element is read (norm of an expanded 2**40-element view into such an out: ours reduced
 * first, a fuzzer hang of seed 45). The result's shape from the meta stand-ins; only when
 * the storage is fixed (resizable ones are left to the copy-out). */
static tn_status fixed_out_resize_first(tn_out_rule rule, const tn_op_schema *s, tn_op_fn fn, const tn_value *args) {
    if (s->kind != TN_OP_KIND_OUT || s->nout != 1 || s->nargs > 64 || args[s->nargs - 1].tag != TN_V_TENSOR ||
        tn_op_out_iter((tn_op_id)s->functional) || !(resizes_out_first(rule, s) || rule == TN_OUT_DTYPE_ARG))
        return TN_OK;
    tn_tensor *out = args[s->nargs - 1].u.t;
    if (tn_tensor_is_meta(out) || !out->storage || tn_storage_can_grow(out->storage, INT64_MAX)) return TN_OK;
    int nd;
    int64_t sizes[TN_MAX_DIMS];
    tn_dtype dt;
    if (meta_result(s, fn, args, &nd, sizes, &dt) != TN_OK || nd < 0) return TN_OK; /* the kernel reports */
    if (!fixed_out_too_small(out, nd, sizes)) return TN_OK;
    return tn_error(TN_ERR_RUNTIME, "Trying to resize storage that is not resizable");
}

tn_status tn_op_inplace_checks(tn_op_id op, const tn_value *args, bool after) {
    const tn_op_schema *s = &tn_op_schemas[op];
    if (s->kind != TN_OP_KIND_INPLACE || s->functional < 0 || args[0].tag != TN_V_TENSOR) return TN_OK;
    if (after) {
        unsigned overlap = tn_op_out_overlap_flags((tn_op_id)s->functional);
        return (overlap & TN_OUT_DISJOINT) ? disjoint_checks(s, args, NULL, overlap) : TN_OK;
    }
    if (!tn_op_is_view((tn_op_id)s->functional)) TN_TRY(check_no_internal_overlap(args[0].u.t));
    return tn_op_out_iter((tn_op_id)s->functional) ? iter_overlap_checks(s, args) : TN_OK;
}

tn_status tn_op_inplace_result_check(tn_op_id op, const tn_tensor *self, const tn_tensor *res) {
    const tn_op_schema *s = &tn_op_schemas[op];
    char b1[160], b2[160];
    TN_TRY(check_out_rule(tn_op_out_rule((tn_op_id)s->functional), s, res->dtype, self, true));
    if (!same_shape(self, res))
        return tn_error(TN_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                        tn_format_sizes(self->ndim, self->sizes, b1, sizeof b1), tn_format_sizes(res->ndim, res->sizes, b2, sizeof b2));
    if (!tn_dtype_can_cast(res->dtype, self->dtype))
        return tn_error(TN_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                        tn_dtype_infos[res->dtype].c10_name, tn_dtype_infos[self->dtype].c10_name);
    return TN_OK;
}

static tn_status run_derived(tn_op_id op, const tn_op_schema *s, tn_op_fn fn, const tn_value *args,
                             tn_value *rets) {
    tn_value tmp[TN_MAX_RETS];
    tn_out_rule rule = tn_op_out_rule((tn_op_id)s->functional);
    /* (the in-place views, squeeze_ / unsqueeze_ / t_ / ..., change self's geometry and write
     * no element: upstream lets an expanded self through them) */
    if (s->kind == TN_OP_KIND_INPLACE) TN_TRY(tn_op_inplace_checks(op, args, false));
    else if (tn_op_out_iter((tn_op_id)s->functional)) TN_TRY(iter_overlap_checks(s, args));
    unsigned overlap = tn_op_out_overlap_flags((tn_op_id)s->functional);
    if ((overlap & TN_OUT_DISJOINT_FIRST) && s->kind == TN_OP_KIND_OUT) TN_TRY(disjoint_checks(s, args, NULL, overlap));
    const tn_value *fargs = args;
    tn_value filled[64];
    if (rule == TN_OUT_DTYPE_ARG && s->nargs <= 64) {
        /* no dtype=: the reduction runs in the written-to tensor's dtype */
        int di = dtype_arg_index((tn_op_id)s->functional);
        int w = s->kind == TN_OP_KIND_OUT ? s->nargs - s->nout : 0;
        if (di >= 0 && args[di].tag == TN_V_NONE && args[w].tag == TN_V_TENSOR) {
            memcpy(filled, args, sizeof(tn_value) * (size_t)s->nargs);
            filled[di].tag = TN_V_DTYPE;
            filled[di].u.dtype = args[w].u.t->dtype;
            fargs = filled;
        }
    }
    if (tn_op_out_iter((tn_op_id)s->functional) && s->kind == TN_OP_KIND_OUT && s->nout == 1)
        TN_TRY(iter_out_resize_first(s, fn, args));
    TN_TRY(structured_out_is_input(rule, s, fn, args));
    TN_TRY(fixed_out_resize_first(rule, s, fn, args));
    /* histc and isin check out's dtype first, before any input is looked at: a call with
     * valid inputs as well (histc's bins counted, isin's elements searched) */
    if (rule == TN_OUT_HISTC || rule == TN_OUT_BOOL_EXACT) TN_TRY(out_rule_before(rule, s, args, TN_OK));
    tn_tensor *converted = NULL;
    if (rule == TN_OUT_CONVERT_SELF && s->kind == TN_OP_KIND_OUT && s->nout == 1 && s->nargs <= 64 &&
        args[0].tag == TN_V_TENSOR && args[s->nargs - 1].tag == TN_V_TENSOR) {
        tn_tensor *self = args[0].u.t, *out = args[s->nargs - 1].u.t;
        if (tn_dtype_is_floating(self->dtype) && out->dtype != self->dtype && !tn_dtype_is_complex(out->dtype)) {
            /* upstream reduces self converted to out's dtype, except on its CPU path for a
             * float / double out of at most one element, which reduces self itself (measured:
             * std(float32 x, dim, out=float64) is std(x.double(), dim), std(x, out=float64)
             * is std(x).double()) */
            bool convert = out->dtype == TN_DTYPE_FLOAT16 || out->dtype == TN_DTYPE_BFLOAT16;
            if (!convert) {
                int rnd;
                int64_t rs[TN_MAX_DIMS], rn = 1;
                tn_dtype rdt;
                if (meta_result(s, fn, args, &rnd, rs, &rdt) == TN_OK && rnd >= 0) {
                    for (int d = 0; d < rnd; d++) rn *= rs[d];
                    convert = rn > 1;
                }
            }
            TN_TRY(convert ? tn_ew_to_dtype(self, out->dtype, &converted) : tn_tensor_empty_like(self, out->dtype, &converted));
            if (!tn_dtype_can_cast(self->dtype, out->dtype)) {
                tn_tensor_release(converted);
                return tn_error(TN_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                                tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[out->dtype].c10_name);
            }
            if (convert) {
                if (fargs != filled) memcpy(filled, args, sizeof(tn_value) * (size_t)s->nargs);
                filled[0] = tn_value_tensor(converted);
                fargs = filled;
            } else {
                tn_tensor_release(converted);
                converted = NULL;
            }
        }
    }
    /* an elementwise kernel may compute straight into the written-to tensor (iter.h,
     * tn_iter_offer); the copies below then skip it. Not where a check of out against the
     * inputs runs after the functional (it must refuse before anything is written), except
     * for the in-place self of a row whose result starts as a copy of self: a kernel there
     * that takes the offer (index_copy) runs those checks itself before writing */
    tn_iter_offer offer = {NULL, NULL, -1};
    bool copies_self_in_place = (overlap & TN_OUT_COPIES_SELF) && s->kind == TN_OP_KIND_INPLACE;
    bool offered = (!(overlap & (TN_OUT_DISJOINT | TN_OUT_COPIES_SELF)) || copies_self_in_place) && s->nout <= 1 &&
                   !converted && fargs == args;
    if (offered) offer = tn_iter_offer_push(args[s->kind == TN_OP_KIND_OUT ? s->nargs - 1 : 0].u.t, tmp, s->functional);
    tn_status st = fn(fargs, tmp);
    if (offered) tn_iter_offer_pop(offer);
    if (converted) tn_tensor_release(converted);
    if (st != TN_OK) return rule == TN_OUT_CAST ? st : out_rule_before(rule, s, args, st);
    bool disjoint_after = (overlap & TN_OUT_DISJOINT) && !((overlap & TN_OUT_DISJOINT_FIRST) && s->kind == TN_OP_KIND_OUT);
    if (disjoint_after && (st = disjoint_checks(s, args, tmp, overlap)) != TN_OK) {
        release_rets(tmp, s->nrets);
        return st;
    }
    if (tn_op_out_iter((tn_op_id)s->functional) && !(overlap & TN_OUT_DISJOINT) &&
        (st = read_write_shapes(s, args, tmp)) != TN_OK) {
        release_rets(tmp, s->nrets);
        return st;
    }
    if (s->kind == TN_OP_KIND_INPLACE) {
        tn_tensor *self = args[0].u.t, *res = tmp[0].u.t;
        if (s->functional == TN_OP_detach && (self->flags & TN_TENSOR_IS_VIEW)) { /* as Tensor.detach_ */
            release_rets(tmp, s->nrets);
            return tn_error(TN_ERR_RUNTIME, "%s", TN_MSG_DETACH_VIEW_INPLACE);
        }
        if (tn_op_is_view((tn_op_id)s->functional) && res->storage == self->storage) {
            /* squeeze_, unsqueeze_, t_, transpose_, ...: the view's geometry becomes self's */
            self->ndim = res->ndim;
            self->offset = res->offset;
            memcpy(self->sizes, res->sizes, sizeof(int64_t) * (size_t)res->ndim);
            memcpy(self->strides, res->strides, sizeof(int64_t) * (size_t)res->ndim);
            tn_tensor_retain(self);
            rets[0] = tn_value_tensor(self);
            release_rets(tmp, s->nrets);
            return TN_OK;
        }
        if ((st = tn_op_inplace_result_check(op, self, res)) == TN_OK && res != self) st = copy_into(self, res);
        if (st == TN_OK) { tn_tensor_retain(self); rets[0] = tn_value_tensor(self); }
        release_rets(tmp, s->nrets);
        return st;
    }
    /* out=: the trailing nout arguments receive the results in order. */
    int first_out = s->nargs - s->nout;
    for (int k = 0; k < s->nout && st == TN_OK; k++) {
        tn_tensor *out = args[first_out + k].u.t, *res = tmp[k].u.t;
        if (tmp[k].tag != TN_V_TENSOR) { st = refuse(op); break; }
        if (tn_tensor_device(out).type != tn_tensor_device(res).type) {
            st = tn_error(TN_ERR_RUNTIME, "Attempting to copy from device %s to device %s, but cross-device copies "
                          "are not allowed!", tn_tensor_is_meta(res) ? "meta" : "cpu", tn_tensor_is_meta(out) ? "meta" : "cpu");
            break;
        }
        if ((st = check_out_rule(rule, s, res->dtype, out, false)) != TN_OK) break;
        if (!tn_dtype_can_cast(res->dtype, out->dtype)) {
            st = tn_error(TN_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                          tn_dtype_infos[res->dtype].c10_name, tn_dtype_infos[out->dtype].c10_name);
            break;
        }
        if (!same_shape(out, res)) st = tn_tensor_resize(out, res->ndim, res->sizes);
        else st = check_no_internal_overlap(out);
        if (st == TN_OK && res != out) st = copy_into(out, res);
    }
    if (st == TN_OK)
        for (int k = 0; k < s->nout; k++) {
            tn_tensor *out = args[first_out + k].u.t;
            tn_tensor_retain(out);
            rets[k] = tn_value_tensor(out);
        }
    release_rets(tmp, s->nrets);
    return st;
}

/* Every successful write through an in-place or out= overload bumps `_version`. */
static void bump_versions(const tn_op_schema *s, const tn_value *args) {
    if (s->kind == TN_OP_KIND_INPLACE && args[0].tag == TN_V_TENSOR)
        atomic_fetch_add(&args[0].u.t->storage->version, 1);
    for (int k = s->nargs - s->nout; s->kind == TN_OP_KIND_OUT && k < s->nargs; k++)
        if (args[k].tag == TN_V_TENSOR) atomic_fetch_add(&args[k].u.t->storage->version, 1);
}

/* Whether the door may derive `op` from its functional sibling: not when the mutated
 * argument is a tensor list (_foreach_add_.List, _foreach_add.List_out), whose results
 * cannot be copied back as one tensor. */
static bool derivable(tn_op_id op) {
    static signed char memo[TN_OP_COUNT]; /* 0 unknown, 1 yes, 2 no */
    if (!memo[op]) memo[op] = strstr(tn_op_schemas[op].schema, "!)[]") ? 2 : 1;
    return memo[op] == 1;
}

static tn_status run_op(tn_op_id op, const tn_value *args, tn_value *rets) {
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_op_fn fn = tn_op_impl(op);
    if (fn) {
        tn_status st = fn(args, rets);
        if (st == TN_OK && s->kind != TN_OP_KIND_FUNCTIONAL) bump_versions(s, args);
        return st;
    }
    if (s->functional >= 0 && s->functional != (int)op && s->nrets <= TN_MAX_RETS &&
        (s->kind == TN_OP_KIND_INPLACE || s->kind == TN_OP_KIND_OUT) && derivable(op)) {
        tn_op_fn f = tn_op_impl((tn_op_id)s->functional);
        /* Derivable only when the functional sibling takes exactly the leading arguments
         * (factories drop dtype/layout/device from their out= form, so they are not). */
        int lead = s->kind == TN_OP_KIND_OUT ? s->nargs - s->nout : s->nargs;
        if (f && lead == tn_op_schemas[s->functional].nargs) {
            tn_status st = run_derived(op, s, f, args, rets);
            if (st == TN_OK) bump_versions(s, args);
            return st;
        }
    }
    return refuse(op);
}

tn_status tn_dispatch_derived(tn_op_id op, const tn_value *args, tn_value *rets) {
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_op_fn f = s->functional >= 0 && s->functional != (int)op ? tn_op_impl((tn_op_id)s->functional) : NULL;
    if (!f || s->nrets > TN_MAX_RETS || !derivable(op)) return refuse(op);
    return run_derived(op, s, f, args, rets);
}

/* Graph capture attaches here: calls from outside the door are recorded once they have
 * run (nested calls made by implementations are part of their caller's step). */
/* Outputs of a view operator that share their input's storage are marked, so autograd can
 * tell an in-place write through a view from one on a tensor of its own; with grad mode on
 * they also remember their base, so such a write can rebase the base's history. */
static void mark_view(tn_tensor *v, tn_tensor *src) {
    v->flags |= TN_TENSOR_IS_VIEW;
    if (!tn_grad_mode_enabled()) return;
    tn_autograd_meta *m = tn_autograd_meta_get(v);
    if (!m || m->view_base) return;
    tn_autograd_meta *sm = tn_autograd_meta_peek(src);
    tn_tensor *base = sm && sm->view_base ? sm->view_base : src;
    tn_tensor_retain(base);
    m->view_base = base;
    m->hist_version = atomic_load(&v->storage->version);
}

static void mark_views(tn_op_id op, const tn_value *args, tn_value *rets) {
    const tn_op_schema *s = &tn_op_schemas[op];
    if (!s->nargs || args[0].tag != TN_V_TENSOR || !args[0].u.t) return;
    tn_tensor *src = args[0].u.t;
    for (int k = 0; k < s->nrets; k++) {
        if (rets[k].tag == TN_V_TENSOR && rets[k].u.t && rets[k].u.t->storage == src->storage && rets[k].u.t != src)
            mark_view(rets[k].u.t, src);
        else if (rets[k].tag == TN_V_TENSORLIST)
            for (int64_t i = 0; i < rets[k].u.tlist.n; i++)
                if (rets[k].u.tlist.data[i] && rets[k].u.tlist.data[i]->storage == src->storage)
                    mark_view(rets[k].u.tlist.data[i], src);
    }
}

/* Operators that take tensors on different devices by design (copies between them, and
 * predicates that never read data). */
static bool mixes_devices_by_design(tn_op_id op) {
    static signed char memo[TN_OP_COUNT]; /* 0 unknown, 1 yes, 2 no */
    if (!memo[op]) {
        static const char *const names[] = {"copy_", "_copy_from", "_copy_from_and_resize", "_to_copy", "to", "lift",
                                            "lift_fresh", "_has_compatible_shallow_copy_type", "is_same_size",
                                            "is_set_to", "set_", "resize_as_", "alias", "_foreach_copy_",
                                            "_foreach_copy", "result_type", "can_cast", "promote_types"};
        memo[op] = 2;
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (!strcmp(tn_op_schemas[op].name, names[i])) memo[op] = 1;
    }
    return memo[op] == 1;
}

/* A meta tensor has no data: a CPU kernel handed one next to CPU tensors would read
 * through its NULL data pointer. 0-dim CPU tensors are scalars (upstream lets them join
 * any device), so only CPU tensors with dimensions count. */
static tn_status check_one_device(tn_op_id op, const tn_value *args) {
    const tn_op_schema *s = &tn_op_schemas[op];
    bool meta = false, cpu = false;
    for (int k = 0; k < s->nargs; k++) {
        if (args[k].tag == TN_V_TENSOR) {
            const tn_tensor *t = args[k].u.t;
            if (tn_tensor_is_meta(t)) meta = true;
            else if (t->ndim > 0) cpu = true;
        } else if (args[k].tag == TN_V_TENSORLIST) {
            for (int64_t i = 0; i < args[k].u.tlist.n; i++) {
                const tn_tensor *t = args[k].u.tlist.data[i];
                if (!t) continue;
                if (tn_tensor_is_meta(t)) meta = true;
                else if (t->ndim > 0) cpu = true;
            }
        }
    }
    if (meta && cpu && !mixes_devices_by_design(op))
        return tn_error(TN_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two "
                        "devices, meta and cpu!");
    return TN_OK;
}

/* run_op behind the conjugate / negative bit fallback (mathbits.h): autograd records the
 * arguments as given, the kernel reads resolved copies */
static tn_status run_op_bits(tn_op_id op, const tn_value *args, tn_value *rets) {
    if (tn_mathbits_in_args(op, args)) return tn_mathbits_run(op, args, rets, run_op);
    return run_op(op, args, rets);
}

tn_status tn_dispatch(tn_op_id op, const tn_value *args, tn_value *rets) {
    if (tn_vmap_intercepts(op, args)) return tn_vmap_dispatch(op, args, rets);
    if (tn_fw_intercepts(op, args)) return tn_fw_dispatch(op, args, rets);
    TN_TRY(check_one_device(op, args));
    /* a forwarder's nested call under other out= rules does not take the door's offer (iter.h) */
    tn_iter_offer held = tn_iter_offer_current();
    bool withheld = held.dest && held.rets == rets && !tn_op_offer_passes(op, (tn_op_id)held.functional);
    if (withheld) tn_iter_offer_push(NULL, NULL, -1);
    bool record = tn_graph_enter();
    tn_status st = tn_autograd_should_record(op, args) ? tn_autograd_record(op, args, rets, run_op_bits)
                                                       : run_op_bits(op, args, rets);
    if (withheld) tn_iter_offer_pop(held);
    if (st == TN_OK && tn_op_is_view(op)) mark_views(op, args, rets);
    if (record && st == TN_OK) tn_graph_record(op, args, rets);
    tn_graph_leave();
    return st;
}

bool tn_op_has_kernel(tn_op_id op) {
    if (tn_op_impl(op)) return true;
    const tn_op_schema *s = &tn_op_schemas[op];
    int lead = s->kind == TN_OP_KIND_OUT ? s->nargs - s->nout : s->nargs;
    return s->functional >= 0 && (s->kind == TN_OP_KIND_INPLACE || s->kind == TN_OP_KIND_OUT) && derivable(op) &&
           tn_op_impl((tn_op_id)s->functional) != NULL && lead == tn_op_schemas[s->functional].nargs;
}

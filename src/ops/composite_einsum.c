/* composite_einsum.c — aten::einsum as door calls, in upstream's steps (Linear.cpp):
 * the equation parsed into labels (a-z, A-Z, "..." for broadcast dims), repeated labels
 * of an operand taken as diagonals, every operand permuted and unsqueezed into one layout
 * (output dims first, then the contracted ones), then contracted two at a time, left to
 * right or along the given path, each pair as one bmm over (batch, kept-a, contracted) x
 * (batch, contracted, kept-b) with the dims only one side has summed first. */
#include <string.h>

#include "ops/composite_internal.h"

#define EIN_LABELS 52             /* A-Z, a-z */
#define EIN_MAX (EIN_LABELS + TN_MAX_DIMS) /* plus one pseudo-label per ellipsis dim */

static int label_of(char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
    return -1;
}
static char char_of(int l) { return l < 26 ? (char)('A' + l) : (char)('a' + l - 26); }

typedef struct ein_op {
    int nl;             /* labels written for the operand */
    int lab[TN_MAX_DIMS + EIN_LABELS];
    int ell_at;         /* index in lab where "..." stands, or -1 */
} ein_op;

typedef struct ein {
    int nops;
    ein_op op[64];
    bool arrow;
    int nout, out[EIN_MAX]; /* output labels (pseudo-labels for ellipsis dims) */
    int out_ell_at;         /* where "..." stands in the output, or -1 */
} ein;

static tn_status parse(const char *eq, int64_t eqn, int64_t nops, ein *e) {
    memset(e, 0, sizeof *e);
    e->out_ell_at = -1;
    int cur = 0;
    ein_op *o = &e->op[0];
    o->ell_at = -1;
    bool in_out = false;
    int nout = 0;
    for (int64_t i = 0; i < eqn; i++) {
        char ch = eq[i];
        if (ch == ' ') continue;
        if (ch == '.') {
            if (i + 2 >= eqn || eq[i + 1] != '.' || eq[i + 2] != '.')
                return tn_error(TN_ERR_RUNTIME, "einsum(): found '.' for operand %d that is not part of any ellipsis", cur);
            if (in_out ? e->out_ell_at >= 0 : o->ell_at >= 0)
                return tn_error(TN_ERR_RUNTIME, in_out ? "einsum(): found '.' for output but an ellipsis (...) was already found"
                                                       : "einsum(): found '.' for operand %d for which an ellipsis was already found", cur);
            if (in_out) e->out_ell_at = nout;
            else o->ell_at = o->nl;
            i += 2;
        } else if (ch == ',') {
            if (in_out) return tn_error(TN_ERR_RUNTIME, "einsum(): invalid subscript given at index %lld in the equation string, subscripts must be in [a-zA-Z]", (long long)i);
            if (++cur >= 64) return tn_error(TN_ERR_RUNTIME, "einsum(): more operands were provided than specified in the equation");
            o = &e->op[cur];
            o->ell_at = -1;
        } else if (ch == '-') {
            if (in_out || i + 1 >= eqn || eq[i + 1] != '>')
                return tn_error(TN_ERR_RUNTIME, "einsum(): invalid subscript given at index %lld in the equation string, subscripts must be in [a-zA-Z]", (long long)i);
            in_out = true;
            e->arrow = true;
            i++;
        } else {
            int l = label_of(ch);
            if (l < 0)
                return tn_error(TN_ERR_RUNTIME, "einsum(): invalid subscript given at index %lld in the equation string, subscripts must be in [a-zA-Z]", (long long)i);
            if (in_out) {
                if (nout >= EIN_LABELS) return tn_error(TN_ERR_RUNTIME, "einsum(): too many output subscripts");
                e->out[nout++] = l;
            } else {
                if (o->nl >= TN_MAX_DIMS + EIN_LABELS) return tn_error(TN_ERR_RUNTIME, "einsum(): too many subscripts for operand %d", cur);
                o->lab[o->nl++] = l;
            }
        }
    }
    e->nops = cur + 1;
    e->nout = nout;
    if (e->nops > nops) return tn_error(TN_ERR_RUNTIME, "einsum(): more operands were provided than specified in the equation");
    if (e->nops < nops) return tn_error(TN_ERR_RUNTIME, "einsum(): fewer operands were provided than specified in the equation");
    return TN_OK;
}

/* One operand in the common layout: ndim == L, dim p holding label order[p] (size 1 where
 * the operand lacks it); has[p] says whether it carries the label. */
typedef struct ein_t {
    tn_tensor *t;
    bool has[EIN_MAX];
} ein_t;

static tn_tensor *sum_dims(tn_cx *c, tn_tensor *t, const int64_t *dims, int n) {
    if (n == 0) return t;
    return tn_cx_call(c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(t), tn_value_intlist(dims, n), TN_B(true), TN_NONE));
}

/* Contracts a with b (both in the layout of L dims), summing the dims of `drop`. */
static ein_t pair(tn_cx *c, ein_t a, ein_t b, const bool *drop, int L) {
    ein_t r = {0};
    /* dims summed that one side lacks are summed on the other side first */
    int64_t sa[EIN_MAX], sb[EIN_MAX];
    int nsa = 0, nsb = 0;
    for (int p = 0; p < L; p++) {
        if (!drop[p]) continue;
        if (a.has[p] && !b.has[p]) sa[nsa++] = p;
        else if (b.has[p] && !a.has[p]) sb[nsb++] = p;
    }
    tn_tensor *ta = sum_dims(c, a.t, sa, nsa), *tb = sum_dims(c, b.t, sb, nsb);
    if (c->st != TN_OK) return r;
    for (int i = 0; i < nsa; i++) a.has[sa[i]] = false;
    for (int i = 0; i < nsb; i++) b.has[sb[i]] = false;
    int64_t batch[EIN_MAX], lo[EIN_MAX], ro[EIN_MAX], sum[EIN_MAX], ones[EIN_MAX];
    int nb = 0, nlo = 0, nro = 0, ns = 0, n1 = 0;
    int64_t B = 1, M = 1, N = 1, K = 1;
    for (int p = 0; p < L; p++) {
        int64_t s1 = ta->sizes[p], s2 = tb->sizes[p];
        if (a.has[p] && b.has[p]) {
            int64_t s = s1 == 1 ? s2 : s1;
            if (drop[p]) { sum[ns++] = p; K *= s; }
            else { batch[nb++] = p; B *= s; }
        } else if (a.has[p]) { lo[nlo++] = p; M *= s1; }
        else if (b.has[p]) { ro[nro++] = p; N *= s2; }
        else ones[n1++] = p;
        r.has[p] = (a.has[p] || b.has[p]) && !drop[p];
    }
    /* a as (batch, left-only, summed, the rest), b as (batch, summed, right-only, the rest) */
    int64_t pa[EIN_MAX], pb[EIN_MAX];
    int k = 0;
    for (int i = 0; i < nb; i++) pa[k++] = batch[i];
    for (int i = 0; i < nlo; i++) pa[k++] = lo[i];
    for (int i = 0; i < ns; i++) pa[k++] = sum[i];
    for (int i = 0; i < nro; i++) pa[k++] = ro[i];
    for (int i = 0; i < n1; i++) pa[k++] = ones[i];
    k = 0;
    for (int i = 0; i < nb; i++) pb[k++] = batch[i];
    for (int i = 0; i < ns; i++) pb[k++] = sum[i];
    for (int i = 0; i < nro; i++) pb[k++] = ro[i];
    for (int i = 0; i < nlo; i++) pb[k++] = lo[i];
    for (int i = 0; i < n1; i++) pb[k++] = ones[i];
    /* a broadcast batch or summed dim of size 1 on one side is expanded to the other's */
    int64_t ea[EIN_MAX], eb[EIN_MAX];
    for (int p = 0; p < L; p++) {
        bool both = a.has[p] && b.has[p];
        int64_t s = ta->sizes[p] == 1 ? tb->sizes[p] : ta->sizes[p];
        ea[p] = both ? s : ta->sizes[p];
        eb[p] = both ? s : tb->sizes[p];
    }
    tn_tensor *xa = tn_cx_call(c, TN_OP_expand, TN_ARGS(TN_T(ta), tn_value_intlist(ea, L), TN_B(false)));
    tn_tensor *xb = tn_cx_call(c, TN_OP_expand, TN_ARGS(TN_T(tb), tn_value_intlist(eb, L), TN_B(false)));
    xa = tn_cx_call(c, TN_OP_permute, TN_ARGS(TN_T(xa), tn_value_intlist(pa, L)));
    xb = tn_cx_call(c, TN_OP_permute, TN_ARGS(TN_T(xb), tn_value_intlist(pb, L)));
    int64_t s3a[3] = {B, M, K}, s3b[3] = {B, K, N};
    xa = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(xa), tn_value_intlist(s3a, 3)));
    xb = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(xb), tn_value_intlist(s3b, 3)));
    tn_tensor *m = tn_cx_call(c, TN_OP_bmm, TN_ARGS(TN_T(xa), TN_T(xb)));
    if (c->st != TN_OK) return r;
    /* (B, M, N) back to (batch..., left-only..., right-only...), then to the layout */
    int64_t rs[EIN_MAX], order[EIN_MAX];
    int nr = 0;
    for (int i = 0; i < nb; i++) { order[nr] = batch[i]; rs[nr++] = ea[batch[i]]; }
    for (int i = 0; i < nlo; i++) { order[nr] = lo[i]; rs[nr++] = ea[lo[i]]; }
    for (int i = 0; i < nro; i++) { order[nr] = ro[i]; rs[nr++] = eb[ro[i]]; }
    m = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(m), tn_value_intlist(rs, nr)));
    int64_t inv[EIN_MAX], fin[EIN_MAX];
    int q = 0;
    for (int p = 0; p < L; p++)
        for (int i = 0; i < nr; i++)
            if (order[i] == p) inv[q++] = i;
    m = tn_cx_call(c, TN_OP_permute, TN_ARGS(TN_T(m), tn_value_intlist(inv, nr)));
    for (int p = 0; p < L; p++) {
        fin[p] = 1;
        for (int i = 0; i < nr; i++)
            if (order[i] == p) fin[p] = rs[i];
    }
    r.t = tn_cx_call(c, TN_OP_reshape, TN_ARGS(TN_T(m), tn_value_intlist(fin, L)));
    return r;
}

/* aten::einsum(equation, tensors, *, path=None) */
tn_status tn_op_einsum(const tn_value *args, tn_value *rets) {
    const char *eq = args[0].u.s.data;
    int64_t eqn = args[0].u.s.n, nops = args[1].u.tlist.n;
    tn_tensor *const *ts = args[1].u.tlist.data;
    if (nops == 0) return tn_error(TN_ERR_RUNTIME, "einsum(): must provide at least one operand");
    ein e;
    TN_TRY(parse(eq, eqn, nops, &e));
    /* the ellipsis covers the dims not labelled; the widest operand's count is global */
    int ell = 0, ell_of[64];
    for (int i = 0; i < e.nops; i++) {
        ein_op *o = &e.op[i];
        int nd = ts[i]->ndim;
        if (o->ell_at >= 0) {
            if (o->nl > nd)
                return tn_error(TN_ERR_RUNTIME, "einsum(): the number of subscripts in the equation (%d) is more than the number of dimensions (%d) for operand %d", o->nl, nd, i);
            ell_of[i] = nd - o->nl;
        } else {
            if (o->nl != nd)
                return tn_error(TN_ERR_RUNTIME, "einsum(): the number of subscripts in the equation (%d) does not match the number of dimensions (%d) for operand %d and no ellipsis was given", o->nl, nd, i);
            ell_of[i] = 0;
        }
        if (ell_of[i] > ell) ell = ell_of[i];
        if (i > 0 && ts[i]->dtype != ts[0]->dtype)
            return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[ts[0]->dtype].c10_name, tn_dtype_infos[ts[i]->dtype].c10_name);
    }
    /* every operand's labels per dim, the ellipsis dims as pseudo-labels (right-aligned) */
    int dl[64][TN_MAX_DIMS];
    int count[EIN_MAX] = {0};
    for (int i = 0; i < e.nops; i++) {
        ein_op *o = &e.op[i];
        int k = 0;
        for (int j = 0; j <= o->nl; j++) {
            if (j == o->ell_at)
                for (int x = 0; x < ell_of[i]; x++) dl[i][k++] = EIN_LABELS + ell - ell_of[i] + x;
            if (j < o->nl) dl[i][k++] = o->lab[j];
        }
        for (int j = 0; j < o->nl; j++) count[o->lab[j]]++;
    }
    /* the output: given, or the ellipsis dims then the labels used once, in label order */
    int out[EIN_MAX], nout = 0;
    bool in_out[EIN_MAX] = {0};
    if (e.arrow) {
        for (int j = 0; j <= e.nout; j++) {
            if (j == e.out_ell_at)
                for (int x = 0; x < ell; x++) out[nout++] = EIN_LABELS + x;
            if (j < e.nout) {
                int l = e.out[j];
                if (in_out[l]) return tn_error(TN_ERR_RUNTIME, "einsum(): output subscript %c appears more than once in the output", char_of(l));
                if (!count[l]) return tn_error(TN_ERR_RUNTIME, "einsum(): output subscript %c does not appear in the equation for any input operand", char_of(l));
                in_out[l] = true;
                out[nout++] = l;
            }
        }
    } else {
        for (int x = 0; x < ell; x++) out[nout++] = EIN_LABELS + x;
        for (int l = 0; l < EIN_LABELS; l++)
            if (count[l] == 1) out[nout++] = l;
    }
    for (int j = 0; j < nout; j++) in_out[out[j]] = true;
    /* the layout: output labels, then the others in label order */
    int pos[EIN_MAX], L = 0;
    for (int l = 0; l < EIN_MAX; l++) pos[l] = -1;
    for (int j = 0; j < nout; j++) pos[out[j]] = L++;
    for (int l = 0; l < EIN_MAX; l++)
        if (pos[l] < 0 && (l < EIN_LABELS ? count[l] > 0 : l - EIN_LABELS < ell)) pos[l] = L++;
    /* sizes must broadcast per label */
    int64_t lsize[EIN_MAX];
    for (int p = 0; p < EIN_MAX; p++) lsize[p] = 1;
    for (int i = 0; i < e.nops; i++)
        for (int k = 0; k < ts[i]->ndim; k++) {
            int l = dl[i][k];
            int64_t s = ts[i]->sizes[k];
            for (int k2 = 0; k2 < k; k2++)
                if (dl[i][k2] == l && l < EIN_LABELS && ts[i]->sizes[k2] != s)
                    return tn_error(TN_ERR_RUNTIME, "einsum(): subscript %c is repeated for operand %d but the sizes don't match, %lld != %lld",
                                    char_of(l), i, (long long)ts[i]->sizes[k2], (long long)s);
            if (s != 1 && lsize[l] != 1 && lsize[l] != s)
                return tn_error(TN_ERR_RUNTIME, "einsum(): operands do not broadcast with remapped shapes (original->remapped)");
            if (s != 1) lsize[l] = s;
        }
    tn_cx c = {0};
    ein_t cur[64];
    for (int i = 0; i < e.nops; i++) {
        tn_tensor *t = ts[i];
        int labs[TN_MAX_DIMS], nd = t->ndim;
        memcpy(labs, dl[i], sizeof(int) * (size_t)nd);
        /* repeated labels: the diagonal of the first two occurrences, moved to the end */
        for (bool again = true; again && c.st == TN_OK;) {
            again = false;
            for (int k = 0; k < nd && !again; k++)
                for (int k2 = k + 1; k2 < nd && !again; k2++)
                    if (labs[k] == labs[k2]) {
                        int l = labs[k];
                        t = tn_cx_call(&c, TN_OP_diagonal, TN_ARGS(TN_T(t), TN_I(0), TN_I(k), TN_I(k2)));
                        int m = 0;
                        for (int x = 0; x < nd; x++)
                            if (x != k && x != k2) labs[m++] = labs[x];
                        labs[m++] = l;
                        nd = m;
                        again = true;
                    }
        }
        if (c.st != TN_OK) break;
        /* permute the labels into layout order, then reshape with 1 for the missing */
        int64_t perm[TN_MAX_DIMS], shape[EIN_MAX];
        int np = 0;
        memset(cur[i].has, 0, sizeof cur[i].has);
        for (int p = 0; p < L; p++) {
            shape[p] = 1;
            for (int k = 0; k < nd; k++)
                if (pos[labs[k]] == p) {
                    perm[np++] = k;
                    shape[p] = t->sizes[k];
                    cur[i].has[p] = true;
                }
        }
        t = tn_cx_call(&c, TN_OP_permute, TN_ARGS(TN_T(t), tn_value_intlist(perm, np)));
        cur[i].t = tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(t), tn_value_intlist(shape, L)));
    }
    /* contract: left to right, or along the path (pairs of positions in the live list,
     * the result appended at the end) */
    int live = e.nops;
    const tn_value *path = &args[2];
    int64_t npath = path->tag == TN_V_INTLIST ? path->u.ilist.n : 0;
    int64_t step = 0;
    while (live > 1 && c.st == TN_OK) {
        int x = 0, y = 1;
        if (npath) {
            if (2 * step + 1 >= npath) break;
            x = (int)path->u.ilist.data[2 * step];
            y = (int)path->u.ilist.data[2 * step + 1];
            if (x > y) { int tmp = x; x = y; y = tmp; }
            if (x < 0 || y >= live || x == y) {
                tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "einsum(): invalid contraction path"));
                break;
            }
            step++;
        }
        bool drop[EIN_MAX];
        for (int p = 0; p < L; p++) {
            bool later = false;
            for (int j = 0; j < live; j++)
                if (j != x && j != y && cur[j].has[p]) later = true;
            drop[p] = p >= nout && !later;
        }
        ein_t r = pair(&c, cur[x], cur[y], drop, L);
        if (c.st != TN_OK) break;
        ein_t rest[64];
        int nr = 0;
        for (int j = 0; j < live; j++)
            if (j != x && j != y) rest[nr++] = cur[j];
        if (npath) rest[nr++] = r;
        else {
            memmove(&rest[1], &rest[0], sizeof(ein_t) * (size_t)nr);
            rest[0] = r;
            nr++;
        }
        memcpy(cur, rest, sizeof(ein_t) * (size_t)nr);
        live = nr;
    }
    /* whatever is not output is summed, then the output dims are what remains */
    tn_tensor *res = NULL;
    if (c.st == TN_OK) {
        /* only the dims an operand still has are summed (as upstream, a sum: integers widen to
         * int64); the dims a contraction consumed are size 1 and are dropped by a reshape, so a
         * product of int32 operands stays int32 as upstream's bmm leaves it */
        int64_t sd[EIN_MAX], keep[EIN_MAX];
        int nsd = 0;
        for (int p = nout; p < L; p++)
            if (cur[0].has[p]) sd[nsd++] = p;
        res = cur[0].t;
        if (nsd) res = tn_cx_call(&c, TN_OP_sum_dim_IntList, TN_ARGS(TN_T(res), tn_value_intlist(sd, nsd), TN_B(true), TN_NONE));
        if (res && L > nout) {
            memcpy(keep, res->sizes, sizeof(int64_t) * (size_t)nout);
            res = tn_cx_call(&c, TN_OP_reshape, TN_ARGS(TN_T(res), tn_value_intlist(keep, nout)));
        }
        /* an output dim every operand had at size 1 while the label is wider elsewhere */
        int64_t os[EIN_MAX];
        bool widen = false;
        for (int j = 0; res && j < nout; j++) {
            os[j] = res->sizes[j] == 1 ? lsize[out[j]] : res->sizes[j];
            widen |= os[j] != res->sizes[j];
        }
        if (res && widen) res = tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(res), tn_value_intlist(os, nout), TN_B(false)));
    }
    return tn_cx_finish(&c, res, rets);
}

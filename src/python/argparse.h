/* argparse.h — upstream's PythonArgParser rules in C: picks the first overload (in
 * upstream's order) whose signature accepts the call, then converts the matched Python
 * objects into tn_value arguments in schema order for the door.
 *
 * Descriptors come from the generated tables (build/gen/pysig_generated.h). The common
 * path allocates nothing on the heap: matched objects go into a fixed array and lists
 * into a per-call arena (tn_arena) that spills to malloc only for very long lists. */
#ifndef TN_ARGPARSE_H
#define TN_ARGPARSE_H

#include "binding.h"
#include "pysig_generated.h"

#define TN_ARG_MAX 64         /* schema arguments or python parameters of one overload */
#define TN_OVERLOADED_MAX 16  /* distinct __torch_function__ types in one call */

/* Objects with their own __torch_function__ seen while matching, in calling precedence
 * (subclasses before their bases), borrowed. */
typedef struct tn_overloaded {
    PyObject *items[TN_OVERLOADED_MAX];
    int n;
} tn_overloaded;

/* The result of matching one call: which signature, and the object bound to each of its
 * parameters (NULL for absent or None). A parameter that took all positional arguments
 * (x.view(2, 3)) has varargs set and dst pointing at the first of them. */
typedef struct tn_match {
    int sig;                       /* index into tn_pysigs */
    PyObject *dst[TN_ARG_MAX];
    PyObject *const *varargs;      /* positional args bound to parameter 0, or NULL */
    Py_ssize_t nvarargs;
    tn_overloaded overloaded;
} tn_match;

/* Per-call scratch for converted lists and wrapped-number tensors; released by
 * tn_arena_release after the call. */
typedef struct tn_arena {
    int64_t ints[512];
    int nints;
    double dbls[64];
    int ndbls;
    bool bools[64];
    int nbools;
    tn_tensor *tens[256];
    int ntens;
    tn_value vals[64];
    int nvals;
    tn_tensor *owned[32];          /* references to drop (wrapped numbers) */
    int nowned;
    void *heap[8];                 /* spilled blocks to free */
    int nheap;
} tn_arena;

void tn_arena_init(tn_arena *a);
void tn_arena_release(tn_arena *a);

/* Matches a call against f's signatures (non-deprecated first, as upstream). `self` is
 * the bound tensor for methods, else NULL. Fastcall layout: args[0..nargs) positional,
 * then one value per name in kwnames. Returns 0 and fills m, or -1 with TypeError set
 * in upstream's wording ("add() received an invalid combination of arguments - ..."). */
int tn_argparse_match(const tn_pyfunc *f, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, tn_match *m);

/* Converts a match into the door's arguments for the base (use_out = 0) or out= overload
 * (use_out = 1) of the matched signature: out[k] for every schema argument k of that op.
 * Returns the tn_op_id, or -1 with an exception set. */
int tn_argparse_convert(const tn_match *m, int use_out, PyObject *self, tn_value *out, tn_arena *a);

/* Schema-based parsing for torch.ops.aten.<op>.<overload>(...): positional arguments in
 * schema order (kwarg-only ones by name), defaults from the schema. Returns 0 or -1 with
 * an exception set; overloaded receives objects with __torch_function__. */
int tn_argparse_schema(int op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       tn_value *out, tn_arena *a, tn_overloaded *overloaded);

/* Whether the torch-function machinery must see this object (upstream's
 * check_has_torch_function with ignore_mode): a non-Tensor with __torch_function__ or a
 * Tensor subclass whose __torch_function__ is not the disabled implementation. */
int tn_has_torch_function(PyObject *obj);
/* Adds obj to the overloaded list by upstream's precedence rule (NEP-18 order). */
void tn_overloaded_append(tn_overloaded *ov, PyObject *obj);

/* Upstream's Py_TYPE(o)->tp_name for error messages ("Tensor", "numpy.float64"). */
const char *tn_py_typename(PyObject *o, char *buf, size_t buflen);
/* A Python number (bool, int, float, complex, NumPy scalar) as a 0-dim "wrapped number"
 * tensor (upstream's scalar_to_tensor, marked for type promotion): a new reference in *out;
 * -1 with a Python exception set otherwise. */
int tn_py_number_tensor(PyObject *o, tn_tensor **out);
/* Whether o is a number upstream binds where a Tensor is expected for the operators that take
 * numbers as tensors (THPUtils_checkScalar: int, bool, float, complex, numpy scalars). */
bool tn_py_is_number(PyObject *o);

#endif

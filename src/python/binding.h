/* binding.h — the Python binding layer's internal interface. The binding (src/python/)
 * is the only code that includes Python.h; it turns Python objects into core values and
 * core statuses into the upstream exception classes.
 *
 * Built against the CPython limited API (Py_LIMITED_API = 3.11). */
#ifndef TN_BINDING_H
#define TN_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core/tensor.h"
#include "ops/value.h"

/* ---- tensors --------------------------------------------------------------------- */
/* Python object layout of TensorBase instances (subclasses add __dict__/__weakref__). */
typedef struct {
    PyObject_HEAD
    tn_tensor *t;    /* owned reference */
} TNTensorObject;

int tn_py_is_tensor(PyObject *o);           /* instance of TensorBase (incl. subclasses) */
tn_tensor *tn_py_tensor_get(PyObject *o);   /* borrowed; o must satisfy tn_py_is_tensor */
/* New reference to the Python object for t, stealing the caller's reference to t.
 * Returns t's existing Python object when it has one (identity is preserved for
 * in-place results), else a new torch.Tensor. NULL with an exception on failure. */
PyObject *tn_py_tensor_wrap(tn_tensor *t);

/* ---- dtype / layout / memory_format / device / generator objects ------------------- */
int tn_py_is_dtype(PyObject *o);
tn_dtype tn_py_dtype_get(PyObject *o);
PyObject *tn_py_dtype_object(tn_dtype d);   /* borrowed */
PyObject *tn_py_dtype_normalize(PyObject *o); /* int/float/bool/complex type -> torch.dtype (borrowed) */
int tn_py_is_layout(PyObject *o);
int tn_py_layout_get(PyObject *o);          /* 0 strided, 1 sparse_coo, ... (c10::Layout) */
PyObject *tn_py_layout_object(int layout);  /* borrowed */
int tn_py_is_memory_format(PyObject *o);
int tn_py_memory_format_get(PyObject *o);   /* TN_V_MEMFMT numbering */
PyObject *tn_py_memory_format_object(int m);/* borrowed */
int tn_py_is_device(PyObject *o);
/* Accepts torch.device, str ("cpu", "cuda:1", "meta") or int (an index: cuda:N upstream).
 * Returns 0 on success, -1 with an exception set. */
int tn_py_parse_device(PyObject *o, tn_device *out);
PyObject *tn_py_device_new(tn_device d);    /* new reference */
int tn_py_is_generator(PyObject *o);
void *tn_py_generator_get(PyObject *o);     /* struct tn_generator * */
PyObject *tn_py_default_generator(void);    /* borrowed: torch.default_generator */

/* ---- errors ---------------------------------------------------------------------- */
/* Sets the Python exception for a failed core status (message from the error slot) and
 * returns NULL, so callers can `return tn_py_raise(st);`. */
PyObject *tn_py_raise(tn_status st);

/* ---- module state ---------------------------------------------------------------- */
/* The torch._C module object (borrowed; valid after PyInit__C). */
PyObject *tn_py_module(void);
/* torch.Tensor once _initExtension ran, else TensorBase (borrowed). */
PyObject *tn_py_tensor_class(void);

/* ---- torch.Size ----------------------------------------------------------------- */
PyObject *tn_py_size_new(int ndim, const int64_t *sizes); /* new reference */

/* ---- per-file init hooks, called by PyInit__C in order ---------------------------- */
int tn_py_init_dtype(PyObject *m);
int tn_py_init_device(PyObject *m);
int tn_py_init_size(PyObject *m);
int tn_py_init_tensor(PyObject *m);
int tn_py_init_state(PyObject *m);
int tn_py_init_tensor_new(PyObject *m);
int tn_py_init_generator(PyObject *m);
int tn_py_init_storage(PyObject *m);
int tn_py_init_graph(PyObject *m);
int tn_py_init_autograd(PyObject *m);
int tn_py_init_dist(PyObject *m); /* torch._C._tn_dist (dist.c) */
int tn_py_init_functorch(PyObject *m); /* torch._C._tn_vmap_* (functorch.c) */
/* Storages (storage.c) */
int tn_py_is_storage(PyObject *o);
tn_storage *tn_py_storage_get(PyObject *o);
PyObject *tn_py_storage_wrap(tn_storage *s); /* steals s */
PyObject *tn_py_tensor_untyped_storage(PyObject *self, PyObject *u);
PyObject *tn_py_tensor_set_(PyObject *self, PyObject *args, PyObject *kw);
/* torch.tensor / as_tensor / from_numpy / frombuffer onto `target`. */
int tn_py_add_manual_functions(PyObject *target);
/* Tensor.__getitem__ / __setitem__ (indexing.c) */
PyObject *tn_py_tensor_getitem(PyObject *self, PyObject *index);
int tn_py_tensor_setitem(PyObject *self, PyObject *index, PyObject *value);
/* Hand-written Tensor methods of tensor_methods.c (to, type, float, contiguous, ...). */
PyMethodDef *tn_py_tensor_manual_method_defs(void);
/* torch._C._nn._parse_to and other hand-written _nn functions (tensor_methods.c). */
int tn_py_add_nn_manual(PyObject *module);
/* Tensor.numpy() */
PyObject *tn_py_tensor_numpy(PyObject *self, PyObject *args, PyObject *kw);
/* Whether grad mode is on in this thread (torch.is_grad_enabled()). */
int tn_py_grad_enabled(void);
/* _initExtension: publishes dtype/layout/memory_format/qscheme objects into torch. */
int tn_py_publish_enums(PyObject *torch_module);

#endif

/* functions.h — the generated operator callables (torch.*, Tensor methods, torch._C._nn
 * and friends, torch.ops support) and the torch-function mode stack they consult. */
#ifndef TN_FUNCTIONS_H
#define TN_FUNCTIONS_H

#include "binding.h"

/* Adds _VariableFunctions(Class), _nn/_fft/_linalg/_special/_nested/_sparse submodules,
 * _return_types, _tn_op_lookup and _tn_call_op to torch._C. Returns 0 or -1. */
int tn_py_add_functions(PyObject *module);
/* The generated Tensor methods (NULL-terminated), for the lead's TensorBase spec. */
PyMethodDef *tn_py_tensor_method_defs(void);
/* Adds the torch-function API (mode stack push/pop/len/get, DisableTorchFunction,
 * DisableTorchFunctionSubclass, _disabled_torch_function_impl, ...) to torch._C. */
int tn_py_add_torch_function_api(PyObject *module);

/* ---- torch-function state (functions_tf.c) ------------------------------------------ */
/* Mode stack non-empty and not fully disabled (upstream torch_function_mode_enabled). */
int tn_tf_mode_enabled(void);
/* Subclass __torch_function__ handling on (upstream torch_function_enabled). */
int tn_tf_subclass_enabled(void);
/* torch._C._disabled_torch_function_impl (borrowed; NULL before init). */
PyObject *tn_tf_disabled_impl(void);
/* Runs upstream's handle_torch_function_no_python_arg_parser: modes first, then each
 * overloaded argument's __torch_function__ until one returns something other than
 * NotImplemented. `public_fn` is the public API object; args/kwargs as the user gave them
 * (args includes self for methods). Returns a new reference or NULL with an exception. */
PyObject *tn_tf_dispatch(const PyObject *const *overloaded, int noverloaded, PyObject *public_fn,
                         PyObject *args, PyObject *kwargs, const char *module_name,
                         const char *func_name);

#endif

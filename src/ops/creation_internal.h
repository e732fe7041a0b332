/* creation_internal.h — helpers shared by the factory operators (creation_*.c): reading
 * the (dtype, layout, device, pin_memory) option block, size lists, Scalar conversion with
 * upstream's overflow checks, allocation in a memory format, and the generic out= path.
 * Private to the creation family. Plain C11; no Python. */
#ifndef TN_OPS_CREATION_INTERNAL_H
#define TN_OPS_CREATION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/dispatch.h"

/* Memory formats as TN_V_MEMFMT numbers them; TN_MEMFMT_NONE is an absent argument. */
enum { TN_MEMFMT_NONE = -1, TN_MEMFMT_CONTIGUOUS = 0, TN_MEMFMT_PRESERVE = 1, TN_MEMFMT_CHANNELS_LAST = 2,
       TN_MEMFMT_CHANNELS_LAST_3D = 3 };

typedef struct tn_factory_opts {
    tn_dtype dtype;   /* TN_DTYPE_UNDEFINED when the caller passed None */
    tn_device device;
} tn_factory_opts;

/* Reads the four option values starting at `opts` (dtype, layout, device, pin_memory).
 * Refuses non-strided layouts and devices other than cpu/meta by name, and pin_memory=True
 * with upstream's message. device defaults to `dflt_device`; dtype stays UNDEFINED when
 * absent so the op can apply its own inference rule. */
tn_status tn_factory_opts_read(const tn_value *opts, tn_device dflt_device, tn_factory_opts *out);

/* A memory-format argument as a number (TN_MEMFMT_NONE when absent). */
int tn_factory_memfmt(const tn_value *v);

/* Copies an int list size argument into sizes (<= TN_MAX_DIMS entries), refusing negative
 * entries with upstream's "Trying to create tensor with negative dimension" message. */
tn_status tn_factory_sizes(const tn_value *v, int *ndim, int64_t *sizes);


/* Upstream's dtype for a Python number: bool, int64, the default float or the default
 * complex dtype. */
tn_dtype tn_factory_scalar_dtype(const tn_value *v);
/* The complex dtype paired with the default float dtype (complex128 for float64). */
tn_dtype tn_factory_default_complex(void);

/* Uninitialised (or zeroed) tensor of sizes in a memory format: contiguous, channels_last
 * (rank 4) or channels_last_3d (rank 5); preserve is refused as upstream's empty does. */
tn_status tn_factory_empty(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device, int memfmt,
                           bool zero, tn_tensor **out);

/* Upstream's suggest_memory_format: channels_last(_3d) when t's strides look like it. */
int tn_factory_suggest_memfmt(const tn_tensor *t);

/* empty_like's layout rule for `self` in `memfmt` (preserve/None: self's strides when it is
 * non-overlapping and dense, else the format its strides suggest). */
tn_status tn_factory_empty_like(const tn_tensor *self, tn_dtype dtype, tn_device device, int memfmt,
                                tn_tensor **out);

/* Sets every element of t to the Scalar v (checked conversion); no-op on meta tensors. */
tn_status tn_factory_fill(tn_tensor *t, const tn_value *v);
/* The element bytes upstream's fill_ writes into a tensor of dt with numel elements:
 * value.to<scalar_t>(), checked; a one-element Half or BFloat16 tensor takes its
 * scalar_fill fast path, through double then float, so a value beyond the type becomes
 * inf there instead of refusing (a complex value still needs a zero imaginary part). */
tn_status tn_fill_value_bytes(const tn_value *v, tn_dtype dt, int64_t numel, unsigned char out[16]);

/* out= for a factory: `res` (a new result, consumed) is moved into `out` (resized when its
 * shape differs, then copied); rets[0] receives a new reference to out. */
tn_status tn_factory_into_out(tn_tensor *res, tn_tensor *out, tn_value *rets);
/* The same for the 1-D sequence factories (arange, range, linspace, logspace): out is
 * resized only when its element count differs, and otherwise keeps its shape and receives
 * the values in row-major order (upstream's `if (result.numel() != size) result.resize_`). */
tn_status tn_factory_into_seq_out(tn_tensor *res, tn_tensor *out, tn_value *rets);

/* A value carrying out's dtype / device, for building functional arguments of out=. */
tn_value tn_factory_dtype_value(tn_dtype d);
tn_value tn_factory_device_value(tn_device d);
static inline tn_value tn_factory_none(void) { tn_value v = {.tag = TN_V_NONE}; return v; }

#endif

/* status.h — how the C core reports failure: a status code plus a message in a
 * thread-local slot. The binding maps each code to the upstream Python exception class.
 * The core never aborts on user input; asserts guard internal invariants only. */
#ifndef TN_STATUS_H
#define TN_STATUS_H

typedef enum tn_status {
    TN_OK = 0,
    TN_ERR_RUNTIME,         /* RuntimeError */
    TN_ERR_INDEX,           /* IndexError */
    TN_ERR_TYPE,            /* TypeError */
    TN_ERR_VALUE,           /* ValueError */
    TN_ERR_NOT_IMPLEMENTED, /* NotImplementedError */
    TN_ERR_NO_MEMORY,       /* MemoryError (RuntimeError upstream for huge allocations) */
    TN_ERR_PYTHON,          /* a Python exception is already set (binding use only) */
    TN_ERR_LINALG,          /* torch.linalg.LinAlgError (torch._C._LinAlgError, a RuntimeError) */
} tn_status;

/* Sets the thread's error message (printf format) and returns `code`, so a failing
 * function can `return tn_error(TN_ERR_INDEX, "...", ...)`. */
tn_status tn_error(tn_status code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message of the last error on this thread ("" if none). */
const char *tn_error_message(void);

/* Upstream's TORCH_WARN_ONCE: emits `msg` once per process through the hook the binding
 * installs (a Python UserWarning); without a hook (plain C) nothing is emitted. `once`
 * is the call site's flag. Only on the thread that entered the door. */
void tn_warn_once(int *once, const char *msg);
extern void (*tn_warn_hook)(const char *msg);

#define TN_TRY(expr)                      \
    do {                                  \
        tn_status tn_try_st_ = (expr);    \
        if (tn_try_st_ != TN_OK) return tn_try_st_; \
    } while (0)

#endif

/* status.c — the thread-local error slot behind tn_error(). */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char tn_error_buf[1024];

tn_status tn_error(tn_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tn_error_buf, sizeof tn_error_buf, fmt, ap);
    va_end(ap);
    return code;
}

const char *tn_error_message(void) { return tn_error_buf; }

void (*tn_warn_hook)(const char *msg);

void tn_warn_once(int *once, const char *msg) {
    if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED)) return;
    if (tn_warn_hook) tn_warn_hook(msg);
}

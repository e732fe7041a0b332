/* defaults.c — process-wide defaults upstream keeps in c10: the default floating dtype
 * (torch.get_default_dtype / set_default_dtype), which type promotion of Python floats
 * and factory functions read. */
#include "core/tensor.h"

#include <stdatomic.h>

/* Atomic so pool threads reading it while Python sets it never see a torn value. */
static _Atomic int tn_default_dtype_value = TN_DTYPE_FLOAT32;

tn_dtype tn_default_dtype(void) { return (tn_dtype)atomic_load_explicit(&tn_default_dtype_value, memory_order_relaxed); }

void tn_set_default_dtype(tn_dtype d) { atomic_store_explicit(&tn_default_dtype_value, (int)d, memory_order_relaxed); }

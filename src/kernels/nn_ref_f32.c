/* nn_ref_f32.c — the float instances of the reference nn kernels (bodies in nn_ref.inc). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn.h"
#include "kernels/nn_pool_values.h"

#define T float
#define FN(name) f32_##name##__scalar
#include "kernels/nn_ref.inc"

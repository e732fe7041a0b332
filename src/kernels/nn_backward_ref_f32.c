/* nn_backward_ref_f32.c — the float instances of the reference nn backward kernels (bodies in
 * nn_backward_ref.inc). */
#include <math.h>
#include <string.h>

#include "kernels/nn.h"
#include "kernels/nn_backward.h"

#define T float
#define FN(name) f32_##name##__scalar
#include "kernels/nn_backward_ref.inc"

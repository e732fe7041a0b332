/* nn_backward_ref_f64.c — the double instances of the reference nn backward kernels (bodies in
 * nn_backward_ref.inc). */
#include <math.h>
#include <string.h>

#include "kernels/nn.h"
#include "kernels/nn_backward.h"

#define T double
#define FN(name) f64_##name##__scalar
#include "kernels/nn_backward_ref.inc"

/* expf_sleef.h — the constants of exp(x) in float in the form of SLEEF's expf_u10, the
 * function upstream's Vectorized<float>::exp calls on x86-64 (torch.exp, sigmoid, silu,
 * softmax and log_softmax and their gradients), so that ours gives its bits. The form:
 * q = rint(x log2 e) (the product rounded, then rounded to an integer), s = x - q ln 2 in
 * two fused steps (ln 2 split high / low), exp(s) = 1 + (s + s^2 u(s)) with u of degree 5 in
 * Horner form (fused steps), times 2^q rounded once; 0 below TN_EXPF_UNDER, +inf above
 * TN_EXPF_OVER. Written out once per vector vocabulary: ew_vec.inc's v_exp (the elementwise
 * family) and vec8_exp.inc's TN_VEXP_DEF (softmax). */
#ifndef TN_EXPF_SLEEF_H
#define TN_EXPF_SLEEF_H

#define TN_EXPF_LOG2E 1.44269504088896341f
#define TN_EXPF_LN2_HI 0.693145751953125f
#define TN_EXPF_LN2_LO 1.428606765330187045e-06f
#define TN_EXPF_U5 0.000198527617612853646278381f
#define TN_EXPF_U4 0.00139304355252534151077271f
#define TN_EXPF_U3 0.00833336077630519866943359f
#define TN_EXPF_U2 0.0416664853692054748535156f
#define TN_EXPF_U1 0.166666671633720397949219f
#define TN_EXPF_U0 0.5f
#define TN_EXPF_UNDER (-104.0f)
#define TN_EXPF_OVER 100.0f
/* x is clamped to [UNDER - 1, OVER + 1] before the integer steps (the masks above decide
 * the lanes outside), so q stays within [-152, 146] */
#define TN_EXPF_CLAMP_LO (-105.0f)
#define TN_EXPF_CLAMP_HI 101.0f

#endif

/* linalg_scalar_end.h — ends one instance of linalg_scalar.h's vocabulary (undefines it
 * and LA_COMPLEX), so the next instance can define it afresh. Not guarded. */
#undef LA_COMPLEX
#undef T
#undef R
#undef NPARTS
#undef T_NAN
#undef CONJ
#undef RE
#undef IM
#undef ABS
#undef ABS1
#undef MUL
#undef DIV
#undef LA_CLONES

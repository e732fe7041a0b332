/* views.h — in-place operators on views under autograd (views.c). Plain C11; no Python. */
#ifndef TN_AUTOGRAD_VIEWS_H
#define TN_AUTOGRAD_VIEWS_H

#include "autograd/autograd.h"

/* After the in-place operator recorded as `fn` wrote through `view`: the view's base gets
 * a CopySlices node over its previous history and fn, the view an AsStridedBackward0 node
 * onto the base's new history. The view must have a view base. */
tn_status tn_autograd_rebase(tn_tensor *view, tn_node *fn);
/* Backward of the two node kinds (engine.c calls them). */
tn_status tn_autograd_apply_copy_slices(tn_node *n, tn_tensor **in, tn_tensor **out, bool keep_graph);
tn_status tn_autograd_apply_as_strided(tn_node *n, tn_tensor **in, tn_tensor **out);
/* Frees what a CopySlices / AsStrided node's extra owns (not the extra itself). */
void tn_autograd_free_view_extra(tn_node *n);

#endif

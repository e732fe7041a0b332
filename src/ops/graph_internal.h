/* graph_internal.h — a captured graph's recorded steps, shared by the capture and replay
 * code (graph.c) and the chains replay runs as one step (graph_fuse.c). Not for other
 * files: the rest of the tree goes through graph.h. */
#ifndef TN_GRAPH_INTERNAL_H
#define TN_GRAPH_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops/graph.h"

#define G_MAX_RETS 8

enum { STEP_SKIP = 0, STEP_RERUN = 1, STEP_INTO = 2 };

/* Chains of steps replay runs as one (graph_fuse.c). */
enum { CHAIN_NONE = 0, CHAIN_RMSNORM = 1, CHAIN_ROTARY = 2, CHAIN_SWIGLU = 3, CHAIN_KV_UPDATE = 4 };

typedef struct step {
    tn_op_id op;
    uint8_t kind;
    uint8_t nrets;
    uint8_t fresh;   /* STEP_INTO: bit k set when result k (or its list) gets the copy */
    int8_t group;    /* > 0: first of this many decode-shaped linear steps run as one GEMV region */
    uint8_t covered; /* a group member its leader ran in this replay */
    uint8_t chain;   /* CHAIN_*: first step of a chain replay runs as one step */
    int32_t next;    /* group chain: index of the next member (0: none) */
    int32_t chain_end; /* chain leader: index of the chain's last step */
    struct chain_plan *plan; /* chain leader: what the chain reads and writes (owned) */
    int nargs;
    tn_value *args;  /* owned deep copies: tensors retained, lists duplicated */
    tn_value rets[G_MAX_RETS];
} step;

struct tn_graph {
    step *steps;
    int64_t n, cap;
    double *step_ns; /* per-step time accumulated by profiled replays, or NULL */
    atomic_int busy; /* a replay is running (replay releases the GIL) */
    bool planned;    /* linear groups and chains found (first replay) */
    int64_t direct;  /* steps of the last replay computed straight into their captured result */
    int64_t chained; /* steps of the last replay run inside chains (graph_fuse.c) */
    float *scratch;  /* the chains' scratch (graph_fuse.c), scratch_n floats */
    int64_t scratch_n;
    char *failure; /* NULL while valid */
};

/* Before the chains are found (and before the linear groups, whose links are step
 * indices): moves steps that may run later next to the step that reads their result
 * (graph_fuse.c says which). TN_GRAPH_CHAINS=0 turns it off. */
void tn_graph_reorder_for_chains(tn_graph *g);
/* Finds the chains (at the first replay; TN_GRAPH_CHAINS=0 turns it off): marks each
 * chain's first step and sizes the scratch. A chain is a run of consecutive steps (views
 * between them allowed) whose intermediate results nothing else holds: each intermediate
 * tensor is referenced only by the chain's own steps (its refcount says so: every graph
 * reference retains it), and only it references its storage (no view of it exists). */
void tn_graph_plan_chains(tn_graph *g);
/* Runs the chain led by step i, writing its last step's captured result; false (nothing
 * run) if a tensor it reads or writes changed geometry or memory since planning, or the
 * door would now record its steps for autograd: then the steps run one by one. It touches
 * only the plan and the chain's inputs and output, not the steps' other tensors. */
bool tn_graph_run_chain(tn_graph *g, int64_t i);

#endif

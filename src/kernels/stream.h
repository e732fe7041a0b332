/* stream.h — weight streaming ahead of the products that will read it.
 *
 * A decode step reads every weight once, from memory, in the same order every step, and
 * between two products the calling thread runs Python (the model's code, the small
 * operators) for tens of microseconds while memory sits idle. The stream keeps a trace of
 * the weights the GEMVs read, in order; when a weight comes round again, what followed it
 * last time is the prediction of what comes next. An idle pool worker (the pool's idle
 * hook) then issues prefetches over the predicted weights, up to a window of bytes ahead,
 * while the caller is in Python; the next products find part of their weight in the
 * last-level cache instead of memory.
 *
 * Everything here is a hint. Prefetch instructions never fault, so a predicted weight that
 * has been freed since costs a wasted prefetch, never a crash; the trace holds addresses,
 * not references, and the results of every product are the same with or without it.
 * TN_WEIGHT_PREFETCH=0 (read once) or tn_stream_set_enabled(false) turns it off. */
#ifndef TN_STREAM_H
#define TN_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A product is about to read `bytes` of weight at `p` from memory. Records it in the trace
 * and points the prefetcher at what followed `p` the last time it was read. Weights below
 * TN_STREAM_MIN_BYTES are not traced (they stay in cache between steps anyway). */
#define TN_STREAM_MIN_BYTES (64 * 1024)
void tn_stream_note(const void *p, int64_t bytes);

/* On by default (unless TN_WEIGHT_PREFETCH=0); returns the previous setting. */
bool tn_stream_set_enabled(bool on);
bool tn_stream_enabled(void);

/* Bytes ahead of the consumer the prefetcher may run: a quarter of the last-level cache,
 * at most 8 MiB, at least 1 MiB. */
int64_t tn_stream_window(void);

/* Counters since the last reset (for tests and the benchmark): weights noted, notes that
 * found a prediction, bytes over which prefetches were issued. */
typedef struct { int64_t notes, predicted, prefetched_bytes; } tn_stream_stats;
tn_stream_stats tn_stream_stats_get(void);
void tn_stream_stats_reset(void);

/* The i-th weight predicted to follow the last noted one (i = 0 is the next), or NULL when
 * there is no prediction that far. For tests. */
const void *tn_stream_predicted(int i);

/* The bucket of the address table that p falls in (two addresses per bucket). For tests. */
size_t tn_stream_bucket(const void *p);

/* The pool's idle hook: one bounded piece of prefetch work; returns whether it did any. */
int tn_stream_idle(void);

#endif

/* alloc.h — where large tensor data comes from: page-mapped blocks in size classes, with a
 * bounded cache of freed blocks for reuse.
 *
 * Why not malloc: glibc serves a block below its (dynamic, up to 32 MiB) mmap threshold
 * from its heap, and a training step's mix of megabyte activations, freed in another order
 * than they were made, leaves that heap fragmented: a LoRA step of SmolLM2 kept ~1.5 GB of
 * freed memory resident (docs/PERFORMANCE.md, "Training"). Blocks above the threshold are
 * mapped fresh every time instead, and each of their pages is faulted and cleared by the
 * kernel on first touch (7.5 % of that step's CPU). Here every block of TN_ALLOC_BIG bytes or
 * more is its own mapping, rounded up to a size class (eight per doubling, so at most 1/8
 * of a block is slack, and slack pages are never touched), and a freed block waits in its
 * class's cache for the next request of that class: a loop that allocates the same sizes
 * every step (training, decode) reuses mapped, already-faulted pages. The cache holds at
 * most `cap` bytes (TN_ALLOC_CACHE_MB, default 1024; 0 disables it); beyond that the least
 * recently freed blocks are unmapped. A mapping that fails empties the cache and tries once
 * more.
 *
 * Thread safety: any thread may allocate or free; one mutex guards the cache.
 * Plain C11 + POSIX; no Python. */
#ifndef TN_ALLOC_H
#define TN_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Smallest request served by this allocator; smaller ones use malloc. */
#define TN_ALLOC_BIG ((size_t)1 << 20)

/* A block of at least nbytes (>= TN_ALLOC_BIG), 4096-byte aligned, or NULL when the
 * system refuses. *zeroed tells whether its bytes are known to be zero (a fresh mapping). */
void *tn_big_alloc(size_t nbytes, bool *zeroed);
/* Returns a block of tn_big_alloc(nbytes) to the cache (or to the system). */
void tn_big_free(void *p, size_t nbytes);
/* Unmaps every cached block; returns the bytes released. */
size_t tn_big_empty_cache(void);

typedef struct tn_big_stats {
    int64_t cached;  /* bytes of freed blocks held for reuse */
    int64_t hits;    /* requests served from the cache */
    int64_t maps;    /* requests that mapped a new block */
} tn_big_stats;
tn_big_stats tn_big_stats_get(void);

/* Settles glibc's heap for the blocks below TN_ALLOC_BIG (called once, at module import).
 * glibc's mmap threshold starts at 128 KiB and rises to each freed mapped block's size; its
 * heap gives its top back to the system when a free leaves more than twice that threshold
 * free there. A loop of 128 KiB-1 MiB activations (a CNN training or adaptation step) could
 * then return the same pages and fault them in again every step, depending on the heap's
 * layout: a Tent step at 2 threads took 608 minor faults and 1.6 ms of system time per
 * step (4.7 ms in all, against 2.1 ms) in about one process in three (session 19). The
 * threshold is fixed at glibc's own ceiling for the dynamic one (32 MiB) and the trim
 * threshold at twice that, which the dynamic rule could reach anyway; TN_MALLOC_TUNE=0
 * leaves glibc's defaults. No effect without glibc. */
void tn_alloc_tune_malloc(void);

#endif

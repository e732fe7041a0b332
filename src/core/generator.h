/* generator.h — the CPU random number generator, bit-compatible with upstream's
 * CPUGeneratorImpl: an mt19937 engine (upstream's own variant, seeded from the low 32 bits
 * of a 64-bit seed) plus the cached second Box-Muller sample for float and double.
 *
 * A generator's state serialises to upstream's exact 5056-byte layout, so states saved by
 * upstream (`torch.get_rng_state()`, checkpoints) load here and continue identically.
 *
 * Thread safety: each generator has a mutex. Samplers lock it for a whole fill (as upstream
 * does) with tn_generator_lock/unlock and draw with the *_locked functions in between; the
 * other entry points lock internally. Plain C11; no Python. */
#ifndef TN_GENERATOR_H
#define TN_GENERATOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/tensor.h"

#define TN_MT_N 624
#define TN_MT_M 397
/* Seed of a freshly constructed torch.Generator() (upstream's default_rng_seed_val). */
#define TN_GENERATOR_DEFAULT_SEED UINT64_C(67280421310721)
/* sizeof(upstream CPUGeneratorImplState): the byte length of get_state()/set_state(). */
#define TN_GENERATOR_STATE_BYTES 5056

typedef struct tn_generator {
    pthread_mutex_t mutex;
    /* mt19937 engine (upstream's mt19937_data_pod) */
    uint64_t seed;
    int32_t left;
    bool seeded;
    uint32_t next;
    uint32_t state[TN_MT_N];
    /* Box-Muller caches (std::optional<float/double> upstream) */
    bool has_next_float;
    float next_float;
    bool has_next_double;
    double next_double;
    void *pyobj; /* binding's Generator object, borrowed; binding clears it */
} tn_generator;

/* New generator seeded with `seed` (pass TN_GENERATOR_DEFAULT_SEED for torch.Generator()). */
tn_status tn_generator_new(uint64_t seed, tn_generator **out);
/* Frees a generator made by tn_generator_new/clone (never the default one). */
void tn_generator_free(tn_generator *g);
/* The process-wide default CPU generator, created on first use with a non-deterministic
 * seed as upstream does; never freed. */
tn_generator *tn_generator_default(void);
/* `g` itself, or the default generator when g is NULL (an absent Generator? argument). */
static inline tn_generator *tn_generator_or_default(tn_generator *g) { return g ? g : tn_generator_default(); }

/* manual_seed: reseeds the engine and clears the cached normal samples. */
void tn_generator_set_seed(tn_generator *g, uint64_t seed);
/* The seed last set (initial_seed()). */
uint64_t tn_generator_initial_seed(tn_generator *g);
/* seed(): reseeds from /dev/urandom (time-based fallback) and returns the new seed. */
uint64_t tn_generator_seed(tn_generator *g);
/* A fresh non-deterministic 64-bit value (upstream's getNonDeterministicRandom). */
uint64_t tn_nondeterministic_seed(void);

/* Copies the state into `out` (TN_GENERATOR_STATE_BYTES bytes, upstream's layout). */
void tn_generator_get_state(tn_generator *g, uint8_t *out);
/* Loads a state of `n` bytes; fails with upstream's messages on a wrong size or an
 * invalid engine state, leaving `g` untouched. */
tn_status tn_generator_set_state(tn_generator *g, const uint8_t *bytes, int64_t n);
/* get_state() as a new uint8 CPU tensor of TN_GENERATOR_STATE_BYTES elements. */
tn_status tn_generator_get_state_tensor(tn_generator *g, tn_tensor **out);
/* set_state(tensor): checks it is a contiguous CPU uint8 tensor, then loads it. */
tn_status tn_generator_set_state_tensor(tn_generator *g, const tn_tensor *state);
/* A new generator with the same engine state and caches (Generator.clone_state). */
tn_status tn_generator_clone(tn_generator *g, tn_generator **out);

void tn_generator_lock(tn_generator *g);
void tn_generator_unlock(tn_generator *g);

/* Regenerates the 624-word block (mt19937 "next_state"); internal to the inline draw. */
void tn_generator_twist(tn_generator *g);

/* Next 32 raw bits; the caller holds the lock. */
static inline uint32_t tn_generator_random_locked(tn_generator *g) {
    if (--g->left == 0) tn_generator_twist(g);
    uint32_t y = g->state[g->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}
/* Next 64 raw bits: the first 32-bit draw is the high word (upstream's random64). */
static inline uint64_t tn_generator_random64_locked(tn_generator *g) {
    uint32_t hi = tn_generator_random_locked(g);
    uint32_t lo = tn_generator_random_locked(g);
    return ((uint64_t)hi << 32) | lo;
}
/* Locking convenience wrappers for single draws. */
uint32_t tn_generator_random(tn_generator *g);
uint64_t tn_generator_random64(tn_generator *g);

#endif

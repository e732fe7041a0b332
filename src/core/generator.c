/* generator.c — upstream-compatible CPU generator: mt19937 engine, seeding, the 5056-byte
 * state layout of CPUGeneratorImplState, the default generator. */
#include "core/generator.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Byte offsets inside upstream's CPUGeneratorImplState (x86-64/aarch64 LP64 layout):
 * legacy_pod { u64 the_initial_seed; int left; int seeded; u64 next; u64 state[624];
 *              double normal_x, normal_y, normal_rho; int normal_is_valid; <4 pad> }
 * float next_float_normal_sample; bool is_next_float_normal_sample_valid; <3 pad>. */
enum {
    ST_SEED = 0,
    ST_LEFT = 8,
    ST_SEEDED = 12,
    ST_NEXT = 16,
    ST_STATE = 24,
    ST_NORMAL_X = ST_STATE + 8 * TN_MT_N, /* 5016 */
    ST_NORMAL_Y = ST_NORMAL_X + 8,
    ST_NORMAL_RHO = ST_NORMAL_Y + 8,
    ST_NORMAL_VALID = ST_NORMAL_RHO + 8,
    ST_NEXT_FLOAT = ST_NORMAL_VALID + 8, /* 5048: after 4 bytes of padding */
    ST_NEXT_FLOAT_VALID = ST_NEXT_FLOAT + 4,
    ST_END = ST_NEXT_FLOAT_VALID + 4,
};
_Static_assert(ST_END == TN_GENERATOR_STATE_BYTES, "CPUGeneratorImplState layout");

static void engine_seed(tn_generator *g, uint64_t seed) {
    /* Upstream keeps the full 64-bit seed but initialises the engine from its low word. */
    g->seed = seed;
    g->seeded = true;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (uint32_t j = 1; j < TN_MT_N; j++)
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + j;
    g->left = 1;
    g->next = 0;
}

static inline uint32_t twist(uint32_t u, uint32_t v) {
    uint32_t mixed = (u & 0x80000000u) | (v & 0x7fffffffu);
    return (mixed >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
}

void tn_generator_twist(tn_generator *g) {
    uint32_t *p = g->state;
    g->left = TN_MT_N;
    g->next = 0;
    for (int j = 0; j < TN_MT_N - TN_MT_M; j++, p++) *p = p[TN_MT_M] ^ twist(p[0], p[1]);
    for (int j = 0; j < TN_MT_M - 1; j++, p++) *p = p[TN_MT_M - TN_MT_N] ^ twist(p[0], p[1]);
    *p = p[TN_MT_M - TN_MT_N] ^ twist(p[0], g->state[0]);
}

static void generator_init(tn_generator *g, uint64_t seed) {
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->mutex, NULL);
    engine_seed(g, seed);
}

tn_status tn_generator_new(uint64_t seed, tn_generator **out) {
    tn_generator *g = malloc(sizeof *g);
    if (!g) return tn_error(TN_ERR_NO_MEMORY, "out of memory allocating a Generator");
    generator_init(g, seed);
    *out = g;
    return TN_OK;
}

void tn_generator_free(tn_generator *g) {
    if (!g || g == tn_generator_default()) return;
    pthread_mutex_destroy(&g->mutex);
    free(g);
}

uint64_t tn_nondeterministic_seed(void) {
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, &s, sizeof s);
        close(fd);
        if (n == (ssize_t)sizeof s) return s;
    }
    /* No urandom (sandboxes): mix the clock and pid, as upstream's fallback does. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 32);
    return s;
}

static tn_generator default_gen;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static void default_init(void) { generator_init(&default_gen, tn_nondeterministic_seed()); }

tn_generator *tn_generator_default(void) {
    pthread_once(&default_once, default_init);
    return &default_gen;
}

void tn_generator_lock(tn_generator *g) { pthread_mutex_lock(&g->mutex); }
void tn_generator_unlock(tn_generator *g) { pthread_mutex_unlock(&g->mutex); }

void tn_generator_set_seed(tn_generator *g, uint64_t seed) {
    tn_generator_lock(g);
    g->has_next_float = g->has_next_double = false;
    engine_seed(g, seed);
    tn_generator_unlock(g);
}

uint64_t tn_generator_initial_seed(tn_generator *g) {
    tn_generator_lock(g);
    uint64_t s = g->seed;
    tn_generator_unlock(g);
    return s;
}

uint64_t tn_generator_seed(tn_generator *g) {
    uint64_t s = tn_nondeterministic_seed();
    tn_generator_set_seed(g, s);
    return s;
}

uint32_t tn_generator_random(tn_generator *g) {
    tn_generator_lock(g);
    uint32_t r = tn_generator_random_locked(g);
    tn_generator_unlock(g);
    return r;
}

uint64_t tn_generator_random64(tn_generator *g) {
    tn_generator_lock(g);
    uint64_t r = tn_generator_random64_locked(g);
    tn_generator_unlock(g);
    return r;
}

static void put_u64(uint8_t *b, int off, uint64_t v) { memcpy(b + off, &v, 8); }
static void put_i32(uint8_t *b, int off, int32_t v) { memcpy(b + off, &v, 4); }
static uint64_t get_u64(const uint8_t *b, int off) { uint64_t v; memcpy(&v, b + off, 8); return v; }
static int32_t get_i32(const uint8_t *b, int off) { int32_t v; memcpy(&v, b + off, 4); return v; }

void tn_generator_get_state(tn_generator *g, uint8_t *out) {
    /* Upstream zero-initialises the POD before filling it, so padding bytes are zero. */
    memset(out, 0, TN_GENERATOR_STATE_BYTES);
    tn_generator_lock(g);
    put_u64(out, ST_SEED, g->seed);
    put_i32(out, ST_LEFT, g->left);
    put_i32(out, ST_SEEDED, g->seeded ? 1 : 0);
    put_u64(out, ST_NEXT, g->next);
    for (int i = 0; i < TN_MT_N; i++) put_u64(out, ST_STATE + 8 * i, g->state[i]);
    if (g->has_next_double) {
        put_i32(out, ST_NORMAL_VALID, 1);
        memcpy(out + ST_NORMAL_Y, &g->next_double, 8);
    }
    if (g->has_next_float) {
        out[ST_NEXT_FLOAT_VALID] = 1;
        memcpy(out + ST_NEXT_FLOAT, &g->next_float, 4);
    }
    tn_generator_unlock(g);
}

tn_status tn_generator_set_state(tn_generator *g, const uint8_t *b, int64_t n) {
    if (n != TN_GENERATOR_STATE_BYTES)
        return tn_error(TN_ERR_RUNTIME,
                        "Expected a CPUGeneratorImplState of size %d but found the input RNG state size to be %lld",
                        TN_GENERATOR_STATE_BYTES, (long long)n);
    int32_t left = get_i32(b, ST_LEFT);
    bool seeded = get_i32(b, ST_SEEDED) != 0;
    uint32_t next = (uint32_t)get_u64(b, ST_NEXT); /* upstream narrows the legacy 64-bit field */
    if (!(seeded && left > 0 && left <= TN_MT_N && next <= TN_MT_N))
        return tn_error(TN_ERR_RUNTIME, "Invalid mt19937 state");
    tn_generator_lock(g);
    g->seed = get_u64(b, ST_SEED);
    g->left = left;
    g->seeded = seeded;
    g->next = next;
    for (int i = 0; i < TN_MT_N; i++) g->state[i] = (uint32_t)get_u64(b, ST_STATE + 8 * i);
    g->has_next_float = b[ST_NEXT_FLOAT_VALID] != 0;
    memcpy(&g->next_float, b + ST_NEXT_FLOAT, 4);
    g->has_next_double = get_i32(b, ST_NORMAL_VALID) != 0;
    memcpy(&g->next_double, b + ST_NORMAL_Y, 8);
    if (!g->has_next_float) g->next_float = 0.0f;
    if (!g->has_next_double) g->next_double = 0.0;
    tn_generator_unlock(g);
    return TN_OK;
}

tn_status tn_generator_get_state_tensor(tn_generator *g, tn_tensor **out) {
    int64_t n = TN_GENERATOR_STATE_BYTES;
    TN_TRY(tn_tensor_empty(1, &n, TN_DTYPE_UINT8, tn_device_cpu(), out));
    tn_generator_get_state(g, tn_tensor_data(*out));
    return TN_OK;
}

tn_status tn_generator_set_state_tensor(tn_generator *g, const tn_tensor *state) {
    /* upstream's check_rng_state */
    if (state->dtype != TN_DTYPE_UINT8 || tn_tensor_device(state).type != TN_DEVICE_CPU)
        return tn_error(TN_ERR_TYPE, "RNG state must be a torch.ByteTensor");
    if (!tn_tensor_is_contiguous(state)) return tn_error(TN_ERR_RUNTIME, "RNG state must be contiguous");
    return tn_generator_set_state(g, tn_tensor_data(state), tn_tensor_numel(state));
}

tn_status tn_generator_clone(tn_generator *g, tn_generator **out) {
    tn_generator *c = malloc(sizeof *c);
    if (!c) return tn_error(TN_ERR_NO_MEMORY, "out of memory allocating a Generator");
    tn_generator_lock(g);
    memcpy(c, g, sizeof *c);
    tn_generator_unlock(g);
    pthread_mutex_init(&c->mutex, NULL);
    c->pyobj = NULL;
    *out = c;
    return TN_OK;
}

/* test_stream.c — the weight stream (kernels/stream.h): the trace predicts what followed a
 * weight the last time it was read; the idle hook prefetches along the prediction up to the
 * window and stops; a freed weight in the prediction costs nothing but a wasted prefetch;
 * the pool's first worker runs the hook between regions; off means no trace at all. */
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "core/threadpool.h"
#include "kernels/stream.h"
#include "tn_test.h"

#define MIB (1 << 20)

static void nothing(void *ctx, int64_t b, int64_t e) {
    (void)ctx, (void)b, (void)e;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Runs the hook on this thread until it reports no work (bounded). */
static int64_t drain(void) {
    int64_t calls = 0;
    while (tn_stream_idle() && calls < 100000000) calls++;
    return calls;
}

int main(void) {
    tn_set_num_threads(1); /* no worker runs the hook while this thread drives it */
    tn_stream_set_enabled(true);
    enum { N = 4 };
    int64_t sz = 256 * 1024;
    char *w[N];
    for (int i = 0; i < N; i++) w[i] = calloc(1, (size_t)sz);

    /* first pass: no weight has been seen, so nothing is predicted */
    tn_stream_stats_reset();
    for (int i = 0; i < N; i++) tn_stream_note(w[i], sz);
    TN_CHECK(tn_stream_stats_get().notes == N, "notes %lld", (long long)tn_stream_stats_get().notes);
    TN_CHECK(tn_stream_stats_get().predicted == 0, "predicted %lld", (long long)tn_stream_stats_get().predicted);
    TN_CHECK(tn_stream_predicted(0) == NULL, "a prediction before any repeat");

    /* the cycle again: each weight predicts the rest of the last cycle after it */
    tn_stream_note(w[0], sz);
    TN_CHECK(tn_stream_predicted(0) == w[1] && tn_stream_predicted(1) == w[2] && tn_stream_predicted(2) == w[3],
             "after w0: %p %p %p", tn_stream_predicted(0), tn_stream_predicted(1), tn_stream_predicted(2));
    TN_CHECK(tn_stream_predicted(3) == NULL, "the prediction runs past the last cycle");
    tn_stream_note(w[1], sz);
    TN_CHECK(tn_stream_predicted(0) == w[2] && tn_stream_predicted(1) == w[3] && tn_stream_predicted(2) == w[0],
             "after w1: %p %p %p", tn_stream_predicted(0), tn_stream_predicted(1), tn_stream_predicted(2));
    TN_CHECK(tn_stream_stats_get().predicted == 2, "predicted %lld", (long long)tn_stream_stats_get().predicted);

    /* small weights are not traced and leave the prediction alone */
    char small[4096];
    tn_stream_note(small, sizeof small);
    TN_CHECK(tn_stream_predicted(0) == w[2], "a small weight changed the prediction");

    /* the hook prefetches the predicted bytes (w2, w3, w0: well under the window) and stops */
    tn_stream_stats_reset();
    int64_t calls = drain();
    TN_CHECK(tn_stream_stats_get().prefetched_bytes == 3 * sz, "prefetched %lld of %lld",
             (long long)tn_stream_stats_get().prefetched_bytes, (long long)(3 * sz));
    TN_CHECK(calls > 0 && tn_stream_idle() == 0, "hook did %lld calls, then still had work", (long long)calls);
    /* the consumer moves on one weight: the cursor is inside the new prediction, so only the
     * newly predicted weight (w1) is left to prefetch */
    tn_stream_note(w[2], sz);
    tn_stream_stats_reset();
    drain();
    TN_CHECK(tn_stream_stats_get().prefetched_bytes == sz, "after moving on: prefetched %lld, want %lld",
             (long long)tn_stream_stats_get().prefetched_bytes, (long long)sz);

    /* the window bounds the bytes ahead of the consumer */
    int64_t window = tn_stream_window();
    TN_CHECK(window >= MIB && window <= 8 * MIB, "window %lld", (long long)window);
    int64_t big = window / 2 + 4096; /* three of them exceed the window */
    char *bw[4];
    for (int i = 0; i < 4; i++) bw[i] = calloc(1, (size_t)big);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 4; i++) tn_stream_note(bw[i], big);
    tn_stream_note(bw[0], big);
    tn_stream_stats_reset();
    drain();
    int64_t got = tn_stream_stats_get().prefetched_bytes;
    TN_CHECK(got >= window && got < window + 8192, "window %lld: prefetched %lld", (long long)window, (long long)got);
    for (int i = 0; i < 4; i++) free(bw[i]);

    /* a predicted weight unmapped since: prefetching it must not fault */
    char *gone = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TN_CHECK(gone != MAP_FAILED, "mmap");
    tn_stream_note(w[0], sz);
    tn_stream_note(gone, sz);
    tn_stream_note(w[1], sz);
    munmap(gone, (size_t)sz);
    tn_stream_note(w[0], sz); /* predicts gone, w1 */
    TN_CHECK(tn_stream_predicted(0) == gone, "prediction %p, want the unmapped %p", tn_stream_predicted(0), (void *)gone);
    tn_stream_stats_reset();
    drain();
    TN_CHECK(tn_stream_stats_get().prefetched_bytes == 2 * sz, "prefetched %lld over an unmapped weight",
             (long long)tn_stream_stats_get().prefetched_bytes);

    /* a weight sharing w0's bucket of the address table does not make the table forget w0
     * (addresses in a reserved, inaccessible region: notes and prefetches never touch them) */
    size_t span = 16u << 20;
    char *res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    TN_CHECK(res != MAP_FAILED, "mmap");
    char *twin = NULL;
    for (size_t o = 0; o < span && !twin; o += 64)
        if (res + o != w[0] && tn_stream_bucket(res + o) == tn_stream_bucket(w[0])) twin = res + o;
    TN_CHECK(twin != NULL, "no address of 16 MiB shares w0's bucket");
    if (twin) {
        tn_stream_note(w[0], sz);
        tn_stream_note(twin, sz);
        tn_stream_note(w[1], sz);
        tn_stream_note(w[0], sz);
        TN_CHECK(tn_stream_predicted(0) == twin && tn_stream_predicted(1) == w[1],
                 "after a bucket twin: %p %p, want %p %p", tn_stream_predicted(0), tn_stream_predicted(1),
                 (void *)twin, (void *)w[1]);
        tn_stream_note(twin, sz);
        TN_CHECK(tn_stream_predicted(0) == w[1] && tn_stream_predicted(1) == w[0], "the twin forgot: %p %p",
                 tn_stream_predicted(0), tn_stream_predicted(1));
    }
    munmap(res, span);

    /* the pool's worker runs the hook between regions */
    tn_set_num_threads(2);
    tn_parallel_for(2, 1, nothing, NULL); /* starts the worker */
    tn_stream_note(w[1], sz);             /* predicts what followed w1 the last time */
    tn_stream_stats_reset();
    tn_parallel_for(2, 1, nothing, NULL); /* the worker spins after it, running the hook */
    double t0 = now_s();
    while (tn_stream_stats_get().prefetched_bytes == 0 && now_s() - t0 < 5) {
    }
    TN_CHECK(tn_stream_stats_get().prefetched_bytes > 0, "the pool's worker never ran the hook");
    tn_set_num_threads(1);

    /* off: notes are ignored and there is no prediction */
    TN_CHECK(tn_stream_set_enabled(false) == true, "was on");
    TN_CHECK(tn_stream_predicted(0) == NULL, "a prediction while off");
    tn_stream_stats_reset();
    tn_stream_note(w[0], sz);
    tn_stream_note(w[1], sz);
    tn_stream_note(w[0], sz);
    TN_CHECK(tn_stream_stats_get().notes == 0 && tn_stream_predicted(0) == NULL, "traced while off");
    TN_CHECK(tn_stream_idle() == 0, "hook worked while off");
    for (int i = 0; i < N; i++) free(w[i]);
    return tn_test_summary();
}

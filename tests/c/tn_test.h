/* tn_test.h — the tiny harness of the C unit tests (tests/c/test_*.c). Each test file
 * has a main() that runs its checks and returns tn_test_summary(). The Python suite runs
 * every test binary and fails on a non-zero exit. */
#ifndef TN_TEST_H
#define TN_TEST_H

#include <math.h>
#include <stdio.h>

static int tn_test_passed, tn_test_failed;

#define TN_CHECK(cond, ...)                                              \
    do {                                                                 \
        if (cond) {                                                      \
            tn_test_passed++;                                            \
        } else {                                                         \
            tn_test_failed++;                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                \
            fputc('\n', stderr);                                         \
        }                                                                \
    } while (0)

static inline int tn_test_summary(void) {
    printf("%d passed, %d failed\n", tn_test_passed, tn_test_failed);
    return tn_test_failed != 0;
}

#endif

/* reduce_stdsort.c — libstdc++'s std::sort (introsort) over a permutation of indices, so
 * that the order in which upstream's unstable sorts leave equal keys is reproduced: depth
 * limit 2 floor(log2 n), median of (first + 1, middle, last - 1) moved to the front, the
 * unguarded partition, the heap sort past the depth limit (make_heap / sort_heap with
 * libstdc++'s hole-filling adjust), and the final insertion sort (16-element guarded part,
 * then unguarded). Written from the algorithm's description; the order of comparisons and
 * moves is what decides where ties land. */
#include "ops/reduce.h"

typedef struct stdsort {
    int64_t *p;
    tn_perm_less less;
    const void *ctx;
} stdsort;

#define LESS(a, b) s->less(s->ctx, (a), (b))

static inline void swap_at(int64_t *p, int64_t a, int64_t b) { int64_t t = p[a]; p[a] = p[b]; p[b] = t; }

static void move_median_to_first(const stdsort *s, int64_t res, int64_t a, int64_t b, int64_t c) {
    int64_t *p = s->p;
    if (LESS(p[a], p[b])) {
        if (LESS(p[b], p[c])) swap_at(p, res, b);
        else if (LESS(p[a], p[c])) swap_at(p, res, c);
        else swap_at(p, res, a);
    } else if (LESS(p[a], p[c])) swap_at(p, res, a);
    else if (LESS(p[b], p[c])) swap_at(p, res, c);
    else swap_at(p, res, b);
}

static int64_t unguarded_partition(const stdsort *s, int64_t first, int64_t last, int64_t pivot) {
    int64_t *p = s->p;
    for (;;) {
        while (LESS(p[first], p[pivot])) first++;
        last--;
        while (LESS(p[pivot], p[last])) last--;
        if (!(first < last)) return first;
        swap_at(p, first, last);
        first++;
    }
}

/* the heap helpers work on p[base + 0 .. base + len) */
static void push_heap(const stdsort *s, int64_t base, int64_t hole, int64_t top, int64_t value) {
    int64_t *p = s->p + base;
    int64_t parent = (hole - 1) / 2;
    while (hole > top && LESS(p[parent], value)) {
        p[hole] = p[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    p[hole] = value;
}

static void adjust_heap(const stdsort *s, int64_t base, int64_t hole, int64_t len, int64_t value) {
    int64_t *p = s->p + base;
    int64_t top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (LESS(p[child], p[child - 1])) child--;
        p[hole] = p[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        p[hole] = p[child - 1];
        hole = child - 1;
    }
    push_heap(s, base, hole, top, value);
}

/* std::__partial_sort(first, last, last): make_heap, then sort_heap */
static void heap_sort(const stdsort *s, int64_t first, int64_t last) {
    int64_t len = last - first;
    if (len < 2) return;
    for (int64_t parent = (len - 2) / 2;; parent--) {
        adjust_heap(s, first, parent, len, s->p[first + parent]);
        if (parent == 0) break;
    }
    while (last - first > 1) {
        last--;
        int64_t value = s->p[last];
        s->p[last] = s->p[first];
        adjust_heap(s, first, 0, last - first, value);
    }
}

static void introsort_loop(const stdsort *s, int64_t first, int64_t last, int64_t depth) {
    while (last - first > 16) {
        if (depth == 0) {
            heap_sort(s, first, last);
            return;
        }
        depth--;
        move_median_to_first(s, first, first + 1, first + (last - first) / 2, last - 1);
        int64_t cut = unguarded_partition(s, first + 1, last, first);
        introsort_loop(s, cut, last, depth);
        last = cut;
    }
}

static void unguarded_linear_insert(const stdsort *s, int64_t i) {
    int64_t *p = s->p, v = p[i], j = i;
    while (LESS(v, p[j - 1])) {
        p[j] = p[j - 1];
        j--;
    }
    p[j] = v;
}

static void insertion_sort(const stdsort *s, int64_t first, int64_t last) {
    int64_t *p = s->p;
    for (int64_t i = first + 1; i < last; i++) {
        if (LESS(p[i], p[first])) {
            int64_t v = p[i];
            memmove(&p[first + 1], &p[first], sizeof(int64_t) * (size_t)(i - first));
            p[first] = v;
        } else unguarded_linear_insert(s, i);
    }
}

void tn_std_sort_perm(int64_t *perm, int64_t n, tn_perm_less less, const void *ctx) {
    if (n < 2) return;
    stdsort s = {perm, less, ctx};
    int64_t lg = 0;
    while ((n >> (lg + 1)) > 0) lg++;
    introsort_loop(&s, 0, n, 2 * lg);
    if (n > 16) {
        insertion_sort(&s, 0, 16);
        for (int64_t i = 16; i < n; i++) unguarded_linear_insert(&s, i);
    } else insertion_sort(&s, 0, n);
}

/* std::__heap_select(first, middle, last) on p[first..last) */
static void heap_select(const stdsort *s, int64_t first, int64_t middle, int64_t last) {
    int64_t len = middle - first;
    if (len >= 2)
        for (int64_t parent = (len - 2) / 2;; parent--) {
            adjust_heap(s, first, parent, len, s->p[first + parent]);
            if (parent == 0) break;
        }
    for (int64_t i = middle; i < last; i++)
        if (LESS(s->p[i], s->p[first])) { /* __pop_heap(first, middle, i) */
            int64_t value = s->p[i];
            s->p[i] = s->p[first];
            adjust_heap(s, first, 0, len, value);
        }
}

/* std::nth_element: introselect, then insertion sort of the last small range */
static void nth_element(const stdsort *s, int64_t first, int64_t nth, int64_t last) {
    if (first == last || nth == last) return;
    int64_t lg = 0;
    while (((last - first) >> (lg + 1)) > 0) lg++;
    int64_t depth = 2 * lg;
    while (last - first > 3) {
        if (depth == 0) {
            heap_select(s, first, nth + 1, last);
            swap_at(s->p, first, nth);
            return;
        }
        depth--;
        move_median_to_first(s, first, first + 1, first + (last - first) / 2, last - 1);
        int64_t cut = unguarded_partition(s, first + 1, last, first);
        if (cut <= nth) first = cut;
        else last = cut;
    }
    insertion_sort(s, first, last);
}

void tn_std_topk_perm(int64_t *perm, int64_t n, int64_t k, bool sorted, tn_perm_less less, const void *ctx) {
    if (k == 0) return;
    stdsort s = {perm, less, ctx};
    for (int64_t j = 0; j < n; j++) perm[j] = j;
    if (k * 64 <= n) {
        /* std::partial_sort(first, first + k, last): heap_select, then sort_heap */
        heap_select(&s, 0, k, n);
        for (int64_t last = k; last > 1;) {
            last--;
            int64_t value = perm[last];
            perm[last] = perm[0];
            adjust_heap(&s, 0, 0, last, value);
        }
        return;
    }
    nth_element(&s, 0, k - 1, n);
    if (sorted) tn_std_sort_perm(perm, k - 1, less, ctx);
}

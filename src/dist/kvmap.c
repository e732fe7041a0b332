/* kvmap.c — chained hash map of byte strings for the stores (see kvmap.h). */
#include "dist/kvmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *k, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)k[i]) * 1099511628211ull;
    return h;
}

void tn_kvmap_init(tn_kvmap *m) {
    m->nbuckets = 256;
    m->buckets = calloc(m->nbuckets, sizeof *m->buckets);
    m->nvals = 0;
}

void tn_kvmap_clear(tn_kvmap *m) {
    for (size_t i = 0; m->buckets && i < m->nbuckets; i++) {
        tn_kv_entry *e = m->buckets[i];
        while (e) {
            tn_kv_entry *n = e->next;
            while (e->qhead) {
                tn_kv_qitem *q = e->qhead;
                e->qhead = q->next;
                free(q);
            }
            free(e->key);
            free(e->val);
            free(e);
            e = n;
        }
    }
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = 0;
    m->nvals = 0;
}

static void grow(tn_kvmap *m) {
    size_t nb = m->nbuckets * 2;
    tn_kv_entry **b = calloc(nb, sizeof *b);
    if (!b) return; /* keep the old table: slower but correct */
    for (size_t i = 0; i < m->nbuckets; i++) {
        tn_kv_entry *e = m->buckets[i];
        while (e) {
            tn_kv_entry *n = e->next;
            size_t j = hash(e->key, e->klen) & (nb - 1);
            e->next = b[j];
            b[j] = e;
            e = n;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
}

tn_kv_entry *tn_kvmap_find(tn_kvmap *m, const char *key, size_t klen, int create) {
    if (!m->buckets) return NULL;
    size_t i = hash(key, klen) & (m->nbuckets - 1);
    for (tn_kv_entry *e = m->buckets[i]; e; e = e->next)
        if (e->klen == klen && memcmp(e->key, key, klen) == 0) return e;
    if (!create) return NULL;
    tn_kv_entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->key = malloc(klen + 1);
    if (!e->key) {
        free(e);
        return NULL;
    }
    memcpy(e->key, key, klen);
    e->key[klen] = 0;
    e->klen = klen;
    e->next = m->buckets[i];
    m->buckets[i] = e;
    if ((size_t)m->nvals > m->nbuckets) grow(m);
    return e;
}

int tn_kvmap_set(tn_kvmap *m, tn_kv_entry *e, const uint8_t *v, size_t vlen) {
    uint8_t *p = malloc(vlen ? vlen : 1);
    if (!p) return -1;
    if (vlen) memcpy(p, v, vlen);
    free(e->val);
    e->val = p;
    e->vlen = vlen;
    if (!e->has_val) m->nvals++;
    e->has_val = 1;
    return 0;
}

int tn_kvmap_append(tn_kvmap *m, tn_kv_entry *e, const uint8_t *v, size_t vlen) {
    if (!e->has_val) return tn_kvmap_set(m, e, v, vlen);
    uint8_t *p = realloc(e->val, e->vlen + vlen + 1);
    if (!p) return -1;
    if (vlen) memcpy(p + e->vlen, v, vlen);
    e->val = p;
    e->vlen += vlen;
    return 0;
}

int tn_kvmap_delete(tn_kvmap *m, tn_kv_entry *e) {
    if (!e || !e->has_val) return 0;
    free(e->val);
    e->val = NULL;
    e->vlen = 0;
    e->has_val = 0;
    m->nvals--;
    return 1;
}

int tn_kvmap_qpush(tn_kv_entry *e, const uint8_t *v, size_t vlen) {
    tn_kv_qitem *q = malloc(sizeof *q + vlen);
    if (!q) return -1;
    q->next = NULL;
    q->len = vlen;
    if (vlen) memcpy(q->data, v, vlen);
    if (e->qtail) e->qtail->next = q;
    else e->qhead = q;
    e->qtail = q;
    e->qlen++;
    return 0;
}

tn_kv_qitem *tn_kvmap_qpop(tn_kv_entry *e) {
    tn_kv_qitem *q = e->qhead;
    if (!q) return NULL;
    e->qhead = q->next;
    if (!e->qhead) e->qtail = NULL;
    e->qlen--;
    return q;
}

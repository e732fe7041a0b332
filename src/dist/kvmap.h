/* kvmap.h — a small byte-string hash map (key -> value bytes, plus an optional FIFO queue
 * of values per key) used by the TCPStore server and the FileStore's cache.
 *
 * Ownership: the map copies keys and values; lookups return pointers into the map that
 * stay valid until the entry is next modified or removed. Plain C11; no Python. */
#ifndef TN_DIST_KVMAP_H
#define TN_DIST_KVMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct tn_kv_qitem {
    struct tn_kv_qitem *next;
    size_t len;
    uint8_t data[];
} tn_kv_qitem;

typedef struct tn_kv_entry {
    struct tn_kv_entry *next;
    char *key;
    size_t klen;
    uint8_t *val;
    size_t vlen;
    int has_val;            /* a plain key/value is present */
    tn_kv_qitem *qhead, *qtail;
    int64_t qlen;
} tn_kv_entry;

typedef struct tn_kvmap {
    tn_kv_entry **buckets;
    size_t nbuckets;
    int64_t nvals;          /* entries with has_val (num_keys) */
} tn_kvmap;

void tn_kvmap_init(tn_kvmap *m);
void tn_kvmap_clear(tn_kvmap *m);
/* The entry for key, or NULL (create = 0) / a fresh empty one (create = 1; NULL when out
 * of memory). */
tn_kv_entry *tn_kvmap_find(tn_kvmap *m, const char *key, size_t klen, int create);
/* Replaces the value; 0 ok, -1 out of memory. */
int tn_kvmap_set(tn_kvmap *m, tn_kv_entry *e, const uint8_t *v, size_t vlen);
/* Appends to the value (creates it); 0 ok, -1 out of memory. */
int tn_kvmap_append(tn_kvmap *m, tn_kv_entry *e, const uint8_t *v, size_t vlen);
/* Removes the value; returns 1 if there was one. */
int tn_kvmap_delete(tn_kvmap *m, tn_kv_entry *e);
int tn_kvmap_qpush(tn_kv_entry *e, const uint8_t *v, size_t vlen);
/* Pops the head item (caller frees it), NULL if empty. */
tn_kv_qitem *tn_kvmap_qpop(tn_kv_entry *e);

#endif

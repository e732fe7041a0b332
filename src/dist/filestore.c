/* filestore.c — FileStore: a key/value store shared through one file, in upstream's
 * on-disk format (an append-only log of records `u32 len, key, u32 len, value` under
 * flock; user keys carry a "/" prefix, deletions append "-/key", the "cleanup/" counter
 * lets the last user remove the file), so our processes and upstream's can share it. */
#include "dist/store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dist/kvmap.h"
#include "dist/net.h"

struct tn_file_store {
    char *path;
    int num_workers;
    int64_t timeout_ms;
    off_t pos;
    tn_kvmap cache;
    pthread_mutex_t mu;
};

static tn_status io_fail(tn_file_store *s, const char *what) {
    return tn_dist_fail(TN_DIST_ERR_STORE, "FileStore %s: %s failed: %s", s->path, what, strerror(errno));
}

/* Opens and locks the file (exclusive or shared); *fd = -1 on failure. */
static tn_status open_locked(tn_file_store *s, int exclusive, int *fd) {
    *fd = open(s->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0) return io_fail(s, "open");
    while (flock(*fd, exclusive ? LOCK_EX : LOCK_SH) < 0) {
        if (errno == EINTR) continue;
        close(*fd);
        *fd = -1;
        return io_fail(s, "flock");
    }
    return TN_OK;
}

static void close_locked(int fd) {
    flock(fd, LOCK_UN);
    close(fd);
}

static int read_full(int fd, void *p, size_t n) {
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t r = write(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Reads the records appended since s->pos into the cache. */
static tn_status refresh(tn_file_store *s, int fd) {
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < 0) return io_fail(s, "lseek");
    if (size == s->pos) return TN_OK;
    if (lseek(fd, s->pos, SEEK_SET) < 0) return io_fail(s, "lseek");
    while (s->pos < size) {
        uint32_t kl, vl;
        char *k = NULL;
        uint8_t *v = NULL;
        if (read_full(fd, &kl, 4) || !(k = malloc(kl + 1)) || read_full(fd, k, kl) || read_full(fd, &vl, 4) ||
            !(v = malloc(vl + 1)) || read_full(fd, v, vl)) {
            free(k);
            free(v);
            return tn_dist_fail(TN_DIST_ERR_STORE, "FileStore %s: truncated record", s->path);
        }
        if (kl >= 1 && k[0] == '-') {
            tn_kvmap_delete(&s->cache, tn_kvmap_find(&s->cache, k + 1, kl - 1, 0));
        } else {
            tn_kv_entry *e = tn_kvmap_find(&s->cache, k, kl, 1);
            if (!e || tn_kvmap_set(&s->cache, e, v, vl)) {
                free(k);
                free(v);
                return tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
            }
        }
        free(k);
        free(v);
        s->pos += 8 + (off_t)kl + (off_t)vl;
    }
    return TN_OK;
}

static tn_status append_record(tn_file_store *s, int fd, const char *k, size_t kl, const uint8_t *v, size_t vl) {
    uint32_t a = (uint32_t)kl, b = (uint32_t)vl;
    if (lseek(fd, 0, SEEK_END) < 0 || write_full(fd, &a, 4) || write_full(fd, k, kl) || write_full(fd, &b, 4) ||
        write_full(fd, v, vl))
        return io_fail(s, "write");
    return TN_OK;
}

static char *reg_key(const char *key, size_t klen, size_t *out_len) {
    char *k = malloc(klen + 2);
    if (!k) return NULL;
    k[0] = '/';
    memcpy(k + 1, key, klen);
    *out_len = klen + 1;
    return k;
}

static tn_status add_helper(tn_file_store *s, const char *k, size_t kl, int64_t delta, int64_t *out) {
    int fd;
    TN_TRY(open_locked(s, 1, &fd));
    tn_status st = refresh(s, fd);
    if (st == TN_OK) {
        tn_kv_entry *e = tn_kvmap_find(&s->cache, k, kl, 0);
        if (e && e->has_val && e->vlen) {
            char tmp[32] = {0};
            memcpy(tmp, e->val, e->vlen < 31 ? e->vlen : 31);
            delta += strtoll(tmp, NULL, 10);
        }
        char num[32];
        int nl = snprintf(num, sizeof num, "%" PRId64, delta);
        st = append_record(s, fd, k, kl, (const uint8_t *)num, (size_t)nl);
        *out = delta;
    }
    close_locked(fd);
    return st;
}

tn_status tn_file_store_open(const char *path, int num_workers, int64_t timeout_ms, tn_file_store **out) {
    tn_file_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory opening FileStore");
    }
    s->num_workers = num_workers;
    s->timeout_ms = timeout_ms;
    tn_kvmap_init(&s->cache);
    pthread_mutex_init(&s->mu, NULL);
    int fd;
    tn_status st = open_locked(s, 0, &fd);
    if (st != TN_OK) {
        tn_file_store_free(s);
        return st;
    }
    close_locked(fd);
    *out = s;
    return TN_OK;
}

void tn_file_store_free(tn_file_store *s) {
    if (!s) return;
    if (s->path && access(s->path, F_OK) == 0) {
        int64_t done = 0;
        if (add_helper(s, "cleanup/", 8, 1, &done) == TN_OK && s->num_workers >= 0 && done == s->num_workers)
            remove(s->path);
    }
    tn_kvmap_clear(&s->cache);
    pthread_mutex_destroy(&s->mu);
    free(s->path);
    free(s);
}

void tn_file_store_set_timeout(tn_file_store *s, int64_t timeout_ms) { s->timeout_ms = timeout_ms; }

#define LOCKED(expr)                  \
    do {                              \
        pthread_mutex_lock(&s->mu);   \
        tn_status st_ = (expr);       \
        pthread_mutex_unlock(&s->mu); \
        return st_;                   \
    } while (0)

static tn_status op_write(tn_file_store *s, const char *key, size_t klen, const uint8_t *v, size_t vlen,
                          int is_append) {
    size_t kl;
    char *k = reg_key(key, klen, &kl);
    if (!k) return tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
    int fd;
    tn_status st = open_locked(s, 1, &fd);
    if (st == TN_OK) {
        if (is_append) {
            /* upstream's FileStore has no append: ours rewrites the concatenation */
            st = refresh(s, fd);
            tn_kv_entry *e = st == TN_OK ? tn_kvmap_find(&s->cache, k, kl, 0) : NULL;
            if (e && e->has_val) {
                uint8_t *cat = malloc(e->vlen + vlen + 1);
                if (!cat) st = tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
                else {
                    memcpy(cat, e->val, e->vlen);
                    memcpy(cat + e->vlen, v, vlen);
                    st = append_record(s, fd, k, kl, cat, e->vlen + vlen);
                    free(cat);
                }
            } else if (st == TN_OK) {
                st = append_record(s, fd, k, kl, v, vlen);
            }
        } else {
            st = append_record(s, fd, k, kl, v, vlen);
        }
        close_locked(fd);
    }
    free(k);
    return st;
}

tn_status tn_file_store_set(tn_file_store *s, const char *key, size_t klen, const uint8_t *v, size_t vlen) {
    LOCKED(op_write(s, key, klen, v, vlen, 0));
}

tn_status tn_file_store_append(tn_file_store *s, const char *key, size_t klen, const uint8_t *v, size_t vlen) {
    LOCKED(op_write(s, key, klen, v, vlen, 1));
}

static tn_status op_check(tn_file_store *s, size_t n, const char *const *keys, const size_t *klens, int *ready) {
    int fd;
    TN_TRY(open_locked(s, 0, &fd));
    tn_status st = refresh(s, fd);
    close_locked(fd);
    TN_TRY(st);
    *ready = 1;
    for (size_t i = 0; i < n && *ready; i++) {
        size_t kl;
        char *k = reg_key(keys[i], klens[i], &kl);
        if (!k) return tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
        tn_kv_entry *e = tn_kvmap_find(&s->cache, k, kl, 0);
        *ready = e && e->has_val;
        free(k);
    }
    return TN_OK;
}

tn_status tn_file_store_check(tn_file_store *s, size_t n, const char *const *keys, const size_t *klens,
                              int *ready) {
    LOCKED(op_check(s, n, keys, klens, ready));
}

tn_status tn_file_store_wait(tn_file_store *s, size_t n, const char *const *keys, const size_t *klens,
                             int64_t timeout_ms) {
    if (timeout_ms < 0) timeout_ms = s->timeout_ms;
    int64_t deadline = tn_net_deadline(timeout_ms);
    for (;;) {
        int ready = 0;
        TN_TRY(tn_file_store_check(s, n, keys, klens, &ready));
        if (ready) return TN_OK;
        if (deadline >= 0 && tn_net_now_ms() > deadline)
            return tn_dist_fail(TN_DIST_ERR_STORE, "Wait timeout after %" PRId64 "ms, keys: %.*s%s", timeout_ms,
                                n ? (int)klens[0] : 0, n ? keys[0] : "", n > 1 ? ", ..." : "");
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

tn_status tn_file_store_get(tn_file_store *s, const char *key, size_t klen, uint8_t **v, size_t *vlen) {
    int64_t deadline = tn_net_deadline(s->timeout_ms);
    for (;;) {
        int ready = 0;
        TN_TRY(tn_file_store_check(s, 1, &key, &klen, &ready));
        if (ready) break;
        if (deadline >= 0 && tn_net_now_ms() > deadline)
            return tn_dist_fail(TN_DIST_ERR_STORE, "Timeout waiting for key: %.*s after %" PRId64 " ms", (int)klen,
                                key, s->timeout_ms);
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&s->mu);
    size_t kl;
    char *k = reg_key(key, klen, &kl);
    tn_kv_entry *e = k ? tn_kvmap_find(&s->cache, k, kl, 0) : NULL;
    free(k);
    tn_status st = TN_OK;
    if (!e || !e->has_val) st = tn_dist_fail(TN_DIST_ERR_STORE, "FileStore: key %.*s vanished", (int)klen, key);
    else if (!(*v = malloc(e->vlen + 1))) st = tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
    else {
        memcpy(*v, e->val, e->vlen);
        *vlen = e->vlen;
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

static tn_status op_add(tn_file_store *s, const char *key, size_t klen, int64_t delta, int64_t *out) {
    size_t kl;
    char *k = reg_key(key, klen, &kl);
    if (!k) return tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
    tn_status st = add_helper(s, k, kl, delta, out);
    free(k);
    return st;
}

tn_status tn_file_store_add(tn_file_store *s, const char *key, size_t klen, int64_t delta, int64_t *out) {
    LOCKED(op_add(s, key, klen, delta, out));
}

static tn_status op_compare_set(tn_file_store *s, const char *key, size_t klen, const uint8_t *exp, size_t elen,
                                const uint8_t *des, size_t dlen, uint8_t **v, size_t *vlen) {
    size_t kl;
    char *k = reg_key(key, klen, &kl);
    if (!k) return tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
    int fd;
    tn_status st = open_locked(s, 1, &fd);
    if (st != TN_OK) {
        free(k);
        return st;
    }
    st = refresh(s, fd);
    const uint8_t *res = NULL;
    size_t rlen = 0;
    if (st == TN_OK) {
        tn_kv_entry *e = tn_kvmap_find(&s->cache, k, kl, 0);
        int present = e && e->has_val;
        if ((!present && elen == 0) || (present && e->vlen == elen && memcmp(e->val, exp, elen) == 0)) {
            st = append_record(s, fd, k, kl, des, dlen);
            res = des;
            rlen = dlen;
        } else if (!present) {
            res = exp;
            rlen = elen;
        } else {
            res = e->val;
            rlen = e->vlen;
        }
    }
    if (st == TN_OK) {
        *v = malloc(rlen + 1);
        if (!*v) st = tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
        else {
            if (rlen) memcpy(*v, res, rlen);
            *vlen = rlen;
        }
    }
    close_locked(fd);
    free(k);
    return st;
}

tn_status tn_file_store_compare_set(tn_file_store *s, const char *key, size_t klen, const uint8_t *exp, size_t elen,
                                    const uint8_t *des, size_t dlen, uint8_t **v, size_t *vlen) {
    LOCKED(op_compare_set(s, key, klen, exp, elen, des, dlen, v, vlen));
}

static tn_status op_delete(tn_file_store *s, const char *key, size_t klen, int *deleted) {
    char *k = malloc(klen + 3);
    if (!k) return tn_error(TN_ERR_NO_MEMORY, "out of memory in FileStore");
    k[0] = '-';
    k[1] = '/';
    memcpy(k + 2, key, klen);
    int fd;
    tn_status st = open_locked(s, 1, &fd);
    if (st == TN_OK) {
        st = append_record(s, fd, k, klen + 2, (const uint8_t *)"", 0);
        close_locked(fd);
    }
    free(k);
    *deleted = 1; /* upstream returns true unconditionally */
    return st;
}

tn_status tn_file_store_delete(tn_file_store *s, const char *key, size_t klen, int *deleted) {
    LOCKED(op_delete(s, key, klen, deleted));
}

static tn_status op_num_keys(tn_file_store *s, int64_t *out) {
    int fd;
    TN_TRY(open_locked(s, 0, &fd));
    tn_status st = refresh(s, fd);
    close_locked(fd);
    *out = s->cache.nvals;
    return st;
}

tn_status tn_file_store_num_keys(tn_file_store *s, int64_t *out) { LOCKED(op_num_keys(s, out)); }

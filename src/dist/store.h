/* store.h — the TCPStore server and client (upstream's wire protocol, store_proto.h) and
 * the FileStore, all in plain C below the binding.
 *
 * Ownership: values returned through uint8_t ** are malloc'd and owned by the caller
 * (free()). Every call returns a status; failures carry a message and an error kind
 * (net.h) that the binding maps to DistStoreError / DistNetworkError.
 *
 * Thread safety: a client serialises its calls with an internal mutex (one request in
 * flight per connection, as upstream's activeOpLock_). The server runs on one thread.
 *
 * Plain C11 + POSIX; no Python. */
#ifndef TN_DIST_STORE_H
#define TN_DIST_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* ---- server -------------------------------------------------------------------------- */
typedef struct tn_store_server tn_store_server;

/* Starts (or, when multi_tenant and a server of this process already listens on `port`,
 * shares) a server daemon thread on `port` (0 = pick a free one). Each successful call
 * must be paired with tn_store_server_release. */
tn_status tn_store_server_acquire(int port, int multi_tenant, tn_store_server **out);
int tn_store_server_port(const tn_store_server *s);
/* Drops one reference; the last one stops the thread and closes every connection. */
void tn_store_server_release(tn_store_server *s);

/* ---- client -------------------------------------------------------------------------- */
typedef struct tn_store_client tn_store_client;

/* Connects to host:port within timeout_ms (retrying while the server comes up), then
 * validates and pings as upstream's client does. */
tn_status tn_store_client_connect(const char *host, int port, int64_t timeout_ms, tn_store_client **out);
void tn_store_client_free(tn_store_client *c);
/* Default timeout of get/wait (upstream: Store::setTimeout). 0 = no timeout. */
void tn_store_client_set_timeout(tn_store_client *c, int64_t timeout_ms);
int64_t tn_store_client_timeout(const tn_store_client *c);
/* Upstream's waitForWorkers: add("init/", 1); when `is_server`, poll until the count
 * reaches world_size or the timeout passes (DistStoreError). */
tn_status tn_store_client_wait_workers(tn_store_client *c, int64_t world_size, int is_server);

/* Key/value operations; keys are user keys (the "/" prefix is added here). */
tn_status tn_store_client_set(tn_store_client *c, const char *key, size_t klen, const uint8_t *v, size_t vlen);
/* Waits for the key up to the timeout, then returns its value. */
tn_status tn_store_client_get(tn_store_client *c, const char *key, size_t klen, uint8_t **v, size_t *vlen);
tn_status tn_store_client_add(tn_store_client *c, const char *key, size_t klen, int64_t delta, int64_t *out);
tn_status tn_store_client_compare_set(tn_store_client *c, const char *key, size_t klen, const uint8_t *exp,
                                      size_t elen, const uint8_t *des, size_t dlen, uint8_t **v, size_t *vlen);
tn_status tn_store_client_check(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                                int *ready);
/* timeout_ms < 0: the client's default timeout. DistStoreError past it. */
tn_status tn_store_client_wait(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                               int64_t timeout_ms);
tn_status tn_store_client_delete(tn_store_client *c, const char *key, size_t klen, int *deleted);
tn_status tn_store_client_num_keys(tn_store_client *c, int64_t *out);
tn_status tn_store_client_append(tn_store_client *c, const char *key, size_t klen, const uint8_t *v, size_t vlen);
/* vals/vlens: arrays of n filled on success (each value malloc'd). */
tn_status tn_store_client_multi_get(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                                    uint8_t **vals, size_t *vlens);
tn_status tn_store_client_multi_set(tn_store_client *c, size_t n, const char *const *keys, const size_t *klens,
                                    const uint8_t *const *vals, const size_t *vlens);
tn_status tn_store_client_queue_push(tn_store_client *c, const char *key, size_t klen, const uint8_t *v, size_t vlen);
/* block: wait (timeout) for an element first; empty queue -> DistQueueEmptyError. */
tn_status tn_store_client_queue_pop(tn_store_client *c, const char *key, size_t klen, int block, uint8_t **v,
                                    size_t *vlen);
tn_status tn_store_client_queue_len(tn_store_client *c, const char *key, size_t klen, int64_t *out);
/* Every key holding a value, as stored on the server (user keys carry the "/" prefix);
 * *keys and each key are malloc'd, caller frees. */
tn_status tn_store_client_list_keys(tn_store_client *c, char ***keys, size_t **lens, size_t *n);

/* ---- file store ---------------------------------------------------------------------- */
typedef struct tn_file_store tn_file_store;

/* Opens (creating) the store file shared by num_workers processes (-1 = unknown). The
 * file is an append-only log of (key, value) records under flock(), as upstream's
 * FileStore; the last user to close it removes the file. */
tn_status tn_file_store_open(const char *path, int num_workers, int64_t timeout_ms, tn_file_store **out);
void tn_file_store_free(tn_file_store *s);
void tn_file_store_set_timeout(tn_file_store *s, int64_t timeout_ms);
tn_status tn_file_store_set(tn_file_store *s, const char *key, size_t klen, const uint8_t *v, size_t vlen);
tn_status tn_file_store_get(tn_file_store *s, const char *key, size_t klen, uint8_t **v, size_t *vlen);
tn_status tn_file_store_add(tn_file_store *s, const char *key, size_t klen, int64_t delta, int64_t *out);
tn_status tn_file_store_compare_set(tn_file_store *s, const char *key, size_t klen, const uint8_t *exp, size_t elen,
                                    const uint8_t *des, size_t dlen, uint8_t **v, size_t *vlen);
tn_status tn_file_store_check(tn_file_store *s, size_t n, const char *const *keys, const size_t *klens, int *ready);
tn_status tn_file_store_wait(tn_file_store *s, size_t n, const char *const *keys, const size_t *klens,
                             int64_t timeout_ms);
tn_status tn_file_store_delete(tn_file_store *s, const char *key, size_t klen, int *deleted);
tn_status tn_file_store_num_keys(tn_file_store *s, int64_t *out);
tn_status tn_file_store_append(tn_file_store *s, const char *key, size_t klen, const uint8_t *v, size_t vlen);

#endif

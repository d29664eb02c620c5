/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stats_prefix.c - per-prefix counters (see stats_prefix.h).
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/settings.h"
#include "memcached/stats_prefix.h"

#define PREFIX_BUCKETS 256

struct prefix_stats {
    struct prefix_stats *next;
    uint64_t gets, hits, sets, deletes;
    size_t len;
    char name[];
};

static pthread_mutex_t prefix_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prefix_stats *buckets[PREFIX_BUCKETS]; /* prefix_lock */
static size_t nprefixes, prefix_bytes;               /* prefix_lock */

static unsigned prefix_hash(const char *p, size_t n)
{
    unsigned h = 5381;

    for (size_t i = 0; i < n; i++)
        h = h * 33 + (unsigned char)p[i];
    return h % PREFIX_BUCKETS;
}

/* The entry of key's prefix, created on demand (prefix_lock held); NULL
 * if the key has no delimiter or memory ran out. */
static struct prefix_stats *prefix_find(const char *key, size_t nkey)
{
    const char *d = memchr(key, settings.prefix_delimiter, nkey);

    if (d == NULL)
        return NULL;
    size_t len = (size_t)(d - key);
    unsigned b = prefix_hash(key, len);
    for (struct prefix_stats *p = buckets[b]; p; p = p->next) {
        if (p->len == len && memcmp(p->name, key, len) == 0)
            return p;
    }
    struct prefix_stats *p = calloc(1, sizeof(*p) + len + 1);
    if (p == NULL)
        return NULL;
    memcpy(p->name, key, len);
    p->len = len;
    p->next = buckets[b];
    buckets[b] = p;
    nprefixes++;
    prefix_bytes += len;
    return p;
}

void stats_prefix_record_get(const char *key, size_t nkey, bool hit)
{
    pthread_mutex_lock(&prefix_lock);
    struct prefix_stats *p = prefix_find(key, nkey);
    if (p) {
        p->gets++;
        if (hit)
            p->hits++;
    }
    pthread_mutex_unlock(&prefix_lock);
}

void stats_prefix_record_set(const char *key, size_t nkey)
{
    pthread_mutex_lock(&prefix_lock);
    struct prefix_stats *p = prefix_find(key, nkey);
    if (p)
        p->sets++;
    pthread_mutex_unlock(&prefix_lock);
}

void stats_prefix_record_delete(const char *key, size_t nkey)
{
    pthread_mutex_lock(&prefix_lock);
    struct prefix_stats *p = prefix_find(key, nkey);
    if (p)
        p->deletes++;
    pthread_mutex_unlock(&prefix_lock);
}

void stats_prefix_clear(void)
{
    pthread_mutex_lock(&prefix_lock);
    for (unsigned i = 0; i < PREFIX_BUCKETS; i++) {
        struct prefix_stats *p = buckets[i];
        while (p) {
            struct prefix_stats *next = p->next;
            free(p);
            p = next;
        }
        buckets[i] = NULL;
    }
    nprefixes = prefix_bytes = 0;
    pthread_mutex_unlock(&prefix_lock);
}

char *stats_prefix_dump(size_t *len)
{
    static const char fmt[] = "PREFIX %s get %" PRIu64 " hit %" PRIu64
                              " set %" PRIu64 " del %" PRIu64 "\r\n";
    pthread_mutex_lock(&prefix_lock);
    size_t size = nprefixes * (sizeof(fmt) + 4 * 20) + prefix_bytes + 6;
    char *buf = malloc(size);
    size_t off = 0;
    if (buf) {
        for (unsigned i = 0; i < PREFIX_BUCKETS; i++) {
            for (struct prefix_stats *p = buckets[i]; p; p = p->next) {
                off += (size_t)snprintf(buf + off, size - off, fmt, p->name,
                                        p->gets, p->hits, p->sets, p->deletes);
            }
        }
        off += (size_t)snprintf(buf + off, size - off, "END\r\n");
    }
    pthread_mutex_unlock(&prefix_lock);
    *len = off;
    return buf;
}

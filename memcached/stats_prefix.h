/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stats_prefix.h - "stats detail": per key-prefix counters.
 *
 * A key's prefix is the part before the first settings.prefix_delimiter;
 * keys without one are not counted. Recording happens only while
 * "stats detail on" is in effect; one mutex protects the table (memcached
 * has the same cost when detail is on).
 */
#ifndef MEMCACHED_STATS_PREFIX_H
#define MEMCACHED_STATS_PREFIX_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Count a GET (hit or miss), a SET or a DELETE of key under its prefix,
 * while "stats detail on" is in effect (otherwise they return at once).
 * Any worker thread.
 */
void stats_prefix_record_get(const char *key, size_t nkey, bool hit);
void stats_prefix_record_set(const char *key, size_t nkey);
void stats_prefix_record_delete(const char *key, size_t nkey);

/* Forgets every prefix ("stats reset"). */
void stats_prefix_clear(void);

/*
 * The dump: "PREFIX <p> get <n> hit <n> set <n> del <n>\r\n" lines and
 * "END\r\n", malloc'ed (the caller frees), length in *len; NULL if out of
 * memory.
 */
char *stats_prefix_dump(size_t *len);

#endif /* MEMCACHED_STATS_PREFIX_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_admin.h - memcached 1.6.18's administrative ASCII
 * commands: lru_crawler (crawl, metadump, enable, disable, sleep,
 * tocrawl), slabs (reassign, automove), lru (tune, mode, temp_ttl) and
 * cache_memlimit, with memcached's replies byte for byte.
 *
 * Each takes the tokenized line as proto_text.c's dispatcher passes it
 * (t[0] the command, nt tokens with the terminal one) and runs on the
 * connection's worker thread.
 */
#ifndef MEMCACHED_PROTO_ADMIN_H
#define MEMCACHED_PROTO_ADMIN_H

#include <stddef.h>

#include "memcached/conn.h"
#include "memcached/proto_parse.h"

void proto_lru_crawler(struct conn *c, struct token *t, size_t nt);
void proto_slabs(struct conn *c, struct token *t, size_t nt);
void proto_lru(struct conn *c, struct token *t, size_t nt);
void proto_cache_memlimit(struct conn *c, struct token *t, size_t nt);

#endif /* MEMCACHED_PROTO_ADMIN_H */

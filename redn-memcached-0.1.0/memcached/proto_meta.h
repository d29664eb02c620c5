/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_meta.h - the meta protocol of memcached 1.6.18: mg, ms,
 * md, ma, mn, me, with their flags, base64 keys, opaque tokens, quiet mode
 * and the stale / win recache protocol.
 */
#ifndef MEMCACHED_PROTO_META_H
#define MEMCACHED_PROTO_META_H

#include <stddef.h>
#include <stdint.h>

#include "memcached/conn.h"
#include "memcached/proto_parse.h"

/* Runs a two-letter command starting with 'm' (tokenized). */
void proto_meta_process(struct conn *c, struct token *t, size_t nt);

/* Replies to an ms whose data block was stored with status st. */
void proto_meta_set_done(struct conn *c, struct item *it, enum item_status st,
                         uint64_t cas);

#endif /* MEMCACHED_PROTO_META_H */

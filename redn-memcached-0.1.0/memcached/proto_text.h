/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_text.h - the classic ASCII protocol: command dispatch
 * (meta commands go on to proto_meta.c, "stats" to stats.c) and the
 * classic storage, retrieval and admin commands with memcached 1.6.18's
 * exact replies.
 */
#ifndef MEMCACHED_PROTO_TEXT_H
#define MEMCACHED_PROTO_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "memcached/conn.h"
#include "memcached/proto_parse.h"

/* Runs one command line (NUL-terminated at len, no "\r\n"). */
void proto_text_process(struct conn *c, char *line, size_t len);

/* The data block of a storage command arrived (c->pend): store and reply. */
void proto_nread_done(struct conn *c);

/* memcached's set_noreply_maybe: a last token "noreply" silences replies. */
bool proto_noreply_maybe(struct conn *c, struct token *t, size_t nt);

#endif /* MEMCACHED_PROTO_TEXT_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stats_cmd.h - the "stats" command and its sub-commands:
 * settings, items, slabs, sizes, sizes_enable/disable, conns,
 * detail on|off|dump, reset, cachedump.
 */
#ifndef MEMCACHED_STATS_CMD_H
#define MEMCACHED_STATS_CMD_H

#include <stddef.h>

#include "memcached/conn.h"
#include "memcached/proto_parse.h"

/*
 * Runs "stats [sub-command]" for c (t[0] is "stats", nt tokens): queues
 * the reply lines on c, or memcached 1.6.18's error reply for a bad
 * sub-command (ERROR for an unknown one). Called from c's worker thread.
 */
void stats_command(struct conn *c, struct token *t, size_t nt);

#endif /* MEMCACHED_STATS_CMD_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stats_cmd.h - the "stats" command and its sub-commands:
 * settings, items, slabs, sizes, sizes_enable/disable, conns,
 * detail on|off|dump, reset, cachedump.
 */
#ifndef MEMCACHED_STATS_CMD_H
#define MEMCACHED_STATS_CMD_H

#include <stdbool.h>
#include <stddef.h>

#include "memcached/conn.h"
#include "memcached/proto_parse.h"
#include "memcached/stat_sink.h"

/*
 * Runs "stats [sub-command]" for c (t[0] is "stats", nt tokens): queues
 * the reply lines on c, or memcached 1.6.18's error reply for a bad
 * sub-command (ERROR for an unknown one). Called from c's worker thread.
 */
void stats_command(struct conn *c, struct token *t, size_t nt);

/*
 * The groups both protocols report, one statistic at a time to sink, with
 * memcached 1.6.18's names and order (no terminator: the caller adds
 * END or the binary protocol's empty STAT packet). stats_general is plain
 * "stats", stats_settings "stats settings"; stats_sizes_switch turns the
 * size histogram on or off and reports sizes_status. Any worker thread.
 */
void stats_general(stat_sink_fn sink, void *ctx);
void stats_settings(stat_sink_fn sink, void *ctx);
void stats_sizes_switch(bool on, stat_sink_fn sink, void *ctx);

#endif /* MEMCACHED_STATS_CMD_H */

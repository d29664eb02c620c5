/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/compat_opts.h - memcached 1.6.18 command-line options checked
 * by one table: TLS (-o ssl_*), stored in tls_config (memcached/tls.h);
 * and options for machinery this server does not have, which have no
 * effect here (the -h text says so): external storage (-o ext_*,
 * slab_automove_freeratio), NAPI ids (-N), sock_cookie_id, no_hashexpand,
 * slab_sizes, drop_privileges. All are checked as memcached checks them,
 * with its messages.
 */
#ifndef MEMCACHED_COMPAT_OPTS_H
#define MEMCACHED_COMPAT_OPTS_H

#include <stdbool.h>

#include "memcached/stat_sink.h"

/*
 * One -o suboption opt (val: after '=', or NULL). Returns 1 if it is one
 * of these and valid (a TLS one is stored; val must then outlive the
 * server, as argv does), 0 if it is none of them, -1 if invalid: *err is
 * memcached's message then (static storage). Single-threaded (start-up).
 */
int compat_option(const char *opt, const char *val, const char **err);

/* -N n: memcached's checks (n > 0 here, n <= threads in
 * compat_check()). Returns NULL or the message. */
const char *compat_napi_ids(const char *arg);

/* "stats settings": the extstore options as memcached 1.6.18 (built with
 * extstore, as Debian's) shows them, given or default; and num_napi_ids
 * (-N; "(null)" without it). */
void compat_stats(stat_sink_fn sink, void *ctx);
void compat_napi_stats(stat_sink_fn sink, void *ctx);

/* The checks memcached makes once every option is read (ext_path with -U
 * or a large -I; -N against -t). NULL or the message. */
const char *compat_check(int threads, int udpport, unsigned long item_max);

/* The -h lines for these options. */
extern const char compat_usage[];

#endif /* MEMCACHED_COMPAT_OPTS_H */

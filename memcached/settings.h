/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/settings.h - the server's configuration, filled from the command
 * line by main.c before any thread starts and read-only afterwards, except
 * for the few fields the protocol may change at run time (verbosity,
 * detail_enabled, track_sizes, maxbytes, lru_crawler, lru_crawler_sleep,
 * lru_crawler_tocrawl, slab_automove: read and written with SETTING_GET /
 * SETTING_SET).
 */
#ifndef MEMCACHED_SETTINGS_H
#define MEMCACHED_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/barrier.h"

#define MC_VERSION "1.6.18"

/* memcached's slab page size, which -o slab_chunk_max must divide (our
 * slab pages are another matter: slabs.h). */
#define MC_SLAB_PAGE_SIZE (1024 * 1024)

/* Exit code for bad command-line usage (sysexits.h EX_USAGE). */
#define MC_EXIT_USAGE 64

/* -B: the protocol a TCP or unix connection speaks (UDP decides per
 * datagram, as memcached does). */
enum mc_protocol {
    MC_PROTO_NEGOTIATE, /* auto: a first byte of 0x80 means binary */
    MC_PROTO_ASCII,
    MC_PROTO_BINARY,
};

/*
 * memcached's segmented-LRU tunables ("lru tune|mode|temp_ttl", -o
 * hot_lru_pct, ...). This server keeps one LRU per class, so they only
 * are validated, kept and reported (stats settings). Changed at run time:
 * read and written whole with settings_lru_get() / settings_lru_set().
 */
struct lru_tunables {
    int hot_lru_pct, warm_lru_pct;
    double hot_max_factor, warm_max_factor;
    bool segmented;
    bool temp_lru;
    int temporary_ttl;
};

struct settings {
    size_t maxbytes;              /* -m, bytes of item memory */
    int maxconns;                 /* -c */
    int port;                     /* -p */
    int udpport;                  /* -U, 0 = off */
    char *inter;                  /* -l, comma-separated listen addresses */
    int verbose;                  /* -v count; "verbosity" changes it */
    bool evict_to_free;           /* false with -M */
    char *socketpath;             /* -s, NULL = TCP/UDP */
    int access;                   /* -a, umask of the unix socket (octal) */
    bool shutdown_command;        /* -A */
    double factor;                /* -f */
    int chunk_size;               /* -n */
    int num_threads;              /* -t */
    char prefix_delimiter;        /* -D */
    bool detail_enabled;          /* "stats detail on" */
    int reqs_per_event;           /* -R */
    int backlog;                  /* -b */
    enum mc_protocol protocol;    /* -B, memcached's binding_protocol */
    size_t item_size_max;         /* -I */
    bool maxconns_fast;           /* -o maxconns_fast */
    int hashpower_init;           /* -o hashpower */
    bool flush_enabled;           /* false with -F */
    bool use_cas;                 /* false with -C: clients see CAS 0 */
    bool dump_enabled;            /* false with -X */
    bool lru_crawler;             /* -o no_lru_crawler turns it off */
    int lru_crawler_sleep;        /* -o lru_crawler_sleep, microseconds */
    uint32_t lru_crawler_tocrawl; /* -o lru_crawler_tocrawl */
    int idle_timeout;             /* -o idle_timeout, seconds; <= 0: never */
    uint32_t watcher_logbuf_size; /* -o ..., bytes: shown, no effect here */
    uint32_t worker_logbuf_size;
    uint32_t read_buf_mem_limit;
    int slab_chunk_max;         /* -o slab_chunk_max, no effect here */
    int slab_reassign;          /* 0 with -o no_slab_reassign */
    int slab_automove;          /* -o slab_automove, "slabs automove" */
    double slab_automove_ratio; /* only through settings_automove_ratio*() */
    int slab_automove_window;   /* -o slab_automove_window */
    int lru_maintainer;         /* 0 with -o no_lru_maintainer/no_modern */
    struct lru_tunables lru;    /* see above: only through settings_lru_* */
    bool watch_enabled;         /* false with -W */
    bool track_sizes;           /* -o track_sizes, "stats sizes_enable" */
    bool daemonize;             /* -d */
    char *pid_file;             /* -P */
    char *username;             /* -u */
    bool sasl;                  /* -S: binary clients log in with SASL */
    char *auth_file;            /* -Y: ASCII logins from this file */
};

extern struct settings settings;

/* Fills settings with memcached 1.6's defaults (but -l 127.0.0.1). */
void settings_init(void);

/* Copies of settings.lru, under a lock (any thread). */
void settings_lru_get(struct lru_tunables *out);
void settings_lru_set(const struct lru_tunables *in);

/* slab_automove_ratio ("slabs automove ratio" changes it), under a lock
 * (any thread). */
double settings_automove_ratio(void);
void settings_set_automove_ratio(double ratio);

/* Reads / writes a run-time tunable field without a data race. */
#define SETTING_GET(field)    load_relaxed(&settings.field)
#define SETTING_SET(field, v) store_relaxed(&settings.field, (v))

#endif /* MEMCACHED_SETTINGS_H */

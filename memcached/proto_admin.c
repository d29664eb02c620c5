/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_admin.c - administrative commands (see proto_admin.h).
 *
 * Argument checks follow memcached 1.6.18's order, so every malformed line
 * gets the reply memcached gives. lru_crawler metadump streams: the
 * connection asks for the dump's next part whenever its output has drained
 * (conn_stream()), so a dump of any size holds a bounded buffer and the
 * worker's other clients are served in between (memcached's crawler thread
 * writes into a buffer the connection drains).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "memcached/crawler.h"
#include "memcached/items.h"
#include "memcached/proto_admin.h"
#include "memcached/proto_text.h"
#include "memcached/settings.h"
#include "memcached/slab_mover.h"
#include "memcached/slabs.h"

#define MEMLIMIT_MIN_MB   8
#define MEMLIMIT_MAX_MB   1000000000u
#define CRAWLER_SLEEP_MAX 1000000 /* microseconds */

/* ---- lru_crawler ---- */

enum class_list {
    CLASSES_OK,
    CLASSES_BAD,  /* BADCLASS */
    CLASSES_HASH, /* "hash": the whole index */
};

/* "all", "hash" or "id,id,..." (1..63) as memcached reads it. */
static enum class_list parse_classes(char *s, uint64_t *mask)
{
    *mask = 0;
    if (strcmp(s, "all") == 0) {
        *mask = CRAWLER_ALL_CLASSES;
        return CLASSES_OK;
    }
    if (strcmp(s, "hash") == 0) {
        *mask = CRAWLER_ALL_CLASSES;
        return CLASSES_HASH;
    }
    for (char *save, *id = strtok_r(s, ",", &save); id;
         id = strtok_r(NULL, ",", &save)) {
        uint32_t n;
        if (!parse_u32(id, &n) || n == 0 || n >= SLABS_MAX_CLASSES)
            return CLASSES_BAD;
        *mask |= UINT64_C(1) << n;
    }
    return CLASSES_OK;
}

/* One metadump line, memcached's format (a "\n" ends it, not "\r\n"). */
static void dump_line(void *ctx, struct item *it)
{
    struct conn *c = ctx;
    char *p = conn_out_reserve(c, 3 * RDN_KEY_MAX + 160);

    if (p == NULL)
        return;
    char *s = p;
    uint32_t exptime = load_relaxed(&it->nic.exptime);
    memcpy(p, "key=", 4);
    p = uri_encode(p + 4, item_key(it), it->nic.nkey);
    p += sprintf(p, " exp=%lld la=%u cas=%llu fetch=%s cls=%u size=%zu\n",
                 exptime == 0 ? -1LL : (long long)exptime,
                 load_relaxed(&it->atime), (unsigned long long)item_cas(it),
                 item_has_flag(it, ITEM_FETCHED) ? "yes" : "no", it->clsid,
                 item_mc_ntotal(it));
    conn_out_commit(c, (size_t)(p - s));
}

/* Items per part of a metadump: about 16 KB of lines, one LRU lock hold. */
#define DUMP_PART_ITEMS 128

static bool metadump_part(struct conn *c, void *state)
{
    if (!crawler_dump_next(state, DUMP_PART_ITEMS, dump_line, c))
        return false;
    conn_out_line(c, "END");
    return true;
}

static void metadump_free(void *state)
{
    crawler_dump_end(state);
}

static void crawler_metadump(struct conn *c, char *classes)
{
    uint64_t mask;

    if (!SETTING_GET(lru_crawler)) {
        conn_out_line(c, "CLIENT_ERROR lru crawler disabled");
        return;
    }
    if (!settings.dump_enabled) {
        conn_out_line(c, "ERROR metadump not allowed");
        return;
    }
    /* memcached's dump takes the connection over, so it refuses one
     * that replies of commands before it in the same read still wait on */
    if (c->out.bytes > 0) {
        conn_out_line(c,
                      "ERROR cannot pipeline other commands before metadump");
        return;
    }
    if (parse_classes(classes, &mask) == CLASSES_BAD) {
        conn_out_line(c, "BADCLASS invalid class id");
        return;
    }
    /* memcached's crawler writes to the UDP socket as to a stream, which
     * fails: no reply (a dump would not fit in datagrams anyway) */
    if (c->transport == TRANSPORT_UDP)
        return;
    struct crawler_dump *d = crawler_dump_begin(mask);
    if (d == NULL) {
        conn_out_error(c, "SERVER_ERROR out of memory");
        return;
    }
    conn_stream(c, metadump_part, metadump_free, d);
}

static void crawler_crawl(struct conn *c, char *classes)
{
    uint64_t mask;

    if (!SETTING_GET(lru_crawler)) {
        conn_out_line(c, "CLIENT_ERROR lru crawler disabled");
        return;
    }
    switch (parse_classes(classes, &mask)) {
    case CLASSES_BAD:
        conn_out_line(c, "BADCLASS invalid class id");
        return;
    case CLASSES_HASH: /* memcached walks the index for metadump only */
        conn_out_line(c, "ERROR an unknown error happened");
        return;
    default:
        break;
    }
    conn_out_line(c, crawler_request(mask)
                         ? "OK"
                         : "BUSY currently processing crawler request");
}

void proto_lru_crawler(struct conn *c, struct token *t, size_t nt)
{
    const char *sub = nt > 2 ? t[1].value : "";
    uint32_t n;

    if (nt == 4 && strcmp(sub, "crawl") == 0) {
        crawler_crawl(c, t[2].value);
    } else if (nt == 4 && strcmp(sub, "metadump") == 0) {
        crawler_metadump(c, t[2].value);
    } else if (nt == 4 && strcmp(sub, "tocrawl") == 0) {
        if (!parse_u32(t[2].value, &n)) {
            conn_out_line(c, "CLIENT_ERROR bad command line format");
            return;
        }
        SETTING_SET(lru_crawler_tocrawl, n);
        conn_out_line(c, "OK");
    } else if (nt == 4 && strcmp(sub, "sleep") == 0) {
        if (!parse_u32(t[2].value, &n)) {
            conn_out_line(c, "CLIENT_ERROR bad command line format");
            return;
        }
        if (n > CRAWLER_SLEEP_MAX) {
            conn_out_line(c, "CLIENT_ERROR sleep must be one second or less");
            return;
        }
        SETTING_SET(lru_crawler_sleep, (int)n);
        conn_out_line(c, "OK");
    } else if (nt == 3 && strcmp(sub, "enable") == 0) {
        conn_out_line(c, crawler_start() == 0
                             ? "OK"
                             : "ERROR failed to start lru crawler thread");
    } else if (nt == 3 && strcmp(sub, "disable") == 0) {
        crawler_stop();
        conn_out_line(c, "OK");
    } else {
        conn_out_line(c, "ERROR");
    }
}

/* ---- slabs ---- */

static void slabs_automove(struct conn *c, struct token *t, size_t nt)
{
    uint32_t level;
    double ratio;

    proto_noreply_maybe(c, t, nt);
    if (strcmp(t[2].value, "ratio") == 0) {
        if (nt < 5 || !parse_double(t[3].value, &ratio)) {
            conn_out_line(c, "ERROR");
            return;
        }
        settings_set_automove_ratio(ratio);
    } else {
        if (!parse_u32(t[2].value, &level)) {
            conn_out_line(c, "CLIENT_ERROR bad command line format");
            return;
        }
        if (level > 2) {
            conn_out_line(c, "ERROR");
            return;
        }
        SETTING_SET(slab_automove, (int)level);
    }
    conn_out_line(c, "OK");
}

void proto_slabs(struct conn *c, struct token *t, size_t nt)
{
    static const char *const replies[] = {
        [SLABS_REASSIGN_OK] = "OK",
        [SLABS_REASSIGN_RUNNING] = "BUSY currently processing reassign "
                                   "request",
        [SLABS_REASSIGN_BADCLASS] = "BADCLASS invalid src or dst class id",
        [SLABS_REASSIGN_NOSPARE] = "NOSPARE source class has no spare pages",
        [SLABS_REASSIGN_SAME] = "SAME src and dst class are identical",
    };
    int32_t src, dst;

    if (nt == 5 && strcmp(t[1].value, "reassign") == 0) {
        if (!settings.slab_reassign) {
            conn_out_line(c, "CLIENT_ERROR slab reassignment disabled");
            return;
        }
        if (!parse_i32(t[2].value, &src) || !parse_i32(t[3].value, &dst)) {
            conn_out_line(c, "CLIENT_ERROR bad command line format");
            return;
        }
        conn_out_line(c, replies[slab_mover_reassign(src, dst)]);
    } else if (nt >= 4 && strcmp(t[1].value, "automove") == 0) {
        slabs_automove(c, t, nt);
    } else {
        conn_out_line(c, "ERROR");
    }
}

/* ---- lru ---- */

static void lru_tune(struct conn *c, struct token *t)
{
    uint32_t hot, warm;
    double hot_factor, warm_factor;
    struct lru_tunables lt;

    if (!parse_u32(t[2].value, &hot) || !parse_u32(t[3].value, &warm) ||
        !parse_double(t[4].value, &hot_factor) ||
        !parse_double(t[5].value, &warm_factor)) {
        conn_out_line(c, "ERROR");
    } else if ((uint64_t)hot + warm > 80) {
        conn_out_line(c, "ERROR hot and warm pcts must not exceed 80");
    } else if (warm_factor <= 0 || hot_factor <= 0) {
        conn_out_line(c, "ERROR hot/warm age factors must be greater than 0");
    } else {
        settings_lru_get(&lt);
        lt.hot_lru_pct = (int)hot;
        lt.warm_lru_pct = (int)warm;
        lt.hot_max_factor = hot_factor;
        lt.warm_max_factor = warm_factor;
        settings_lru_set(&lt);
        conn_out_line(c, "OK");
    }
}

void proto_lru(struct conn *c, struct token *t, size_t nt)
{
    struct lru_tunables lt;
    int32_t ttl;

    proto_noreply_maybe(c, t, nt);
    if (strcmp(t[1].value, "tune") == 0 && nt >= 7) {
        lru_tune(c, t);
        return;
    }
    if (nt < 4 || !settings.lru_maintainer) {
        conn_out_line(c, "ERROR");
        return;
    }
    settings_lru_get(&lt);
    if (strcmp(t[1].value, "mode") == 0) {
        if (strcmp(t[2].value, "flat") == 0) {
            lt.segmented = false;
        } else if (strcmp(t[2].value, "segmented") == 0) {
            lt.segmented = true;
        } else {
            conn_out_line(c, "ERROR");
            return;
        }
    } else if (strcmp(t[1].value, "temp_ttl") == 0) {
        if (!parse_i32(t[2].value, &ttl)) {
            conn_out_line(c, "ERROR");
            return;
        }
        lt.temp_lru = ttl >= 0;
        if (ttl >= 0)
            lt.temporary_ttl = ttl;
    } else {
        conn_out_line(c, "ERROR");
        return;
    }
    settings_lru_set(&lt);
    conn_out_line(c, "OK");
}

/* ---- cache_memlimit ---- */

void proto_cache_memlimit(struct conn *c, struct token *t, size_t nt)
{
    uint32_t mb;

    proto_noreply_maybe(c, t, nt);
    if (!parse_u32(t[1].value, &mb)) {
        conn_out_line(c, "ERROR");
    } else if (mb < MEMLIMIT_MIN_MB) {
        conn_out_line(c, "MEMLIMIT_TOO_SMALL cannot set maxbytes to less "
                         "than 8m");
    } else if (mb > MEMLIMIT_MAX_MB) {
        conn_out_line(c, "MEMLIMIT_ADJUST_FAILED input value is megabytes "
                         "not bytes");
    } else if (slabs_adjust_mem_limit((size_t)mb * 1024 * 1024) != 0) {
        conn_out_line(c, "MEMLIMIT_ADJUST_FAILED out of bounds or unable "
                         "to adjust");
    } else {
        SETTING_SET(maxbytes, (size_t)mb * 1024 * 1024);
        if (SETTING_GET(verbose) > 0)
            fprintf(stderr, "maxbytes adjusted to %llum\n",
                    (unsigned long long)mb);
        conn_out_line(c, "OK");
    }
}

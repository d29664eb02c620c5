/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_text.c - classic ASCII commands (see proto_text.h).
 *
 * Argument checking follows memcached 1.6.18 step by step, so that every
 * malformed line gets the reply memcached gives: a wrong token count is
 * "ERROR", a bad number or an oversize key "CLIENT_ERROR bad command line
 * format", and a rejected data block is swallowed. Numbers memcached would
 * silently truncate (flags above 2^32, lengths above 2^31) are rejected as
 * bad numbers instead.
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/items.h"
#include "memcached/proto_admin.h"
#include "memcached/proto_meta.h"
#include "memcached/proto_text.h"
#include "memcached/rdn_glue.h"
#include "memcached/settings.h"
#include "memcached/stats.h"
#include "memcached/stats_cmd.h"
#include "memcached/stats_prefix.h"
#include "memcached/tls.h"
#include "memcached/watch.h"

#define MAX_VERBOSITY_LEVEL 2

bool proto_noreply_maybe(struct conn *c, struct token *t, size_t nt)
{
    struct token *last = &t[nt - 2];

    if (last->value && strcmp(last->value, "noreply") == 0)
        c->noreply = true;
    return c->noreply;
}

static void out_bad_format(struct conn *c)
{
    conn_out_line(c, "CLIENT_ERROR bad command line format");
}

/* ---- retrieval ---- */

/* "VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\n"; takes it's ref. */
static void out_value(struct conn *c, struct item *it, bool with_cas)
{
    size_t nkey = it->nic.nkey;
    char *p = conn_out_reserve(c, 6 + nkey + 3 * 21 + 2);

    if (p == NULL) {
        item_release(it);
        return;
    }
    char *s = p;
    memcpy(p, "VALUE ", 6);
    p += 6;
    memcpy(p, item_key(it), nkey);
    p += nkey;
    *p++ = ' ';
    p = fmt_u64(p, it->nic.flags);
    *p++ = ' ';
    p = fmt_u64(p, it->nic.nbytes);
    if (with_cas) {
        *p++ = ' ';
        p = fmt_u64(p, item_cas(it));
    }
    *p++ = '\r';
    *p++ = '\n';
    conn_out_commit(c, (size_t)(p - s));
    conn_out_value(c, it);
    conn_out_text(c, "\r\n", 2);
}

static void get_one(struct conn *c, const char *key, size_t nkey, bool with_cas,
                    bool touch, uint32_t exptime)
{
    stats_inc(TC_GET_CMDS);
    if (touch)
        stats_inc(TC_TOUCH_CMDS);
    struct item *it =
        item_get(key, nkey, touch ? FETCH_TOUCH : FETCH_BUMP, exptime);
    if (SETTING_GET(detail_enabled))
        stats_prefix_record_get(key, nkey, it != NULL);
    if (it)
        out_value(c, it, with_cas);
}

/* get, gets, gat, gats: keys may span several tokenizer passes. */
static void cmd_get(struct conn *c, struct token *t, size_t nt, bool with_cas,
                    bool touch)
{
    struct out_mark mark;
    uint32_t exptime = 0;
    struct token *key = &t[1];

    (void)nt;
    if (touch) {
        int32_t e;
        if (!parse_i32(t[1].value, &e)) {
            conn_out_line(c, "CLIENT_ERROR invalid exptime argument");
            return;
        }
        exptime = items_realtime(e);
        key = &t[2];
    }
    conn_out_mark(c, &mark);
    for (;;) {
        for (; key->length != 0; key++) {
            if (key->length > KEY_MAX_LENGTH) {
                /* Nothing of a failed multiget is sent. */
                conn_out_rollback(c, &mark);
                out_bad_format(c);
                return;
            }
            get_one(c, key->value, key->length, with_cas, touch, exptime);
        }
        if (key->value == NULL)
            break;
        tokenize(key->value, t, MAX_TOKENS);
        key = &t[0];
    }
    conn_out_line(c, "END");
}

static void cmd_get_plain(struct conn *c, struct token *t, size_t nt)
{
    cmd_get(c, t, nt, false, false);
}

static void cmd_gets(struct conn *c, struct token *t, size_t nt)
{
    cmd_get(c, t, nt, true, false);
}

static void cmd_gat(struct conn *c, struct token *t, size_t nt)
{
    cmd_get(c, t, nt, false, true);
}

static void cmd_gats(struct conn *c, struct token *t, size_t nt)
{
    cmd_get(c, t, nt, true, true);
}

/* ---- storage ---- */

static void update(struct conn *c, struct token *t, size_t nt, enum store_op op)
{
    uint32_t flags;
    int32_t exptime, vlen;
    uint64_t cas = 0;
    enum item_status why;
    const char *key = t[1].value;
    size_t nkey = t[1].length;

    proto_noreply_maybe(c, t, nt);
    if (nkey > KEY_MAX_LENGTH || !parse_u32(t[2].value, &flags) ||
        !parse_i32(t[3].value, &exptime) || !parse_i32(t[4].value, &vlen) ||
        (op == STORE_CAS && !parse_u64(t[5].value, &cas)) || vlen < 0 ||
        vlen > INT_MAX - 2) {
        out_bad_format(c);
        return;
    }
    if (SETTING_GET(detail_enabled))
        stats_prefix_record_set(key, nkey);
    struct item *it = item_alloc(key, nkey, flags, items_realtime(exptime),
                                 (size_t)vlen, &why);
    if (it == NULL) {
        stats_inc(why == ITEM_TOO_LARGE ? TC_STORE_TOO_LARGE
                                        : TC_STORE_NO_MEMORY);
        watch_log_store(key, nkey, item_store_status(why), store_op_name(op),
                        NULL);
        conn_out_line(c, why == ITEM_TOO_LARGE
                             ? "SERVER_ERROR object too large for cache"
                             : "SERVER_ERROR out of memory storing object");
        conn_swallow(c, (size_t)vlen + 2);
        if (op == STORE_SET)
            item_unlink_key(key, nkey);
        return;
    }
    c->pend = (struct store_pending){
        .it = it,
        .req = {.op = op, .cas = cas},
        .noreply = c->noreply,
    };
    conn_read_data(c);
}

static void cmd_set(struct conn *c, struct token *t, size_t nt)
{
    update(c, t, nt, STORE_SET);
}

static void cmd_add(struct conn *c, struct token *t, size_t nt)
{
    update(c, t, nt, STORE_ADD);
}

static void cmd_replace(struct conn *c, struct token *t, size_t nt)
{
    update(c, t, nt, STORE_REPLACE);
}

static void cmd_append(struct conn *c, struct token *t, size_t nt)
{
    update(c, t, nt, STORE_APPEND);
}

static void cmd_prepend(struct conn *c, struct token *t, size_t nt)
{
    update(c, t, nt, STORE_PREPEND);
}

static void cmd_cas(struct conn *c, struct token *t, size_t nt)
{
    update(c, t, nt, STORE_CAS);
}

static const char *store_reply(enum item_status st)
{
    switch (st) {
    case ITEM_OK:
        return "STORED";
    case ITEM_EXISTS:
        return "EXISTS";
    case ITEM_NOT_FOUND:
        return "NOT_FOUND";
    case ITEM_NO_MEMORY:
        return "SERVER_ERROR out of memory storing object";
    default:
        return "NOT_STORED";
    }
}

void proto_nread_done(struct conn *c)
{
    struct store_pending *p = &c->pend;
    struct item *it = p->it;
    const char *end = item_value(it) + it->nic.nbytes;
    uint64_t cas = 0;

    p->it = NULL;
    c->noreply = p->noreply;
    if (end[0] != '\r' || end[1] != '\n') {
        if (p->meta)
            c->noreply = false; /* meta always reports errors */
        conn_out_line(c, "CLIENT_ERROR bad data chunk");
    } else {
        enum item_status st = item_store(it, &p->req, &cas);
        if (p->meta)
            proto_meta_set_done(c, it, st, cas);
        else
            conn_out_line(c, store_reply(st));
    }
    item_release(it);
}

/* ---- other key commands ---- */

static void cmd_delete(struct conn *c, struct token *t, size_t nt)
{
    static const struct delete_req plain = {0};

    if (nt > 3) {
        bool hold_is_zero = strcmp(t[2].value, "0") == 0;
        bool noreply = proto_noreply_maybe(c, t, nt);
        bool valid = (nt == 4 && (hold_is_zero || noreply)) ||
                     (nt == 5 && hold_is_zero && noreply);
        if (!valid) {
            conn_out_line(c, "CLIENT_ERROR bad command line format.  "
                             "Usage: delete <key> [noreply]");
            return;
        }
    }
    if (t[1].length > KEY_MAX_LENGTH) {
        out_bad_format(c);
        return;
    }
    if (SETTING_GET(detail_enabled))
        stats_prefix_record_delete(t[1].value, t[1].length);
    enum item_status st = item_delete(t[1].value, t[1].length, &plain);
    conn_out_line(c, st == ITEM_OK ? "DELETED" : "NOT_FOUND");
}

static void arith(struct conn *c, struct token *t, size_t nt, bool incr)
{
    struct arith_req req = {.incr = incr};
    struct arith_res res;
    char buf[24];

    proto_noreply_maybe(c, t, nt);
    if (t[1].length > KEY_MAX_LENGTH) {
        out_bad_format(c);
        return;
    }
    if (!parse_u64(t[2].value, &req.delta)) {
        conn_out_line(c, "CLIENT_ERROR invalid numeric delta argument");
        return;
    }
    switch (item_arith(t[1].value, t[1].length, &req, &res)) {
    case ITEM_OK:
        *fmt_u64(buf, res.value) = '\0';
        conn_out_line(c, buf);
        break;
    case ITEM_NON_NUMERIC:
        conn_out_line(c, "CLIENT_ERROR cannot increment or decrement "
                         "non-numeric value");
        break;
    case ITEM_NO_MEMORY:
        conn_out_line(c, "SERVER_ERROR out of memory");
        break;
    default:
        conn_out_line(c, "NOT_FOUND");
        break;
    }
}

static void cmd_incr(struct conn *c, struct token *t, size_t nt)
{
    arith(c, t, nt, true);
}

static void cmd_decr(struct conn *c, struct token *t, size_t nt)
{
    arith(c, t, nt, false);
}

static void cmd_touch(struct conn *c, struct token *t, size_t nt)
{
    int32_t exptime;

    proto_noreply_maybe(c, t, nt);
    if (t[1].length > KEY_MAX_LENGTH) {
        out_bad_format(c);
        return;
    }
    if (!parse_i32(t[2].value, &exptime)) {
        conn_out_line(c, "CLIENT_ERROR invalid exptime argument");
        return;
    }
    stats_inc(TC_TOUCH_CMDS);
    enum item_status st =
        item_touch(t[1].value, t[1].length, items_realtime(exptime));
    conn_out_line(c, st == ITEM_OK ? "TOUCHED" : "NOT_FOUND");
}

/* ---- admin commands ---- */

static void cmd_flush_all(struct conn *c, struct token *t, size_t nt)
{
    int32_t exptime = 0;

    proto_noreply_maybe(c, t, nt);
    stats_inc(TC_FLUSH_CMDS);
    if (!settings.flush_enabled) {
        conn_out_line(c, "CLIENT_ERROR flush_all not allowed");
        return;
    }
    if (nt != (c->noreply ? 3u : 2u) && !parse_i32(t[1].value, &exptime)) {
        conn_out_line(c, "CLIENT_ERROR invalid exptime argument");
        return;
    }
    uint32_t when = exptime > 0 ? items_realtime(exptime) : 0;

    items_flush(when);
    rdn_glue_flush(when); /* NIC clients must stop trusting their table */
    conn_out_line(c, "OK");
}

static void cmd_version(struct conn *c, struct token *t, size_t nt)
{
    (void)t;
    (void)nt;
    conn_out_line(c, "VERSION " MC_VERSION);
}

static void cmd_verbosity(struct conn *c, struct token *t, size_t nt)
{
    uint32_t level;

    proto_noreply_maybe(c, t, nt);
    if (!parse_u32(t[1].value, &level)) {
        out_bad_format(c);
        return;
    }
    SETTING_SET(verbose,
                level > MAX_VERBOSITY_LEVEL ? MAX_VERBOSITY_LEVEL : (int)level);
    conn_out_line(c, "OK");
}

static void cmd_quit(struct conn *c, struct token *t, size_t nt)
{
    (void)t;
    (void)nt;
    conn_close_after_write(c);
}

static void cmd_shutdown(struct conn *c, struct token *t, size_t nt)
{
    if (!settings.shutdown_command) {
        conn_out_line(c, "ERROR: shutdown not enabled");
        return;
    }
    if (nt == 2) {
        conn_close_after_write(c);
        c->close_reason = CLOSE_SHUTDOWN;
        raise(SIGINT);
    } else if (nt == 3 && strcmp(t[1].value, "graceful") == 0) {
        conn_close_after_write(c);
        c->close_reason = CLOSE_SHUTDOWN;
        raise(SIGUSR1);
    } else {
        conn_out_line(c, "CLIENT_ERROR invalid shutdown mode");
    }
}

/* Reloads the -Z certificate files. memcached's error reply is sent even
 * to noreply. */
static void cmd_refresh_certs(struct conn *c, struct token *t, size_t nt)
{
    char err[4096 + 320]; /* memcached's: a path and two messages */

    proto_noreply_maybe(c, t, nt);
    if (tls_refresh_certs(err, sizeof(err)))
        conn_out_line(c, "OK");
    else
        conn_out_text(c, err, strlen(err));
}

/* ---- dispatch ---- */

typedef void (*cmd_fn)(struct conn *c, struct token *t, size_t nt);

struct command {
    const char *name;
    size_t min_tokens, max_tokens; /* terminal token included */
    cmd_fn fn;
};

static const struct command commands[] = {
    {"get", 3, SIZE_MAX, cmd_get_plain},
    {"bget", 3, SIZE_MAX, cmd_get_plain}, /* memcached keeps this alias */
    {"gets", 3, SIZE_MAX, cmd_gets},
    {"gat", 3, SIZE_MAX, cmd_gat},
    {"gats", 3, SIZE_MAX, cmd_gats},
    {"set", 6, 7, cmd_set},
    {"add", 6, 7, cmd_add},
    {"replace", 6, 7, cmd_replace},
    {"append", 6, 7, cmd_append},
    {"prepend", 6, 7, cmd_prepend},
    {"cas", 7, 8, cmd_cas},
    {"incr", 4, 5, cmd_incr},
    {"decr", 4, 5, cmd_decr},
    {"delete", 3, 5, cmd_delete},
    {"touch", 4, 5, cmd_touch},
    {"stats", 2, SIZE_MAX, stats_command},
    {"flush_all", 2, 4, cmd_flush_all},
    {"version", 2, SIZE_MAX, cmd_version},
    {"verbosity", 3, 4, cmd_verbosity},
    {"quit", 2, SIZE_MAX, cmd_quit},
    {"shutdown", 2, SIZE_MAX, cmd_shutdown},
    {"lru_crawler", 2, SIZE_MAX, proto_lru_crawler},
    {"slabs", 2, SIZE_MAX, proto_slabs},
    {"lru", 3, SIZE_MAX, proto_lru},
    {"cache_memlimit", 3, 4, proto_cache_memlimit},
    {"watch", 2, SIZE_MAX, proto_watch},
    {"refresh_certs", 2, SIZE_MAX, cmd_refresh_certs},
};

/*
 * An unknown command whose last word starts with "HTTP/" is an HTTP
 * request sent to the wrong port: memcached closes the connection. Not
 * for words memcached dispatches by their first letter (g s a c i d t)
 * or knows (watch, lru), which get ERROR there.
 */
static bool looks_like_http(const struct token *t, size_t nt)
{
    if (strchr("gsacidt", t[0].value[0]) != NULL ||
        strcmp(t[0].value, "watch") == 0 || strcmp(t[0].value, "lru") == 0)
        return false;
    return strncmp(t[nt - 2].value, "HTTP/", 5) == 0;
}

void proto_text_process(struct conn *c, char *line, size_t len)
{
    struct token t[MAX_TOKENS];

    (void)len;
    if (SETTING_GET(verbose) > 1)
        fprintf(stderr, "<%d %s\n", c->fd, line);
    size_t nt = tokenize(line, t, MAX_TOKENS);
    if (nt < 2 || t[0].length < 2) {
        conn_out_line(c, "ERROR");
        return;
    }
    if (t[0].length == 2 && t[0].value[0] == 'm') {
        proto_meta_process(c, t, nt);
        return;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const struct command *cmd = &commands[i];
        if (strcmp(t[0].value, cmd->name) != 0)
            continue;
        if (nt < cmd->min_tokens || nt > cmd->max_tokens)
            conn_out_line(c, "ERROR");
        else
            cmd->fn(c, t, nt);
        return;
    }
    if (looks_like_http(t, nt))
        conn_close_after_write(c);
    else
        conn_out_line(c, "ERROR");
}

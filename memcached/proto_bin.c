/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_bin.c - the binary protocol (see proto_bin.h).
 *
 * Request checking follows memcached 1.6.18 step by step, because clients
 * and tests see its exact bytes:
 *   - a header whose magic is not 0x80 closes the connection, no reply;
 *   - nothing is decided before the header, extras and key are buffered,
 *     and if they are longer than memcached's 16 KB read buffer, the
 *     connection closes without a reply when that much has arrived;
 *   - key or key + extras longer than the body: "Unknown command", close;
 *   - a key longer than 250 bytes, or extras, key or body lengths a known
 *     opcode does not accept: "Invalid arguments", close;
 *   - an unknown opcode: "Unknown command", then bodylen more bytes are
 *     skipped, counted after the extras and key (memcached skips that many,
 *     even though the extras and key were part of the body);
 *   - TOUCH, GAT* and STAT do not check the body length: bytes beyond the
 *     extras and key are read as the next request.
 * Quiet opcodes drop their success replies (and GETQ/GETKQ/GATQ/GATKQ
 * their misses); errors are always sent.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/auth_sasl.h"
#include "memcached/items.h"
#include "memcached/proto_bin.h"
#include "memcached/proto_bin_wire.h"
#include "memcached/proto_parse.h"
#include "memcached/rdn_glue.h"
#include "memcached/settings.h"
#include "memcached/slabs.h"
#include "memcached/stats.h"
#include "memcached/stats_cmd.h"
#include "memcached/stats_prefix.h"
#include "proto/byteorder.h"

/* memcached's read buffer: a request whose header, extras and key do not
 * fit in it can never be parsed there, and the connection is closed once
 * the buffer is full. */
#define BIN_HEAD_MAX 16384

/* A decoded request header, with pointers into the caller's buffer. */
struct bin_req {
    uint8_t opcode; /* as sent: replies echo it */
    uint8_t base;   /* the non-quiet opcode it stands for */
    bool quiet;
    uint8_t extlen;
    uint16_t keylen;
    uint32_t bodylen;
    uint32_t opaque; /* wire byte order, echoed as is */
    uint64_t cas;
    const unsigned char *ext;
    const char *key;
};

/* Big-endian fields at any offset of a packet. */
static uint16_t get16(const unsigned char *p)
{
    be16 v;

    memcpy(&v, p, sizeof(v));
    return be16_to_cpu(v);
}

static uint32_t get32(const unsigned char *p)
{
    be32 v;

    memcpy(&v, p, sizeof(v));
    return be32_to_cpu(v);
}

static uint64_t get64(const unsigned char *p)
{
    be64 v;

    memcpy(&v, p, sizeof(v));
    return be64_to_cpu(v);
}

static void put16(unsigned char *p, uint16_t v)
{
    be16 b = cpu_to_be16(v);

    memcpy(p, &b, sizeof(b));
}

static void put32(unsigned char *p, uint32_t v)
{
    be32 b = cpu_to_be32(v);

    memcpy(p, &b, sizeof(b));
}

static void put64(unsigned char *p, uint64_t v)
{
    be64 b = cpu_to_be64(v);

    memcpy(p, &b, sizeof(b));
}

/* The non-quiet opcode a quiet one stands for; *quiet says if it was. */
static uint8_t base_opcode(uint8_t op, bool *quiet)
{
    static const uint8_t quiet_of[][2] = {
        {BIN_CMD_SETQ, BIN_CMD_SET},
        {BIN_CMD_ADDQ, BIN_CMD_ADD},
        {BIN_CMD_REPLACEQ, BIN_CMD_REPLACE},
        {BIN_CMD_DELETEQ, BIN_CMD_DELETE},
        {BIN_CMD_INCREMENTQ, BIN_CMD_INCREMENT},
        {BIN_CMD_DECREMENTQ, BIN_CMD_DECREMENT},
        {BIN_CMD_QUITQ, BIN_CMD_QUIT},
        {BIN_CMD_FLUSHQ, BIN_CMD_FLUSH},
        {BIN_CMD_APPENDQ, BIN_CMD_APPEND},
        {BIN_CMD_PREPENDQ, BIN_CMD_PREPEND},
        {BIN_CMD_GETQ, BIN_CMD_GET},
        {BIN_CMD_GETKQ, BIN_CMD_GETK},
        {BIN_CMD_GATQ, BIN_CMD_GAT},
        {BIN_CMD_GATKQ, BIN_CMD_GATK},
    };

    for (size_t i = 0; i < sizeof(quiet_of) / sizeof(quiet_of[0]); i++) {
        if (quiet_of[i][0] == op) {
            *quiet = true;
            return quiet_of[i][1];
        }
    }
    *quiet = false;
    return op;
}

/* ---- replies ---- */

/*
 * Queues a response header to r and returns where its body (bodylen bytes,
 * of which the caller writes extra_len right after the header) goes, or
 * NULL when out of memory (the connection then closes). Commit with
 * conn_out_commit(c, BIN_HEADER_LEN + extra_len).
 */
static unsigned char *out_header(struct conn *c, const struct bin_req *r,
                                 uint16_t status, uint8_t extlen,
                                 uint16_t keylen, uint32_t bodylen,
                                 uint64_t cas, size_t extra_len)
{
    unsigned char *h =
        (unsigned char *)conn_out_reserve(c, BIN_HEADER_LEN + extra_len);

    if (h == NULL)
        return NULL;
    h[BIN_OFF_MAGIC] = BIN_RES_MAGIC;
    h[BIN_OFF_OPCODE] = r->opcode;
    put16(h + BIN_OFF_KEYLEN, keylen);
    h[BIN_OFF_EXTLEN] = extlen;
    h[BIN_OFF_DATATYPE] = BIN_RAW_BYTES;
    put16(h + BIN_OFF_STATUS, status);
    put32(h + BIN_OFF_BODYLEN, bodylen);
    memcpy(h + BIN_OFF_OPAQUE, &r->opaque, sizeof(r->opaque));
    put64(h + BIN_OFF_CAS, cas);
    return h + BIN_HEADER_LEN;
}

/* A response whose whole body (len bytes at body) is copied. */
static void out_packet(struct conn *c, const struct bin_req *r, uint16_t status,
                       uint64_t cas, const void *body, size_t len)
{
    unsigned char *p = out_header(c, r, status, 0, 0, (uint32_t)len, cas, len);

    if (p == NULL)
        return;
    if (len)
        memcpy(p, body, len);
    conn_out_commit(c, BIN_HEADER_LEN + len);
}

static const char *status_text(uint16_t status)
{
    switch (status) {
    case BIN_ENOMEM:
        return "Out of memory";
    case BIN_UNKNOWN_COMMAND:
        return "Unknown command";
    case BIN_KEY_ENOENT:
        return "Not found";
    case BIN_EINVAL:
        return "Invalid arguments";
    case BIN_KEY_EEXISTS:
        return "Data exists for key.";
    case BIN_E2BIG:
        return "Too large.";
    case BIN_DELTA_BADVAL:
        return "Non-numeric server-side value for incr or decr";
    case BIN_NOT_STORED:
        return "Not stored.";
    case BIN_AUTH_ERROR:
        return "Auth failure.";
    default:
        return "UNHANDLED ERROR";
    }
}

/* An error with memcached's text for its status (quiet or not). */
static void out_error(struct conn *c, const struct bin_req *r, uint16_t status)
{
    const char *text = status_text(status);

    out_packet(c, r, status, 0, text, strlen(text));
}

/* An error with its own text (memcached's out-of-memory replies). */
static void out_error_text(struct conn *c, const struct bin_req *r,
                           const char *text)
{
    out_packet(c, r, BIN_ENOMEM, 0, text, strlen(text));
}

/* A success with an optional body, dropped for a quiet request. */
static void out_success(struct conn *c, const struct bin_req *r, uint64_t cas,
                        const void *body, size_t len)
{
    if (!r->quiet)
        out_packet(c, r, BIN_OK, cas, body, len);
}

/* A malformed request of a known opcode: "Invalid arguments", close. */
static void protocol_error(struct conn *c, const struct bin_req *r)
{
    out_error(c, r, BIN_EINVAL);
    conn_close_after_write(c);
}

/* ---- retrieval ---- */

/* GET, GETK, TOUCH, GAT, GATK (and quiet forms). */
static void bin_get(struct conn *c, const struct bin_req *r)
{
    bool touch = r->base == BIN_CMD_TOUCH || r->base == BIN_CMD_GAT ||
                 r->base == BIN_CMD_GATK;
    bool with_key = r->base == BIN_CMD_GETK || r->base == BIN_CMD_GATK;
    bool with_value = r->base != BIN_CMD_TOUCH;
    uint32_t exptime = 0;

    if (touch) {
        /* Unsigned on the wire: "negative" TTLs are absolute times. */
        exptime = items_realtime(get32(r->ext));
        stats_inc(TC_TOUCH_CMDS);
    } else {
        stats_inc(TC_GET_CMDS);
    }
    struct item *it =
        item_get(r->key, r->keylen, touch ? FETCH_TOUCH : FETCH_BUMP, exptime);
    if (SETTING_GET(detail_enabled))
        stats_prefix_record_get(r->key, r->keylen, it != NULL);
    if (it == NULL) {
        if (r->quiet)
            return;
        if (!with_key) {
            out_error(c, r, BIN_KEY_ENOENT);
            return;
        }
        unsigned char *p = out_header(c, r, BIN_KEY_ENOENT, 0, r->keylen,
                                      r->keylen, 0, r->keylen);
        if (p == NULL)
            return;
        memcpy(p, r->key, r->keylen);
        conn_out_commit(c, BIN_HEADER_LEN + r->keylen);
        return;
    }
    uint16_t keylen = with_key ? r->keylen : 0;
    uint32_t bodylen =
        BIN_GET_RES_EXTLEN + keylen + (with_value ? it->nic.nbytes : 0);
    size_t extra = BIN_GET_RES_EXTLEN + keylen;
    unsigned char *p = out_header(c, r, BIN_OK, BIN_GET_RES_EXTLEN, keylen,
                                  bodylen, item_cas(it), extra);
    if (p == NULL) {
        item_release(it);
        return;
    }
    put32(p, it->nic.flags);
    memcpy(p + BIN_GET_RES_EXTLEN, item_key(it), keylen);
    conn_out_commit(c, BIN_HEADER_LEN + extra);
    if (with_value)
        conn_out_value(c, it);
    else
        item_release(it);
}

/* ---- storage ---- */

/* Allocates the item of a storage request and starts reading its value;
 * on failure replies Too large / Out of memory and skips the value. */
static void store_start(struct conn *c, const struct bin_req *r,
                        const struct store_req *req, uint32_t flags,
                        uint32_t exptime, size_t vlen)
{
    enum item_status why;

    if (SETTING_GET(detail_enabled))
        stats_prefix_record_set(r->key, r->keylen);
    struct item *it = item_alloc(r->key, r->keylen, flags,
                                 items_realtime(exptime), vlen, &why);
    if (it == NULL) {
        /* Not counted in store_too_large / store_no_memory: memcached
         * counts those for ASCII commands only. */
        if (why == ITEM_TOO_LARGE)
            out_error(c, r, BIN_E2BIG);
        else
            out_error_text(c, r, "Out of memory allocating item");
        conn_swallow(c, vlen);
        /* A failed set must not leave the old value readable. */
        if (r->base == BIN_CMD_SET)
            item_unlink_key(r->key, r->keylen);
        return;
    }
    c->pend = (struct store_pending){
        .it = it,
        .req = *req,
        .binary = true,
        .opcode = r->opcode,
        .opaque = r->opaque,
    };
    conn_read_data(c);
}

/* The CAS a storage request asks to match: none with -C, where memcached
 * has nowhere to keep it on the new item and stores unconditionally. */
static uint64_t store_cas(const struct bin_req *r)
{
    return settings.use_cas ? r->cas : 0;
}

/* SET, ADD, REPLACE: a CAS in the header makes any of them a CAS store. */
static void bin_update(struct conn *c, const struct bin_req *r)
{
    static const enum store_op ops[] = {
        [BIN_CMD_SET] = STORE_SET,
        [BIN_CMD_ADD] = STORE_ADD,
        [BIN_CMD_REPLACE] = STORE_REPLACE,
    };
    uint64_t cas = store_cas(r);
    struct store_req req = {
        .op = cas ? STORE_CAS : ops[r->base],
        .cas = cas,
    };

    store_start(c, r, &req, get32(r->ext + BIN_SET_OFF_FLAGS),
                get32(r->ext + BIN_SET_OFF_EXPIRY),
                r->bodylen - r->keylen - r->extlen);
}

/* APPEND, PREPEND: a CAS in the header must match the item's. */
static void bin_append(struct conn *c, const struct bin_req *r)
{
    struct store_req req = {
        .op = r->base == BIN_CMD_APPEND ? STORE_APPEND : STORE_PREPEND,
        .cas = store_cas(r),
    };

    store_start(c, r, &req, 0, 0, r->bodylen - r->keylen);
}

static void sasl_done(struct conn *c, const struct bin_req *r, struct item *it);

void proto_bin_nread_done(struct conn *c)
{
    struct store_pending *p = &c->pend;
    struct item *it = p->it;
    struct bin_req r = {.opcode = p->opcode, .opaque = p->opaque};
    uint64_t cas = 0;

    p->it = NULL;
    if (r.opcode == BIN_CMD_SASL_AUTH || r.opcode == BIN_CMD_SASL_STEP) {
        sasl_done(c, &r, it);
        item_release(it);
        return;
    }
    base_opcode(r.opcode, &r.quiet);
    switch (item_store(it, &p->req, &cas)) {
    case ITEM_OK:
        out_success(c, &r, cas, NULL, 0);
        break;
    case ITEM_EXISTS:
        out_error(c, &r, BIN_KEY_EEXISTS);
        break;
    case ITEM_NOT_FOUND:
        out_error(c, &r, BIN_KEY_ENOENT);
        break;
    default: /* not stored: what that means depends on the command */
        out_error(c, &r,
                  p->req.op == STORE_ADD       ? BIN_KEY_EEXISTS
                  : p->req.op == STORE_REPLACE ? BIN_KEY_ENOENT
                                               : BIN_NOT_STORED);
        break;
    }
    item_release(it);
}

/* ---- other key commands ---- */

static void bin_delete(struct conn *c, const struct bin_req *r)
{
    struct delete_req req = {.cas = r->cas};

    if (SETTING_GET(detail_enabled))
        stats_prefix_record_delete(r->key, r->keylen);
    switch (item_delete(r->key, r->keylen, &req)) {
    case ITEM_OK:
        out_success(c, r, 0, NULL, 0);
        break;
    case ITEM_EXISTS:
        out_error(c, r, BIN_KEY_EEXISTS);
        break;
    default:
        out_error(c, r, BIN_KEY_ENOENT);
        break;
    }
}

/* INCREMENT, DECREMENT: a miss creates the item with the initial value
 * unless the expiration is 0xffffffff. */
static void bin_arith(struct conn *c, const struct bin_req *r)
{
    uint32_t exptime = get32(r->ext + BIN_ARITH_OFF_EXPIRY);
    struct arith_req req = {
        .incr = r->base == BIN_CMD_INCREMENT,
        .delta = get64(r->ext + BIN_ARITH_OFF_DELTA),
        .cas = r->cas,
        .vivify = exptime != BIN_ARITH_NO_CREATE,
        .viv_exptime = items_realtime(exptime),
        .initial = get64(r->ext + BIN_ARITH_OFF_INITIAL),
    };
    struct arith_res res;
    unsigned char value[BIN_ARITH_RES_LEN];

    switch (item_arith(r->key, r->keylen, &req, &res)) {
    case ITEM_OK:
        put64(value, res.value);
        out_success(c, r, res.cas, value, sizeof(value));
        break;
    case ITEM_NON_NUMERIC:
        out_error(c, r, BIN_DELTA_BADVAL);
        break;
    case ITEM_EXISTS:
        out_error(c, r, BIN_KEY_EEXISTS);
        break;
    case ITEM_NO_MEMORY:
        out_error_text(c, r, "Out of memory incrementing value");
        break;
    default:
        out_error(c, r, BIN_KEY_ENOENT);
        break;
    }
}

/* ---- admin commands ---- */

static void bin_flush(struct conn *c, const struct bin_req *r)
{
    uint32_t exptime = 0;

    if (!settings.flush_enabled) {
        out_error(c, r, BIN_AUTH_ERROR);
        return;
    }
    if (r->extlen == BIN_EXPIRY_EXTLEN)
        exptime = get32(r->ext);
    uint32_t when = exptime > 0 ? items_realtime(exptime) : 0;

    stats_inc(TC_FLUSH_CMDS);
    items_flush(when);
    rdn_glue_flush(when); /* NIC clients must stop trusting their table */
    out_success(c, r, 0, NULL, 0);
}

/* Where the statistics of one STAT request go. */
struct stat_ctx {
    struct conn *c;
    const struct bin_req *r;
};

/* One statistic as a STAT response: key = name, value = value. */
static void stat_sink(void *ctx, const char *name, const char *value)
{
    struct stat_ctx *s = ctx;
    size_t klen = strlen(name), vlen = strlen(value);
    unsigned char *p = out_header(s->c, s->r, BIN_OK, 0, (uint16_t)klen,
                                  (uint32_t)(klen + vlen), 0, klen + vlen);

    if (p == NULL)
        return;
    memcpy(p, name, klen);
    memcpy(p + klen, value, vlen);
    conn_out_commit(s->c, BIN_HEADER_LEN + klen + vlen);
}

/* The empty STAT response that ends a group. */
static void stat_end(struct stat_ctx *s)
{
    out_packet(s->c, s->r, BIN_OK, 0, NULL, 0);
}

static bool has_prefix(const char *s, size_t n, const char *prefix)
{
    size_t len = strlen(prefix);

    return n >= len && memcmp(s, prefix, len) == 0;
}

/* "detail on|off|dump" (memcached matches by prefix). */
static void stat_detail(struct stat_ctx *s, const char *arg, size_t n)
{
    if (has_prefix(arg, n, " dump")) {
        size_t len;
        char *dump = stats_prefix_dump(&len);
        if (dump == NULL) {
            out_error_text(s->c, s->r, "Out of memory generating stats");
            return;
        }
        unsigned char *p = out_header(s->c, s->r, BIN_OK, 0, 8,
                                      (uint32_t)(8 + len), 0, 8 + len);
        if (p != NULL) {
            memcpy(p, "detailed", 8);
            memcpy(p + 8, dump, len);
            conn_out_commit(s->c, BIN_HEADER_LEN + 8 + len);
        }
        free(dump);
    } else if (has_prefix(arg, n, " on")) {
        SETTING_SET(detail_enabled, true);
    } else if (has_prefix(arg, n, " off")) {
        SETTING_SET(detail_enabled, false);
    } else {
        out_error(s->c, s->r, BIN_KEY_ENOENT);
        return;
    }
    stat_end(s);
}

/*
 * STAT: the key names the group as memcached's binary protocol knows them:
 * none (general), reset, settings and detail (matched by prefix), items,
 * slabs, sizes, sizes_enable, sizes_disable (exactly). The last two end
 * without the empty packet, as in memcached. Others: "Not found".
 */
static void bin_stat(struct conn *c, const struct bin_req *r)
{
    struct stat_ctx s = {.c = c, .r = r};
    const char *k = r->key;
    size_t n = r->keylen;

    if (n == 0) {
        stats_general(stat_sink, &s);
    } else if (has_prefix(k, n, "reset")) {
        stats_reset();
    } else if (has_prefix(k, n, "settings")) {
        stats_settings(stat_sink, &s);
    } else if (has_prefix(k, n, "detail")) {
        stat_detail(&s, k + 6, n - 6);
        return;
    } else if (n == 5 && memcmp(k, "items", 5) == 0) {
        items_stats(stat_sink, &s);
    } else if (n == 5 && memcmp(k, "slabs", 5) == 0) {
        slabs_stats(stat_sink, &s);
    } else if (n == 5 && memcmp(k, "sizes", 5) == 0) {
        items_sizes_stats(stat_sink, &s);
    } else if (n == 3 && memcmp(k, "rdn", 3) == 0) {
        /* ours, as "stats rdn": where librdn finds the RDMA port of a
         * server that speaks nothing but this protocol (-S) */
        rdn_glue_stats_rdn(stat_sink, &s);
    } else if (n == 12 && memcmp(k, "sizes_enable", 12) == 0) {
        stats_sizes_switch(true, stat_sink, &s);
        return;
    } else if (n == 13 && memcmp(k, "sizes_disable", 13) == 0) {
        stats_sizes_switch(false, stat_sink, &s);
        return;
    } else {
        out_error(c, r, BIN_KEY_ENOENT);
        return;
    }
    stat_end(&s);
}

/* ---- dispatch ---- */

/* What memcached accepts for each opcode's extras (e), key (k) and body
 * (b) lengths. */
static bool shape_empty(uint8_t e, uint16_t k, uint32_t b)
{
    return e == 0 && k == 0 && b == 0;
}

static bool shape_flush(uint8_t e, uint16_t k, uint32_t b)
{
    return k == 0 && b == e && (e == 0 || e == BIN_EXPIRY_EXTLEN);
}

static bool shape_update(uint8_t e, uint16_t k, uint32_t b)
{
    return e == BIN_SET_EXTLEN && k != 0 && b >= (uint32_t)k + e;
}

static bool shape_key(uint8_t e, uint16_t k, uint32_t b)
{
    return e == 0 && k != 0 && b == k;
}

static bool shape_arith(uint8_t e, uint16_t k, uint32_t b)
{
    return e == BIN_ARITH_EXTLEN && k != 0 && b == (uint32_t)k + e;
}

/* The body after the key is a value of any length (or none). */
static bool shape_key_value(uint8_t e, uint16_t k, uint32_t b)
{
    (void)b;
    return e == 0 && k != 0;
}

/* STAT, TOUCH and GAT*: body bytes beyond the extras and key are not
 * checked (they are read as the next request). */
static bool shape_stat(uint8_t e, uint16_t k, uint32_t b)
{
    (void)k;
    (void)b;
    return e == 0;
}

static bool shape_touch(uint8_t e, uint16_t k, uint32_t b)
{
    (void)b;
    return e == BIN_EXPIRY_EXTLEN && k != 0;
}

static void bin_version(struct conn *c, const struct bin_req *r)
{
    out_success(c, r, 0, MC_VERSION, strlen(MC_VERSION));
}

static void bin_noop(struct conn *c, const struct bin_req *r)
{
    out_success(c, r, 0, NULL, 0);
}

static void bin_quit(struct conn *c, const struct bin_req *r)
{
    out_success(c, r, 0, NULL, 0);
    conn_close_after_write(c);
}

/* memcached's limit on a SASL mechanism name. */
#define SASL_MECH_MAX 32

/*
 * SASL_LIST_MECHS, SASL_AUTH, SASL_STEP. Without -S memcached does not
 * know them (and skips their data). With it, LIST_MECHS and every step
 * start the login anew (not authenticated until one succeeds), and the
 * data of AUTH and STEP is read into an unlinked item first, as memcached
 * reads it (proto_bin_nread_done() then runs sasl_done()).
 */
static void bin_sasl(struct conn *c, const struct bin_req *r)
{
    uint32_t vlen = r->bodylen - r->keylen;
    enum item_status why;
    const char *mechs;
    size_t n;

    if (!settings.sasl) {
        out_error(c, r, BIN_UNKNOWN_COMMAND);
        conn_swallow(c, vlen);
        return;
    }
    if (r->base == BIN_CMD_SASL_LIST_MECHS) {
        c->authenticated = false;
        if (auth_sasl_list(&c->sasl, &mechs, &n) == 0)
            out_success(c, r, 0, mechs, n);
        else
            out_error(c, r, BIN_AUTH_ERROR);
        return;
    }
    if (r->keylen > SASL_MECH_MAX) {
        out_error(c, r, BIN_EINVAL);
        conn_swallow(c, vlen);
        return;
    }
    struct item *it = item_alloc(r->key, r->keylen, 0, 0, vlen, &why);
    if (it == NULL) {
        out_error(c, r, BIN_ENOMEM);
        conn_swallow(c, vlen);
        return;
    }
    c->pend = (struct store_pending){
        .it = it,
        .binary = true,
        .opcode = r->opcode,
        .opaque = r->opaque,
    };
    conn_read_data(c);
}

/* The data of SASL_AUTH / SASL_STEP has arrived in it: one step of the
 * exchange, answered as memcached answers it. */
static void sasl_done(struct conn *c, const struct bin_req *r, struct item *it)
{
    char mech[SASL_MECH_MAX + 1];
    const char *out;
    size_t outlen;

    c->authenticated = false;
    memcpy(mech, item_key(it), it->nic.nkey);
    mech[it->nic.nkey] = '\0';
    switch (auth_sasl_exchange(&c->sasl, r->opcode == BIN_CMD_SASL_STEP, mech,
                               item_value(it), it->nic.nbytes, &out, &outlen)) {
    case AUTH_SASL_OK:
        c->authenticated = true;
        out_success(c, r, 0, "Authenticated", strlen("Authenticated"));
        stats_inc(TC_AUTH_CMDS);
        break;
    case AUTH_SASL_CONTINUE:
        out_packet(c, r, BIN_AUTH_CONTINUE, 0, out, outlen);
        break;
    case AUTH_SASL_FAIL:
        out_error(c, r, BIN_AUTH_ERROR);
        stats_inc(TC_AUTH_CMDS);
        stats_inc(TC_AUTH_ERRORS);
        break;
    }
}

/* With -S, what a connection that has not logged in may send. */
static bool allowed_unauthenticated(uint8_t opcode)
{
    return opcode == BIN_CMD_SASL_LIST_MECHS || opcode == BIN_CMD_SASL_AUTH ||
           opcode == BIN_CMD_SASL_STEP || opcode == BIN_CMD_VERSION;
}

struct bin_command {
    bool (*shape)(uint8_t extlen, uint16_t keylen, uint32_t bodylen);
    void (*serve)(struct conn *c, const struct bin_req *r);
};

/* Every non-quiet opcode memcached 1.6.18 serves; others are unknown. */
static const struct bin_command commands[256] = {
    [BIN_CMD_GET] = {shape_key, bin_get},
    [BIN_CMD_GETK] = {shape_key, bin_get},
    [BIN_CMD_TOUCH] = {shape_touch, bin_get},
    [BIN_CMD_GAT] = {shape_touch, bin_get},
    [BIN_CMD_GATK] = {shape_touch, bin_get},
    [BIN_CMD_SET] = {shape_update, bin_update},
    [BIN_CMD_ADD] = {shape_update, bin_update},
    [BIN_CMD_REPLACE] = {shape_update, bin_update},
    [BIN_CMD_APPEND] = {shape_key_value, bin_append},
    [BIN_CMD_PREPEND] = {shape_key_value, bin_append},
    [BIN_CMD_DELETE] = {shape_key, bin_delete},
    [BIN_CMD_INCREMENT] = {shape_arith, bin_arith},
    [BIN_CMD_DECREMENT] = {shape_arith, bin_arith},
    [BIN_CMD_FLUSH] = {shape_flush, bin_flush},
    [BIN_CMD_STAT] = {shape_stat, bin_stat},
    [BIN_CMD_VERSION] = {shape_empty, bin_version},
    [BIN_CMD_NOOP] = {shape_empty, bin_noop},
    [BIN_CMD_QUIT] = {shape_empty, bin_quit},
    [BIN_CMD_SASL_LIST_MECHS] = {shape_empty, bin_sasl},
    [BIN_CMD_SASL_AUTH] = {shape_key_value, bin_sasl},
    [BIN_CMD_SASL_STEP] = {shape_key_value, bin_sasl},
};

enum bin_result proto_bin_process(struct conn *c, const char *buf, size_t avail,
                                  size_t *used)
{
    const unsigned char *h = (const unsigned char *)buf;
    struct bin_req r;

    if (avail < BIN_HEADER_LEN)
        return BIN_NEED_MORE;
    if (h[BIN_OFF_MAGIC] != BIN_REQ_MAGIC)
        return BIN_CLOSE;
    r.opcode = h[BIN_OFF_OPCODE];
    r.keylen = get16(h + BIN_OFF_KEYLEN);
    r.extlen = h[BIN_OFF_EXTLEN];
    r.bodylen = get32(h + BIN_OFF_BODYLEN);
    memcpy(&r.opaque, h + BIN_OFF_OPAQUE, sizeof(r.opaque));
    r.cas = get64(h + BIN_OFF_CAS);
    size_t head = BIN_HEADER_LEN + (size_t)r.extlen + r.keylen;
    if (avail < head)
        return avail >= BIN_HEAD_MAX ? BIN_CLOSE : BIN_NEED_MORE;
    *used = head;
    r.ext = h + BIN_HEADER_LEN;
    r.key = buf + BIN_HEADER_LEN + r.extlen;
    r.base = base_opcode(r.opcode, &r.quiet);

    if ((uint32_t)r.keylen + r.extlen > r.bodylen) {
        out_error(c, &r, BIN_UNKNOWN_COMMAND);
        conn_close_after_write(c);
    } else if (settings.sasl && !c->authenticated &&
               !allowed_unauthenticated(r.opcode)) {
        out_error(c, &r, BIN_AUTH_ERROR);
        conn_close_after_write(c);
    } else if (r.keylen > KEY_MAX_LENGTH) {
        protocol_error(c, &r);
    } else if (commands[r.base].serve == NULL) {
        out_error(c, &r, BIN_UNKNOWN_COMMAND);
        conn_swallow(c, r.bodylen);
    } else if (!commands[r.base].shape(r.extlen, r.keylen, r.bodylen)) {
        protocol_error(c, &r);
    } else {
        commands[r.base].serve(c, &r);
    }
    return BIN_DONE;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_meta.c - meta commands (see proto_meta.h).
 *
 * Flags are checked the way memcached 1.6.18 checks them: every flag
 * letter it knows is accepted by every meta command (and ignored where it
 * means nothing), a repeated flag or an unknown one is an error, and the
 * reply carries the requested return flags in request order.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "memcached/items.h"
#include "memcached/proto_meta.h"
#include "memcached/proto_text.h"
#include "memcached/settings.h"
#include "memcached/stats.h"
#include "proto/barrier.h"

#define MFLAG_MAX_OPT_LENGTH    20 /* tokens, command and key included */
#define MFLAG_MAX_OPAQUE_LENGTH 32
#define META_LINE_MAX           1024
#define FLAG_ERROR              "CLIENT_ERROR invalid or duplicate flag"

struct meta_flags {
    bool key_binary; /* b */
    bool value;      /* v */
    bool no_update;  /* u */
    bool quiet;      /* q */
    bool vivify;     /* N */
    bool new_ttl;    /* T */
    bool recache;    /* R */
    bool set_stale;  /* I */
    bool has_cas;    /* C */
    char mode;       /* M */
    uint32_t viv_exptime, exptime, recache_time, client_flags;
    uint64_t cas, initial, delta;
};

/* A meta reply line being built. */
struct line {
    char buf[META_LINE_MAX];
    size_t len;
};

/* Appends n bytes to l; bytes that would overflow META_LINE_MAX are
 * dropped whole (the line is cut, never overrun). */
static void line_add(struct line *l, const void *p, size_t n)
{
    if (l->len + n <= sizeof(l->buf)) {
        memcpy(l->buf + l->len, p, n);
        l->len += n;
    }
}

static void line_str(struct line *l, const char *s)
{
    line_add(l, s, strlen(s));
}

/* " <c><number>" */
static void line_num(struct line *l, char c, uint64_t v)
{
    char tmp[24];

    tmp[0] = ' ';
    tmp[1] = c;
    line_add(l, tmp, (size_t)(fmt_u64(tmp + 2, v) - tmp));
}

/* "VA <n>" */
static void line_va(struct line *l, uint64_t n)
{
    char tmp[24];

    line_str(l, "VA ");
    line_add(l, tmp, (size_t)(fmt_u64(tmp, n) - tmp));
}

/* A key as meta prints it: base64 encoded if it is binary. */
static void line_key_text(struct line *l, const char *key, size_t nkey,
                          bool binary)
{
    char enc[BASE64_ENCODED_LEN(KEY_MAX_LENGTH)];

    if (binary)
        line_add(l, enc, base64_encode(key, nkey, enc));
    else
        line_add(l, key, nkey);
}

/* " k<key>", plus " b" for binary keys. */
static void line_key(struct line *l, const char *key, size_t nkey, bool binary)
{
    line_str(l, " k");
    line_key_text(l, key, nkey, binary);
    if (binary)
        line_str(l, " b");
}

/* " t<seconds left>", or " t-1" for an item that never expires. */
static void line_ttl(struct line *l, uint32_t exptime)
{
    if (exptime == 0) {
        line_str(l, " t-1");
        return;
    }
    uint32_t now = items_now();
    line_num(l, 't', exptime > now ? exptime - now : 0);
}

/* Ends l with CRLF and queues it (copied) on c. */
static void line_send(struct conn *c, struct line *l)
{
    line_add(l, "\r\n", 2);
    conn_out_text(c, l->buf, l->len);
}

/* A flag's numeric argument as an exptime (negative = expired). */
static bool flag_exptime(const struct token *t, uint32_t *out)
{
    int32_t v;

    if (!parse_i32(t->value + 1, &v))
        return false;
    *out = items_realtime(v);
    return true;
}

/*
 * Parses the flags from t[start] on into of, decoding a base64 key in
 * place. Returns NULL or the error line to send.
 */
static const char *meta_preparse(struct token *t, size_t start,
                                 struct meta_flags *of)
{
    bool seen[128] = {false};
    const char *err = NULL;
    static const char bad_token[] =
        "CLIENT_ERROR bad token in command line format";

    for (size_t i = start; t[i].length != 0; i++) {
        unsigned char o = (unsigned char)t[i].value[0];
        if (o >= 127 || seen[o])
            return "CLIENT_ERROR duplicate flag";
        seen[o] = true;
        switch (o) {
        case 'b': {
            int n =
                base64_decode(t[1].value, t[1].length, t[1].value, t[1].length);
            if (n <= 0) {
                err = "CLIENT_ERROR error decoding key";
            } else {
                t[1].length = (size_t)n;
                of->key_binary = true;
            }
            break;
        }
        case 'N':
            of->vivify = true;
            if (!flag_exptime(&t[i], &of->viv_exptime))
                err = bad_token;
            break;
        case 'T':
            of->new_ttl = true;
            if (!flag_exptime(&t[i], &of->exptime))
                err = bad_token;
            break;
        case 'R':
            of->recache = true;
            if (!flag_exptime(&t[i], &of->recache_time))
                err = bad_token;
            break;
        case 'v':
            of->value = true;
            break;
        case 'u':
            of->no_update = true;
            break;
        case 'q':
            of->quiet = true;
            break;
        case 'I':
            of->set_stale = true;
            break;
        case 'F':
            if (!parse_u32(t[i].value + 1, &of->client_flags))
                err = "CLIENT_ERROR bad command line format";
            break;
        case 'C':
            if (!parse_u64(t[i].value + 1, &of->cas))
                err = bad_token;
            of->has_cas = true;
            break;
        case 'M':
            if (t[i].length != 2)
                err = "CLIENT_ERROR incorrect length for M token";
            else
                of->mode = t[i].value[1];
            break;
        case 'J':
            if (!parse_u64(t[i].value + 1, &of->initial))
                err = "CLIENT_ERROR invalid numeric initial value";
            break;
        case 'D':
            if (!parse_u64(t[i].value + 1, &of->delta))
                err = "CLIENT_ERROR invalid numeric delta value";
            break;
        case 'O':
        case 'P':
        case 'L':
        case 'k':
        case 's':
        case 't':
        case 'c':
        case 'f':
        case 'h':
        case 'l':
            break;
        default:
            return "CLIENT_ERROR invalid flag";
        }
    }
    return err;
}

/* Checks the key and option count shared by mg, md and ma, and parses the
 * flags. md and ma report any flag error as flag_err (memcached 1.6.18
 * does); NULL keeps the specific message. Returns false after sending the
 * error. */
static bool meta_start(struct conn *c, struct token *t, size_t nt,
                       struct meta_flags *of, const char *too_long,
                       const char *flag_err)
{
    const char *err;

    if (t[1].length > KEY_MAX_LENGTH) {
        conn_out_error(c, "CLIENT_ERROR bad command line format");
        return false;
    }
    if (nt > MFLAG_MAX_OPT_LENGTH) {
        conn_out_error(c, too_long);
        return false;
    }
    *of = (struct meta_flags){0};
    err = meta_preparse(t, 2, of);
    if (err) {
        conn_out_error(c, flag_err ? flag_err : err);
        return false;
    }
    return true;
}

/* The O and k return flags, which every reply of md and ma (and misses of
 * mg) carries. Returns false after sending an opaque-too-long error. */
static bool line_opaque_key(struct conn *c, struct line *l, struct token *t,
                            const struct meta_flags *of)
{
    for (size_t i = 2; t[i].length != 0; i++) {
        if (t[i].value[0] == 'O') {
            if (t[i].length > MFLAG_MAX_OPAQUE_LENGTH) {
                conn_out_error(c, "CLIENT_ERROR opaque token too long");
                return false;
            }
            line_str(l, " ");
            line_add(l, t[i].value, t[i].length);
        } else if (t[i].value[0] == 'k') {
            line_key(l, t[1].value, t[1].length, of->key_binary);
        }
    }
    return true;
}

/* ---- mg ---- */

/* The return flags of an mg hit, in request order. */
static bool mget_flags(struct conn *c, struct line *l, struct token *t,
                       const struct mget_res *r)
{
    struct item *it = r->it;
    bool touched = false; /* flags act in order: t before T sees the old */

    for (size_t i = 2; t[i].length != 0; i++) {
        switch (t[i].value[0]) {
        case 'T':
            touched = true;
            break;
        case 's':
            line_num(l, 's', it->nic.nbytes);
            break;
        case 't':
            /* Another client may touch the item meanwhile. */
            line_ttl(l,
                     touched ? load_relaxed(&it->nic.exptime) : r->old_exptime);
            break;
        case 'c':
            line_num(l, 'c', item_cas(it));
            break;
        case 'f':
            line_num(l, 'f', it->nic.flags);
            break;
        case 'l':
            line_num(l, 'l', r->last_access);
            break;
        case 'h':
            line_num(l, 'h', r->fetched);
            break;
        case 'O':
            if (t[i].length > MFLAG_MAX_OPAQUE_LENGTH) {
                conn_out_error(c, "CLIENT_ERROR opaque token too long");
                return false;
            }
            line_str(l, " ");
            line_add(l, t[i].value, t[i].length);
            break;
        case 'k':
            line_key(l, item_key(it), it->nic.nkey,
                     item_has_flag(it, ITEM_KEY_BINARY));
            break;
        default:
            break;
        }
    }
    if (r->token_sent)
        line_str(l, " Z");
    if (r->stale)
        line_str(l, " X");
    if (r->won)
        line_str(l, " W");
    return true;
}

/*
 * mg <key> <flags>*: looks the key up through item_meta_get() (which also
 * vivifies, touches and hands out win tokens) and replies EN, HD or VA
 * with the return flags in request order; the value is sent by reference
 * (the reply keeps the item's reference until it is written). q hides
 * only EN.
 */
static void cmd_mg(struct conn *c, struct token *t, size_t nt)
{
    struct meta_flags of;
    struct mget_res r;
    struct line l = {.len = 0};

    if (!meta_start(c, t, nt, &of, "CLIENT_ERROR options flags are too long",
                    NULL))
        return;
    struct mget_req req = {
        .no_bump = of.no_update,
        .touch = of.new_ttl,
        .exptime = of.exptime,
        .vivify = of.vivify,
        .viv_exptime = of.viv_exptime,
        .recache = of.recache,
        .recache_ttl = of.recache_time,
        .key_binary = of.key_binary,
    };
    stats_inc(TC_GET_CMDS);
    if (of.new_ttl)
        stats_inc(TC_TOUCH_CMDS);
    item_meta_get(t[1].value, t[1].length, &req, &r);
    if (r.it == NULL) {
        line_str(&l, "EN");
        if (!line_opaque_key(c, &l, t, &of))
            return;
        if (!of.quiet)
            line_send(c, &l);
        return;
    }
    if (of.value) {
        line_va(&l, r.it->nic.nbytes);
    } else {
        line_str(&l, "HD");
    }
    if (!mget_flags(c, &l, t, &r)) {
        item_release(r.it);
        return;
    }
    /* q hides only the miss (EN) of mg. */
    line_send(c, &l);
    if (of.value) {
        conn_out_value(c, r.it);
        conn_out_text(c, "\r\n", 2);
        return;
    }
    item_release(r.it);
}

/* ---- ms ---- */

/* Notes the return flags of ms (O, k, c) for proto_meta_set_done(). */
static bool mset_stash(struct conn *c, struct token *t)
{
    struct store_pending *p = &c->pend;

    p->nstash = 0;
    for (size_t i = 3; t[i].length != 0; i++) {
        char f = t[i].value[0];
        size_t n = f == 'O' ? t[i].length : 1;
        if (f != 'O' && f != 'k' && f != 'c')
            continue;
        if (f == 'O' && t[i].length > MFLAG_MAX_OPAQUE_LENGTH)
            return false;
        if (p->nstash + n + 1 > sizeof(p->stash))
            continue;
        memcpy(p->stash + p->nstash, t[i].value, n);
        p->nstash += (uint8_t)n;
        p->stash[p->nstash++] = ' ';
    }
    return true;
}

/* The store operation of ms's M flag (a C flag turns set and replace into
 * cas); false for an unknown mode. */
static bool mset_mode(const struct meta_flags *of, enum store_op *op)
{
    switch (of->mode) {
    case 0:
    case 'S':
        *op = STORE_SET;
        break;
    case 'E':
        *op = STORE_ADD;
        break;
    case 'A':
        *op = STORE_APPEND;
        break;
    case 'P':
        *op = STORE_PREPEND;
        break;
    case 'R':
        *op = STORE_REPLACE;
        break;
    default:
        return false;
    }
    /* A compare value makes set and replace a cas. */
    if (of->has_cas && (*op == STORE_SET || *op == STORE_REPLACE))
        *op = STORE_CAS;
    return true;
}

/*
 * ms <key> <datalen> <flags>*: checks the line and flags, allocates the
 * item and has the connection read the data block into it; the store and
 * the reply happen in proto_meta_set_done(). On any error the data block
 * is swallowed after the error line, and a failed allocation also unlinks the
 * key as a failed set does.
 */
static void cmd_ms(struct conn *c, struct token *t, size_t nt)
{
    struct meta_flags of = {0};
    int32_t vlen;
    enum store_op op = STORE_SET;
    enum item_status why;
    const char *err;

    if (t[1].length > KEY_MAX_LENGTH || nt == 3) {
        conn_out_error(c, "CLIENT_ERROR bad command line format");
        return;
    }
    if (nt > MFLAG_MAX_OPT_LENGTH) {
        conn_out_error(c, "CLIENT_ERROR options flags too long");
        return;
    }
    if (!parse_i32(t[2].value, &vlen) || vlen < 0 || vlen > INT_MAX - 2) {
        conn_out_error(c, "CLIENT_ERROR bad command line format");
        return;
    }
    err = meta_preparse(t, 3, &of);
    if (err == NULL && !mset_stash(c, t))
        err = "CLIENT_ERROR opaque token too long";
    if (err == NULL && !mset_mode(&of, &op))
        err = "CLIENT_ERROR invalid mode for ms M token";
    struct item *it = NULL;
    if (err == NULL) {
        it = item_alloc(t[1].value, t[1].length, of.client_flags, of.exptime,
                        (size_t)vlen, &why);
        if (it == NULL) {
            stats_inc(why == ITEM_TOO_LARGE ? TC_STORE_TOO_LARGE
                                            : TC_STORE_NO_MEMORY);
            err = why == ITEM_TOO_LARGE
                      ? "SERVER_ERROR object too large for cache"
                      : "SERVER_ERROR out of memory storing object";
            item_unlink_key(t[1].value, t[1].length);
        }
    }
    if (err) {
        conn_out_error(c, err);
        conn_swallow(c, (size_t)vlen + 2);
        return;
    }
    if (of.key_binary)
        it->it_flags |= ITEM_KEY_BINARY; /* not yet shared */
    struct store_pending *p = &c->pend;
    p->it = it;
    p->req = (struct store_req){
        .op = op,
        .cas = of.cas,
        .set_stale = of.set_stale && op == STORE_CAS,
    };
    p->noreply = false;
    p->meta = true;
    p->quiet = of.quiet;
    p->key_b64 = of.key_binary;
    conn_read_data(c);
}

/*
 * Replies to an ms once its item was stored (or not): HD/EX/NF/NS plus the
 * O, k and c flags noted by mset_stash(); q hides HD only. it is the
 * command's item (still referenced by the caller), cas its new CAS.
 */
void proto_meta_set_done(struct conn *c, struct item *it, enum item_status st,
                         uint64_t cas)
{
    struct store_pending *p = &c->pend;
    struct line l = {.len = 0};

    switch (st) {
    case ITEM_OK:
        if (p->quiet)
            return;
        line_str(&l, "HD");
        break;
    case ITEM_EXISTS:
        line_str(&l, "EX");
        break;
    case ITEM_NOT_FOUND:
        line_str(&l, "NF");
        break;
    case ITEM_NO_MEMORY:
        conn_out_error(c, "SERVER_ERROR out of memory storing object");
        return;
    default:
        line_str(&l, "NS");
        break;
    }
    for (size_t i = 0; i < p->nstash; i++) {
        const char *f = p->stash + i;
        const char *end = memchr(f, ' ', p->nstash - i);
        size_t n = (size_t)(end - f);
        if (*f == 'O') {
            line_str(&l, " ");
            line_add(&l, f, n);
        } else if (*f == 'k') {
            line_key(&l, item_key(it), it->nic.nkey, p->key_b64);
        } else if (*f == 'c') {
            line_num(&l, 'c', st == ITEM_OK ? cas : 0);
        }
        i += n;
    }
    line_send(c, &l);
}

/* ---- md ---- */

/*
 * md <key> <flags>*: deletes through item_delete() (C compares the CAS, I
 * marks stale instead of deleting, T with I sets the new TTL) and replies
 * HD, EX or NF with O and k; q hides HD.
 */
static void cmd_md(struct conn *c, struct token *t, size_t nt)
{
    struct meta_flags of;
    struct line l = {.len = 0};

    if (!meta_start(c, t, nt, &of, "CLIENT_ERROR options flags too long",
                    FLAG_ERROR))
        return;
    struct delete_req req = {
        .cas = of.cas,
        .cas_given = of.has_cas,
        .stale = of.set_stale,
        .set_exptime = of.new_ttl,
        .exptime = of.exptime,
    };
    enum item_status st = item_delete(t[1].value, t[1].length, &req);
    if (st == ITEM_NO_MEMORY) {
        conn_out_error(c, "SERVER_ERROR out of memory");
        return;
    }
    line_str(&l, st == ITEM_OK ? "HD" : st == ITEM_EXISTS ? "EX" : "NF");
    if (!line_opaque_key(c, &l, t, &of))
        return;
    if (!(of.quiet && st == ITEM_OK))
        line_send(c, &l);
}

/* ---- ma ---- */

/*
 * ma <key> <flags>*: increments (default, delta 1) or decrements (M D/-)
 * through item_arith(), vivifying with N and J. Replies HD or VA with the
 * number, else EX/NF or memcached's error lines; q hides a plain HD.
 */
static void cmd_ma(struct conn *c, struct token *t, size_t nt)
{
    struct meta_flags of;
    struct arith_res res;
    struct line l = {.len = 0};
    char num[24];

    if (!meta_start(c, t, nt, &of, "CLIENT_ERROR options flags too long",
                    FLAG_ERROR))
        return;
    struct arith_req req = {
        .incr = true,
        .delta = 1,
        .cas = of.cas,
        .vivify = of.vivify,
        .viv_exptime = of.viv_exptime,
        .initial = of.initial,
        .set_exptime = of.new_ttl,
        .exptime = of.exptime,
    };
    for (size_t i = 2; t[i].length != 0; i++) {
        if (t[i].value[0] == 'D')
            req.delta = of.delta;
    }
    switch (of.mode) {
    case 0:
    case 'I':
    case '+':
        break;
    case 'D':
    case '-':
        req.incr = false;
        break;
    default:
        conn_out_error(c, "CLIENT_ERROR invalid mode for ma M token");
        return;
    }
    enum item_status st = item_arith(t[1].value, t[1].length, &req, &res);
    switch (st) {
    case ITEM_OK:
        break;
    case ITEM_NON_NUMERIC:
        conn_out_error(c, "CLIENT_ERROR cannot increment or decrement "
                          "non-numeric value");
        return;
    case ITEM_NO_MEMORY:
    case ITEM_TOO_LARGE:
        conn_out_error(c, "SERVER_ERROR out of memory");
        return;
    case ITEM_EXISTS:
        line_str(&l, "EX");
        break;
    default:
        line_str(&l, "NF");
        break;
    }
    size_t nlen = 0;
    if (st == ITEM_OK) {
        nlen = (size_t)(fmt_u64(num, res.value) - num);
        if (of.value)
            line_va(&l, nlen);
        else
            line_str(&l, "HD");
        for (size_t i = 2; t[i].length != 0; i++) {
            if (t[i].value[0] == 'c')
                line_num(&l, 'c', res.cas);
            else if (t[i].value[0] == 't')
                line_ttl(&l, res.exptime);
        }
    }
    if (!line_opaque_key(c, &l, t, &of))
        return;
    /* q hides a plain success; a vivified item is still announced. */
    if (st == ITEM_OK && of.quiet && !of.value && !res.created)
        return;
    line_send(c, &l);
    if (st == ITEM_OK && of.value) {
        conn_out_text(c, num, nlen);
        conn_out_text(c, "\r\n", 2);
    }
}

/* ---- me ---- */

/*
 * me <key> [b]: memcached's debug line "ME <key> exp= la= cas= fetch= cls=
 * size=" for a live item, without bumping or counting it; EN on a miss.
 */
static void cmd_me(struct conn *c, struct token *t, size_t nt)
{
    struct line l = {.len = 0};
    char tail[200];

    if (t[1].length > KEY_MAX_LENGTH) {
        conn_out_line(c, "CLIENT_ERROR bad command line format");
        return;
    }
    if (nt >= 4 && t[2].length == 1 && t[2].value[0] == 'b') {
        int n = base64_decode(t[1].value, t[1].length, t[1].value, t[1].length);
        if (n <= 0) {
            conn_out_error(c, "CLIENT_ERROR bad command line format");
            return;
        }
        t[1].length = (size_t)n;
    }
    struct item *it =
        item_get(t[1].value, t[1].length, FETCH_NO_BUMP | FETCH_PEEK, 0);
    /* memcached's cmd_meta counts the me commands it runs, no other */
    stats_inc(TC_META_CMDS);
    if (it == NULL) {
        conn_out_line(c, "EN");
        return;
    }
    uint32_t now = items_now();
    /* Read without the item lock, while other clients may touch or read
     * the item: atomically. */
    uint32_t exptime = load_relaxed(&it->nic.exptime);
    uint32_t atime = load_relaxed(&it->atime);
    line_str(&l, "ME ");
    line_key_text(&l, item_key(it), it->nic.nkey,
                  item_has_flag(it, ITEM_KEY_BINARY));
    int n = snprintf(tail, sizeof(tail),
                     " exp=%lld la=%u cas=%llu fetch=%s cls=%u size=%zu",
                     exptime == 0 ? -1LL : (long long)exptime - (long long)now,
                     now - atime, (unsigned long long)item_cas(it),
                     item_has_flag(it, ITEM_FETCHED) ? "yes" : "no", it->clsid,
                     item_mc_ntotal(it));
    line_add(&l, tail, (size_t)n);
    item_release(it);
    line_send(c, &l);
}

/*
 * Runs one meta command (t[0] is "m?", nt tokens including the empty
 * terminator). mn replies MN; unknown meta commands and missing keys get
 * memcached's ERROR / CLIENT_ERROR lines.
 */
void proto_meta_process(struct conn *c, struct token *t, size_t nt)
{
    char cmd = t[0].value[1];

    if (cmd == 'n') {
        conn_out_line(c, "MN");
        return;
    }
    if (cmd == 'e' && nt < 3) {
        conn_out_line(c, "CLIENT_ERROR bad command line format");
        return;
    }
    if (nt < 3 || strchr("gsdae", cmd) == NULL) {
        conn_out_line(c, "ERROR");
        return;
    }
    switch (cmd) {
    case 'g':
        cmd_mg(c, t, nt);
        break;
    case 's':
        cmd_ms(c, t, nt);
        break;
    case 'd':
        cmd_md(c, t, nt);
        break;
    case 'a':
        cmd_ma(c, t, nt);
        break;
    default:
        cmd_me(c, t, nt);
        break;
    }
}

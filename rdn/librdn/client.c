/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/client.c - librdn's API (client.h): connections and their
 * options, rdn_mget() and rdn_get*() (keys placed on their servers by
 * libmemcached, asked on the NICs, the rest over TCP), results and
 * statistics. What the other files do: client_int.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/librdn/client_int.h"

#define RDN_DEFAULT_DEPTH   8
#define RDN_DEFAULT_TIMEOUT 5000

_Static_assert(sizeof(struct rdn_opts) % 8 == 0 &&
                   offsetof(struct rdn_opts, device) + 8 == RDN_OPTS_SIZE_MIN,
               "struct rdn_opts grows in 8-byte steps after size and device");

/*
 * The caller's options (NULL: none) as this librdn's struct, checked (see
 * struct rdn_opts for the size rules), with the defaults filled in and the
 * login copied into c. 0, -EINVAL or -E2BIG.
 */
static int set_opts(struct rdn_conn *c, const struct rdn_opts *in,
                    enum rdn_down while_down)
{
    struct rdn_opts *o = &c->opts;

    memset(o, 0, sizeof(*o));
    if (in) {
        if (in->size < RDN_OPTS_SIZE_MIN || in->size % 8 || in->rsvd)
            return -EINVAL;
        const unsigned char *newer = (const unsigned char *)in + sizeof(*o);
        for (size_t i = sizeof(*o); i < in->size; i++)
            if (*newer++)
                return -E2BIG;
        memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
    }
    o->size = sizeof(*o);
    if ((o->depth & (o->depth - 1)) || o->timeout_ms < 0 ||
        o->while_down < RDN_DOWN_DEFAULT || o->while_down > RDN_DOWN_NIC ||
        (o->user && (!*o->user || strlen(o->user) > RDN_AUTH_MAX ||
                     (o->password && strlen(o->password) > RDN_AUTH_MAX))))
        return -EINVAL;
    if (o->user) {
        snprintf(c->user, sizeof(c->user), "%s", o->user);
        snprintf(c->password, sizeof(c->password), "%s",
                 o->password ? o->password : "");
        o->user = c->user;
        o->password = c->password;
    }
    if (o->while_down == RDN_DOWN_DEFAULT)
        o->while_down = while_down;
    if (!o->depth)
        o->depth = RDN_DEFAULT_DEPTH;
    if (!o->timeout_ms)
        o->timeout_ms = RDN_DEFAULT_TIMEOUT;
    return 0;
}

int rdn_connect_memc(memcached_st *mc, const struct rdn_opts *opts,
                     struct rdn_conn **out)
{
    struct rdn_conn *c;
    int rc;

    if (!mc || !out || memcached_server_count(mc) == 0)
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    rc = set_opts(c, opts, RDN_DOWN_TCP);
    if (rc < 0) {
        free(c);
        return rc;
    }
    c->mc = mc;
    rc = rdnc_sync_servers(c);
    if (rc < 0) {
        rdn_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

int rdn_connect_config(const char *config, const struct rdn_opts *opts,
                       struct rdn_conn **out, char *err, size_t errlen)
{
    char msg[256] = "";
    memcached_st *mc;
    int rc;

    if (!config || !out)
        return -EINVAL;
    if (libmemcached_check_configuration(config, strlen(config), msg,
                                         sizeof(msg)) != MEMCACHED_SUCCESS) {
        if (err && errlen)
            snprintf(err, errlen, "%s", msg);
        return -EINVAL;
    }
    mc = memcached(config, strlen(config));
    if (!mc)
        return -ENOMEM;
    rc = rdn_connect_memc(mc, opts, out);
    if (rc < 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s", strerror(-rc));
        memcached_free(mc);
        return rc;
    }
    (*out)->own_mc = true;
    return 0;
}

int rdn_connect_opts(const char *host, int rdn_port, int tcp_port,
                     const struct rdn_opts *opts, struct rdn_conn **out)
{
    struct rdn_conn *c;
    struct rdn_srv *s;
    int rc;

    if (!host || !out || rdn_port <= 0 || rdn_port > 65535 || tcp_port < 0 ||
        tcp_port > 65535 || strlen(host) >= sizeof(s->host))
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    rc = set_opts(c, opts, RDN_DOWN_NIC);
    if (rc < 0) {
        free(c);
        return rc;
    }
    c->own_mc = true;
    c->tcp_renew = true;
    c->mc = rdnc_one_server(host, tcp_port);
    c->srv = calloc(1, sizeof(*c->srv));
    /* The port as libmemcached has it (0 is its default port). */
    s = c->srv && c->mc
            ? rdnc_srv_new(c, host,
                           memcached_server_port(
                               memcached_server_instance_by_position(c->mc, 0)))
            : NULL;
    if (!s) {
        rdn_close(c);
        return -ENOMEM;
    }
    c->srv[0] = s;
    c->nsrv = 1;
    s->rdn_port = rdn_port;
    s->fixed_port = true;
    rc = rdnc_srv_up(s);
    if (rc < 0) {
        rdn_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

int rdn_connect(const char *host, int rdn_port, int tcp_port,
                struct rdn_conn **out)
{
    return rdn_connect_opts(host, rdn_port, tcp_port, NULL, out);
}

memcached_st *rdn_memc(const struct rdn_conn *c)
{
    return c->mc;
}

static void mget_free(struct mget *m)
{
    if (!m)
        return;
    free(m->jobs);
    free(m->q);
    free(m->retry);
    free(m->tk);
    free(m->lanes);
    free(m->count);
    free(m->fl);
    free(m->wkeys);
    free(m);
}

void rdn_close(struct rdn_conn *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->nsrv; i++)
        rdnc_srv_free(c->srv[i]);
    free(c->srv);
    mget_free(c->m);
    if (c->mc && c->own_mc)
        memcached_free(c->mc);
    free(c);
}

/*
 * Copies a value of n bytes (and a NUL) into into's buffer, grown if it is
 * too small, or else into a new malloc'ed one; r->value points at the copy.
 * Returns 0 or -ENOMEM (r->value NULL, into's buffer kept).
 */
int rdnc_keep_value(struct rdn_result *r, struct rdn_value *into, const void *p,
                    size_t n)
{
    r->value = NULL;
    if (n == SIZE_MAX)
        return -ENOMEM;
    if (!into) {
        r->value = malloc(n + 1);
    } else if (into->cap > n) {
        r->value = into->buf;
    } else {
        /* A quarter more: the values of one key vary a little. */
        size_t cap = n + 1, more = cap / 4;
        char *b;

        cap += more <= SIZE_MAX - cap ? more : 0;
        b = realloc(into->buf, cap);

        if (b) {
            into->buf = b;
            into->cap = cap;
        }
        r->value = b;
    }
    if (!r->value)
        return -ENOMEM;
    memcpy(r->value, p, n);
    r->value[n] = '\0';
    r->len = n;
    return 0;
}

/* The handle's namespace (prepended to every key on the wire). */
static const char *name_space(const struct rdn_conn *c, size_t *len)
{
    memcached_return_t rc;
    const char *ns =
        memcached_callback_get(c->mc, MEMCACHED_CALLBACK_NAMESPACE, &rc);

    *len = ns && rc == MEMCACHED_SUCCESS ? strlen(ns) : 0;
    return *len ? ns : "";
}

/* Makes *arr hold at least n elements of size sz (*cap of them now). */
static int reserve(void *arr, size_t *cap, size_t n, size_t sz)
{
    void **p = arr, *np;

    if (n <= *cap)
        return 0;
    if (n > SIZE_MAX / sz)
        return -ENOMEM;
    np = realloc(*p, n * sz);
    if (!np)
        return -ENOMEM;
    *p = np;
    *cap = n;
    return 0;
}

/* Room in m for n keys on nsrv servers, fl_total flights, wkeys bytes. */
static int mget_reserve(struct mget *m, size_t n, uint32_t nsrv,
                        size_t fl_total, size_t wkeys)
{
    n = n ? n : 1;
    if (reserve(&m->jobs, &m->jobs_cap, n, sizeof(*m->jobs)) < 0 ||
        reserve(&m->q, &m->q_cap, n, sizeof(*m->q)) < 0 ||
        reserve(&m->retry, &m->retry_cap, n, sizeof(*m->retry)) < 0 ||
        reserve(&m->tk, &m->tk_cap, n, sizeof(*m->tk)) < 0 ||
        reserve(&m->lanes, &m->lanes_cap, nsrv, sizeof(*m->lanes)) < 0 ||
        reserve(&m->count, &m->count_cap, nsrv, sizeof(*m->count)) < 0 ||
        reserve(&m->fl, &m->fl_cap, fl_total, sizeof(*m->fl)) < 0 ||
        reserve(&m->wkeys, &m->wkeys_cap, wkeys ? wkeys : 1, 1) < 0)
        return -ENOMEM;
    return 0;
}

/* Places the jobs on their servers (libmemcached's choice) and cuts the
 * arrays into lanes. */
static int mget_plan(struct rdn_conn *c, struct mget *m, size_t n,
                     const char *const *keys, const size_t *keylens,
                     struct rdn_result *out, struct rdn_value *into)
{
    size_t nsl, fl_total = 0, at = 0, wat = 0, *count;
    const char *ns = name_space(c, &nsl);

    for (uint32_t i = 0; i < c->nsrv; i++)
        fl_total += c->srv[i]->nic.depth ? c->srv[i]->nic.depth : 1;
    if (nsl)
        for (size_t i = 0; i < n; i++)
            wat += keylens[i] <= RDN_KEY_MAX ? nsl + keylens[i] : 0;
    if (mget_reserve(m, n, c->nsrv, fl_total, wat) < 0)
        return -ENOMEM;
    count = m->count;
    memset(count, 0, c->nsrv * sizeof(*count));
    memset(m->lanes, 0, c->nsrv * sizeof(*m->lanes));
    /* libmemcached's placement, after its own redistribution check (a
     * server ejected or back after its retry timeout). */
    memcached_autoeject(c->mc);
    wat = 0;
    for (size_t i = 0; i < n; i++) {
        struct job *j = &m->jobs[i];
        uint32_t srv = memcached_generate_hash(c->mc, keys[i], keylens[i]);

        *j = (struct job){.key = keys[i],
                          .nkey = keylens[i],
                          .res = &out[i],
                          .into = into ? &into[i] : NULL};
        out[i].server = srv < c->nsrv ? srv : 0;
        if (keylens[i] == 0 || nsl + keylens[i] > RDN_KEY_MAX ||
            srv >= c->nsrv) {
            out[i].status = -EINVAL;
            j->done = true;
            continue;
        }
        if (nsl) {
            memcpy(m->wkeys + wat, ns, nsl);
            memcpy(m->wkeys + wat + nsl, keys[i], keylens[i]);
            j->wkey = m->wkeys + wat;
            wat += nsl + keylens[i];
        } else {
            j->wkey = keys[i];
        }
        j->nwkey = nsl + keylens[i];
        count[srv]++;
    }
    fl_total = 0;
    for (uint32_t i = 0; i < c->nsrv; i++) {
        struct lane *l = &m->lanes[i];

        l->s = c->srv[i];
        l->q = m->q + at;
        l->retry = m->retry + at;
        l->fl = m->fl + fl_total;
        at += count[i];
        fl_total += c->srv[i]->nic.depth ? c->srv[i]->nic.depth : 1;
    }
    for (size_t i = 0; i < n; i++)
        if (!m->jobs[i].done) {
            struct lane *l = &m->lanes[out[i].server];

            l->q[l->nq++] = &m->jobs[i];
        }
    return 0;
}

/* rdn_mget(), the values copied into into[i] when into is not NULL. */
static int mget_run(struct rdn_conn *c, size_t n, const char *const *keys,
                    const size_t *keylens, struct rdn_result *out,
                    struct rdn_value *into)
{
    struct mget *m;
    int rc;

    if (!c || (n && (!keys || !keylens || !out)))
        return -EINVAL;
    memset(out, 0, n * sizeof(*out));
    rc = rdnc_sync_servers(c);
    if (rc < 0)
        return rc;
    if (c->nsrv == 0)
        return -ENOTCONN; /* the application emptied the handle's list */
    if (!c->m && !(c->m = calloc(1, sizeof(*c->m))))
        return -ENOMEM;
    m = c->m;
    /* First: a reconnection sets the depth that the flights are sized for. */
    for (uint32_t i = 0; i < c->nsrv; i++) {
        rdnc_nic_retry(c->srv[i]);
        rdnc_ctl_retry(c->srv[i]);
    }
    rc = mget_plan(c, m, n, keys, keylens, out, into);
    if (rc < 0)
        return rc;
    for (uint32_t i = 0; i < c->nsrv; i++) {
        struct lane *l = &m->lanes[i];

        if (!rdnc_on_nic(l->s))
            for (size_t k = 0; k < l->nq; k++)
                rdnc_to_tcp(l->q[k], l->s->why);
    }
    rdnc_run_nic(m->lanes, c->nsrv, c->opts.timeout_ms);
    if (c->opts.no_fallback) {
        for (size_t i = 0; i < n; i++)
            if (m->jobs[i].tcp)
                out[i].status = -EAGAIN;
    } else {
        rdnc_mget_tcp(c, m, n);
    }
    return 0;
}

int rdn_mget(struct rdn_conn *c, size_t n, const char *const *keys,
             const size_t *keylens, struct rdn_result *out)
{
    return mget_run(c, n, keys, keylens, out, NULL);
}

/* One key through mget_run(); rdn_last_source() and _reason() follow it. */
static int get_one(struct rdn_conn *c, const char *key, size_t keylen,
                   struct rdn_result *r, struct rdn_value *into)
{
    int rc = mget_run(c, 1, &key, &keylen, r, into);

    if (rc < 0)
        return rc;
    c->last_src = r->src;
    c->last_why = r->src == RDN_SRC_TCP || r->status == -EAGAIN ? r->why : NULL;
    return r->status;
}

int rdn_get(struct rdn_conn *c, const char *key, size_t keylen, char **value,
            size_t *len, uint32_t *flags, uint64_t *cas)
{
    struct rdn_result r = {0};
    int rc;

    if (!c || !key || !value)
        return -EINVAL;
    rc = get_one(c, key, keylen, &r, NULL);
    *value = r.value;
    if (len)
        *len = r.len;
    if (flags)
        *flags = r.flags;
    if (cas)
        *cas = r.cas;
    return rc;
}

int rdn_get_value(struct rdn_conn *c, const char *key, size_t keylen,
                  struct rdn_value *v)
{
    struct rdn_result r = {0};
    int rc;

    if (!c || !key || !v || (v->cap && !v->buf))
        return -EINVAL;
    rc = get_one(c, key, keylen, &r, v);
    v->len = rc == 0 ? r.len : 0;
    v->flags = rc == 0 ? r.flags : 0;
    v->cas = rc == 0 ? r.cas : 0;
    v->src = r.src;
    return rc;
}

void rdn_value_free(struct rdn_value *v)
{
    if (!v)
        return;
    free(v->buf);
    memset(v, 0, sizeof(*v));
}

enum rdn_source rdn_last_source(const struct rdn_conn *c)
{
    return c->last_src;
}

const char *rdn_last_reason(const struct rdn_conn *c)
{
    return c->last_why ? c->last_why : "";
}

void rdn_client_stats(const struct rdn_conn *c, struct rdn_client_stats *out)
{
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < c->nsrv; i++) {
        const struct rdn_client_stats *s = &c->srv[i]->st;

        out->nic_hits += s->nic_hits;
        out->nic_misses += s->nic_misses;
        out->tcp_gets += s->tcp_gets;
        out->torn_retries += s->torn_retries;
        out->refreshes += s->refreshes;
        out->collisions += s->collisions;
        out->reconnects += s->reconnects;
        out->resumes += s->resumes;
    }
}

uint32_t rdn_client_id(const struct rdn_conn *c)
{
    return c->nsrv ? c->srv[0]->id : 0;
}

uint32_t rdn_server_count(const struct rdn_conn *c)
{
    return c->nsrv;
}

int rdn_server_info(const struct rdn_conn *c, uint32_t i,
                    struct rdn_server_info *out)
{
    const struct rdn_srv *s;

    if (i >= c->nsrv)
        return -ERANGE;
    s = c->srv[i];
    *out = (struct rdn_server_info){.host = s->host,
                                    .tcp_port = s->tcp_port,
                                    .rdn_port = s->rdn_port,
                                    .nic = rdnc_on_nic(s),
                                    .why = rdnc_on_nic(s) ? "" : s->why,
                                    .client_id = s->id,
                                    .st = s->st};
    return 0;
}

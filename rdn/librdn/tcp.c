/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/tcp.c - librdn's TCP fallback: the keys the NICs did not
 * answer, asked through the libmemcached handle (one multi-get, or one by
 * one), logged in first where a server wants it (login.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/librdn/client_int.h"

/* The handle of rdn_connect(): one server. */
memcached_st *rdnc_one_server(const char *host, int tcp_port)
{
    memcached_st *mc = memcached_create(NULL);

    if (mc && memcached_server_add(mc, host, (in_port_t)tcp_port) !=
                  MEMCACHED_SUCCESS) {
        memcached_free(mc);
        return NULL;
    }
    if (mc) {
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    }
    return mc;
}

/*
 * Asks for one key over TCP through the handle, which places it on the
 * server libmemcached picks and applies libmemcached's failure settings.
 * rdn_connect()'s own handle is the exception: after a connection failure
 * libmemcached refuses to try the server again until a retry time, in
 * whole seconds and never less than the next second tick, however
 * RETRY_TIMEOUT is set, so every GET in that window would fail although a
 * restarted server is back already; that handle is replaced by a fresh
 * one that connects at once (a dead process on a live host refuses in no
 * time).
 */
static memcached_return_t tcp_mget(struct rdn_conn *c, const char *key,
                                   size_t nkey)
{
    const char *keys[1] = {key};
    size_t lens[1] = {nkey};
    memcached_return_t rc = memcached_mget(c->mc, keys, lens, 1);

    if (c->tcp_renew && (rc == MEMCACHED_SERVER_TEMPORARILY_DISABLED ||
                         rc == MEMCACHED_SERVER_MARKED_DEAD)) {
        memcached_st *mc =
            rdnc_one_server(c->srv[0]->host, c->srv[0]->tcp_port);

        if (!mc || (c->tcp_sasl && rdnc_tcp_sasl_on(c, mc) < 0)) {
            if (mc)
                memcached_free(mc);
            return MEMCACHED_FAILURE;
        }
        memcached_free(c->mc);
        c->mc = mc;
        rc = memcached_mget(c->mc, keys, lens, 1);
    }
    return rc;
}

/* A value libmemcached fetched, into r (and into, if not NULL). */
static void take_result(struct rdn_result *r, struct rdn_value *into,
                        const memcached_result_st *res)
{
    rdnc_keep_value(r, into, memcached_result_value(res),
                    memcached_result_length(res));
    r->flags = memcached_result_flags(res);
    r->cas = memcached_result_cas(res);
    r->status = r->value ? 0 : -ENOMEM;
}

/* libmemcached's refusals of a login: -EACCES; other failures -EIO. */
static int tcp_failure(memcached_return_t rc)
{
    return rc == MEMCACHED_AUTH_FAILURE || rc == MEMCACHED_AUTH_PROBLEM
               ? -EACCES
               : -EIO;
}

static int tcp_get_once(struct rdn_conn *c, const char *key, size_t nkey,
                        struct rdn_result *r, struct rdn_value *into)
{
    memcached_return_t rc = tcp_mget(c, key, nkey);
    memcached_result_st *res;

    r->src = RDN_SRC_TCP;
    if (rc != MEMCACHED_SUCCESS)
        return r->status = tcp_failure(rc);
    res = memcached_fetch_result(c->mc, NULL, &rc);
    if (!res && rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND)
        return r->status = tcp_failure(rc);
    /* libmemcached reads a refused command (memcached -Y's "CLIENT_ERROR
     * unauthenticated") as a miss: it is none. */
    if (!res)
        return r->status = memcached_last_error(c->mc) == MEMCACHED_CLIENT_ERROR
                               ? -EACCES
                               : -ENOENT;
    take_result(r, into, res);
    memcached_result_free(res);
    /* Read up to END so the connection stays in step. */
    while ((res = memcached_fetch_result(c->mc, NULL, &rc)))
        memcached_result_free(res);
    return r->status;
}

/* A GET over TCP, logged in first when the server wants it. */
static int tcp_get(struct rdn_conn *c, const char *key, size_t nkey,
                   struct rdn_result *r, struct rdn_value *into)
{
    int rc = tcp_get_once(c, key, nkey, r, into);

    if (rc == -EACCES || rc == -EIO) {
        int lrc = rdnc_tcp_login(c, key, nkey, rc);
        rc = lrc == 0 ? tcp_get_once(c, key, nkey, r, into) : (r->status = lrc);
    }
    return rc;
}

static int key_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    int d = memcmp(a, b, na < nb ? na : nb);

    return d ? d : (na > nb) - (na < nb);
}

static int tcp_key_cmp(const void *a, const void *b)
{
    const struct job *x = ((const struct tcp_key *)a)->job;
    const struct job *y = ((const struct tcp_key *)b)->job;

    return key_cmp(x->key, x->nkey, y->key, y->nkey);
}

/*
 * The keys for TCP in one libmemcached multi-get (every server at once);
 * returns how many it settled. A key it leaves (its server failed, or the
 * multi-get could not be made) is asked alone, so its result says how it
 * failed. The replies' keys are the application's (libmemcached strips
 * the namespace).
 */
static size_t tcp_many(struct rdn_conn *c, struct tcp_key *tk, size_t k)
{
    const char **keys = malloc(k * sizeof(*keys));
    size_t *lens = malloc(k * sizeof(*lens)), settled = 0;
    memcached_return_t rc = MEMCACHED_FAILURE, frc;
    memcached_result_st *res;

    if (keys && lens) {
        qsort(tk, k, sizeof(*tk), tcp_key_cmp);
        for (size_t i = 0; i < k; i++) {
            keys[i] = tk[i].job->key;
            lens[i] = tk[i].job->nkey;
        }
        rc = memcached_mget(c->mc, keys, lens, k);
    }
    free(keys);
    free(lens);
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_SOME_ERRORS)
        return 0;
    while ((res = memcached_fetch_result(c->mc, NULL, &frc))) {
        const char *rk = memcached_result_key_value(res);
        size_t nrk = memcached_result_key_length(res), lo = 0, hi = k;

        while (lo < hi) { /* the first job of that key */
            size_t mid = lo + (hi - lo) / 2;

            if (key_cmp(tk[mid].job->key, tk[mid].job->nkey, rk, nrk) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < k && !key_cmp(tk[lo].job->key, tk[lo].job->nkey, rk, nrk);
             lo++)
            if (!tk[lo].answered) {
                take_result(tk[lo].job->res, tk[lo].job->into, res);
                tk[lo].answered = true;
                settled++;
            }
        memcached_result_free(res);
    }
    /* Everything asked and read: the keys with no reply are not there. */
    if (rc == MEMCACHED_SUCCESS && frc == MEMCACHED_END)
        for (size_t i = 0; i < k; i++)
            if (!tk[i].answered) {
                tk[i].job->res->status = -ENOENT;
                tk[i].answered = true;
                settled++;
            }
    return settled;
}

/* What the NIC did not answer, over TCP through the handle. */
void rdnc_mget_tcp(struct rdn_conn *c, struct mget *m, size_t n)
{
    struct tcp_key *tk = m->tk;
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (m->jobs[i].tcp) {
            m->jobs[i].res->src = RDN_SRC_TCP;
            c->srv[m->jobs[i].res->server]->st.tcp_gets++;
            tk[k++] = (struct tcp_key){.job = &m->jobs[i]};
        }
    if (k > 1 && !c->tcp_renew)
        tcp_many(c, tk, k);
    for (size_t i = 0; i < k; i++)
        if (!tk[i].answered)
            tcp_get(c, tk[i].job->key, tk[i].job->nkey, tk[i].job->res,
                    tk[i].job->into);
}

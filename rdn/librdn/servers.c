/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/servers.c - librdn's server list (as the libmemcached handle
 * has it) and each server's NIC path: set up, lost, retried at doubling
 * intervals, and its handshake connection watched and resumed.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/librdn/client_int.h"

/* A broken RDMA path is retried after RDN_RECONNECT_MS, at doubling
 * intervals up to RDN_REPROBE_MS while that fails; a server without
 * --rdn-port is asked again every RDN_REPROBE_MS. */
#define RDN_RECONNECT_MS 1000
#define RDN_REPROBE_MS   10000

/* Sets the server's NIC path up (its port from its stats unless given);
 * on failure s->why says why. */
int rdnc_srv_up(struct rdn_srv *s)
{
    int rc;

    if (s->tcp_port == 0) {
        snprintf(s->why, sizeof(s->why), "a UNIX socket: no RDMA port");
        return -ENOTSUP;
    }
    if (!s->fixed_port) {
        rc = rdnc_probe(s);
        if (rc < 0) {
            snprintf(s->why, sizeof(s->why), "stats rdn failed: %s",
                     strerror(-rc));
            return rc;
        }
        if (s->rdn_port == 0) {
            snprintf(s->why, sizeof(s->why),
                     "no rdn_port in its stats (no --rdn-port)");
            return -ENOTSUP;
        }
    }
    rc = rdnc_nic_up(s);
    if (rc < 0) {
        snprintf(s->why, sizeof(s->why), "rdn_port %d: handshake failed: %s",
                 s->rdn_port, strerror(-rc));
        return rc;
    }
    s->nic_ok = true;
    s->was_up = true;
    s->down = false;
    s->retry_ms = RDN_RECONNECT_MS;
    return 0;
}

/* The RDMA path failed (rc: how, or 0): TCP answers until a reconnection
 * works. */
void rdnc_nic_lost(struct rdn_srv *s, const char *why, int rc)
{
    s->nic_ok = false;
    s->nic_lost_ms = mono_ms();
    s->retry_ms = RDN_RECONNECT_MS;
    if (rc < 0)
        snprintf(s->why, sizeof(s->why), "%s: %s", why, strerror(-rc));
    else
        snprintf(s->why, sizeof(s->why), "%s", why);
}

/*
 * The server never speaks first on the handshake connection: anything to
 * read there is its end (the server died). While the NIC path works, the
 * connection is resumed on a restarted server that re-attached our chain,
 * so LRU reports reach it again; until then, with RDN_DOWN_TCP, the server
 * is down (its keys go to libmemcached). At most once per RDN_RECONNECT_MS,
 * and while it is down at doubling intervals up to RDN_REPROBE_MS.
 */
void rdnc_ctl_retry(struct rdn_srv *s)
{
    struct pollfd pfd = {.fd = s->ctl, .events = POLLIN};
    uint64_t now = mono_ms();
    int rc;

    if (!s->nic_ok ||
        now - s->ctl_check_ms < (s->down ? s->retry_ms : RDN_RECONNECT_MS))
        return;
    s->ctl_check_ms = now;
    if (!s->down && s->ctl >= 0 && poll(&pfd, 1, 0) == 0)
        return; /* alive */
    rc = rdnc_ctl_resume(s);
    if (rc == 0) {
        s->down = false;
        s->retry_ms = RDN_RECONNECT_MS;
    } else if (s->opts->while_down == RDN_DOWN_TCP) {
        /* A host that is down costs a connect timeout: less often. */
        if (s->down && s->retry_ms < RDN_REPROBE_MS)
            s->retry_ms = s->retry_ms * 2 < RDN_REPROBE_MS ? s->retry_ms * 2
                                                           : RDN_REPROBE_MS;
        s->down = true;
        snprintf(s->why, sizeof(s->why),
                 "server gone (handshake connection closed, RESUME: %s)",
                 strerror(-rc));
    }
}

/* Its keys are asked on its NIC. */
bool rdnc_on_nic(const struct rdn_srv *s)
{
    return s->nic_ok && !s->down;
}

/*
 * rdnc_srv_up() failed: the next try RDN_RECONNECT_MS after a failure, twice as
 * long after each failed retry up to RDN_REPROBE_MS (a server that is down
 * costs the GETs little); a server without --rdn-port every RDN_REPROBE_MS.
 */
static void srv_failed(struct rdn_srv *s, bool first)
{
    s->nic_lost_ms = mono_ms();
    if (s->rdn_port == 0 && !s->fixed_port)
        s->retry_ms = RDN_REPROBE_MS;
    else if (first)
        s->retry_ms = RDN_RECONNECT_MS;
    else if (s->retry_ms < RDN_REPROBE_MS / 2)
        s->retry_ms *= 2;
    else
        s->retry_ms = RDN_REPROBE_MS;
}

/* Retries a server off the NIC when its time has come (srv_failed()). */
void rdnc_nic_retry(struct rdn_srv *s)
{
    bool was_up = s->was_up;

    if (s->nic_ok || mono_ms() - s->nic_lost_ms < s->retry_ms)
        return;
    rdnc_nic_down(s);
    if (rdnc_srv_up(s) == 0) {
        if (was_up)
            s->st.reconnects++;
    } else {
        srv_failed(s, false);
    }
}

void rdnc_srv_free(struct rdn_srv *s)
{
    if (!s)
        return;
    if (s->nic_ok)
        rdnc_send_hits(s);
    rdnc_nic_down(s);
    free(s);
}

struct rdn_srv *rdnc_srv_new(const struct rdn_conn *c, const char *host,
                             int tcp_port)
{
    struct rdn_srv *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    snprintf(s->host, sizeof(s->host), "%s", host);
    s->tcp_port = tcp_port;
    s->opts = &c->opts;
    s->ctl = -1;
    s->retry_ms = RDN_RECONNECT_MS;
    ofl_hits_reset(&s->hits);
    return s;
}

static bool srv_is(const struct rdn_srv *s, const memcached_instance_st *in)
{
    return strcmp(s->host, memcached_server_name(in)) == 0 &&
           s->tcp_port == (int)memcached_server_port(in);
}

/*
 * Follows the handle's server list: servers still in it keep their NIC
 * paths, new ones are set up, removed ones are closed. Cheap when the
 * list did not change (one comparison per server).
 */
int rdnc_sync_servers(struct rdn_conn *c)
{
    uint32_t n = memcached_server_count(c->mc);
    struct rdn_srv **ns;
    bool same = n == c->nsrv;

    for (uint32_t i = 0; same && i < n; i++)
        same =
            srv_is(c->srv[i], memcached_server_instance_by_position(c->mc, i));
    if (same)
        return 0;
    ns = calloc(n ? n : 1, sizeof(*ns));
    if (!ns)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const memcached_instance_st *in =
            memcached_server_instance_by_position(c->mc, i);

        for (uint32_t j = 0; j < c->nsrv && !ns[i]; j++)
            if (c->srv[j] && srv_is(c->srv[j], in)) {
                ns[i] = c->srv[j];
                c->srv[j] = NULL;
            }
        if (!ns[i]) {
            ns[i] = rdnc_srv_new(c, memcached_server_name(in),
                                 (int)memcached_server_port(in));
            if (!ns[i]) {
                for (uint32_t k = 0; k < i; k++)
                    rdnc_srv_free(ns[k]);
                free(ns);
                return -ENOMEM;
            }
            if (rdnc_srv_up(ns[i]) < 0)
                srv_failed(ns[i], true);
        }
    }
    for (uint32_t j = 0; j < c->nsrv; j++)
        rdnc_srv_free(c->srv[j]);
    free(c->srv);
    c->srv = ns;
    c->nsrv = n;
    return 0;
}

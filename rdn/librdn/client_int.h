/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/client_int.h - what librdn's files share; client.h is its API.
 *
 *   client.c     the API: connections and their options, rdn_mget() and
 *                rdn_get*() (keys placed on their servers, asked on the
 *                NICs, the rest over TCP), results and statistics
 *   servers.c    the server list, each server's NIC path: set up, lost,
 *                retried, its handshake connection watched and resumed
 *   handshake.c  the handshake connection (docs/wire.md): AUTH, GEOMETRY,
 *                HELLO, RESUME, and the LRU reports (HITS) sent on it
 *   pipeline.c   the GETs on the NICs: requests sent, answers taken and
 *                judged (a hit, a miss, or a key for TCP)
 *   tcp.c        the TCP fallback through the libmemcached handle
 *   login.c      logins for servers that want one (memcached -Y's ASCII
 *                login, -S's SASL PLAIN), and a server's "stats rdn" on a
 *                connection of librdn's own (its RDMA port)
 *
 * Threads: a connection and its servers are one thread's at a time
 * (client.h).
 */
#ifndef RDN_LIBRDN_CLIENT_INT_H
#define RDN_LIBRDN_CLIENT_INT_H

#include <libmemcached/memcached.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "proto/keyhash.h"
#include "proto/rdn_framing.h"
#include "rdn/librdn/client.h"
#include "rdn/librdn/nic_client.h"

/* One server of the list and its NIC path. */
struct rdn_srv {
    char host[256];
    int tcp_port;
    int rdn_port;      /* from its stats (or the caller); 0: none */
    bool fixed_port;   /* given by the caller: its stats are not asked */
    bool was_up;       /* its NIC path worked once (a retry reconnects) */
    uint32_t retry_ms; /* wait before the next rdnc_nic_retry() */
    char why[160];     /* why its keys go over TCP (while !nic_ok) */
    const struct rdn_opts *opts; /* the connection's */
    int ctl;                     /* the handshake connection */
    uint64_t ctl_check_ms;       /* when rdnc_ctl_retry() last looked at it */
    struct rnic_device *dev;
    struct ofl_client nic;
    bool nic_ok;          /* false: TCP only, for now */
    bool down;            /* its process is gone (RDN_DOWN_TCP): TCP only */
    uint64_t nic_lost_ms; /* when it failed (or a reconnection did) */
    struct rdn_geometry geo;
    uint64_t geo_ms; /* when geo.server_time was current */
    uint32_t id;
    uint64_t token; /* the welcome's (RESUME proves who we are) */
    struct ofl_hits hits;
    uint64_t hit_fp[RDN_HITS_MAX]; /* the batch's keys' fingerprints */
    /* hit_fp by fingerprint: open addressing, 0 or 1 + an index */
    uint16_t hit_slot[2 * RDN_HITS_MAX];
    uint64_t hits_since_ms;
    struct rdn_client_stats st;
};

struct rdn_conn {
    memcached_st *mc;
    bool own_mc;
    char user[RDN_AUTH_MAX + 1]; /* copies of opts' login */
    char password[RDN_AUTH_MAX + 1];
    bool tcp_renew; /* rdn_connect(): a disabled handle is replaced */
    bool tcp_sasl;  /* the own handle speaks binary with a SASL login */
    struct rdn_opts opts;
    struct rdn_srv **srv; /* in the order of the handle's server list */
    uint32_t nsrv;
    enum rdn_source last_src;
    const char *last_why;
    struct mget *m; /* rdn_mget()'s arrays, kept for the next call */
};

static inline uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A key of an rdn_mget() and what the NIC did with it. */
struct job {
    const char *key; /* the application's */
    size_t nkey;
    const char *wkey; /* on the wire: the handle's namespace + key */
    size_t nwkey;
    struct rdn_result *res;
    struct rdn_value *into; /* the caller's reused buffer, or NULL */
    struct rdn_keyhash kh;
    int tries;
    bool done; /* answered (by the NIC) or given to TCP */
    bool tcp;
};

/* What a request in flight was sent under. */
struct flight {
    struct job *job;
    uint64_t gen_word;
    uint32_t flags;
};

/* One server's share of an rdn_mget(). */
struct lane {
    struct rdn_srv *s;
    struct job **q;     /* its jobs */
    size_t nq, next;    /* next job never asked */
    struct job **retry; /* jobs to ask again (room for nq) */
    size_t nretry;
    struct flight *fl; /* [request number % depth] */
    uint32_t inflight;
    uint64_t quiet_since; /* no answer since (while some are in flight) */
};

/* A key for TCP, ordered by name (tcp_many() finds a reply's jobs). */
struct tcp_key {
    struct job *job;
    bool answered;
};

/*
 * The arrays of an rdn_mget(), kept by the connection from call to call and
 * grown when a call needs more: steady GETs allocate nothing here.
 */
struct mget {
    struct job *jobs;
    struct job **q, **retry; /* n each, cut into lanes */
    struct tcp_key *tk;      /* n: the keys for TCP */
    struct lane *lanes;
    size_t *count;     /* jobs per server */
    struct flight *fl; /* sum of the depths, cut into lanes */
    char *wkeys;       /* namespaced keys, when there is a namespace */
    size_t jobs_cap, q_cap, retry_cap, tk_cap, lanes_cap, count_cap, fl_cap,
        wkeys_cap;
};

/* ---- handshake.c ------------------------------------------------------ */

/* A TCP connection to host:port within timeout_ms: the fd or -errno. */
int rdnc_tcp_connect(const char *host, int port, int timeout_ms);
/* The handshake on s->rdn_port (login, geometry, QP, response slots); on
 * failure nothing is left open. 0 or -errno (-EACCES: login refused). */
int rdnc_nic_up(struct rdn_srv *s);
/* Tears s's RDMA side and handshake connection down. */
void rdnc_nic_down(struct rdn_srv *s);
/* A new handshake connection for s's client (RESUME) with the current
 * geometry. 0 or -errno. */
int rdnc_ctl_resume(struct rdn_srv *s);
/* The current geometry (REFRESH), resuming a dead connection. 0 or
 * -errno. */
int rdnc_refresh(struct rdn_srv *s);
/* Notes a NIC hit of key (fingerprint fp) at now (mono_ms()) for the next
 * LRU report. */
void rdnc_note_hit(struct rdn_srv *s, const char *key, size_t nkey, uint64_t fp,
                   uint64_t now);
/* Sends the LRU report gathered so far, if any. */
void rdnc_send_hits(struct rdn_srv *s);

/* ---- servers.c -------------------------------------------------------- */

/* A server of c's list at host:tcp_port, not set up yet; NULL: no memory. */
struct rdn_srv *rdnc_srv_new(const struct rdn_conn *c, const char *host,
                             int tcp_port);
/* Closes s's NIC path (its LRU report sent first) and frees it. */
void rdnc_srv_free(struct rdn_srv *s);
/* Sets s's NIC path up; 0 or -errno, s->why saying why. */
int rdnc_srv_up(struct rdn_srv *s);
/* Makes c's servers follow its handle's list. 0 or -ENOMEM. */
int rdnc_sync_servers(struct rdn_conn *c);
/* s's RDMA path failed (rc: how, or 0): TCP until a reconnection works. */
void rdnc_nic_lost(struct rdn_srv *s, const char *why, int rc);
/* Retries s's NIC path when its time has come. */
void rdnc_nic_retry(struct rdn_srv *s);
/* Resumes s's handshake connection when its server went away. */
void rdnc_ctl_retry(struct rdn_srv *s);
/* Whether s's keys are asked on its NIC. */
bool rdnc_on_nic(const struct rdn_srv *s);

/* ---- pipeline.c ------------------------------------------------------- */

/* Gives j to TCP, why saying why. */
void rdnc_to_tcp(struct job *j, const char *why);
/* Asks every lane's jobs on its server's NIC until each is answered or
 * given to TCP (a server silent for timeout_ms: all its keys). */
void rdnc_run_nic(struct lane *lanes, uint32_t nl, int timeout_ms);

/* ---- tcp.c ------------------------------------------------------------ */

/* A libmemcached handle of one server; NULL: no memory. */
memcached_st *rdnc_one_server(const char *host, int tcp_port);
/* The first n jobs of m that were given to TCP, asked through c's handle. */
void rdnc_mget_tcp(struct rdn_conn *c, struct mget *m, size_t n);

/* ---- login.c ---------------------------------------------------------- */

/* s->rdn_port from the server's "stats rdn" (0: none), logging in as it
 * wants. 0 or -errno (-EACCES: no login, or a refused one). */
int rdnc_probe(struct rdn_srv *s);
/* Makes handle mc speak binary with a SASL PLAIN login of c's user. 0 or
 * -EIO. */
int rdnc_tcp_sasl_on(struct rdn_conn *c, memcached_st *mc);
/* Logs c's handle in where a TCP GET of key failed with status: 0 when
 * the GET is worth asking again, else -EACCES or status. */
int rdnc_tcp_login(struct rdn_conn *c, const char *key, size_t nkey,
                   int status);

/* ---- client.c --------------------------------------------------------- */

/* Copies n bytes at p (and a NUL) into into's buffer, or a new one;
 * r->value points at the copy. 0 or -ENOMEM. */
int rdnc_keep_value(struct rdn_result *r, struct rdn_value *into, const void *p,
                    size_t n);

#endif /* RDN_LIBRDN_CLIENT_INT_H */

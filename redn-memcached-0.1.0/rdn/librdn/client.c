/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/client.c - librdn (see client.h): the handshake, the GET pipeline
 * over the NIC half (rdn/librdn/nic_client.h), the judgement of every answer,
 * the TCP fallback through libmemcached, and LRU reports.
 */
#include "config.h"

#include <errno.h>
#include <libmemcached/memcached.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/keyhash.h"
#include "proto/rdn_framing.h"
#include "rdn/librdn/client.h"
#include "rdn/librdn/nic_client.h"

#define RDN_DEFAULT_DEPTH   8
#define RDN_DEFAULT_TIMEOUT 5000
#define RDN_MAX_TRIES       4    /* NIC attempts per key (torn, stale) */
#define RDN_HITS_EVERY_MS   1000 /* LRU reports at least this often */
#define RDN_RECONNECT_MS    1000 /* a broken RDMA path is retried after */

struct rdn_conn {
    char host[256];
    int rdn_port;
    int tcp_port;
    int ctl;               /* the handshake connection */
    uint64_t ctl_check_ms; /* when ctl_retry() last looked at it */
    struct rdn_opts opts;
    struct rnic_device *dev;
    struct ofl_client nic;
    bool nic_ok;          /* false after a failure: TCP only, for now */
    uint64_t nic_lost_ms; /* when it failed (or a reconnection did) */
    struct rdn_geometry geo;
    uint64_t geo_ms; /* when geo.server_time was current */
    uint32_t id;
    uint64_t token; /* the welcome's (RESUME proves who we are) */
    memcached_st *mc;
    struct ofl_hits hits;
    uint64_t hit_fp[RDN_HITS_MAX];
    uint64_t hits_since_ms;
    struct rdn_client_stats st;
    enum rdn_source last_src;
    const char *last_why;
};

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the handshake ---------------------------------------------------- */

static int tcp_connect(const char *host, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM};
    struct addrinfo *res, *ai;
    char svc[16];
    int fd = -ECONNREFUSED, one = 1;

    snprintf(svc, sizeof(svc), "%d", port);
    if (getaddrinfo(host, svc, &hints, &res) != 0)
        return -EHOSTUNREACH;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            fd = -errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -errno;
    }
    freeaddrinfo(res);
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Waits for message `want`; a REJECT yields its status. */
static int expect_msg(struct rdn_conn *c, uint16_t want, void *buf, size_t len)
{
    union {
        struct rdn_reject rej;
        uint8_t raw[256];
    } u;
    uint16_t type;
    int n =
        ofl_wire_recv(c->ctl, c->opts.timeout_ms, &type, u.raw, sizeof(u.raw));

    if (n < 0)
        return n;
    if (type == RDN_MSG_REJECT && n == sizeof(u.rej))
        return u.rej.status < 0 ? u.rej.status : -EPROTO;
    if (type != want || (size_t)n != len)
        return -EPROTO;
    memcpy(buf, u.raw, len);
    return 0;
}

static int geometry_ok(const struct rdn_geometry *g)
{
    return strncmp(g->hash, RDN_HASH_NAME, sizeof(g->hash)) == 0 &&
           g->fp_bits == RDN_FP_BITS && g->bucket_slots == RDN_BUCKET_SLOTS &&
           g->bucket_bytes == sizeof(struct rdn_bucket) && g->hashpower >= 1 &&
           g->hashpower <= 40 && g->gen_word != 0 && g->item_size_max > 0 &&
           g->item_size_max <= (1u << 30);
}

/* Sends msg on the handshake connection and takes the GEOMETRY answer. */
static int ask_geometry(struct rdn_conn *c, uint16_t msg, const void *payload,
                        uint32_t len)
{
    struct rdn_geometry g;
    int rc = ofl_wire_send(c->ctl, msg, payload, len, 0);

    if (rc == 0)
        rc = expect_msg(c, RDN_MSG_GEOMETRY, &g, sizeof(g));
    if (rc == 0 && !geometry_ok(&g))
        rc = -EPROTO;
    if (rc < 0)
        return rc;
    c->geo = g;
    c->geo_ms = mono_ms();
    return 0;
}

/*
 * A new handshake connection for this client (RESUME): the server that
 * the old one went to died, and the one that re-attached our chain takes
 * the new one. Gives the current geometry too.
 */
static int ctl_resume(struct rdn_conn *c)
{
    struct rdn_resume r = {.token = c->token, .client_id = c->id};
    int fd = tcp_connect(c->host, c->rdn_port), rc;

    if (fd < 0)
        return fd;
    if (c->ctl >= 0)
        close(c->ctl);
    c->ctl = fd;
    rc = ask_geometry(c, RDN_MSG_RESUME, &r, sizeof(r));
    if (rc == 0)
        c->st.resumes++;
    return rc;
}

/* Asks for the current geometry (REFRESH), over a resumed connection if
 * the old one died with its server. */
static int refresh(struct rdn_conn *c)
{
    int rc = ask_geometry(c, RDN_MSG_REFRESH, NULL, 0);

    if (rc < 0 && c->nic_ok && ctl_resume(c) == 0)
        rc = 0;
    return rc;
}

/* Opens the NIC side sized for the server's items and says hello. */
static int hello(struct rdn_conn *c)
{
    struct rdn_welcome w;
    struct rdn_hello h;
    int rc;

    rc = rnic_open(c->opts.device, NULL, &c->dev);
    if (rc == 0)
        rc = ofl_client_open(c->dev, c->opts.depth,
                             (uint32_t)rdn_resp_slot_size(c->geo.item_size_max),
                             &c->nic);
    if (rc == 0)
        rc = ofl_client_hello(&c->nic, &h);
    h.flags = c->opts.search_seq ? RDN_HELLO_SEQ : 0;
    if (rc == 0)
        rc = ofl_wire_send(c->ctl, RDN_MSG_HELLO, &h, sizeof(h), 0);
    if (rc == 0)
        rc = expect_msg(c, RDN_MSG_WELCOME, &w, sizeof(w));
    if (rc == 0 && (!geometry_ok(&w.geo) || w.depth == 0 ||
                    w.depth > c->opts.depth || (w.depth & (w.depth - 1))))
        rc = -EPROTO;
    if (rc < 0)
        return rc;
    c->nic.depth = w.depth; /* fewer slots granted: use the first ones */
    c->geo = w.geo;
    c->geo_ms = mono_ms();
    c->id = w.client_id;
    c->token = w.token;
    return ofl_client_connect(&c->nic, w.qp_addr);
}

/* The libmemcached handle of the TCP path, on c->host:c->tcp_port. */
static int tcp_setup(struct rdn_conn *c)
{
    c->mc = memcached_create(NULL);
    if (!c->mc)
        return -ENOMEM;
    if (memcached_server_add(c->mc, c->host, (in_port_t)c->tcp_port) !=
        MEMCACHED_SUCCESS)
        return -EINVAL;
    memcached_behavior_set(c->mc, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
    memcached_behavior_set(c->mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    return 0;
}

static void close_ctl(struct rdn_conn *c);

/* Tears the RDMA side down (the server's side first, see close_ctl()). */
static void nic_down(struct rdn_conn *c)
{
    if (c->ctl >= 0)
        close_ctl(c);
    c->ctl = -1;
    ofl_client_close(&c->nic);
    if (c->dev)
        rnic_close(c->dev);
    c->dev = NULL;
}

/* The handshake: geometry, QP, response slots. */
static int nic_up(struct rdn_conn *c)
{
    int rc;

    c->ctl = tcp_connect(c->host, c->rdn_port);
    rc = c->ctl < 0 ? c->ctl : 0;
    if (rc == 0)
        rc = refresh(c);
    if (rc == 0)
        rc = hello(c);
    if (rc < 0)
        nic_down(c);
    return rc;
}

/* The RDMA path failed: TCP answers until a reconnection works. */
static void nic_lost(struct rdn_conn *c)
{
    c->nic_ok = false;
    c->nic_lost_ms = mono_ms();
}

/*
 * The server never speaks first on the handshake connection: anything to
 * read there is its end (the server died). While the NIC path works (a
 * restarted server re-attached our chain), the connection is resumed, so
 * LRU reports reach the server again. At most once per RDN_RECONNECT_MS.
 */
static void ctl_retry(struct rdn_conn *c)
{
    struct pollfd pfd = {.fd = c->ctl, .events = POLLIN};
    uint64_t now = mono_ms();

    if (!c->nic_ok || now - c->ctl_check_ms < RDN_RECONNECT_MS)
        return;
    c->ctl_check_ms = now;
    if (c->ctl < 0 || poll(&pfd, 1, 0) != 0)
        ctl_resume(c);
}

/* Retries a failed RDMA path, at most once per RDN_RECONNECT_MS. */
static void nic_retry(struct rdn_conn *c)
{
    if (c->nic_ok || mono_ms() - c->nic_lost_ms < RDN_RECONNECT_MS)
        return;
    nic_down(c);
    if (nic_up(c) == 0) {
        c->nic_ok = true;
        c->st.reconnects++;
    } else {
        c->nic_lost_ms = mono_ms();
    }
}

int rdn_connect_opts(const char *host, int rdn_port, int tcp_port,
                     const struct rdn_opts *opts, struct rdn_conn **out)
{
    struct rdn_conn *c;
    int rc;

    if (!host || !out || rdn_port <= 0 || rdn_port > 65535 || tcp_port < 0 ||
        tcp_port > 65535 || strlen(host) >= sizeof(c->host))
        return -EINVAL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    if (opts)
        c->opts = *opts;
    if (!c->opts.depth)
        c->opts.depth = RDN_DEFAULT_DEPTH;
    if (!c->opts.timeout_ms)
        c->opts.timeout_ms = RDN_DEFAULT_TIMEOUT;
    ofl_hits_reset(&c->hits);
    strcpy(c->host, host);
    c->rdn_port = rdn_port;
    c->tcp_port = tcp_port;
    rc = nic_up(c);
    if (rc == 0)
        rc = tcp_setup(c);
    if (rc < 0) {
        rdn_close(c);
        return rc;
    }
    c->nic_ok = true;
    *out = c;
    return 0;
}

int rdn_connect(const char *host, int rdn_port, int tcp_port,
                struct rdn_conn **out)
{
    return rdn_connect_opts(host, rdn_port, tcp_port, NULL, out);
}

/* ---- LRU reports ------------------------------------------------------ */

static void send_hits(struct rdn_conn *c)
{
    if (c->hits.count && c->ctl >= 0)
        ofl_wire_send(c->ctl, RDN_MSG_HITS, c->hits.buf, (uint32_t)c->hits.len,
                      0);
    ofl_hits_reset(&c->hits);
}

/* Notes a NIC hit; sends the batch when full or a second old. */
static void note_hit(struct rdn_conn *c, const char *key, size_t nkey,
                     uint64_t fp)
{
    uint64_t now = mono_ms();

    for (unsigned i = 0; i < c->hits.count; i++)
        if (c->hit_fp[i] == fp)
            goto maybe_send; /* reported in this batch already */
    if (c->hits.count == 0)
        c->hits_since_ms = now;
    c->hit_fp[c->hits.count] = fp;
    ofl_hits_add(&c->hits, key, nkey);
maybe_send:
    if (c->hits.count == RDN_HITS_MAX ||
        now - c->hits_since_ms >= RDN_HITS_EVERY_MS)
        send_hits(c);
}

/*
 * Closes the handshake connection and waits (briefly) until the server
 * closed its side too: it has then destroyed its QPs, so destroying ours
 * afterwards is an orderly goodbye, not an RDMA error on its side.
 */
static void close_ctl(struct rdn_conn *c)
{
    uint64_t end = mono_ms() + 1000;
    char buf[256];

    shutdown(c->ctl, SHUT_WR);
    while (mono_ms() < end) {
        struct pollfd pfd = {.fd = c->ctl, .events = POLLIN};

        if (poll(&pfd, 1, 100) > 0 && read(c->ctl, buf, sizeof(buf)) <= 0)
            break;
    }
    close(c->ctl);
}

void rdn_close(struct rdn_conn *c)
{
    if (!c)
        return;
    if (c->nic_ok)
        send_hits(c);
    nic_down(c);
    if (c->mc)
        memcached_free(c->mc);
    free(c);
}

/* ---- TCP -------------------------------------------------------------- */

/*
 * Asks for one key over TCP. After a connection failure libmemcached
 * refuses to try the server again until a retry time, in whole seconds
 * and never less than the next second tick, however RETRY_TIMEOUT is set:
 * every GET in that window would fail although a restarted server is back
 * already. The TCP path is what answers while the RDMA path is rebuilt,
 * so a disabled handle is replaced by a fresh one that connects at once
 * (a dead process on a live host refuses in no time).
 */
static memcached_return_t tcp_mget(struct rdn_conn *c, const char *key,
                                   size_t nkey)
{
    const char *keys[1] = {key};
    size_t lens[1] = {nkey};
    memcached_return_t rc = c->mc ? memcached_mget(c->mc, keys, lens, 1)
                                  : MEMCACHED_SERVER_MARKED_DEAD;

    if (rc == MEMCACHED_SERVER_TEMPORARILY_DISABLED ||
        rc == MEMCACHED_SERVER_MARKED_DEAD) {
        if (c->mc)
            memcached_free(c->mc);
        if (tcp_setup(c) < 0)
            return MEMCACHED_FAILURE;
        rc = memcached_mget(c->mc, keys, lens, 1);
    }
    return rc;
}

static int tcp_get(struct rdn_conn *c, const char *key, size_t nkey,
                   struct rdn_result *r)
{
    memcached_return_t rc = tcp_mget(c, key, nkey);
    memcached_result_st *res;

    c->st.tcp_gets++;
    r->src = RDN_SRC_TCP;
    if (rc != MEMCACHED_SUCCESS)
        return r->status = -EIO;
    res = memcached_fetch_result(c->mc, NULL, &rc);
    if (!res)
        return r->status = (rc == MEMCACHED_END || rc == MEMCACHED_NOTFOUND)
                               ? -ENOENT
                               : -EIO;
    r->len = memcached_result_length(res);
    r->value = malloc(r->len + 1);
    if (r->value) {
        memcpy(r->value, memcached_result_value(res), r->len);
        r->value[r->len] = '\0';
    }
    r->flags = memcached_result_flags(res);
    r->cas = memcached_result_cas(res);
    memcached_result_free(res);
    /* Read up to END so the connection stays in step. */
    while ((res = memcached_fetch_result(c->mc, NULL, &rc)))
        memcached_result_free(res);
    return r->status = r->value ? 0 : -ENOMEM;
}

/* ---- the NIC pipeline ------------------------------------------------- */

/* A key of an rdn_mget() and what the NIC did with it. */
struct job {
    const char *key;
    size_t nkey;
    struct rdn_result *res;
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

struct batch {
    struct rdn_conn *c;
    struct job *jobs;
    size_t n, next;     /* next job never asked */
    struct job **retry; /* jobs to ask again */
    size_t nretry;
    struct flight *fl; /* [request number % depth] */
    uint32_t inflight;
};

static uint32_t server_now(const struct rdn_conn *c)
{
    return c->geo.server_time + (uint32_t)((mono_ms() - c->geo_ms) / 1000);
}

static void to_tcp(struct job *j, const char *why)
{
    j->tcp = true;
    j->done = true;
    j->res->why = why;
}

static void retry_or_tcp(struct batch *b, struct job *j, const char *why)
{
    if (++j->tries >= RDN_MAX_TRIES)
        to_tcp(j, why);
    else
        b->retry[b->nretry++] = j;
}

/* A verified hit: copy the value out of the slot. */
static void take_hit(struct rdn_conn *c, struct job *j,
                     const struct rdn_item *it)
{
    struct rdn_result *r = j->res;

    r->value = malloc((size_t)it->nbytes + 1);
    if (!r->value) {
        to_tcp(j, "out of memory");
        return;
    }
    memcpy(r->value, rdn_item_value((struct rdn_item *)it), it->nbytes);
    r->value[it->nbytes] = '\0';
    r->len = it->nbytes;
    r->flags = it->flags;
    r->cas = it->stamp;
    r->status = 0;
    r->src = RDN_SRC_NIC;
    j->done = true;
    c->st.nic_hits++;
    note_hit(c, j->key, j->nkey, j->kh.fp);
}

/* Judges the answer to request n and decides the job's fate. */
static void handle_answer(struct batch *b, uint64_t n)
{
    struct rdn_conn *c = b->c;
    struct flight *f = &b->fl[n & (c->nic.depth - 1)];
    struct job *j = f->job;
    struct rdn_geometry g = c->geo;
    const struct rdn_item *it = NULL;
    enum ofl_verdict v;

    g.gen_word = f->gen_word; /* judged against what it was sent with */
    v = ofl_client_judge(&c->nic, n, &g, j->key, j->nkey, server_now(c), &it);
    b->inflight--;
    switch (v) {
    case OFL_HIT:
        take_hit(c, j, it);
        break;
    case OFL_MISS:
        if (f->flags & RDN_GEO_EXPANDING) {
            to_tcp(j, "table growing: a miss is not final");
        } else {
            j->res->status = -ENOENT;
            j->res->src = RDN_SRC_NIC;
            j->done = true;
            c->st.nic_misses++;
        }
        break;
    case OFL_STALE:
        if (c->geo.gen_word == f->gen_word) {
            c->st.refreshes++;
            if (refresh(c) < 0) {
                nic_lost(c);
                to_tcp(j, "refresh failed");
                break;
            }
        }
        retry_or_tcp(b, j, "table changed repeatedly");
        break;
    case OFL_TORN:
        c->st.torn_retries++;
        retry_or_tcp(b, j, "torn reads");
        break;
    case OFL_OTHER_KEY:
        c->st.collisions++;
        to_tcp(j, "fingerprint collision");
        break;
    case OFL_EXPIRY_DOUBT:
        to_tcp(j, "expires now");
        break;
    }
}

/* The next job to ask: retries first, then new keys. */
static struct job *next_job(struct batch *b)
{
    if (b->nretry)
        return b->retry[--b->nretry];
    while (b->next < b->n) {
        struct job *j = &b->jobs[b->next++];

        if (!j->done)
            return j;
    }
    return NULL;
}

/* Sends one job: 0, -EBUSY (send ring full: try later) or -errno. */
static int send_job(struct batch *b, struct job *j)
{
    struct rdn_conn *c = b->c;
    int64_t n;

    rdn_keyhash(j->key, j->nkey, c->geo.hashpower, &j->kh);
    n = ofl_client_send(&c->nic, &c->geo, &j->kh);
    if (n < 0) {
        b->retry[b->nretry++] = j; /* not sent: still to do */
        return (int)n;
    }
    b->fl[(uint64_t)n & (c->nic.depth - 1)] =
        (struct flight){j, c->geo.gen_word, c->geo.flags};
    b->inflight++;
    return 0;
}

/* Sends what may be sent; true if something is left that could not be. */
static bool send_some(struct batch *b)
{
    struct job *j;

    while (b->inflight < b->c->nic.depth && (j = next_job(b))) {
        int rc = send_job(b, j);

        if (rc == -EBUSY)
            return true;
        if (rc < 0) {
            nic_lost(b->c);
            return true;
        }
    }
    return false;
}

/* Runs the jobs over the NIC until each is answered or given to TCP. */
static void run_nic(struct batch *b)
{
    struct rdn_conn *c = b->c;
    uint64_t busy_since = 0;

    while (c->nic_ok) {
        bool busy = send_some(b);
        uint64_t n;
        int rc;

        if (!c->nic_ok)
            break;
        if (b->inflight == 0) {
            struct timespec nap = {0, 50 * 1000};

            if (!busy)
                return; /* everything answered */
            /* Only sends not yet acknowledged block us: briefly. */
            busy_since = busy_since ? busy_since : mono_ms();
            if (mono_ms() - busy_since > (uint64_t)c->opts.timeout_ms)
                nic_lost(c);
            nanosleep(&nap, NULL);
            continue;
        }
        busy_since = 0;
        rc = ofl_client_wait(&c->nic, c->opts.timeout_ms, &n);
        if (rc <= 0) {
            nic_lost(c); /* lost answers: the QP cannot be trusted */
            break;
        }
        handle_answer(b, n);
    }
    /* The NIC path broke: whatever is left goes to TCP. */
    for (size_t i = 0; i < b->n; i++)
        if (!b->jobs[i].done)
            to_tcp(&b->jobs[i], "RDMA connection failed");
}

int rdn_mget(struct rdn_conn *c, size_t n, const char *const *keys,
             const size_t *keylens, struct rdn_result *out)
{
    struct batch b = {.c = c, .n = n};

    if (!c || (n && (!keys || !keylens || !out)))
        return -EINVAL;
    memset(out, 0, n * sizeof(*out));
    /* First: a reconnection sets the depth that b.fl is sized for. */
    nic_retry(c);
    ctl_retry(c);
    b.jobs = calloc(n ? n : 1, sizeof(*b.jobs));
    b.retry = calloc(n ? n : 1, sizeof(*b.retry));
    b.fl = calloc(c->nic.depth ? c->nic.depth : 1, sizeof(*b.fl));
    if (!b.jobs || !b.retry || !b.fl) {
        free(b.jobs);
        free(b.retry);
        free(b.fl);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        b.jobs[i] =
            (struct job){.key = keys[i], .nkey = keylens[i], .res = &out[i]};
        if (keylens[i] == 0 || keylens[i] > RDN_KEY_MAX) {
            out[i].status = -EINVAL;
            b.jobs[i].done = true;
        }
    }
    if (c->nic_ok)
        run_nic(&b);
    for (size_t i = 0; i < n; i++) {
        struct job *j = &b.jobs[i];

        if (j->done && !j->tcp)
            continue;
        if (c->opts.no_fallback)
            out[i].status = -EAGAIN;
        else
            tcp_get(c, j->key, j->nkey, &out[i]);
        if (!out[i].why)
            out[i].why = "RDMA connection failed";
    }
    free(b.jobs);
    free(b.retry);
    free(b.fl);
    return 0;
}

int rdn_get(struct rdn_conn *c, const char *key, size_t keylen, char **value,
            size_t *len, uint32_t *flags, uint64_t *cas)
{
    struct rdn_result r;
    int rc;

    if (!c || !key || !value)
        return -EINVAL;
    rc = rdn_mget(c, 1, &key, &keylen, &r);
    if (rc < 0)
        return rc;
    c->last_src = r.src;
    c->last_why = r.src == RDN_SRC_TCP ? r.why : NULL;
    *value = r.value;
    if (len)
        *len = r.len;
    if (flags)
        *flags = r.flags;
    if (cas)
        *cas = r.cas;
    return r.status;
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
    *out = c->st;
}

uint32_t rdn_client_id(const struct rdn_conn *c)
{
    return c->id;
}

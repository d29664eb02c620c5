/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/pipeline.c - librdn's GETs on the NICs: every server's share
 * of the keys (a lane) sent at once, the answers taken from whichever
 * server has them and judged (nic_client.h): a verified hit, a miss, a
 * retry, or a key for TCP.
 */
#include "config.h"

#include <errno.h>
#include <time.h>

#include "rdn/librdn/client_int.h"

#define RDN_MAX_TRIES     4   /* NIC attempts per key (torn, stale) */
#define RDN_SPIN_ROUNDS   256 /* polls of all servers before sleeping */
#define RDN_WAIT_SLICE_MS 1   /* one sleep on one server's answers */
#define RDN_CLOCK_ROUNDS  64  /* idle polls between two looks at the clock */

/* The server's clock (seconds) at now_ms, from the geometry's (which a
 * refresh may have taken after now_ms). */
static uint32_t server_now(const struct rdn_srv *s, uint64_t now_ms)
{
    uint64_t since = now_ms > s->geo_ms ? now_ms - s->geo_ms : 0;

    return s->geo.server_time + (uint32_t)(since / 1000);
}

void rdnc_to_tcp(struct job *j, const char *why)
{
    j->tcp = true;
    j->done = true;
    j->res->why = why;
}

static void retry_or_tcp(struct lane *l, struct job *j, const char *why)
{
    if (++j->tries >= RDN_MAX_TRIES)
        rdnc_to_tcp(j, why);
    else
        l->retry[l->nretry++] = j;
}

/* A verified hit: copy the value out of the slot. */
static void take_hit(struct rdn_srv *s, struct job *j,
                     const struct rdn_item *it, uint64_t now_ms)
{
    struct rdn_result *r = j->res;

    if (rdnc_keep_value(r, j->into, rdn_item_value((struct rdn_item *)it),
                        it->nbytes) < 0) {
        rdnc_to_tcp(j, "out of memory");
        return;
    }
    r->flags = it->flags;
    r->cas = it->stamp;
    r->status = 0;
    r->src = RDN_SRC_NIC;
    j->done = true;
    s->st.nic_hits++;
    rdnc_note_hit(s, j->wkey, j->nwkey, j->kh.fp, now_ms);
}

/* The lane's server broke: what it has not answered goes to TCP. */
static void lane_lost(struct lane *l, const char *why, int rc)
{
    rdnc_nic_lost(l->s, why, rc);
    for (size_t i = 0; i < l->nq; i++)
        if (!l->q[i]->done)
            rdnc_to_tcp(l->q[i], l->s->why);
    l->inflight = 0;
    l->nretry = 0;
}

/* Judges the answer to request n (taken at *now_ms) and decides the job's
 * fate; a refresh of the geometry moves *now_ms on (it may take long). */
static void handle_answer(struct lane *l, uint64_t n, uint64_t *now_ms)
{
    struct rdn_srv *s = l->s;
    struct flight *f = &l->fl[n & (s->nic.depth - 1)];
    struct job *j = f->job;
    struct rdn_geometry g = s->geo;
    const struct rdn_item *it = NULL;
    enum ofl_verdict v;

    g.gen_word = f->gen_word; /* judged against what it was sent with */
    v = ofl_client_judge(&s->nic, n, &g, j->wkey, j->nwkey,
                         server_now(s, *now_ms), &it);
    l->inflight--;
    switch (v) {
    case OFL_HIT:
        take_hit(s, j, it, *now_ms);
        break;
    case OFL_MISS:
        if (f->flags & RDN_GEO_EXPANDING) {
            rdnc_to_tcp(j, "table growing: a miss is not final");
        } else {
            j->res->status = -ENOENT;
            j->res->src = RDN_SRC_NIC;
            j->done = true;
            s->st.nic_misses++;
        }
        break;
    case OFL_STALE:
        if (s->geo.gen_word == f->gen_word) {
            s->st.refreshes++;
            int rc = rdnc_refresh(s);

            *now_ms = mono_ms();
            if (rc < 0) {
                rdnc_to_tcp(j, "refresh failed");
                lane_lost(l, "refresh failed", rc);
                break;
            }
        }
        retry_or_tcp(l, j, "table changed repeatedly");
        break;
    case OFL_TORN:
        s->st.torn_retries++;
        retry_or_tcp(l, j, "torn reads");
        break;
    case OFL_OTHER_KEY:
        s->st.collisions++;
        rdnc_to_tcp(j, "fingerprint collision");
        break;
    case OFL_EXPIRY_DOUBT:
        rdnc_to_tcp(j, "expires now");
        break;
    }
}

/* The next job to ask: retries first, then new keys. */
static struct job *next_job(struct lane *l)
{
    if (l->nretry)
        return l->retry[--l->nretry];
    while (l->next < l->nq) {
        struct job *j = l->q[l->next++];

        if (!j->done)
            return j;
    }
    return NULL;
}

/* Sends one job: 0, -EBUSY (send ring full: try later) or -errno. */
static int send_job(struct lane *l, struct job *j, uint64_t now_ms)
{
    struct rdn_srv *s = l->s;
    int64_t n;

    rdn_keyhash(j->wkey, j->nwkey, s->geo.hashpower, &j->kh);
    n = ofl_client_send(&s->nic, &s->geo, &j->kh);
    if (n < 0) {
        l->retry[l->nretry++] = j; /* not sent: still to do */
        return (int)n;
    }
    l->fl[(uint64_t)n & (s->nic.depth - 1)] =
        (struct flight){j, s->geo.gen_word, s->geo.flags};
    if (l->inflight++ == 0)
        l->quiet_since = now_ms;
    return 0;
}

/* Sends what may be sent; true if something is left that could not be. */
static bool send_some(struct lane *l, uint64_t now_ms)
{
    struct job *j;

    while (l->inflight < l->s->nic.depth && (j = next_job(l))) {
        int rc = send_job(l, j, now_ms);

        if (rc == -EBUSY)
            return true;
        if (rc < 0) {
            lane_lost(l, "RDMA send failed", rc);
            return false;
        }
    }
    return false;
}

/* Takes the answers that are there; true if there were any. */
static bool reap_lane(struct lane *l, uint64_t *now_ms)
{
    bool any = false;
    uint64_t n;
    int rc;

    while (l->s->nic_ok && l->inflight &&
           (rc = ofl_client_poll(&l->s->nic, &n)) != 0) {
        if (rc < 0) {
            lane_lost(l, "RDMA answer failed", rc);
            break;
        }
        handle_answer(l, n, now_ms);
        any = true;
    }
    if (any)
        l->quiet_since = *now_ms;
    return any;
}

/*
 * Runs every lane on its server's NIC at once until each job is answered
 * or given to TCP: sends fill every server's pipeline, answers are taken
 * from whichever server has them. With nothing to take, it spins a while
 * over all servers, then sleeps briefly on one of them (an RDMA client
 * cannot sleep on several completion queues at once); a server with no
 * answer for timeout_ms is given up (its keys go to TCP), the others go
 * on. The clock is read once per round that took answers, after a sleep,
 * and every RDN_CLOCK_ROUNDS idle rounds: a read costs several polls, and
 * the times it serves (timeouts, LRU batches, expiry) count milliseconds.
 */
void rdnc_run_nic(struct lane *lanes, uint32_t nl, int timeout_ms)
{
    uint64_t blocked_since = 0, now = 0;
    unsigned idle = 0;
    uint32_t turn = 0;

    for (;;) {
        bool busy = false, waiting = false, progress = false;

        if (idle % RDN_CLOCK_ROUNDS == 0)
            now = mono_ms();
        for (uint32_t i = 0; i < nl; i++) {
            struct lane *l = &lanes[i];

            if (!l->s->nic_ok)
                continue;
            busy |= send_some(l, now);
            progress |= reap_lane(l, &now);
            if (!l->s->nic_ok)
                continue;
            busy |= l->nretry || l->next < l->nq;
            if (l->inflight) {
                waiting = true;
                if (now - l->quiet_since > (uint64_t)timeout_ms)
                    lane_lost(l, "RDMA answers lost", -ETIMEDOUT);
            }
        }
        if (!busy && !waiting)
            return;
        if (progress) {
            idle = 0;
            blocked_since = 0;
            continue;
        }
        if (++idle < RDN_SPIN_ROUNDS)
            continue;
        /* Sleep on one waiting server, a different one each time. */
        for (uint32_t k = 0; k < nl; k++) {
            struct lane *l = &lanes[(turn + k) % nl];
            uint64_t n;
            int rc;

            if (!l->s->nic_ok || !l->inflight)
                continue;
            turn = (turn + k + 1) % nl;
            rc = ofl_client_wait(&l->s->nic, RDN_WAIT_SLICE_MS, &n);
            if (rc < 0) {
                lane_lost(l, "RDMA answer failed", rc);
            } else if (rc > 0) {
                now = mono_ms();
                handle_answer(l, n, &now);
                l->quiet_since = now;
            }
            break;
        }
        if (!waiting) {
            /* Only sends not yet acknowledged block us: briefly. */
            struct timespec nap = {0, 50 * 1000};

            blocked_since = blocked_since ? blocked_since : now;
            for (uint32_t i = 0; i < nl; i++) {
                struct lane *l = &lanes[i];

                if (now - blocked_since > (uint64_t)timeout_ms &&
                    l->s->nic_ok && (l->nretry || l->next < l->nq))
                    lane_lost(l, "RDMA sends stuck", -ETIMEDOUT);
            }
            nanosleep(&nap, NULL);
        } else {
            blocked_since = 0;
        }
        idle = 0;
    }
}

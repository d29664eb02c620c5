/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/watch.c - the watch thread: it sleeps on the done CQ (the
 * completions of every client's closing WRITE_IMM) or, while GETs keep
 * coming, for a fixed batch time, and then counts
 * what the pipelines did, fails clients whose QPs broke or whose GETs
 * hang, and moves the reclaim horizon. The pipelines need nothing from it
 * to run (they are recycled chains): while no server process lives, GETs
 * are still answered, and a restarted server's watch thread catches up
 * from the CQs' WQE counters.
 *
 * The horizon (freed item memory must not be reused while a chain may
 * still READ a slot that pointed at it or WRITE from it). A GET may touch
 * an item from the moment its request's receive completed until its
 * WRITE_IMM completed. Each tick: E = the cache's epoch, then the epoch is
 * advanced, then every pipeline's receive count is taken (mark). A chunk
 * freed in epoch <= E was unlinked before the advance, so any GET that
 * could still see it had its receive counted in that mark. Once every
 * pipeline completed as many GETs as its mark, no GET of epoch <= E runs:
 * the horizon becomes E + 1. With no pipeline at all there is no reader
 * (rdn_offload_horizon() says so itself).
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "proto/barrier.h"
#include "rdn/offload/offload_int.h"

#define OFL_WAIT_MS  20 /* idle tick: the horizon moves even without GETs */
#define OFL_POLL_MAX 64
/*
 * Busy tick: after a tick that found completions the thread sleeps this
 * long instead of waiting for the next completion, so under load it wakes
 * a few thousand times a second, not once per GET (it shares a core with
 * the cache's other threads). The done CQ holds 65536 completions, and
 * the pipelines count from WQE counters, so a late tick loses nothing;
 * whoever reports counts catches up first (ofl_watch_catch_up()).
 */
#define OFL_BATCH_NS 250000

/* Advances the epoch, then records every pipeline's receives (lock). */
static void snapshot(struct rdn_offload *o, uint64_t epoch)
{
    bool room = o->snap_tail - o->snap_head < OFL_SNAPS;
    unsigned s = (unsigned)(o->snap_tail % OFL_SNAPS);

    for (struct ofl_conn *c = o->conns; c; c = c->next) {
        if (c->state != OFL_CONN_READY)
            continue;
        if (ofl_pipe_poll_recv(&c->pipe) < 0)
            continue; /* failed: caught by check() */
        if (room)
            c->mark[s] = c->pipe.received;
    }
    /* Without room the snapshot is skipped: a later one covers it. */
    if (room) {
        o->snap_epoch[s] = epoch;
        o->snap_tail++;
    }
}

/* Pops the snapshots whose GETs have all completed (lock). */
static void advance_horizon(struct rdn_offload *o)
{
    while (o->snap_head != o->snap_tail) {
        unsigned s = (unsigned)(o->snap_head % OFL_SNAPS);

        for (struct ofl_conn *c = o->conns; c; c = c->next)
            if (c->state == OFL_CONN_READY && c->pipe.done < c->mark[s])
                return;
        store_seq_cst(&o->horizon, o->snap_epoch[s] + 1);
        o->snap_head++;
    }
}

static struct ofl_conn *conn_of_qpn(struct rdn_offload *o, uint32_t qpn)
{
    for (struct ofl_conn *c = o->conns; c; c = c->next)
        if (c->state == OFL_CONN_READY && c->pipe.resp.qpn == qpn)
            return c;
    return NULL; /* a client torn down since: its completion is moot */
}

/* Hands the done CQ's completions to their pipelines (lock); returns how
 * many there were. */
static unsigned drain_done(struct rdn_offload *o)
{
    struct rnic_wc wc[OFL_POLL_MAX];
    unsigned total = 0;
    int n;

    while ((n = rnic_poll_cq(o->done.cq, OFL_POLL_MAX, wc)) > 0)
        for (int i = 0; i < n; i++) {
            total++;
            struct ofl_conn *c = conn_of_qpn(o, wc[i].qpn);

            if (c)
                ofl_pipe_complete(&c->pipe, &wc[i]);
        }
    if (n < 0 && !exchange_seq_cst(&o->broken, true))
        fprintf(stderr,
                "rdn: the done CQ failed (%d): offloaded GETs are "
                "off until restart\n",
                n);
    if (n < 0) /* nothing it says can be trusted any more */
        for (struct ofl_conn *c = o->conns; c; c = c->next)
            ofl_conn_fail(o, c, "done CQ failed");
    return total;
}

void ofl_watch_catch_up(struct rdn_offload *o)
{
    for (struct ofl_conn *c = o->conns; c; c = c->next)
        if (c->state == OFL_CONN_READY)
            ofl_pipe_poll_recv(&c->pipe); /* a failure: caught by check() */
    drain_done(o);
}

/* Fails broken or hung clients (lock). */
static void check(struct rdn_offload *o, uint64_t now)
{
    for (struct ofl_conn *c = o->conns; c; c = c->next) {
        struct ofl_pipe *p = &c->pipe;

        if (c->state != OFL_CONN_READY)
            continue;
        if (ofl_pipe_failed(p)) {
            ofl_conn_fail(o, c, "QP error");
            continue;
        }
        if (c->fd < 0 && now - c->adopted_ms > OFL_UNCLAIMED_MS) {
            ofl_log(o, "client %u: re-attached, never came back", c->id);
            ofl_conn_stop(o, c); /* not an error: its client is gone */
            ofl_ctl_wake(o);     /* the control thread frees it */
            continue;
        }
        if (ofl_pipe_inflight(p) == 0 || p->done != c->last_done) {
            c->last_done = p->done;
            c->stuck_since_ms = now;
        } else if (now - c->stuck_since_ms > OFL_STUCK_MS) {
            ofl_conn_fail(o, c, "GET unanswered (client not receiving?)");
        }
    }
}

void *ofl_watch_main(void *arg)
{
    struct rdn_offload *o = arg;
    const struct timespec batch = {0, OFL_BATCH_NS};
    bool busy = false;

    while (!load_seq_cst(&o->stop)) {
        uint64_t epoch;

        if (busy)
            nanosleep(&batch, NULL);
        else
            rnic_cq_wait(o->done.cq, OFL_WAIT_MS);
        epoch = o->ops.epoch(o->ops.ctx);
        o->ops.epoch_advance(o->ops.ctx);
        fence_seq_cst();
        pthread_mutex_lock(&o->lock);
        snapshot(o, epoch);
        busy = drain_done(o) > 0;
        check(o, ofl_now_ms());
        advance_horizon(o);
        pthread_mutex_unlock(&o->lock);
    }
    return NULL;
}

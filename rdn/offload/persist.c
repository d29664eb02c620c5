/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/persist.c - the offload's NIC resources as persistent objects
 * of an rdn-nicd domain (see offload.h, "Persistence").
 *
 * Objects and their names in the domain:
 *   ofl.table      the table region (remote read: the chains READ it)
 *   ofl.gen        the generation word
 *   ofl.meta       the cache's metadata
 *   ofl.done       the done CQ (IGNORE_OVERRUN: nobody polls a dead server's)
 *   ofl.arena<n>   item arena n
 *   ofl.c<id>.*    client id's pipeline (ofl_pipe_persist())
 *   ofl.state      struct ofl_pstate; persisted last, so its presence means
 *                  the objects above exist
 * The master queue is not persistent: it only starts new pipelines.
 *
 * The state is plain memory that the daemon keeps: it is updated in place
 * (client entries, the table region's use, the generation word's two
 * halves, the next client id), so a kill -9 loses nothing that was
 * written. A client entry is written after its pipeline was persisted and
 * cleared before it is destroyed; a crash between the two leaves objects
 * the next process does not adopt (they stay in the daemon until the
 * domain's state is released, which walks every client id given so far)
 * rather than an entry without objects.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/barrier.h"
#include "rdn/offload/offload_int.h"

#define OFL_PSTATE_MAGIC UINT64_C(0x39304c464f4e4452) /* "RDNOFL09" */
#define OFL_MASTER_WQEBB 64
#define OFL_DONE_DEPTH   (1u << 16)

static size_t state_len(const struct rdn_offload *o)
{
    return sizeof(struct ofl_pstate) +
           (size_t)o->cfg.max_clients * sizeof(struct ofl_pclient);
}

static void client_prefix(uint32_t id, char *buf, size_t len)
{
    snprintf(buf, len, "ofl.c%u", id);
}

static void arena_name(unsigned n, char *buf, size_t len)
{
    snprintf(buf, len, "ofl.arena%u", n);
}

void ofl_pipe_cfg_of(struct rdn_offload *o, const struct ofl_pclient *pc,
                     struct ofl_pipe_cfg *out)
{
    memset(out, 0, sizeof(*out));
    out->iters = o->cfg.iters;
    out->depth = pc->depth;
    out->slot_addr = pc->slot_addr;
    out->slot_size = pc->slot_size;
    out->slot_rkey = pc->slot_rkey;
    out->table_mr = o->tbuf.mr;
    out->gen = chain_buf_loc(&o->gen, 0, 8);
    out->done_cq = &o->done;
    out->master = &o->master;
    out->seq = pc->flags & RDN_HELLO_SEQ;
}

/* ---- fresh objects ---------------------------------------------------- */

/* Creates the objects every offload has (the master is made separately). */
static int fresh_objects(struct rdn_offload *o)
{
    struct ofl_pstate *ps;
    int rc;

    rc = chain_buf_open(o->dev, o->cfg.table_reserve, RNIC_ACCESS_REMOTE_READ,
                        &o->tbuf);
    if (rc < 0)
        return ofl_err(rc, "table region: %s", chain_errmsg());
    rc = chain_buf_open(o->dev, 64, 0, &o->gen);
    if (rc < 0) {
        ofl_err(rc, "generation word: %s", chain_errmsg());
        goto err_close_tbuf;
    }
    rc = chain_buf_open(o->dev, o->cfg.meta_len ? o->cfg.meta_len : 64, 0,
                        &o->meta);
    if (rc < 0) {
        ofl_err(rc, "metadata: %s", chain_errmsg());
        goto err_close_gen;
    }
    rc = chain_buf_open(o->dev, state_len(o), 0, &o->state);
    if (rc < 0) {
        ofl_err(rc, "state: %s", chain_errmsg());
        goto err_close_meta;
    }
    rc =
        chain_cq_open(o->dev, OFL_DONE_DEPTH, RNIC_CQ_IGNORE_OVERRUN, &o->done);
    if (rc < 0) {
        ofl_err(rc, "done CQ: %s", chain_errmsg());
        goto err_close_state;
    }
    ps = ofl_ps(o);
    ps->magic = OFL_PSTATE_MAGIC;
    ps->tregion_len = o->cfg.table_reserve;
    ps->meta_len = o->cfg.meta_len;
    ps->item_size_max = o->cfg.item_size_max;
    ps->iters = o->cfg.iters;
    ps->max_clients = o->cfg.max_clients;
    return 0;

err_close_state:
    chain_buf_close(&o->state);
err_close_meta:
    chain_buf_close(&o->meta);
err_close_gen:
    chain_buf_close(&o->gen);
err_close_tbuf:
    chain_buf_close(&o->tbuf);
    return rc;
}

static int persist_objects(struct rdn_offload *o)
{
    int rc = chain_buf_persist(&o->tbuf, "ofl.table");

    if (rc == 0)
        rc = chain_buf_persist(&o->gen, "ofl.gen");
    if (rc == 0)
        rc = chain_buf_persist(&o->meta, "ofl.meta");
    if (rc == 0)
        rc = chain_cq_persist(&o->done, "ofl.done");
    if (rc == 0)
        rc = chain_buf_persist(&o->state, "ofl.state");
    return rc < 0 ? ofl_err(rc, "persist: %s", chain_errmsg()) : 0;
}

static void close_objects(struct rdn_offload *o)
{
    chain_cq_close(&o->done);
    chain_buf_close(&o->state);
    chain_buf_close(&o->meta);
    chain_buf_close(&o->gen);
    chain_buf_close(&o->tbuf);
}

/* ---- re-attaching ----------------------------------------------------- */

/* Returns why a previous state cannot be used by this configuration, or
 * NULL if it can. */
static const char *state_mismatch(const struct rdn_offload *o)
{
    const struct ofl_pstate *ps = ofl_ps(o);

    if (o->state.len < sizeof(*ps) || ps->magic != OFL_PSTATE_MAGIC)
        return "unknown state format";
    if (ps->tregion_len != o->cfg.table_reserve ||
        ps->tregion_used > ps->tregion_len)
        return "table reserve differs";
    if (ps->meta_len != o->cfg.meta_len)
        return "metadata size differs (memory limit or item size changed)";
    if (ps->item_size_max != o->cfg.item_size_max)
        return "item size limit differs";
    if (ps->iters != o->cfg.iters || ps->max_clients != o->cfg.max_clients ||
        o->state.len != state_len(o))
        return "client limits differ";
    return NULL;
}

/* Attaches the objects of a previous process, if the domain holds any.
 * Returns 1 (attached), 0 (none: a fresh domain), or -errno. */
static int attach_objects(struct rdn_offload *o)
{
    int rc = chain_buf_attach(o->dev, "ofl.state", &o->state);

    if (rc == -ENOENT)
        return 0;
    if (rc == 0)
        rc = chain_buf_attach(o->dev, "ofl.table", &o->tbuf);
    if (rc == 0)
        rc = chain_buf_attach(o->dev, "ofl.gen", &o->gen);
    if (rc == 0)
        rc = chain_buf_attach(o->dev, "ofl.meta", &o->meta);
    if (rc == 0)
        rc = chain_cq_attach(o->dev, "ofl.done", &o->done);
    return rc < 0 ? ofl_err(rc, "attach: %s", chain_errmsg()) : 1;
}

/*
 * Takes over the pipeline of every client the state lists: each becomes a
 * client without a handshake connection, watched like the others. A
 * pipeline that cannot be attached is dropped from the state.
 */
static void adopt_clients(struct rdn_offload *o)
{
    struct ofl_pstate *ps = ofl_ps(o);

    for (uint32_t i = 0; i < o->cfg.max_clients; i++) {
        struct ofl_pclient *pc = &ps->client[i];
        struct ofl_pipe_cfg cfg;
        struct ofl_conn *c;
        char prefix[32];
        int rc;

        if (!pc->id)
            continue;
        c = calloc(1, sizeof(*c));
        client_prefix(pc->id, prefix, sizeof(prefix));
        ofl_pipe_cfg_of(o, pc, &cfg);
        rc = c ? ofl_pipe_attach(o->dev, &cfg, prefix, &c->pipe)
               : ofl_err(-ENOMEM, "no memory for the client");
        if (rc < 0) {
            fprintf(stderr, "rdn: cannot re-attach client %u: %s (%s)\n",
                    pc->id, strerror(-rc), ofl_errmsg());
            free(c);
            memset(pc, 0, sizeof(*pc));
            continue;
        }
        c->id = pc->id;
        c->token = pc->token;
        c->fd = -1;
        c->depth = pc->depth;
        c->state = OFL_CONN_READY;
        c->stuck_since_ms = c->adopted_ms = ofl_now_ms();
        snprintf(c->peer, sizeof(c->peer), "re-attached");
        c->next = o->conns;
        o->conns = c;
        o->nconns++;
        fetch_add_seq_cst(&o->active, 1);
    }
}

/* Restores the counters the previous process left. */
static void resume_state(struct rdn_offload *o)
{
    const struct ofl_pstate *ps = ofl_ps(o);

    store_seq_cst(&o->tregion_used, (size_t)ps->tregion_used);
    o->inval = ps->inval;
    o->table_gen = ps->table_gen;
    o->next_id = ps->next_id;
}

/* Attaches and frees the buffer called name, if the domain holds one. */
static void release_buf(struct rdn_offload *o, const char *name)
{
    struct chain_buf b;

    if (chain_buf_attach(o->dev, name, &b) == 0)
        chain_buf_close(&b);
}

/* Client ids a release probes past the last one found, when the state
 * cannot say which exist; and the most it ever tries. */
#define OFL_PROBE_IDS 64
#define OFL_PROBE_MAX (1u << 20)

static bool release_client(struct rdn_offload *o, uint64_t id, uint32_t iters)
{
    char name[32];

    client_prefix((uint32_t)id, name, sizeof(name));
    return ofl_pipe_release(o->dev, name, iters, &o->done) > 0;
}

/*
 * The pipelines of a previous state: those its client list names, and the
 * last ids given (a crash between persisting a pipeline and recording it
 * leaves one unnamed); without a readable state, ids from 1 until
 * OFL_PROBE_IDS in a row are absent. Returns the next id to give.
 */
static uint32_t release_clients(struct rdn_offload *o, bool readable)
{
    const struct ofl_pstate *ps = ofl_ps(o);
    uint32_t iters = readable ? ps->iters : o->cfg.iters;
    uint64_t last = 0, id;
    unsigned misses = 0;

    if (!readable) {
        for (id = 1; id < OFL_PROBE_MAX && misses < OFL_PROBE_IDS; id++)
            if (release_client(o, id, iters))
                last = id, misses = 0;
            else
                misses++;
        return (uint32_t)last;
    }
    /* Its list, as long as the previous configuration made it. */
    for (size_t i = 0;
         i < ps->max_clients &&
         sizeof(*ps) + (i + 1) * sizeof(ps->client[0]) <= o->state.len;
         i++)
        if (ps->client[i].id)
            release_client(o, ps->client[i].id, iters);
    last = ps->next_id < OFL_PROBE_MAX ? ps->next_id : OFL_PROBE_MAX;
    for (id = last > OFL_PROBE_IDS ? last - OFL_PROBE_IDS : 1; id <= last; id++)
        release_client(o, id, iters);
    return ps->next_id;
}

/*
 * Releases what a previous process left in the domain, by name, whatever
 * its state says or whether it can be read: its clients' pipelines (see
 * release_clients()), the arenas, the fixed objects (absent ones are
 * skipped). Returns the next client id: ids, and with them names, are not
 * reused in a domain.
 */
static uint32_t release_previous(struct rdn_offload *o)
{
    const struct ofl_pstate *ps = ofl_ps(o);
    bool readable =
        o->state.len >= sizeof(*ps) && ps->magic == OFL_PSTATE_MAGIC;
    unsigned narenas = readable && ps->narenas < 64 ? ps->narenas : 1;
    static const char *const fixed[] = {"ofl.table", "ofl.gen", "ofl.meta",
                                        "ofl.state"};
    uint32_t next_id;
    char name[32];

    if (!o->done.cq)
        chain_cq_attach(o->dev, "ofl.done", &o->done);
    next_id = release_clients(o, readable);
    for (unsigned i = 0; i < narenas; i++) {
        arena_name(i, name, sizeof(name));
        release_buf(o, name);
    }
    close_objects(o);
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        release_buf(o, fixed[i]);
    return next_id;
}

/*
 * Catches the re-attached clients' counts up with their CQs before the
 * watch thread counts: what the dead server left unpolled (perhaps more
 * GETs than the 16-bit WQE counters tell apart) is taken as done.
 */
static void sync_adopted(struct rdn_offload *o)
{
    struct rnic_wc wc[64];

    /* Answers first: an answer drained here had its receive before, so
     * the receives polled next cover it (the other way round, a GET whose
     * receive came between the two would never count as done). */
    while (rnic_poll_cq(o->done.cq, 64, wc) > 0)
        ;
    for (struct ofl_conn *c = o->conns; c; c = c->next)
        ofl_pipe_poll_recv(&c->pipe);
    for (struct ofl_conn *c = o->conns; c; c = c->next) {
        c->pipe.done = c->pipe.received;
        c->last_done = c->pipe.done;
    }
}

/* Opens the device, in cfg.domain when there is one and it can persist. */
static int open_device(struct rdn_offload *o, const char *device)
{
    struct rnic_open_opts opts = {.domain = o->cfg.domain};
    int rc;

    if (!o->cfg.domain)
        return rnic_open(device, NULL, &o->dev);
    rc = rnic_open(device, &opts, &o->dev);
    if (rc == -EOPNOTSUPP || rc == -EINVAL) {
        fprintf(stderr,
                "rdn: %s cannot keep NIC resources (%s): a crash loses "
                "the offload's state\n",
                device && *device ? device : "the device", rnic_errmsg());
        return rnic_open(device, NULL, &o->dev);
    }
    if (rc == 0)
        o->persistent = true;
    return rc;
}

/*
 * Opens the device and the offload's objects: the previous process's when
 * the domain holds a compatible state (o->reattached), else fresh ones,
 * persistent when the device can persist.
 */
int ofl_nic_open(struct rdn_offload *o, const char *device)
{
    struct chain_q_attr ma = {.sq_wqebb = OFL_MASTER_WQEBB,
                              .flags = RNIC_QP_CROSS_CHANNEL};
    uint32_t next_id = 0;
    const char *why = NULL;
    int rc = open_device(o, device);

    if (rc < 0)
        return ofl_err(rc, "%s: %s", device && *device ? device : "device",
                       rnic_errmsg());
    if (o->persistent) {
        rc = attach_objects(o);
        why = rc < 0 ? ofl_errmsg() : rc == 1 ? state_mismatch(o) : NULL;
        if (rc == 1 && !why) {
            o->reattached = true;
            resume_state(o);
        } else {
            if (why)
                fprintf(stderr, "rdn: NIC state of domain %s discarded: %s\n",
                        o->cfg.domain, why);
            next_id = release_previous(o);
        }
    }
    if (!o->reattached) {
        rc = fresh_objects(o);
        if (rc < 0)
            goto err_close_nic;
        o->next_id = ofl_ps(o)->next_id = next_id;
        if (o->persistent && persist_objects(o) < 0) {
            fprintf(stderr,
                    "rdn: cannot keep the NIC state in domain %s (%s): a "
                    "crash will lose it\n",
                    o->cfg.domain, ofl_errmsg());
            o->persistent = false;
        }
    }
    rc = chain_q_open(o->dev, &ma, &o->master);
    if (rc == 0)
        rc = chain_q_connect(&o->master, &o->master);
    if (rc < 0) {
        ofl_err(rc, "master queue: %s", chain_errmsg());
        goto err_close_nic;
    }
    if (o->reattached) {
        adopt_clients(o);
        sync_adopted(o);
    }
    return 0;

err_close_nic:
    ofl_nic_close(o);
    return rc;
}

/*
 * Frees what this process holds. With cfg.keep_on_close on a persistent
 * offload the domain keeps it all (the daemon frees only what is not
 * persistent: the master), and the pipelines go on serving.
 */
void ofl_nic_close(struct rdn_offload *o)
{
    bool keep = o->persistent && o->cfg.keep_on_close;

    pthread_mutex_lock(&o->lock);
    while (o->conns) {
        if (keep)
            o->conns->state = OFL_CONN_DEAD; /* its pipeline stays */
        ofl_conn_free(o, o->conns);
    }
    pthread_mutex_unlock(&o->lock);
    chain_q_close(&o->master);
    while (o->arenas) {
        struct ofl_arena *a = o->arenas;

        o->arenas = a->next;
        if (!keep)
            chain_buf_close(&a->buf);
        free(a);
    }
    if (!keep)
        close_objects(o);
    rnic_close(o->dev);
    o->dev = NULL;
}

/* ---- discarding ------------------------------------------------------- */

/*
 * Everything but the arenas: stops the re-attached pipelines (freed later
 * by the control thread, or at close), zeroes the table region and the
 * metadata, and changes the generation word.
 */
static void forget_previous(struct rdn_offload *o)
{
    pthread_mutex_lock(&o->lock);
    for (struct ofl_conn *c = o->conns; c; c = c->next)
        if (c->fd < 0)
            ofl_conn_stop(o, c);
    pthread_mutex_unlock(&o->lock);
    memset(o->tbuf.ptr, 0, o->tbuf.len);
    memset(o->meta.ptr, 0, o->meta.len);
    store_seq_cst(&o->tregion_used, 0);
    ofl_ps(o)->tregion_used = 0;
    rdn_offload_invalidate(o); /* every client's next answer is stale */
    o->reattached = false;
}

/* Zeroes the mapped arenas (arena_lock held). */
static void zero_arenas(struct rdn_offload *o)
{
    for (struct ofl_arena *a = o->arenas; a; a = a->next)
        memset(a->buf.ptr, 0, a->buf.len);
}

int rdn_offload_discard(struct rdn_offload *o)
{
    if (!o || !o->dev)
        return -EINVAL;
    /* The pipelines stop and the word changes before the items go. */
    forget_previous(o);
    pthread_mutex_lock(&o->arena_lock);
    zero_arenas(o);
    pthread_mutex_unlock(&o->arena_lock);
    return 0;
}

/* ---- arenas and clients ----------------------------------------------- */

/*
 * Arena n: the one the domain holds under that name when there is one (a
 * re-attach, or a discarded state whose arena is reused zeroed), if its
 * size fits; else a fresh one. A re-attached arena that does not fit means
 * the previous state cannot be used: it is discarded.
 */
int ofl_arena_get(struct rdn_offload *o, size_t len, size_t total,
                  struct ofl_arena *a)
{
    char name[32];
    int rc;

    arena_name(o->narenas, name, sizeof(name));
    a->len = len;
    if (o->persistent && o->narenas < ofl_ps(o)->narenas) {
        rc = chain_buf_attach(o->dev, name, &a->buf);
        if (rc == 0 && a->buf.len == total) {
            if (!o->reattached)
                memset(a->buf.ptr, 0, a->buf.len);
            o->narenas++;
            return 0;
        }
        if (rc == 0)
            chain_buf_close(&a->buf); /* frees its name */
        if (o->reattached) {
            fprintf(stderr,
                    "rdn: arena %u of domain %s cannot be re-attached "
                    "(%s): discarding the previous state\n",
                    o->narenas, o->cfg.domain,
                    rc < 0 ? strerror(-rc) : "its size differs");
            forget_previous(o);
            zero_arenas(o);
        }
    }
    rc = chain_buf_open(o->dev, total, 0, &a->buf);
    if (rc < 0)
        return ofl_err(rc, "%s: %s", name, chain_errmsg());
    if (o->persistent) {
        rc = chain_buf_persist(&a->buf, name);
        if (rc < 0) {
            ofl_err(rc, "%s: %s", name, chain_errmsg());
            goto err_close_buf;
        }
    }
    ofl_ps(o)->narenas = ++o->narenas;
    return 0;

err_close_buf:
    chain_buf_close(&a->buf);
    return rc;
}

int ofl_client_persist(struct rdn_offload *o, struct ofl_conn *c)
{
    char prefix[32];

    if (!o->persistent)
        return 0;
    client_prefix(c->id, prefix, sizeof(prefix));
    return ofl_pipe_persist(&c->pipe, prefix);
}

int ofl_client_record(struct rdn_offload *o, const struct ofl_pclient *pc)
{
    struct ofl_pstate *ps = ofl_ps(o);

    if (!o->persistent)
        return 0;
    for (uint32_t i = 0; i < o->cfg.max_clients; i++)
        if (!ps->client[i].id) {
            ps->client[i] = *pc;
            return 0;
        }
    return ofl_err(-ENOSPC, "no free client entry in the state");
}

void ofl_client_forget(struct rdn_offload *o, struct ofl_conn *c)
{
    struct ofl_pstate *ps = ofl_ps(o);

    for (uint32_t i = 0; i < o->cfg.max_clients; i++)
        if (ps->client[i].id == c->id)
            memset(&ps->client[i], 0, sizeof(ps->client[i]));
}

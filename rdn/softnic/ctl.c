/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/ctl.c - the control plane: sessions (one per application
 * connection, or per in-process device), devices and their persistent
 * domains, and the dispatch of control requests to rdn/softnic/obj.c.
 *
 * Locking: eng->lock serializes every control request and session end, so
 * the device and object lists are only touched under it; the data path
 * never takes it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdn/softnic/obj_int.h"
#include "rdn/softnic/roce_int.h"

#define sn_foreach_safe(l, n, head)                                            \
    for ((l) = (head)->next, (n) = (l)->next; (l) != (head);                   \
         (l) = (n), (n) = (l)->next)

struct sn_session *sn_session_new(struct sn_engine *e, pid_t pid)
{
    struct sn_session *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->eng = e;
    s->pid = pid;
    sn_list_init(&s->devs);
    return s;
}

int sn_engine_defaults(struct sn_engine *e, const char *model, int strict,
                       const char *trace_path)
{
    struct sn_timing tm;
    const char *why;
    int rc = sn_timing_get(model, NULL, &tm, &why);

    if (rc)
        return rc;
    if (trace_path && (rc = sn_trace_open(trace_path, &e->def_trace)))
        return rc;
    snprintf(e->def_model, sizeof(e->def_model), "%s", model);
    e->def_strict = strict > 0 ? (uint32_t)strict : 0;
    return 0;
}

/* What the whole engine holds (devices of every session, and orphans). */
static void sn_stats_roce(struct sn_engine *e, struct sn_ctl_resp *resp)
{
    struct sn_roce_stats st;

    sn_roce_stats(e, &st);
    resp->u.stats.roce_tx = st.tx_pkts;
    resp->u.stats.roce_rx = st.rx_pkts;
    resp->u.stats.retrans = st.retrans;
    resp->u.stats.timeouts = st.timeouts;
    resp->u.stats.seq_naks_rx = st.seq_naks_rx;
    resp->u.stats.seq_naks_tx = st.seq_naks_tx;
    resp->u.stats.rnr_naks_rx = st.rnr_naks_rx;
    resp->u.stats.rnr_naks_tx = st.rnr_naks_tx;
    resp->u.stats.dups_rx = st.dups_rx;
    resp->u.stats.roce_errors = st.errors;
    resp->u.stats.credit_waits = st.credit_waits;
    resp->u.stats.raw_in = st.raw_in;
    for (int i = 0; i < SN_RC_DROP_N; i++)
        resp->u.stats.drops += st.drops[i];
    resp->u.stats.bad_drops =
        st.drops[SN_RC_DROP_BAD] + st.drops[SN_RC_DROP_ICRC];
}

static void sn_stats(struct sn_engine *e, struct sn_ctl_resp *resp)
{
    for (struct sn_link *l = e->devs.next; l != &e->devs; l = l->next) {
        struct sn_dev *d = sn_container_of(l, struct sn_dev, node);
        struct sn_link *m;

        resp->u.stats.devices++;
        resp->u.stats.orphans += d->owner == NULL;
        for (m = d->areas.next; m != &d->areas; m = m->next)
            resp->u.stats.mems +=
                sn_container_of(m, struct sn_area, node)->is_mem;
        for (m = d->mrs.next; m != &d->mrs; m = m->next)
            resp->u.stats.mrs++;
        for (m = d->cqs.next; m != &d->cqs; m = m->next)
            resp->u.stats.cqs++;
        for (m = d->qps.next; m != &d->qps; m = m->next)
            resp->u.stats.qps++;
    }
    sn_stats_roce(e, resp);
}

int sn_engine_has_devices(struct sn_engine *e)
{
    int r;

    pthread_mutex_lock(&e->lock);
    r = !sn_list_empty(&e->devs);
    pthread_mutex_unlock(&e->lock);
    return r;
}

static void sn_dev_free(struct sn_dev *d)
{
    sn_list_del(&d->node);
    if (d->own_trace)
        sn_trace_close(d->trace);
    free(d);
}

/*
 * The device's application is gone: free every object not marked
 * persistent (QPs first, then MRs, CQs, memory); keep the device as an
 * orphaned domain if anything persistent remains.
 */
static void sn_dev_release(struct sn_dev *d)
{
    struct sn_ctl_resp ignore;
    struct sn_link *l, *n;
    bool kept = false;

    sn_foreach_safe(l, n, &d->qps)
    {
        struct sn_qp *qp = sn_container_of(l, struct sn_qp, node);

        if (qp->persist)
            kept = true;
        else
            sn_qp_destroy(qp);
    }
    sn_foreach_safe(l, n, &d->mrs)
    {
        struct sn_mr *mr = sn_container_of(l, struct sn_mr, node);

        if (mr->persist)
            kept = true;
        else
            sn_mr_dereg(mr);
    }
    sn_foreach_safe(l, n, &d->cqs)
    {
        struct sn_cq *cq = sn_container_of(l, struct sn_cq, node);

        if (cq->persist)
            kept = true;
        else if (sn_cq_destroy(cq, &ignore) < 0)
            kept = true; /* a persistent QP uses it (cannot happen) */
    }
    sn_foreach_safe(l, n, &d->areas)
    {
        struct sn_area *a = sn_container_of(l, struct sn_area, node);

        if (!a->is_mem)
            continue;
        if (a->persist || a->refs > 1)
            kept = true;
        else
            sn_area_put(a);
    }
    sn_list_del(&d->snode);
    d->owner = NULL;
    if (!kept)
        sn_dev_free(d);
}

void sn_engine_drop_domains(struct sn_engine *e)
{
    struct sn_link *l, *n, *m;

    pthread_mutex_lock(&e->lock);
    sn_foreach_safe(l, n, &e->devs)
    {
        struct sn_dev *d = sn_container_of(l, struct sn_dev, node);

        if (d->owner)
            continue;
        for (m = d->qps.next; m != &d->qps; m = m->next)
            sn_container_of(m, struct sn_qp, node)->persist = false;
        for (m = d->mrs.next; m != &d->mrs; m = m->next)
            sn_container_of(m, struct sn_mr, node)->persist = false;
        for (m = d->cqs.next; m != &d->cqs; m = m->next)
            sn_container_of(m, struct sn_cq, node)->persist = false;
        for (m = d->areas.next; m != &d->areas; m = m->next)
            sn_container_of(m, struct sn_area, node)->persist = false;
        sn_dev_release(d);
    }
    pthread_mutex_unlock(&e->lock);
}

void sn_session_end(struct sn_session *s)
{
    struct sn_engine *e = s->eng;
    struct sn_link *l, *n;

    pthread_mutex_lock(&e->lock);
    sn_foreach_safe(l, n, &s->devs)
    {
        sn_dev_release(sn_container_of(l, struct sn_dev, snode));
    }
    pthread_mutex_unlock(&e->lock);
    free(s);
}

static struct sn_dev *sn_dev_find(struct sn_session *s, uint32_t id)
{
    for (struct sn_link *l = s->devs.next; l != &s->devs; l = l->next) {
        struct sn_dev *d = sn_container_of(l, struct sn_dev, snode);

        if (d->id == id)
            return d;
    }
    return NULL;
}

static struct sn_dev *sn_domain_find(struct sn_engine *e, const char *name)
{
    for (struct sn_link *l = e->devs.next; l != &e->devs; l = l->next) {
        struct sn_dev *d = sn_container_of(l, struct sn_dev, node);

        if (d->domain[0] && !strcmp(d->domain, name))
            return d;
    }
    return NULL;
}

static void sn_copy_str(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
    dst[n - 1] = 0;
}

static int sn_dev_open(struct sn_session *s, const struct sn_ctl_req *req,
                       struct sn_ctl_resp *resp)
{
    const typeof(req->u.dev_open) *o = &req->u.dev_open;
    char domain[SN_NAME_MAX], model[16], timing[128], trace[SN_PATH_MAX];
    struct sn_dev *d;
    const char *why;
    int rc;

    sn_copy_str(domain, o->domain, sizeof(domain));
    sn_copy_str(model, o->model, sizeof(model));
    sn_copy_str(timing, o->timing, sizeof(timing));
    sn_copy_str(trace, o->trace, sizeof(trace));
    d = domain[0] ? sn_domain_find(s->eng, domain) : NULL;
    if (d) {
        if (d->owner)
            return sn_fail(resp, -EBUSY,
                           "domain '%s' is in use by a live "
                           "process",
                           domain);
        d->owner = s;
        sn_list_add_tail(&s->devs, &d->snode);
        resp->u.dev_open.attached = 1;
    } else {
        d = calloc(1, sizeof(*d));
        if (!d)
            return sn_fail(resp, -ENOMEM, "out of memory");
        rc = sn_timing_get(model[0]               ? model
                           : s->eng->def_model[0] ? s->eng->def_model
                                                  : "fast",
                           timing, &d->tm, &why);
        if (rc == 0 && trace[0]) {
            rc = sn_trace_open(trace, &d->trace);
            d->own_trace = rc == 0;
        } else {
            d->trace = s->eng->def_trace;
        }
        if (rc) {
            free(d);
            return sn_fail(resp, rc, "rnic_open: %s",
                           rc == -EINVAL ? why : "cannot open trace file");
        }
        d->id = s->eng->next_dev++;
        d->eng = s->eng;
        d->owner = s;
        d->strict = o->strict > 0 ? (uint32_t)o->strict : s->eng->def_strict;
        memcpy(d->domain, domain, sizeof(domain));
        sn_list_init(&d->areas);
        sn_list_init(&d->mrs);
        sn_list_init(&d->cqs);
        sn_list_init(&d->qps);
        sn_list_add_tail(&s->eng->devs, &d->node);
        sn_list_add_tail(&s->devs, &d->snode);
    }
    resp->u.dev_open.dev = d->id;
    resp->u.dev_open.timed = (uint32_t)d->tm.timed;
    memcpy(resp->u.dev_open.model, d->tm.name, sizeof(d->tm.name));
    return 0;
}

/* ---- persistence ------------------------------------------------------ */

static bool sn_name_taken(struct sn_dev *d, uint32_t type, const char *name)
{
    struct sn_link *l, *h;

    h = type == RNIC_OBJ_MEM  ? &d->areas
        : type == RNIC_OBJ_MR ? &d->mrs
        : type == RNIC_OBJ_CQ ? &d->cqs
                              : &d->qps;
    for (l = h->next; l != h; l = l->next) {
        const char *n = type == RNIC_OBJ_MEM
                            ? sn_container_of(l, struct sn_area, node)->name
                        : type == RNIC_OBJ_MR
                            ? sn_container_of(l, struct sn_mr, node)->name
                        : type == RNIC_OBJ_CQ
                            ? sn_container_of(l, struct sn_cq, node)->name
                            : sn_container_of(l, struct sn_qp, node)->name;

        if (!strcmp(n, name))
            return true;
    }
    return false;
}

static int sn_persist(struct sn_dev *d, const struct sn_ctl_req *req,
                      struct sn_ctl_resp *resp)
{
    uint32_t type = req->u.persist.type;
    uint64_t id = req->u.persist.id;
    char name[SN_NAME_MAX];
    char *dst = NULL;

    sn_copy_str(name, req->u.persist.name, sizeof(name));
    if (!d->domain[0])
        return sn_fail(resp, -EINVAL,
                       "rnic_persist: open the device with "
                       "a domain first");
    if (!name[0] || sn_name_taken(d, type, name))
        return sn_fail(resp, -EEXIST, "rnic_persist: name '%s' is taken", name);
    if (type == RNIC_OBJ_MEM) {
        struct sn_area *a = sn_area_find(d, id, true);

        if (a && a->app == id) {
            a->persist = true;
            dst = a->name;
        }
    } else if (type == RNIC_OBJ_MR) {
        struct sn_mr *mr = sn_mr_find(d, (uint32_t)id);

        if (mr && !mr->area->persist)
            return sn_fail(resp, -EINVAL,
                           "rnic_persist: persist the MR's "
                           "memory (or QP) first");
        if (mr) {
            mr->persist = true;
            dst = mr->name;
        }
    } else if (type == RNIC_OBJ_CQ) {
        struct sn_cq *cq = sn_cq_find(d, (uint32_t)id);

        if (cq) {
            cq->persist = true;
            dst = cq->name;
        }
    } else if (type == RNIC_OBJ_QP) {
        struct sn_qp *qp = sn_qp_find(d, (uint32_t)id);

        if (qp && (!qp->scq->persist || (qp->rcq && !qp->rcq->persist)))
            return sn_fail(resp, -EINVAL,
                           "rnic_persist: persist the QP's "
                           "CQs first");
        if (qp) {
            qp->persist = true;
            qp->area->persist = true;
            dst = qp->name;
        }
    }
    if (!dst)
        return sn_fail(resp, -ENOENT, "rnic_persist: no such object");
    memcpy(dst, name, sizeof(name));
    return 0;
}

static int sn_attach(struct sn_dev *d, const struct sn_ctl_req *req,
                     struct sn_ctl_resp *resp, int *fd_out)
{
    struct sn_ctl_obj *o = &resp->u.obj;
    char name[SN_NAME_MAX];
    struct sn_link *l;
    int fd = -1;

    sn_copy_str(name, req->u.attach.name, sizeof(name));
    switch (req->u.attach.type) {
    case RNIC_OBJ_MEM:
        for (l = d->areas.next; l != &d->areas && fd < 0; l = l->next) {
            struct sn_area *a = sn_container_of(l, struct sn_area, node);

            if (a->is_mem && a->persist && !strcmp(a->name, name)) {
                o->va = a->app;
                o->len = a->len;
                fd = a->fd;
            }
        }
        break;
    case RNIC_OBJ_MR:
        for (l = d->mrs.next; l != &d->mrs; l = l->next) {
            struct sn_mr *mr = sn_container_of(l, struct sn_mr, node);

            if (mr->persist && !strcmp(mr->name, name)) {
                o->va = mr->addr;
                o->len = mr->len;
                o->key = mr->key;
                o->access = mr->access;
                return 0;
            }
        }
        break;
    case RNIC_OBJ_CQ:
        for (l = d->cqs.next; l != &d->cqs && fd < 0; l = l->next) {
            struct sn_cq *cq = sn_container_of(l, struct sn_cq, node);

            if (cq->persist && !strcmp(cq->name, name)) {
                sn_cq_describe(cq, o);
                fd = cq->area->fd;
            }
        }
        break;
    case RNIC_OBJ_QP:
        for (l = d->qps.next; l != &d->qps && fd < 0; l = l->next) {
            struct sn_qp *qp = sn_container_of(l, struct sn_qp, node);

            if (qp->persist && !strcmp(qp->name, name)) {
                sn_qp_describe(qp, o);
                fd = qp->area->fd;
            }
        }
        break;
    }
    if (fd < 0)
        return sn_fail(resp, -ENOENT,
                       "rnic_attach: no persistent object "
                       "'%s' of that type",
                       name);
    *fd_out = dup(fd);
    return *fd_out < 0 ? sn_fail(resp, -EMFILE, "dup failed") : 0;
}

/* ---- dispatch --------------------------------------------------------- */

static int sn_ctl_dev_op(struct sn_dev *d, const struct sn_ctl_req *req,
                         int fd_in, struct sn_ctl_resp *resp, int *fd_out)
{
    struct sn_area *a;
    struct sn_mr *mr;
    struct sn_cq *cq;
    struct sn_qp *qp;
    int rc;

    switch (req->op) {
    case SN_CTL_DEV_CLOSE:
        sn_dev_release(d);
        return 0;
    case SN_CTL_MEM_REG:
        rc = sn_area_new(d, fd_in, req->u.mem.va, req->u.mem.len, true, resp,
                         &a);
        if (!rc)
            a->is_mem = true;
        return rc;
    case SN_CTL_MEM_DEREG:
        return sn_mem_dereg(d, req->u.mem.va, resp);
    case SN_CTL_MR_REG:
        rc = sn_mr_reg(d, req->u.mr.va, req->u.mr.len, req->u.mr.access, resp,
                       &mr);
        if (!rc)
            resp->u.mr.key = mr->key;
        return rc;
    case SN_CTL_MR_DEREG:
        mr = sn_mr_find(d, req->u.mr_dereg.key);
        if (!mr)
            return sn_fail(resp, -ENOENT, "rnic_dereg_mr: no such MR");
        sn_mr_dereg(mr);
        return 0;
    case SN_CTL_CQ_CREATE:
        rc = sn_cq_create(d, fd_in, req->u.cq.va, req->u.cq.depth,
                          req->u.cq.flags, resp, &cq);
        if (!rc)
            sn_cq_describe(cq, &resp->u.obj);
        return rc;
    case SN_CTL_CQ_DESTROY:
        cq = sn_cq_find(d, req->u.obj.num);
        if (!cq)
            return sn_fail(resp, -ENOENT, "rnic_destroy_cq: no such CQ");
        return sn_cq_destroy(cq, resp);
    case SN_CTL_QP_CREATE:
        rc = sn_qp_create(d, fd_in, req, resp, &qp);
        if (!rc)
            sn_qp_describe(qp, &resp->u.obj);
        return rc;
    case SN_CTL_QP_DESTROY:
        qp = sn_qp_find(d, req->u.obj.num);
        if (!qp)
            return sn_fail(resp, -ENOENT, "rnic_destroy_qp: no such QP");
        sn_qp_destroy(qp);
        return 0;
    case SN_CTL_QP_CONNECT:
        qp = sn_qp_find(d, req->u.connect.qpn);
        if (!qp)
            return sn_fail(resp, -ENOENT, "rnic_connect: no such QP");
        return sn_qp_connect(qp, &req->u.connect.remote, resp);
    case SN_CTL_QP_GID:
        qp = sn_qp_find(d, req->u.gid.qpn);
        if (!qp)
            return sn_fail(resp, -ENOENT, "rnic_qp_set_gid: no such QP");
        return sn_qp_source(qp, req->u.gid.gid, resp);
    case SN_CTL_QP_ADDR:
        qp = sn_qp_find(d, req->u.obj.num);
        if (!qp)
            return sn_fail(resp, -ENOENT, "rnic_qp_addr: no such QP");
        sn_roce_addr(qp, &resp->u.addr);
        return 0;
    case SN_CTL_PERSIST:
        return sn_persist(d, req, resp);
    case SN_CTL_ATTACH:
        return sn_attach(d, req, resp, fd_out);
    default:
        return sn_fail(resp, -EINVAL, "unknown control request %u", req->op);
    }
}

void sn_ctl_handle(struct sn_session *s, const struct sn_ctl_req *req,
                   int fd_in, struct sn_ctl_resp *resp, int *fd_out)
{
    struct sn_engine *e = s->eng;
    struct sn_dev *d;

    memset(resp, 0, sizeof(*resp));
    *fd_out = -1;
    pthread_mutex_lock(&e->lock);
    switch (req->op) {
    case SN_CTL_HELLO:
        if (req->u.hello.version != SN_CTL_VERSION) {
            sn_fail(resp, -EPROTO, "softnic protocol %u, daemon speaks %u",
                    req->u.hello.version, SN_CTL_VERSION);
            break;
        }
        resp->u.hello.engine_id = e->id;
        resp->u.hello.nthreads = e->nthreads;
        resp->u.hello.pid = getpid();
        *fd_out = dup(e->ctl_fd);
        break;
    case SN_CTL_DEV_OPEN:
        sn_dev_open(s, req, resp);
        break;
    case SN_CTL_STATS:
        sn_stats(e, resp);
        break;
    default:
        d = sn_dev_find(s, req->dev);
        if (!d)
            sn_fail(resp, -ENODEV, "no device %u in this session", req->dev);
        else
            sn_ctl_dev_op(d, req, fd_in, resp, fd_out);
        break;
    }
    pthread_mutex_unlock(&e->lock);
}

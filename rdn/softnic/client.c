/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/client.c - the rnic_ops of softnic, run in the application.
 *
 * Control operations become sn_ctl requests on the device's transport.
 * The data path touches only shared memory: rnic_ring_doorbell() stores
 * the producer index in the QP's doorbell record and pokes the QP's engine
 * thread; rnic_poll_cq() reads CQEs from the CQ ring; rnic_post_recv()
 * writes an mlx5 receive WQE into the receive ring.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "proto/barrier.h"
#include "proto/byteorder.h"
#include "rdn/softnic/client.h"
#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/obj_int.h"

struct sn_cmem {
    struct sn_cmem *next;
    void *va;
    size_t len;
};

/* Every CQ, QP and MR handle is on its device's list, for rnic_close(). */
struct sn_handle {
    struct sn_handle *next, *prev;
    void *obj; /* the allocation holding this handle */
    void *map; /* shared memory to unmap with the handle, or NULL */
    size_t maplen;
};

struct sn_cdev {
    struct rnic_device base;
    struct sn_transport *tp;
    uint32_t id;
    struct sn_shm_ctl *ctl;
    int timed;
    bool placed;          /* a domain's: memory and rings go in the window */
    pthread_mutex_t lock; /* protects mems and handles */
    struct sn_cmem *mems;
    struct sn_handle handles; /* list head */
};

struct sn_ccq {
    struct rnic_cq base;
    struct sn_handle h;
    struct sn_cq_shm *sh;
    struct sn_cqe *ring;
    uint64_t cons;
    uint32_t depth;
};

struct sn_cqp {
    struct rnic_qp base;
    struct sn_handle h;
    struct sn_qp_shm *sh;
    uint32_t thr, idx;
    unsigned flags;
    uint8_t *rq;
    uint32_t rq_cnt, rq_stride, rq_sge;
    uint64_t *wrid;
};

struct sn_cmr {
    struct rnic_mr_obj obj;
    struct sn_handle h;
};

static const struct rnic_ops sn_client_ops;

static struct sn_cdev *sn_dev(struct rnic_device *d)
{
    return (struct sn_cdev *)d;
}

static void sn_handle_add(struct rnic_device *dev, struct sn_handle *h,
                          void *obj, void *map, size_t maplen)
{
    struct sn_cdev *d = sn_dev(dev);

    h->obj = obj;
    h->map = map;
    h->maplen = maplen;
    pthread_mutex_lock(&d->lock);
    h->next = d->handles.next;
    h->prev = &d->handles;
    h->next->prev = h;
    d->handles.next = h;
    pthread_mutex_unlock(&d->lock);
}

/* Unlinks h and unmaps its memory; the caller frees the handle. */
static void sn_handle_del(struct rnic_device *dev, struct sn_handle *h)
{
    struct sn_cdev *d = sn_dev(dev);

    pthread_mutex_lock(&d->lock);
    h->prev->next = h->next;
    h->next->prev = h->prev;
    pthread_mutex_unlock(&d->lock);
    if (h->map)
        munmap(h->map, h->maplen);
}

/* Runs a control request; on failure records its message. */
static int sn_call(struct sn_cdev *d, struct sn_ctl_req *req, int fd_in,
                   struct sn_ctl_resp *resp, int *fd_out)
{
    int fd = -1, rc;

    req->dev = d->id;
    rc = d->tp->call(d->tp, req, fd_in, resp, &fd);
    if (rc == 0)
        rc = resp->err;
    if (fd_out)
        *fd_out = fd;
    else if (fd >= 0)
        close(fd);
    if (rc < 0)
        return rnic_err(rc, "%s", resp->msg[0] ? resp->msg : strerror(-rc));
    return 0;
}

/* Creates a sealed memfd of len bytes and maps it (at va if not NULL). */
static int sn_shm_new(const char *what, size_t len, void *va, void **map,
                      int *fd)
{
    int rc;

    *fd = sn_memfd_create(what, len);
    if (*fd < 0)
        return rnic_err(*fd, "%s: memfd: %s", what, strerror(-*fd));
    rc = sn_map(*fd, len, va, map);
    if (rc < 0) {
        close(*fd);
        return rnic_err(rc, "%s: mmap: %s", what, strerror(-rc));
    }
    return 0;
}

/*
 * Within the placement window (client.h) addresses are random: one taken
 * by this process (mmap) or by the domain (the daemon) is tried again
 * elsewhere, at most SN_PLACE_TRIES times. Where the window cannot be
 * mapped at all (a smaller address space), the kernel chooses.
 * RDN_SOFTNIC_PLACE_AT (test-only, an address) is every object's first
 * try, so a test can aim at a taken address.
 */
#define SN_PLACE_ALIGN (UINT64_C(2) << 20)
#define SN_PLACE_TRIES 32

/* A random SN_PLACE_ALIGN-aligned start for len bytes in the window, or
 * NULL (the kernel's choice) if it cannot hold them. Never waits for the
 * kernel's entropy (a VM just booted may have none yet): the clock spreads
 * addresses well enough, and a taken one is tried again anyway. */
static void *sn_place_pick(size_t len, int tries)
{
    const char *at = getenv("RDN_SOFTNIC_PLACE_AT");
    uint64_t r, slots;

    if (UINTPTR_MAX < SN_PLACE_HI ||
        len > SN_PLACE_HI - SN_PLACE_LO - SN_PLACE_ALIGN)
        return NULL;
    if (tries == 1 && at && *at)
        return (void *)(uintptr_t)strtoull(at, NULL, 0);
    slots = (SN_PLACE_HI - SN_PLACE_LO - len) / SN_PLACE_ALIGN;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
        r = sn_now_ns() * UINT64_C(0x9e3779b97f4a7c15);
    return (void *)(uintptr_t)(SN_PLACE_LO + r % slots * SN_PLACE_ALIGN);
}

/*
 * Creates len bytes of shared memory for an object and registers it with
 * the daemon: req (whose address field is *req_va) goes with the memfd.
 * On a placed device an address already taken, here or in the domain
 * (-EEXIST), is tried again elsewhere. Returns 0 with the mapping in *map,
 * or the failed call's -errno (its message recorded).
 */
static int sn_shm_register(struct sn_cdev *d, const char *what, size_t len,
                           struct sn_ctl_req *req, uint64_t *req_va,
                           struct sn_ctl_resp *resp, void **map)
{
    for (int tries = 1;; tries++) {
        void *want = d->placed ? sn_place_pick(len, tries) : NULL;
        int fd, rc = sn_shm_new(what, len, want, map, &fd);

        if (rc < 0 && rc != -EEXIST && want) /* no such addresses here */
            rc = sn_shm_new(what, len, want = NULL, map, &fd);
        if (rc == 0) {
            *req_va = (uintptr_t)*map;
            rc = sn_call(d, req, fd, resp, NULL);
            close(fd);
            if (rc < 0)
                munmap(*map, len);
        }
        if (rc != -EEXIST || !want || tries == SN_PLACE_TRIES)
            return rc;
    }
}

/* ---- device ----------------------------------------------------------- */

static void sn_env_str(char *dst, size_t n, const char *opt, const char *env)
{
    const char *v = opt ? opt : getenv(env);

    if (v)
        snprintf(dst, n, "%s", v);
}

/* Fills DEV_OPEN from opts and the environment (trace path made absolute) */
static void sn_open_req(struct sn_ctl_req *req,
                        const struct rnic_open_opts *opts)
{
    const struct rnic_open_opts none = {0};
    const char *strict = getenv("RDN_SOFTNIC_STRICT");
    char trace[SN_PATH_MAX] = "";

    if (!opts)
        opts = &none;
    memset(req, 0, sizeof(*req));
    req->op = SN_CTL_DEV_OPEN;
    sn_env_str(req->u.dev_open.model, sizeof(req->u.dev_open.model),
               opts->model, "RDN_SOFTNIC_MODEL");
    sn_env_str(req->u.dev_open.timing, sizeof(req->u.dev_open.timing), NULL,
               "RDN_SOFTNIC_TIMING");
    if (opts->domain)
        snprintf(req->u.dev_open.domain, sizeof(req->u.dev_open.domain), "%s",
                 opts->domain);
    sn_env_str(trace, sizeof(trace), opts->trace, "RDN_SOFTNIC_TRACE");
    req->u.dev_open.strict = opts->strict ? opts->strict
                             : strict     ? atoi(strict)
                                          : 0;
    if (trace[0] && trace[0] != '/') {
        char cwd[SN_PATH_MAX / 2];

        if (getcwd(cwd, sizeof(cwd)))
            snprintf(req->u.dev_open.trace, SN_PATH_MAX, "%s/%.*s", cwd,
                     (int)(SN_PATH_MAX / 2 - 2), trace);
    } else {
        memcpy(req->u.dev_open.trace, trace, sizeof(trace));
    }
}

int sn_client_open(const char *name, struct sn_transport *tp,
                   const struct rnic_open_opts *opts, struct rnic_device **out)
{
    struct sn_cdev *d = calloc(1, sizeof(*d));
    struct sn_ctl_req req = {.op = SN_CTL_HELLO};
    struct sn_ctl_resp resp;
    void *ctl;
    int fd = -1, rc;

    if (!d) {
        rc = rnic_err(-ENOMEM, "rnic_open: out of memory");
        goto err_close_tp;
    }
    d->base.ops = &sn_client_ops;
    snprintf(d->base.name, sizeof(d->base.name), "%s", name);
    d->tp = tp;
    d->handles.next = d->handles.prev = &d->handles;
    pthread_mutex_init(&d->lock, NULL);
    req.u.hello.version = SN_CTL_VERSION;
    rc = sn_call(d, &req, -1, &resp, &fd);
    if (rc == 0) {
        rc = sn_map(fd, sizeof(struct sn_shm_ctl), NULL, &ctl);
        if (rc < 0)
            rnic_err(rc, "rnic_open: cannot map the engine's control page");
    }
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        goto err_free_dev;
    d->ctl = ctl;
    sn_open_req(&req, opts);
    rc = sn_call(d, &req, -1, &resp, NULL);
    if (rc < 0)
        goto err_unmap_ctl;
    d->id = resp.u.dev_open.dev;
    d->timed = (int)resp.u.dev_open.timed;
    d->placed = tp->persistence && req.u.dev_open.domain[0];
    *out = &d->base;
    return 0;

err_unmap_ctl:
    munmap(ctl, sizeof(struct sn_shm_ctl));
err_free_dev:
    pthread_mutex_destroy(&d->lock);
    free(d);
err_close_tp:
    tp->close(tp);
    return rc;
}

/*
 * Closing ends the session: the engine frees all but persistent objects,
 * and every handle still open here goes too.
 */
static void sn_close(struct rnic_device *dev)
{
    struct sn_cdev *d = sn_dev(dev);

    d->tp->close(d->tp);
    while (d->handles.next != &d->handles) {
        struct sn_handle *h = d->handles.next;

        sn_handle_del(dev, h);
        free(h->obj);
    }
    for (struct sn_cmem *m = d->mems, *n; m; m = n) {
        n = m->next;
        munmap(m->va, m->len);
        free(m);
    }
    munmap(d->ctl, sizeof(struct sn_shm_ctl));
    pthread_mutex_destroy(&d->lock);
    free(d);
}

int sn_client_thread_stats(struct rnic_device *dev, unsigned thr,
                           struct sn_thread_stats *out)
{
    const struct sn_shm_thread *sh;

    if (!dev || dev->ops != &sn_client_ops || !out)
        return -EINVAL;
    if (thr >= SN_MAX_THREADS || thr >= sn_dev(dev)->ctl->nthreads)
        return -ERANGE;
    sh = &sn_dev(dev)->ctl->thr[thr];
    out->sleeps = load_relaxed(&sh->sleeps);
    out->yields = load_relaxed(&sh->yields);
    out->asleep = load_relaxed(&sh->sleeping) != 0;
    return 0;
}

/* ---- memory ----------------------------------------------------------- */

static void sn_mem_track(struct sn_cdev *d, struct sn_cmem *m)
{
    pthread_mutex_lock(&d->lock);
    m->next = d->mems;
    d->mems = m;
    pthread_mutex_unlock(&d->lock);
}

static int sn_mem_alloc(struct rnic_device *dev, size_t len, void **addr)
{
    struct sn_cdev *d = sn_dev(dev);
    struct sn_ctl_req req = {.op = SN_CTL_MEM_REG};
    struct sn_ctl_resp resp;
    struct sn_cmem *m = calloc(1, sizeof(*m));
    void *va;
    int rc;

    if (!m)
        return rnic_err(-ENOMEM, "rnic_mem_alloc: out of memory");
    len = (len + SN_PAGE - 1) & ~(size_t)(SN_PAGE - 1);
    req.u.mem.len = len;
    rc = sn_shm_register(d, "rdn-mem", len, &req, &req.u.mem.va, &resp, &va);
    if (rc < 0) {
        free(m);
        return rc;
    }
    m->va = va;
    m->len = len;
    sn_mem_track(d, m);
    *addr = va;
    return 0;
}

static int sn_mem_free(struct rnic_device *dev, void *addr)
{
    struct sn_cdev *d = sn_dev(dev);
    struct sn_ctl_req req = {.op = SN_CTL_MEM_DEREG};
    struct sn_ctl_resp resp;
    struct sn_cmem **pp, *m = NULL;
    int rc;

    req.u.mem.va = (uintptr_t)addr;
    rc = sn_call(d, &req, -1, &resp, NULL);
    if (rc)
        return rc;
    pthread_mutex_lock(&d->lock);
    for (pp = &d->mems; *pp; pp = &(*pp)->next)
        if ((*pp)->va == addr) {
            m = *pp;
            *pp = m->next;
            break;
        }
    pthread_mutex_unlock(&d->lock);
    if (m) {
        munmap(m->va, m->len);
        free(m);
    }
    return 0;
}

static size_t sn_mem_len(struct rnic_device *dev, void *addr)
{
    struct sn_cdev *d = sn_dev(dev);
    size_t len = 0;

    pthread_mutex_lock(&d->lock);
    for (struct sn_cmem *m = d->mems; m; m = m->next)
        if (m->va == addr)
            len = m->len;
    pthread_mutex_unlock(&d->lock);
    return len;
}

static struct rnic_mr *sn_mr_new(struct rnic_device *dev, uint64_t va,
                                 uint64_t len, uint32_t key, unsigned access)
{
    struct sn_cmr *m = calloc(1, sizeof(*m));

    if (!m)
        return NULL;
    m->obj.pub.addr = (void *)(uintptr_t)va;
    m->obj.pub.length = len;
    m->obj.pub.lkey = m->obj.pub.rkey = key;
    m->obj.pub.access = access;
    m->obj.dev = dev;
    sn_handle_add(dev, &m->h, m, NULL, 0);
    return &m->obj.pub;
}

static int sn_reg_mr(struct rnic_device *dev, void *addr, size_t len,
                     unsigned access, struct rnic_mr **out)
{
    struct sn_ctl_req req = {.op = SN_CTL_MR_REG};
    struct sn_ctl_resp resp;
    int rc;

    req.u.mr.va = (uintptr_t)addr;
    req.u.mr.len = len;
    req.u.mr.access = access;
    rc = sn_call(sn_dev(dev), &req, -1, &resp, NULL);
    if (rc)
        return rc;
    *out = sn_mr_new(dev, (uintptr_t)addr, len, resp.u.mr.key, access);
    if (!*out) {
        req.op = SN_CTL_MR_DEREG;
        req.u.mr_dereg.key = resp.u.mr.key;
        sn_call(sn_dev(dev), &req, -1, &resp, NULL);
        return rnic_err(-ENOMEM, "rnic_reg_mr: out of memory");
    }
    return 0;
}

static int sn_dereg_mr(struct rnic_mr *mr)
{
    struct rnic_mr_obj *o = (struct rnic_mr_obj *)mr;
    struct sn_ctl_req req = {.op = SN_CTL_MR_DEREG};
    struct sn_ctl_resp resp;
    int rc;

    req.u.mr_dereg.key = mr->lkey;
    rc = sn_call(sn_dev(o->dev), &req, -1, &resp, NULL);
    if (rc == 0) {
        sn_handle_del(o->dev, &((struct sn_cmr *)o)->h);
        free(o);
    }
    return rc;
}

/* ---- completion queues ------------------------------------------------ */

static struct sn_ccq *sn_ccq_new(struct rnic_device *dev, void *map,
                                 const struct sn_ctl_obj *o)
{
    struct sn_ccq *cq = calloc(1, sizeof(*cq));

    if (!cq)
        return NULL;
    cq->base.dev = dev;
    cq->base.num = o->num;
    cq->sh = map;
    cq->ring = sn_cq_ring(map);
    cq->depth = o->depth;
    cq->cons = load_acquire(&cq->sh->cons);
    sn_handle_add(dev, &cq->h, cq, map, sn_cq_shm_size(o->depth));
    return cq;
}

static int sn_create_cq(struct rnic_device *dev,
                        const struct rnic_cq_init_attr *attr,
                        struct rnic_cq **out)
{
    struct sn_ctl_req req = {.op = SN_CTL_CQ_CREATE};
    struct sn_ctl_resp resp;
    uint32_t depth = 1;
    struct sn_ccq *cq;
    size_t len;
    void *map;
    int fd, rc;

    while (depth < attr->depth)
        depth <<= 1;
    len = sn_cq_shm_size(depth);
    rc = sn_shm_new("rdn-cq", len, NULL, &map, &fd);
    if (rc)
        return rc;
    req.u.cq.va = (uintptr_t)map;
    req.u.cq.depth = depth;
    req.u.cq.flags = attr->flags;
    rc = sn_call(sn_dev(dev), &req, fd, &resp, NULL);
    close(fd);
    cq = rc ? NULL : sn_ccq_new(dev, map, &resp.u.obj);
    if (!cq) {
        if (!rc) {
            req.op = SN_CTL_CQ_DESTROY;
            req.u.obj.num = resp.u.obj.num;
            sn_call(sn_dev(dev), &req, -1, &resp, NULL);
            rc = rnic_err(-ENOMEM, "rnic_create_cq: out of memory");
        }
        munmap(map, len);
        return rc;
    }
    *out = &cq->base;
    return 0;
}

static int sn_destroy_cq(struct rnic_cq *cq_)
{
    struct sn_ccq *cq = (struct sn_ccq *)cq_;
    struct sn_ctl_req req = {.op = SN_CTL_CQ_DESTROY};
    struct sn_ctl_resp resp;
    int rc;

    req.u.obj.num = cq->base.num;
    rc = sn_call(sn_dev(cq->base.dev), &req, -1, &resp, NULL);
    if (rc)
        return rc;
    sn_handle_del(cq->base.dev, &cq->h);
    free(cq);
    return 0;
}

static int sn_poll_cq(struct rnic_cq *cq_, int max, struct rnic_wc *wc)
{
    struct sn_ccq *cq = (struct sn_ccq *)cq_;
    uint64_t prod = load_acquire(&cq->sh->prod);
    uint64_t now = 0;
    int n = 0;

    if (load_relaxed(&cq->sh->overflow))
        return rnic_err(-EOVERFLOW, "rnic_poll_cq: CQ %#x overflowed",
                        cq->base.num);
    if (prod - cq->cons > cq->depth) /* IGNORE_OVERRUN: entries lost */
        cq->cons = prod - cq->depth;
    while (n < max && cq->cons != prod) {
        const struct sn_cqe *e = &cq->ring[cq->cons & (cq->depth - 1)];
        struct rnic_wc *w = &wc[n];
        uint64_t ready;

        if (load_acquire(&e->seq) != (uint32_t)cq->cons)
            break; /* being overwritten (IGNORE_OVERRUN): next poll */
        ready = e->ready_ns;
        if (ready) {
            if (!now || now < ready)
                now = sn_now_ns();
            if (now < ready)
                break; /* timed model: not visible to the host yet */
        }
        w->wr_id = e->wr_id;
        w->qpn = e->qpn;
        w->byte_len = e->byte_len;
        w->imm = e->imm;
        w->wqe_counter = e->wqe_counter;
        w->opcode = e->opcode;
        w->status = e->status;
        w->flags = e->flags;
        fence_acquire();
        if (load_relaxed(&e->seq) != (uint32_t)cq->cons)
            continue; /* overwritten while copying: resync above */
        cq->cons++;
        n++;
    }
    if (n)
        store_release(&cq->sh->cons, cq->cons);
    return n;
}

/* The head CQE's visibility time: 0 none, 1 ready now, else ready_ns. */
static uint64_t sn_cq_head(struct sn_ccq *cq)
{
    uint64_t prod = load_acquire(&cq->sh->prod);
    const struct sn_cqe *e;

    if (prod == cq->cons)
        return 0;
    if (prod - cq->cons > cq->depth)
        return 1;
    e = &cq->ring[cq->cons & (cq->depth - 1)];
    return e->ready_ns > sn_now_ns() ? e->ready_ns : 1;
}

static int sn_cq_wait(struct rnic_cq *cq_, int timeout_ms)
{
    struct sn_ccq *cq = (struct sn_ccq *)cq_;
    uint64_t deadline = timeout_ms < 0
                            ? UINT64_MAX
                            : sn_now_ns() + (uint64_t)timeout_ms * 1000000u;

    for (;;) {
        uint32_t seq = load_seq_cst(&cq->sh->evseq);
        uint64_t head = sn_cq_head(cq), now = sn_now_ns(), until;

        if (load_relaxed(&cq->sh->overflow))
            return 1; /* rnic_poll_cq() reports it */
        if (head == 1)
            return 1;
        if (now >= deadline)
            return 0;
        until = head ? head : deadline;
        if (until > deadline)
            until = deadline;
        store_seq_cst(&cq->sh->armed, 1);
        /* Look again after arming: whatever the engine stored before it
         * could see armed set gets no wake-up (pairs with sn_cq_push()). */
        if (load_seq_cst(&cq->sh->overflow) || (!head && sn_cq_head(cq)))
            continue;
        sn_futex_wait(&cq->sh->evseq, seq,
                      until == UINT64_MAX ? -1 : (int64_t)(until - now));
    }
}

/* ---- queue pairs ------------------------------------------------------ */

static struct sn_cqp *sn_cqp_new(struct rnic_device *dev, void *map,
                                 const struct sn_ctl_obj *o)
{
    struct sn_qp_layout l =
        sn_qp_layout(o->sq_wqebb, o->rq_wqe, o->rq_wqe ? o->rq_sge : 1);
    struct sn_cqp *qp = calloc(1, sizeof(*qp));

    if (!qp)
        return NULL;
    qp->base.dev = dev;
    qp->base.num = o->num;
    qp->base.sq.buf = (uint8_t *)map + l.sq_off;
    qp->base.sq.wqebb_cnt = o->sq_wqebb;
    qp->sh = map;
    qp->thr = o->thread;
    qp->idx = o->num & (SN_MAX_OBJS - 1);
    qp->flags = o->flags;
    qp->rq = (uint8_t *)map + l.rq_off;
    qp->rq_cnt = o->rq_wqe;
    qp->rq_sge = o->rq_sge;
    qp->rq_stride = sn_rq_stride(o->rq_wqe ? o->rq_sge : 1);
    qp->wrid = (uint64_t *)((uint8_t *)map + l.wrid_off);
    sn_handle_add(dev, &qp->h, qp, map, l.size);
    return qp;
}

static int sn_create_qp(struct rnic_device *dev,
                        const struct rnic_qp_init_attr *attr,
                        struct rnic_qp **out)
{
    struct sn_ctl_req req = {.op = SN_CTL_QP_CREATE};
    struct sn_ctl_resp resp;
    struct sn_qp_layout l = sn_qp_layout(attr->sq_wqebb, attr->rq_wqe,
                                         attr->rq_wqe ? attr->max_recv_sge : 1);
    struct sn_cqp *qp;
    void *map;
    int rc;

    req.u.qp.send_cqn = attr->send_cq->num;
    req.u.qp.recv_cqn = attr->recv_cq ? attr->recv_cq->num : 0;
    req.u.qp.sq_wqebb = attr->sq_wqebb;
    req.u.qp.rq_wqe = attr->rq_wqe;
    req.u.qp.rq_sge = attr->rq_wqe ? attr->max_recv_sge : 0;
    req.u.qp.flags = attr->flags;
    req.u.qp.rc = attr->rc;
    req.u.qp.access = attr->flags & RNIC_QP_RESTRICT_ACCESS
                          ? attr->access
                          : RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
                                RNIC_ACCESS_REMOTE_ATOMIC;
    rc = sn_shm_register(sn_dev(dev), "rdn-qp", l.size, &req, &req.u.qp.va,
                         &resp, &map);
    if (rc)
        return rc;
    qp = sn_cqp_new(dev, map, &resp.u.obj);
    if (!qp) {
        req.op = SN_CTL_QP_DESTROY;
        req.u.obj.num = resp.u.obj.num;
        sn_call(sn_dev(dev), &req, -1, &resp, NULL);
        munmap(map, l.size);
        return rnic_err(-ENOMEM, "rnic_create_qp: out of memory");
    }
    *out = &qp->base;
    return 0;
}

static int sn_destroy_qp(struct rnic_qp *qp_)
{
    struct sn_cqp *qp = (struct sn_cqp *)qp_;
    struct sn_ctl_req req = {.op = SN_CTL_QP_DESTROY};
    struct sn_ctl_resp resp;
    int rc;

    req.u.obj.num = qp->base.num;
    rc = sn_call(sn_dev(qp->base.dev), &req, -1, &resp, NULL);
    if (rc)
        return rc;
    sn_handle_del(qp->base.dev, &qp->h);
    free(qp);
    return 0;
}

static enum rnic_qp_state sn_qp_state(const struct rnic_qp *qp_)
{
    const struct sn_cqp *qp = (const struct sn_cqp *)qp_;

    return (enum rnic_qp_state)load_acquire(&qp->sh->state);
}

static int sn_qp_addr(const struct rnic_qp *qp, struct rnic_addr *out)
{
    struct sn_ctl_req req = {.op = SN_CTL_QP_ADDR};
    struct sn_ctl_resp resp;
    int rc;

    req.u.obj.num = qp->num;
    rc = sn_call(sn_dev(qp->dev), &req, -1, &resp, NULL);
    if (rc == 0)
        *out = resp.u.addr;
    return rc;
}

static int sn_connect(struct rnic_qp *qp, const struct rnic_addr *remote)
{
    struct sn_ctl_req req = {.op = SN_CTL_QP_CONNECT};
    struct sn_ctl_resp resp;

    req.u.connect.qpn = qp->num;
    req.u.connect.remote = *remote;
    return sn_call(sn_dev(qp->dev), &req, -1, &resp, NULL);
}

static int sn_qp_set_gid(struct rnic_qp *qp, const uint8_t gid[16])
{
    struct sn_ctl_req req = {.op = SN_CTL_QP_GID};
    struct sn_ctl_resp resp;

    req.u.gid.qpn = qp->num;
    memcpy(req.u.gid.gid, gid, sizeof(req.u.gid.gid));
    return sn_call(sn_dev(qp->dev), &req, -1, &resp, NULL);
}

static int sn_ring_doorbell(struct rnic_qp *qp_, uint32_t sq_pi)
{
    struct sn_cqp *qp = (struct sn_cqp *)qp_;
    struct sn_cdev *d = sn_dev(qp->base.dev);

    if (qp->flags & RNIC_QP_MANAGED_SEND)
        return 0; /* managed queues run only when enabled */
    if (d->timed)
        store_relaxed(&qp->sh->db_ns, sn_now_ns());
    store_release(&qp->sh->sq_db, sq_pi);
    sn_poke_qp(d->ctl, qp->thr, qp->idx);
    return 0;
}

static int sn_post_recv(struct rnic_qp *qp_, const struct rnic_sge *sge,
                        unsigned n, uint64_t wr_id)
{
    struct sn_cqp *qp = (struct sn_cqp *)qp_;
    uint32_t ci, pi, slot, k = 0;
    struct mlx5_data_seg *seg;

    if (!qp->rq_cnt || n > qp->rq_sge)
        return rnic_err(-EINVAL,
                        "rnic_post_recv: QP %#x has no receive "
                        "queue or too many entries",
                        qp->base.num);
    /* The record, not a copy: RDMA may have advanced it (16-bit count). */
    ci = load_acquire(&qp->sh->rq_ci);
    pi = be32_to_cpu(load_acquire_be32(&qp->sh->rq_db));
    if ((uint16_t)(pi - ci) >= qp->rq_cnt)
        return rnic_err(-ENOMEM, "rnic_post_recv: receive queue full");
    slot = pi & (qp->rq_cnt - 1);
    seg = (struct mlx5_data_seg *)(qp->rq + (size_t)slot * qp->rq_stride);
    for (unsigned i = 0; i < n; i++) {
        if (sge[i].length == 0)
            continue;
        if (sge[i].length > SN_MAX_MSG)
            return rnic_err(-EINVAL, "rnic_post_recv: entry too long");
        seg[k].byte_count = cpu_to_be32(sge[i].length);
        seg[k].lkey = cpu_to_be32(sge[i].lkey);
        seg[k].addr = cpu_to_be64(sge[i].addr);
        k++;
    }
    if (k < qp->rq_sge) {
        seg[k].byte_count = 0;
        seg[k].lkey = cpu_to_be32(MLX5_INVALID_LKEY);
        seg[k].addr = 0;
    }
    qp->wrid[slot] = wr_id;
    store_seq_cst_be32(&qp->sh->rq_db, cpu_to_be32(pi + 1));
    if (load_seq_cst(&qp->sh->rnr_wait) ||
        load_relaxed(&qp->sh->state) != RNIC_QPS_RTS)
        sn_poke_qp(sn_dev(qp->base.dev)->ctl, qp->thr, qp->idx);
    return 0;
}

static void *sn_qp_rq_doorbell(struct rnic_qp *qp_)
{
    struct sn_cqp *qp = (struct sn_cqp *)qp_;

    return qp->rq_cnt ? &qp->sh->rq_db : NULL;
}

/* ---- persistence ------------------------------------------------------ */

static int sn_persist(struct rnic_device *dev, enum rnic_obj_type type,
                      void *obj, const char *name)
{
    struct sn_ctl_req req = {.op = SN_CTL_PERSIST};
    struct sn_ctl_resp resp;

    if (!sn_dev(dev)->tp->persistence)
        return rnic_err(-EOPNOTSUPP,
                        "rnic_persist: %s has no persistence "
                        "(use the softnic daemon)",
                        dev->name);
    req.u.persist.type = type;
    req.u.persist.id = type == RNIC_OBJ_MEM  ? (uintptr_t)obj
                       : type == RNIC_OBJ_MR ? ((struct rnic_mr *)obj)->lkey
                       : type == RNIC_OBJ_CQ ? ((struct rnic_cq *)obj)->num
                                             : ((struct rnic_qp *)obj)->num;
    snprintf(req.u.persist.name, sizeof(req.u.persist.name), "%s", name);
    return sn_call(sn_dev(dev), &req, -1, &resp, NULL);
}

/* Builds the application's handle of an attached object mapped at map. */
static int sn_attach_obj(struct rnic_device *dev, enum rnic_obj_type type,
                         const struct sn_ctl_obj *o, void *map, void **out)
{
    struct sn_cmem *m;

    switch (type) {
    case RNIC_OBJ_MEM:
        m = calloc(1, sizeof(*m));
        if (!m)
            return -ENOMEM;
        m->va = map;
        m->len = o->len;
        sn_mem_track(sn_dev(dev), m);
        *out = map;
        return 0;
    case RNIC_OBJ_CQ:
        *out = sn_ccq_new(dev, map, o);
        return *out ? 0 : -ENOMEM;
    case RNIC_OBJ_QP:
        *out = sn_cqp_new(dev, map, o);
        return *out ? 0 : -ENOMEM;
    default:
        return -EINVAL;
    }
}

static int sn_attach(struct rnic_device *dev, enum rnic_obj_type type,
                     const char *name, void **out)
{
    struct sn_ctl_req req = {.op = SN_CTL_ATTACH};
    struct sn_ctl_resp resp;
    const struct sn_ctl_obj *o = &resp.u.obj;
    void *map;
    int fd, rc;

    if (!sn_dev(dev)->tp->persistence)
        return rnic_err(-EOPNOTSUPP, "rnic_attach: %s has no persistence",
                        dev->name);
    req.u.attach.type = type;
    snprintf(req.u.attach.name, sizeof(req.u.attach.name), "%s", name);
    rc = sn_call(sn_dev(dev), &req, -1, &resp, &fd);
    if (rc)
        return rc;
    if (type == RNIC_OBJ_MR) {
        *out = sn_mr_new(dev, o->va, o->len, o->key, o->access);
        return *out ? 0 : rnic_err(-ENOMEM, "rnic_attach: out of memory");
    }
    /* Memory and rings go back where they were: WQEs hold addresses. */
    rc = sn_map(fd, o->len, type == RNIC_OBJ_CQ ? NULL : (void *)o->va, &map);
    close(fd);
    if (rc)
        return rnic_err(rc, "rnic_attach: cannot map '%s' at %#llx: %s", name,
                        (unsigned long long)o->va, strerror(-rc));
    rc = sn_attach_obj(dev, type, o, map, out);
    if (rc) {
        munmap(map, o->len);
        return rnic_err(rc, "rnic_attach: out of memory");
    }
    return 0;
}

static const struct rnic_ops sn_client_ops = {
    .close = sn_close,
    .mem_alloc = sn_mem_alloc,
    .mem_free = sn_mem_free,
    .mem_len = sn_mem_len,
    .reg_mr = sn_reg_mr,
    .dereg_mr = sn_dereg_mr,
    .create_cq = sn_create_cq,
    .destroy_cq = sn_destroy_cq,
    .poll_cq = sn_poll_cq,
    .cq_wait = sn_cq_wait,
    .create_qp = sn_create_qp,
    .destroy_qp = sn_destroy_qp,
    .qp_state = sn_qp_state,
    .qp_addr = sn_qp_addr,
    .connect = sn_connect,
    .qp_set_gid = sn_qp_set_gid,
    .ring_doorbell = sn_ring_doorbell,
    .post_recv = sn_post_recv,
    .qp_rq_doorbell = sn_qp_rq_doorbell,
    .persist = sn_persist,
    .attach = sn_attach,
};

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/mlx5/mlx5.c - the mlx5 provider (see mlx5.h): a verbs device (memory,
 * MRs, PD, GID: rdn/verbs) whose CQs and QPs are DevX objects, so that QPs
 * carry the QPC's cross-channel bits, CQs the overrun-ignore bit, and the
 * send ring is memory this process writes WQE bytes into.
 *
 * NEVER RUN ON HARDWARE. Compiled against Debian's rdma-core headers; the
 * command layouts it sends are unit tested (rdn/mlx5/mlx5_prm.h).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "proto/barrier.h"
#include "rdn/mlx5/mlx5.h"
#include "rdn/mlx5/mlx5_prm.h"
#include "rdn/verbs/verbs.h"

#define M5_PREFIX "mlx5:"
#define M5_PORT   1
#define M5_PAGE   4096

struct m5_umem {
    void *buf; /* from the verbs device's rnic_mem_alloc: registrable */
    size_t len;
    struct mlx5dv_devx_umem *umem;
};

struct m5_cq {
    struct rnic_cq pub;
    struct m5_cq *next;
    struct mlx5dv_devx_obj *obj;
    struct m5_umem buf, dbr; /* CQEs; doorbell record (set_ci, arm) */
    uint32_t depth, ci;
    /* Completion events for rnic_cq_wait(): this CQ's alone, as rdn/verbs
     * has a completion channel per CQ. NULL: the kernel has no DevX
     * events, and waiting polls. */
    struct mlx5dv_devx_event_channel *ch;
    uint32_t arm_sn; /* events taken: the arm's sequence number */
};

struct m5_qp {
    struct rnic_qp pub;
    struct m5_qp *next;
    struct mlx5dv_devx_obj *obj;
    struct m5_umem wq, dbr; /* receive then send queue; records [0], [1] */
    uint32_t rq_wqe, rq_stride, rq_pi;
    uint64_t *rq_wrid;
    unsigned flags;
    unsigned access;
    uint32_t psn;
    uint32_t rung; /* producer index of the last doorbell */
    enum rnic_qp_state state;
};

struct m5_dev {
    struct rnic_device pub;
    struct rnic_device *vdev; /* the verbs device underneath */
    struct ibv_context *ctx;
    struct mlx5dv_devx_uar *uar;
    bool wc; /* the UAR page is write-combining */
    /* The UAR's doorbell register is shared by every QP of the device:
     * its BlueFlame offset and the writes that use it go under db_lock. */
    pthread_spinlock_t db_lock;
    uint32_t bf_off;
    uint32_t bf_half; /* m5_bf_half(): the offset's step */
    uint32_t pdn, eqn;
    struct m5_caps caps;
    pthread_mutex_t lock;
    struct m5_cq *cqs;
    struct m5_qp *qps;
};

static const struct rnic_ops m5_ops;

static struct m5_dev *dev_of(struct rnic_device *d)
{
    return (struct m5_dev *)d;
}

/* ---- MMIO ------------------------------------------------------------- */

/*
 * Drains the CPU's write-combining buffers toward the NIC (rdma-core's
 * mmio_flush_writes()): a store to a write-combining UAR page may wait
 * there, or overtake an earlier one. Before a doorbell it also keeps the
 * WQEs and the record (ordinary memory) ahead of it.
 */
static inline void wc_flush(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("sfence" ::: "memory");
#elif defined(__aarch64__)
    __asm__ volatile("dsb st" ::: "memory");
#else
    fence_seq_cst();
#endif
}

/* One 64-bit store of 8 bytes already in the order the NIC reads them. */
static inline void mmio_write64(void *reg, uint64_t word)
{
    *(volatile uint64_t *)reg = word;
}

/* Runs a DevX command that creates nothing; -EIO with the syndrome. */
static int general_cmd(struct m5_dev *d, const void *in, size_t inlen,
                       void *out, size_t outlen, const char *what)
{
    int rc = mlx5dv_devx_general_cmd(d->ctx, in, inlen, out, outlen);

    if (rc != 0 || m5_out_status(out) != 0)
        return rnic_err(-EIO,
                        "mlx5: %s failed (errno %d, status %#x, "
                        "syndrome %#x)",
                        what, rc ? errno : 0, m5_out_status(out),
                        m5_out_syndrome(out));
    return 0;
}

static struct ibv_context *open_devx(struct ibv_device *dev)
{
    struct mlx5dv_context_attr a = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};

    return mlx5dv_open_device(dev, &a);
}

static int m5_open(const char *name, const struct rnic_open_opts *opts,
                   struct rnic_device **out)
{
    uint8_t in[M5_QUERY_CAP_IN], cap[M5_QUERY_CAP_OUT];
    struct mlx5dv_pd dvpd;
    struct mlx5dv_obj obj;
    struct m5_dev *d;
    int rc;

    if (strncmp(name, M5_PREFIX, strlen(M5_PREFIX)) != 0)
        return -ENODEV;
    if (opts && opts->domain)
        return rnic_err(-EOPNOTSUPP,
                        "mlx5: %s has no persistent domains "
                        "(only the softnic daemon has them)",
                        name);
    if (strlen(name) >= sizeof(d->pub.name))
        return rnic_err(-EINVAL, "mlx5: bad device name '%s'", name);
    d = calloc(1, sizeof(*d));
    if (!d)
        return rnic_err(-ENOMEM, "mlx5: out of memory");
    d->pub.ops = &m5_ops;
    strcpy(d->pub.name, name);
    pthread_mutex_init(&d->lock, NULL);
    pthread_spin_init(&d->db_lock, PTHREAD_PROCESS_PRIVATE);
    rc = verbs_open_with(name + strlen(M5_PREFIX), open_devx, &d->vdev);
    if (rc < 0)
        goto free_dev;
    d->ctx = verbs_context(d->vdev);
    m5_query_cap_in(in);
    rc = general_cmd(d, in, sizeof(in), cap, sizeof(cap), "QUERY_HCA_CAP");
    if (rc < 0)
        goto close_vdev;
    m5_caps_parse(cap, &d->caps);
    obj.pd.in = verbs_pd(d->vdev);
    obj.pd.out = &dvpd;
    if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD) != 0) {
        rc = rnic_err(-EIO, "mlx5: %s: no PD number", name);
        goto close_vdev;
    }
    d->pdn = dvpd.pdn;
    if (mlx5dv_devx_query_eqn(d->ctx, 0, &d->eqn) != 0) {
        rc = rnic_err(-EIO, "mlx5: %s: no completion EQ", name);
        goto close_vdev;
    }
    /* Write-combining first (BlueFlame); the kernel refuses it where the
     * CPU cannot write-combine to the NIC, and the page is then uncached. */
    d->uar = mlx5dv_devx_alloc_uar(d->ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
    d->wc = d->uar != NULL;
    if (!d->uar)
        d->uar = mlx5dv_devx_alloc_uar(d->ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
    d->bf_half = m5_bf_half(&d->caps);
    if (!d->uar) {
        rc = rnic_err(-EIO, "mlx5: %s: no UAR page", name);
        goto close_vdev;
    }
    *out = &d->pub;
    return 0;
close_vdev:
    rnic_close(d->vdev);
free_dev:
    pthread_spin_destroy(&d->db_lock);
    pthread_mutex_destroy(&d->lock);
    free(d);
    return rc;
}

static int m5_destroy_qp(struct rnic_qp *qp);
static int m5_destroy_cq(struct rnic_cq *cq);

static void m5_close(struct rnic_device *dev)
{
    struct m5_dev *d = dev_of(dev);

    while (d->qps)
        m5_destroy_qp(&d->qps->pub);
    while (d->cqs)
        m5_destroy_cq(&d->cqs->pub);
    mlx5dv_devx_free_uar(d->uar);
    rnic_close(d->vdev); /* memory and MRs */
    pthread_spin_destroy(&d->db_lock);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* ---- memory: the verbs device's ---------------------------------------- */

static int m5_mem_alloc(struct rnic_device *dev, size_t len, void **addr)
{
    return rnic_mem_alloc(dev_of(dev)->vdev, len, addr);
}

static int m5_mem_free(struct rnic_device *dev, void *addr)
{
    return rnic_mem_free(dev_of(dev)->vdev, addr);
}

static size_t m5_mem_len(struct rnic_device *dev, void *addr)
{
    return rnic_mem_len(dev_of(dev)->vdev, addr);
}

/* The MR belongs to the verbs device: rnic_dereg_mr() goes there. */
static int m5_reg_mr(struct rnic_device *dev, void *addr, size_t len,
                     unsigned access, struct rnic_mr **out)
{
    return rnic_reg_mr(dev_of(dev)->vdev, addr, len, access, out);
}

static int m5_dereg_mr(struct rnic_mr *mr)
{
    return rnic_dereg_mr(mr);
}

/* NIC-reachable zeroed memory the device may DMA, registered as a umem. */
static int umem_open(struct m5_dev *d, size_t len, struct m5_umem *u)
{
    int rc = rnic_mem_alloc(d->vdev, len, &u->buf);

    if (rc < 0)
        return rc;
    u->len = len;
    u->umem = mlx5dv_devx_umem_reg(
        d->ctx, u->buf, len,
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
            IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
    if (!u->umem) {
        rnic_mem_free(d->vdev, u->buf);
        return rnic_err(-EIO, "mlx5: umem of %zu bytes: errno %d", len, errno);
    }
    return 0;
}

static void umem_close(struct m5_dev *d, struct m5_umem *u)
{
    if (u->umem)
        mlx5dv_devx_umem_dereg(u->umem);
    if (u->buf)
        rnic_mem_free(d->vdev, u->buf);
    memset(u, 0, sizeof(*u));
}

/* ---- completion queues ------------------------------------------------ */

static uint32_t pow2(uint32_t v)
{
    uint32_t p = 1;

    while (p < v)
        p <<= 1;
    return p;
}

/*
 * The CQ's completion events, on a channel of its own: the CQ's EQ (the
 * CQC's c_eqn) raises one per arm, and the kernel passes it to whoever
 * subscribed to the CQ object. Without DevX events (an old kernel) c->ch
 * stays NULL.
 */
static void open_events(struct m5_dev *d, struct m5_cq *c)
{
    uint16_t ev = M5_EVENT_COMPLETION;

    c->ch = mlx5dv_devx_create_event_channel(
        d->ctx, MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA);
    if (c->ch && mlx5dv_devx_subscribe_devx_event(c->ch, c->obj, sizeof(ev),
                                                  &ev, c->pub.num) != 0) {
        mlx5dv_devx_destroy_event_channel(c->ch);
        c->ch = NULL;
    }
}

static int m5_create_cq(struct rnic_device *dev,
                        const struct rnic_cq_init_attr *attr,
                        struct rnic_cq **out)
{
    struct m5_dev *d = dev_of(dev);
    uint8_t in[M5_CREATE_CQ_IN], res[M5_CMD_OUT] = {0};
    struct m5_cq_params p = {0};
    char why[128];
    struct m5_cq *c;
    int rc = m5_caps_check_cq(&d->caps, attr, why, sizeof(why));

    if (rc < 0)
        return rnic_err(rc, "mlx5: %s: %s", dev->name, why);
    c = calloc(1, sizeof(*c));
    if (!c)
        return rnic_err(-ENOMEM, "mlx5: out of memory");
    c->depth = pow2(attr->depth);
    rc = umem_open(d, (size_t)c->depth * M5_CQE_BYTES, &c->buf);
    if (rc == 0)
        rc = umem_open(d, M5_PAGE, &c->dbr);
    if (rc < 0)
        goto close_umems;
    /* Every CQE invalid and owned by software until the NIC writes it. */
    for (uint32_t i = 0; i < c->depth; i++)
        ((uint8_t *)c->buf.buf)[(size_t)i * M5_CQE_BYTES + 63] = 0xf1;
    p.depth = c->depth;
    p.uar_page = d->uar->page_id;
    p.eqn = d->eqn;
    p.overrun_ignore = attr->flags & RNIC_CQ_IGNORE_OVERRUN;
    p.cq_umem_id = c->buf.umem->umem_id;
    p.dbr_umem_id = c->dbr.umem->umem_id;
    m5_create_cq_in(in, &p);
    c->obj = mlx5dv_devx_obj_create(d->ctx, in, sizeof(in), res, sizeof(res));
    if (!c->obj) {
        rc = rnic_err(-EIO,
                      "mlx5: CREATE_CQ failed (status %#x, syndrome "
                      "%#x)",
                      m5_out_status(res), m5_out_syndrome(res));
        goto close_umems;
    }
    c->pub.dev = dev;
    c->pub.num = m5_out_obj(res);
    open_events(d, c);
    pthread_mutex_lock(&d->lock);
    c->next = d->cqs;
    d->cqs = c;
    pthread_mutex_unlock(&d->lock);
    *out = &c->pub;
    return 0;
close_umems:
    umem_close(d, &c->dbr);
    umem_close(d, &c->buf);
    free(c);
    return rc;
}

static int m5_destroy_cq(struct rnic_cq *cq)
{
    struct m5_dev *d = dev_of(cq->dev);
    struct m5_cq *c = (struct m5_cq *)cq, **pp;

    if (mlx5dv_devx_obj_destroy(c->obj) != 0)
        return rnic_err(-EBUSY, "mlx5: CQ %u still in use", cq->num);
    pthread_mutex_lock(&d->lock);
    for (pp = &d->cqs; *pp != c; pp = &(*pp)->next)
        ;
    *pp = c->next;
    pthread_mutex_unlock(&d->lock);
    if (c->ch)
        mlx5dv_devx_destroy_event_channel(c->ch);
    umem_close(d, &c->dbr);
    umem_close(d, &c->buf);
    free(c);
    return 0;
}

static struct m5_qp *find_qp(struct m5_dev *d, uint32_t qpn)
{
    struct m5_qp *q;

    pthread_mutex_lock(&d->lock);
    for (q = d->qps; q && q->pub.num != qpn; q = q->next)
        ;
    pthread_mutex_unlock(&d->lock);
    return q;
}

static const uint8_t *cqe_at(const struct m5_cq *c, uint32_t ci)
{
    return (const uint8_t *)c->buf.buf +
           (size_t)(ci & (c->depth - 1)) * M5_CQE_BYTES;
}

static bool cqe_ready(const struct m5_cq *c)
{
    struct rnic_wc wc;

    return m5_cqe_decode(cqe_at(c, c->ci), c->ci, c->depth, &wc);
}

static int m5_poll_cq(struct rnic_cq *cq, int max, struct rnic_wc *wc)
{
    struct m5_cq *c = (struct m5_cq *)cq;
    struct m5_dev *d = dev_of(cq->dev);
    int n = 0;

    while (n < max) {
        struct m5_qp *q;

        if (!m5_cqe_decode(cqe_at(c, c->ci), c->ci, c->depth, &wc[n]))
            break;
        fence_acquire(); /* the CQE's body after its owner byte */
        q = find_qp(d, wc[n].qpn);
        if (q && (wc[n].opcode == RNIC_WC_RECV ||
                  wc[n].opcode == RNIC_WC_RECV_RDMA_IMM))
            wc[n].wr_id = q->rq_wrid[wc[n].wqe_counter & (q->rq_wqe - 1)];
        if (q && wc[n].status != RNIC_WC_SUCCESS)
            q->state = RNIC_QPS_ERR;
        c->ci++;
        n++;
    }
    if (n)
        ((be32 *)c->dbr.buf)[0] = m5_cq_ci_value(c->ci);
    return n;
}

/* Asks for one event at the next CQE after the consumer index. */
static void arm_cq(struct m5_dev *d, struct m5_cq *c)
{
    ((volatile be32 *)c->dbr.buf)[1] = m5_cq_arm_value(c->arm_sn, c->ci);
    wc_flush(); /* the record before the doorbell */
    mmio_write64((uint8_t *)d->uar->base_addr + M5_CQ_DOORBELL,
                 m5_cq_arm_db_word(c->arm_sn, c->ci, c->pub.num));
    wc_flush();
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Without an event channel: short naps between looks. */
static int nap_wait(const struct m5_cq *c, int64_t deadline)
{
    struct timespec nap = {0, 50000};

    while (!cqe_ready(c)) {
        if (deadline >= 0 && now_ms() >= deadline)
            return 0;
        nanosleep(&nap, NULL);
    }
    return 1;
}

/*
 * As rdn/verbs waits on its completion channel: arms the CQ, looks once
 * more (a CQE written before the arm may raise no event), then sleeps on
 * the channel's fd. Each event taken advances the arm sequence number, as
 * the PRM's arm_sn requires.
 */
static int m5_cq_wait(struct rnic_cq *cq, int timeout_ms)
{
    struct m5_cq *c = (struct m5_cq *)cq;
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

    if (!c->ch)
        return nap_wait(c, deadline);
    for (;;) {
        struct pollfd pfd = {.fd = c->ch->fd, .events = POLLIN};
        struct mlx5dv_devx_async_event_hdr ev;
        int left, rc;

        if (cqe_ready(c))
            return 1;
        arm_cq(dev_of(cq->dev), c);
        if (cqe_ready(c))
            return 1;
        left = deadline < 0 ? -1 : (int)(deadline - now_ms());
        if (deadline >= 0 && left <= 0)
            return 0;
        rc = poll(&pfd, 1, left);
        if (rc < 0 && errno != EINTR)
            return rnic_err(-errno, "mlx5: poll: %s", strerror(errno));
        if (rc > 0 && mlx5dv_devx_get_event(c->ch, &ev, sizeof(ev)) > 0)
            c->arm_sn++;
    }
}

/* ---- queue pairs ------------------------------------------------------ */

static unsigned log2u(uint32_t v)
{
    unsigned l = 0;

    while ((1u << l) < v)
        l++;
    return l;
}

static int m5_create_qp(struct rnic_device *dev,
                        const struct rnic_qp_init_attr *attr,
                        struct rnic_qp **out)
{
    struct m5_dev *d = dev_of(dev);
    uint8_t in[M5_CREATE_QP_IN], res[M5_CMD_OUT] = {0};
    uint8_t mod[M5_MODIFY_QP_IN], mres[M5_CMD_OUT] = {0};
    struct m5_qp_params p = {0};
    char why[128];
    struct m5_qp *q;
    int rc = m5_caps_check_qp(&d->caps, attr, why, sizeof(why));

    if (rc < 0)
        return rnic_err(rc, "mlx5: %s: %s", dev->name, why);
    q = calloc(1, sizeof(*q));
    if (!q)
        return rnic_err(-ENOMEM, "mlx5: out of memory");
    q->rq_wqe = attr->rq_wqe;
    q->rq_stride = attr->rq_wqe ? pow2(16 * attr->max_recv_sge) : 0;
    q->flags = attr->flags;
    q->access = (attr->flags & RNIC_QP_RESTRICT_ACCESS)
                    ? attr->access
                    : RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
                          RNIC_ACCESS_REMOTE_ATOMIC;
    q->psn = verbs_new_psn();
    q->rq_wrid = calloc(attr->rq_wqe ? attr->rq_wqe : 1, sizeof(uint64_t));
    rc = q->rq_wrid ? 0 : rnic_err(-ENOMEM, "mlx5: out of memory");
    if (rc == 0)
        rc = umem_open(d, m5_wq_bytes(attr->sq_wqebb, q->rq_wqe, q->rq_stride),
                       &q->wq);
    if (rc == 0)
        rc = umem_open(d, M5_PAGE, &q->dbr);
    if (rc < 0)
        goto free_qp;
    p.pdn = d->pdn;
    p.uar_page = d->uar->page_id;
    p.cqn_snd = attr->send_cq->num;
    p.cqn_rcv = (attr->recv_cq ? attr->recv_cq : attr->send_cq)->num;
    p.sq_wqebb = attr->sq_wqebb;
    p.rq_wqe = q->rq_wqe;
    p.rq_stride = q->rq_stride;
    p.flags = attr->flags;
    p.wq_umem_id = q->wq.umem->umem_id;
    p.dbr_umem_id = q->dbr.umem->umem_id;
    m5_create_qp_in(in, &p);
    q->obj = mlx5dv_devx_obj_create(d->ctx, in, sizeof(in), res, sizeof(res));
    if (!q->obj) {
        rc = rnic_err(
            -EIO, "mlx5: CREATE_QP failed (status %#x, syndrome %#x)%s",
            m5_out_status(res), m5_out_syndrome(res),
            (attr->flags & RNIC_QP_CROSS_CHANNEL) ? ": cross-channel refused?"
                                                  : "");
        goto free_qp;
    }
    q->pub.dev = dev;
    q->pub.num = m5_out_obj(res);
    q->pub.sq.buf =
        (uint8_t *)q->wq.buf + m5_sq_offset(q->rq_wqe, q->rq_stride);
    q->pub.sq.wqebb_cnt = attr->sq_wqebb;
    m5_rst2init_in(mod, q->pub.num, M5_PORT, q->access);
    if (mlx5dv_devx_obj_modify(q->obj, mod, sizeof(mod), mres, sizeof(mres))) {
        rc = rnic_err(-EIO, "mlx5: RST2INIT failed (syndrome %#x)",
                      m5_out_syndrome(mres));
        mlx5dv_devx_obj_destroy(q->obj);
        goto free_qp;
    }
    q->state = RNIC_QPS_RESET;
    pthread_mutex_lock(&d->lock);
    q->next = d->qps;
    d->qps = q;
    pthread_mutex_unlock(&d->lock);
    *out = &q->pub;
    return 0;
free_qp:
    umem_close(d, &q->dbr);
    umem_close(d, &q->wq);
    free(q->rq_wrid);
    free(q);
    return rc;
}

static int m5_destroy_qp(struct rnic_qp *qp)
{
    struct m5_dev *d = dev_of(qp->dev);
    struct m5_qp *q = (struct m5_qp *)qp, **pp;

    if (mlx5dv_devx_obj_destroy(q->obj) != 0)
        return rnic_err(-EIO, "mlx5: DESTROY_QP %u failed", qp->num);
    pthread_mutex_lock(&d->lock);
    for (pp = &d->qps; *pp != q; pp = &(*pp)->next)
        ;
    *pp = q->next;
    pthread_mutex_unlock(&d->lock);
    umem_close(d, &q->dbr);
    umem_close(d, &q->wq);
    free(q->rq_wrid);
    free(q);
    return 0;
}

static enum rnic_qp_state m5_qp_state(const struct rnic_qp *qp)
{
    return ((const struct m5_qp *)qp)->state;
}

static int m5_qp_addr(const struct rnic_qp *qp, struct rnic_addr *out)
{
    verbs_fill_addr(dev_of(qp->dev)->vdev, qp->num,
                    ((const struct m5_qp *)qp)->psn, out);
    return 0;
}

/* The next hop's MAC for gid: the kernel resolves it for an AH. */
static int resolve_mac(struct m5_dev *d, const union ibv_gid *gid,
                       int sgid_index, uint8_t mac[6])
{
    struct ibv_ah_attr aa = {.is_global = 1, .port_num = M5_PORT};
    struct mlx5dv_ah dvah;
    struct mlx5dv_obj obj;
    struct ibv_ah *ah;
    int rc = 0;

    aa.grh.dgid = *gid;
    aa.grh.sgid_index = (uint8_t)sgid_index;
    aa.grh.hop_limit = 64;
    ah = ibv_create_ah(verbs_pd(d->vdev), &aa);
    if (!ah)
        return rnic_err(-EHOSTUNREACH, "mlx5: no route to the peer's GID");
    obj.ah.in = ah;
    obj.ah.out = &dvah;
    if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH) == 0)
        memcpy(mac, dvah.av->rmac, 6);
    else
        rc = rnic_err(-EIO, "mlx5: cannot read the peer's MAC");
    ibv_destroy_ah(ah);
    return rc;
}

static int m5_connect(struct rnic_qp *qp, const struct rnic_addr *remote)
{
    struct m5_dev *d = dev_of(qp->dev);
    struct m5_qp *q = (struct m5_qp *)qp;
    uint8_t in[M5_MODIFY_QP_IN], res[M5_CMD_OUT] = {0};
    struct verbs_peer peer;
    struct m5_path p = {0};
    union ibv_gid gid;
    enum ibv_mtu mtu;
    int gid_index, rc = verbs_parse_addr(d->vdev, remote, &peer);

    if (rc < 0)
        return rc;
    verbs_port(d->vdev, &gid, &gid_index, &mtu);
    rc = resolve_mac(d, &peer.gid, gid_index, p.rmac);
    if (rc < 0)
        return rc;
    memcpy(p.rgid, peer.gid.raw, 16);
    p.sgid_index = (uint8_t)gid_index;
    p.hop_limit = 64;
    p.port = M5_PORT;
    p.udp_sport = (uint16_t)(0xc000 | (qp->num & 0x3fff));
    p.mtu = (uint8_t)peer.mtu;
    p.remote_qpn = peer.qpn;
    p.rq_psn = peer.psn;
    p.sq_psn = q->psn;
    p.log_rd_atomic = log2u(16);
    m5_init2rtr_in(in, qp->num, &p);
    if (mlx5dv_devx_obj_modify(q->obj, in, sizeof(in), res, sizeof(res)))
        return rnic_err(-EIO, "mlx5: INIT2RTR failed (syndrome %#x)",
                        m5_out_syndrome(res));
    m5_rtr2rts_in(in, qp->num, &p);
    if (mlx5dv_devx_obj_modify(q->obj, in, sizeof(in), res, sizeof(res)))
        return rnic_err(-EIO, "mlx5: RTR2RTS failed (syndrome %#x)",
                        m5_out_syndrome(res));
    q->state = RNIC_QPS_RTS;
    return 0;
}

/*
 * The send doorbell: the record takes the producer index, then the UAR
 * register either the ctrl head of the last WQE rung, with its true index
 * and QPN whatever operands the chain keeps in its ctrl segment
 * (docs/mlx5.md), or, for a lone WQE of a queue that is not
 * cross-channel on a write-combining page, a BlueFlame copy of it with
 * that head (m5_qp_bf_max()). The register's two buffers are
 * used in turn (mlx5_prm.h), under the device's doorbell lock.
 */
static void ring_uar(struct m5_dev *d, const struct rnic_qp *qp,
                     const struct m5_db_plan *p)
{
    uint8_t img[M5_BF_MAX];

    if (p->path == M5_DB_BLUEFLAME)
        m5_bf_image(qp->sq.buf, qp->sq.wqebb_cnt, p, img);
    pthread_spin_lock(&d->db_lock);
    {
        uint8_t *reg = (uint8_t *)d->uar->reg_addr + d->bf_off;

        if (p->path == M5_DB_BLUEFLAME) {
            for (uint32_t i = 0; i < p->bf_bytes; i += 8) {
                uint64_t w;

                memcpy(&w, img + i, 8);
                mmio_write64(reg + i, w);
            }
        } else {
            mmio_write64(reg, p->word);
        }
        /* Inside the lock: another thread's later doorbell must not reach
         * the NIC first from its CPU's write-combining buffer. */
        wc_flush();
        d->bf_off = m5_bf_next(d->bf_off, d->bf_half);
    }
    pthread_spin_unlock(&d->db_lock);
}

static int m5_ring_doorbell(struct rnic_qp *qp, uint32_t sq_pi)
{
    struct m5_qp *q = (struct m5_qp *)qp;
    struct m5_dev *d = dev_of(qp->dev);
    struct m5_db_plan plan;

    if (q->flags & RNIC_QP_MANAGED_SEND)
        return 0; /* runs only as far as SEND_EN enabled it */
    m5_db_plan(qp->sq.buf, qp->sq.wqebb_cnt, q->rung, sq_pi, qp->num,
               m5_qp_bf_max(d->bf_half, d->wc, q->flags), &plan);
    q->rung = sq_pi;
    if (plan.path == M5_DB_NONE)
        return 0;
    fence_release(); /* WQEs before the record */
    ((volatile be32 *)q->dbr.buf)[1] = m5_dbr_value(sq_pi);
    wc_flush(); /* the record before the UAR */
    ring_uar(d, qp, &plan);
    return 0;
}

static int m5_post_recv(struct rnic_qp *qp, const struct rnic_sge *sge,
                        unsigned n, uint64_t wr_id)
{
    struct m5_qp *q = (struct m5_qp *)qp;
    uint8_t *w;
    unsigned slots;

    if (!q->rq_wqe)
        return rnic_err(-EINVAL, "mlx5: QP %u has no receive queue", qp->num);
    slots = q->rq_stride / 16;
    if (n > slots)
        return rnic_err(-EINVAL, "mlx5: %u scatter entries (QP takes %u)", n,
                        slots);
    w = (uint8_t *)q->wq.buf +
        (size_t)(q->rq_pi & (q->rq_wqe - 1)) * q->rq_stride;
    m5_put_recv(w, q->rq_stride, sge, n);
    q->rq_wrid[q->rq_pi & (q->rq_wqe - 1)] = wr_id;
    q->rq_pi++;
    fence_release(); /* the WQE before the record */
    ((volatile be32 *)q->dbr.buf)[0] = m5_dbr_value(q->rq_pi);
    return 0;
}

static void *m5_qp_rq_doorbell(struct rnic_qp *qp)
{
    struct m5_qp *q = (struct m5_qp *)qp;

    return q->rq_wqe ? q->dbr.buf : NULL;
}

static int m5_device_caps(const struct rnic_device *dev, char *buf, size_t len)
{
    const struct m5_dev *d = (const struct m5_dev *)dev;

    m5_caps_describe(&d->caps, d->wc, buf, len);
    return 0;
}

static const struct rnic_ops m5_ops = {
    .close = m5_close,
    .mem_alloc = m5_mem_alloc,
    .mem_free = m5_mem_free,
    .reg_mr = m5_reg_mr,
    .dereg_mr = m5_dereg_mr,
    .create_cq = m5_create_cq,
    .destroy_cq = m5_destroy_cq,
    .poll_cq = m5_poll_cq,
    .cq_wait = m5_cq_wait,
    .create_qp = m5_create_qp,
    .destroy_qp = m5_destroy_qp,
    .qp_state = m5_qp_state,
    .qp_addr = m5_qp_addr,
    .connect = m5_connect,
    .ring_doorbell = m5_ring_doorbell,
    .post_recv = m5_post_recv,
    .qp_rq_doorbell = m5_qp_rq_doorbell,
    .mem_len = m5_mem_len,
    .device_caps = m5_device_caps,
};

const struct rnic_provider mlx5_provider = {
    .name = "mlx5",
    .open = m5_open,
};

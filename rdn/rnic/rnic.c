/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/rnic/rnic.c - the NIC interface: argument checks at the API boundary
 * and dispatch to the provider that owns the object (rdn/rnic/provider.h).
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/mlx5.h"
#include "rdn/rnic/provider.h"
#include "rdn/softnic/softnic.h"
#ifdef HAVE_VERBS
#include "rdn/verbs/verbs.h"
#endif
#ifdef HAVE_MLX5
#include "rdn/mlx5/mlx5.h"
#endif

/* Providers tried in order by rnic_open(); a hardware provider goes here. */
static const struct rnic_provider *const rnic_providers[] = {
    &sn_provider_inproc,
    &sn_provider_daemon,
#ifdef HAVE_VERBS
    &verbs_provider,
#endif
#ifdef HAVE_MLX5
    &mlx5_provider,
#endif
};

/* -ENODEV for a name no provider took; says so when it names a provider
 * this build lacks (configure found no rdma-core, or --without-verbs). */
static int rnic_no_device(const char *name)
{
#ifndef HAVE_VERBS
    if (strncmp(name, "verbs:", 6) == 0)
        return rnic_err(-ENODEV,
                        "rnic_open: '%s': built without the verbs provider "
                        "(no libibverbs at configure time, or --without-verbs)",
                        name);
#endif
#ifndef HAVE_MLX5
    if (strncmp(name, "mlx5:", 5) == 0)
        return rnic_err(-ENODEV,
                        "rnic_open: '%s': built without the mlx5 provider "
                        "(no mlx5dv.h and libmlx5 at configure time, or "
                        "--without-verbs)",
                        name);
#endif
    return rnic_err(-ENODEV, "rnic_open: no provider has a device '%s'", name);
}

/*
 * Opens name (NULL/"" -> $RDN_DEVICE -> "softnic") with the first provider
 * that recognizes it.
 */
int rnic_open(const char *name, const struct rnic_open_opts *opts,
              struct rnic_device **out)
{
    size_t i;
    int rc;

    if (!out)
        return rnic_err(-EINVAL, "rnic_open: out is NULL");
    *out = NULL;
    if (!name || !*name)
        name = getenv("RDN_DEVICE");
    if (!name || !*name)
        name = "softnic";
    for (i = 0; i < sizeof(rnic_providers) / sizeof(rnic_providers[0]); i++) {
        rc = rnic_providers[i]->open(name, opts, out);
        if (rc != -ENODEV)
            return rc;
    }
    return rnic_no_device(name);
}

const char *rnic_provider_name(size_t i)
{
    return i < sizeof(rnic_providers) / sizeof(rnic_providers[0])
               ? rnic_providers[i]->name
               : NULL;
}

void rnic_close(struct rnic_device *dev)
{
    if (dev)
        dev->ops->close(dev);
}

const char *rnic_device_name(const struct rnic_device *dev)
{
    return dev ? dev->name : "";
}

int rnic_device_caps(const struct rnic_device *dev, char *buf, size_t len)
{
    if (!dev || !buf || len == 0)
        return rnic_err(-EINVAL, "rnic_device_caps: bad argument");
    buf[0] = '\0';
    if (!dev->ops->device_caps)
        return rnic_err(-EOPNOTSUPP, "%s: no capabilities to report",
                        dev->name);
    return dev->ops->device_caps(dev, buf, len);
}

int rnic_mem_alloc(struct rnic_device *dev, size_t len, void **addr)
{
    if (!dev || !addr || len == 0)
        return rnic_err(-EINVAL, "rnic_mem_alloc: bad argument");
    return dev->ops->mem_alloc(dev, len, addr);
}

int rnic_mem_free(struct rnic_device *dev, void *addr)
{
    if (!dev || !addr)
        return rnic_err(-EINVAL, "rnic_mem_free: bad argument");
    return dev->ops->mem_free(dev, addr);
}

size_t rnic_mem_len(struct rnic_device *dev, void *addr)
{
    return dev && addr ? dev->ops->mem_len(dev, addr) : 0;
}

int rnic_reg_mr(struct rnic_device *dev, void *addr, size_t len,
                unsigned access, struct rnic_mr **out)
{
    const unsigned all = RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
                         RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC;

    if (!dev || !addr || !out || len == 0 || (access & ~all))
        return rnic_err(-EINVAL, "rnic_reg_mr: bad argument");
    /* As in verbs: remote write and atomic imply local write. */
    if ((access & (RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_ATOMIC)) &&
        !(access & RNIC_ACCESS_LOCAL_WRITE))
        return rnic_err(-EINVAL, "rnic_reg_mr: remote write/atomic access "
                                 "needs LOCAL_WRITE");
    return dev->ops->reg_mr(dev, addr, len, access, out);
}

int rnic_dereg_mr(struct rnic_mr *mr)
{
    struct rnic_mr_obj *o = (struct rnic_mr_obj *)mr;

    if (!mr)
        return rnic_err(-EINVAL, "rnic_dereg_mr: mr is NULL");
    return o->dev->ops->dereg_mr(mr);
}

int rnic_create_cq(struct rnic_device *dev, uint32_t depth,
                   struct rnic_cq **out)
{
    struct rnic_cq_init_attr attr = {.depth = depth};

    return rnic_create_cq_ex(dev, &attr, out);
}

int rnic_create_cq_ex(struct rnic_device *dev,
                      const struct rnic_cq_init_attr *attr,
                      struct rnic_cq **out)
{
    if (!dev || !attr || !out)
        return rnic_err(-EINVAL, "rnic_create_cq: bad argument");
    if (attr->depth == 0 || attr->depth > (1u << 22) ||
        (attr->flags & ~(unsigned)RNIC_CQ_IGNORE_OVERRUN))
        return rnic_err(-EINVAL,
                        "rnic_create_cq: depth %u or flags %#x "
                        "out of range",
                        attr->depth, attr->flags);
    return dev->ops->create_cq(dev, attr, out);
}

int rnic_destroy_cq(struct rnic_cq *cq)
{
    if (!cq)
        return rnic_err(-EINVAL, "rnic_destroy_cq: cq is NULL");
    return cq->dev->ops->destroy_cq(cq);
}

uint32_t rnic_cq_num(const struct rnic_cq *cq)
{
    return cq ? cq->num : 0;
}

int rnic_poll_cq(struct rnic_cq *cq, int max, struct rnic_wc *wc)
{
    if (!cq || max < 0 || (max > 0 && !wc))
        return rnic_err(-EINVAL, "rnic_poll_cq: bad argument");
    return cq->dev->ops->poll_cq(cq, max, wc);
}

int rnic_cq_wait(struct rnic_cq *cq, int timeout_ms)
{
    if (!cq)
        return rnic_err(-EINVAL, "rnic_cq_wait: cq is NULL");
    return cq->dev->ops->cq_wait(cq, timeout_ms);
}

static int is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

int rnic_create_qp(struct rnic_device *dev,
                   const struct rnic_qp_init_attr *attr, struct rnic_qp **out)
{
    const unsigned all = RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND |
                         RNIC_QP_MANAGED_RECV | RNIC_QP_RESTRICT_ACCESS;
    const unsigned remote = RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
                            RNIC_ACCESS_REMOTE_ATOMIC;

    if (!dev || !attr || !out || !attr->send_cq)
        return rnic_err(-EINVAL, "rnic_create_qp: bad argument");
    if (!is_pow2(attr->sq_wqebb) || attr->sq_wqebb > (1u << 15))
        return rnic_err(-EINVAL,
                        "rnic_create_qp: sq_wqebb %u is not a "
                        "power of two in 1..32768",
                        attr->sq_wqebb);
    if (attr->rq_wqe && (!is_pow2(attr->rq_wqe) || attr->rq_wqe > (1u << 15) ||
                         !attr->recv_cq || attr->max_recv_sge < 1 ||
                         attr->max_recv_sge > MLX5_RECV_MAX_SGE))
        return rnic_err(-EINVAL, "rnic_create_qp: receive queue needs a "
                                 "power-of-two rq_wqe <= 32768, a recv_cq "
                                 "and 1..16 max_recv_sge");
    if (attr->flags & ~all)
        return rnic_err(-EINVAL, "rnic_create_qp: unknown flags %#x",
                        attr->flags);
    if (attr->access & ~((attr->flags & RNIC_QP_RESTRICT_ACCESS) ? remote : 0))
        return rnic_err(-EINVAL,
                        "rnic_create_qp: access %#x: only REMOTE_* bits, "
                        "and only with RNIC_QP_RESTRICT_ACCESS",
                        attr->access);
    if (attr->send_cq->dev != dev ||
        (attr->recv_cq && attr->recv_cq->dev != dev))
        return rnic_err(-EINVAL, "rnic_create_qp: CQ of another device");
    return dev->ops->create_qp(dev, attr, out);
}

int rnic_destroy_qp(struct rnic_qp *qp)
{
    if (!qp)
        return rnic_err(-EINVAL, "rnic_destroy_qp: qp is NULL");
    return qp->dev->ops->destroy_qp(qp);
}

uint32_t rnic_qp_num(const struct rnic_qp *qp)
{
    return qp ? qp->num : 0;
}

enum rnic_qp_state rnic_qp_state(const struct rnic_qp *qp)
{
    return qp ? qp->dev->ops->qp_state(qp) : RNIC_QPS_ERR;
}

int rnic_qp_addr(const struct rnic_qp *qp, struct rnic_addr *out)
{
    if (!qp || !out)
        return rnic_err(-EINVAL, "rnic_qp_addr: bad argument");
    return qp->dev->ops->qp_addr(qp, out);
}

int rnic_qp_set_gid(struct rnic_qp *qp, const uint8_t gid[16])
{
    if (!qp || !gid)
        return rnic_err(-EINVAL, "rnic_qp_set_gid: bad argument");
    if (!qp->dev->ops->qp_set_gid)
        return rnic_err(-EOPNOTSUPP,
                        "rnic_qp_set_gid: device %s has one address per "
                        "device",
                        qp->dev->name);
    return qp->dev->ops->qp_set_gid(qp, gid);
}

int rnic_qp_set_gid_sock(struct rnic_qp *qp, int fd)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    uint8_t gid[16] = {[10] = 0xff, [11] = 0xff};
    int rc;

    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
        sa.sin_family != AF_INET)
        return 0;
    memcpy(gid + 12, &sa.sin_addr, 4);
    rc = rnic_qp_set_gid(qp, gid);
    if (rc == -EADDRNOTAVAIL || rc == -EOPNOTSUPP)
        return 0;
    return rc < 0 ? rc : 1;
}

int rnic_connect(struct rnic_qp *qp, const struct rnic_addr *remote)
{
    if (!qp || !remote)
        return rnic_err(-EINVAL, "rnic_connect: bad argument");
    return qp->dev->ops->connect(qp, remote);
}

int rnic_qp_sq(struct rnic_qp *qp, struct rnic_sq *out)
{
    if (!qp || !out)
        return rnic_err(-EINVAL, "rnic_qp_sq: bad argument");
    if (!qp->sq.buf)
        return rnic_err(-EOPNOTSUPP,
                        "rnic_qp_sq: device %s has no raw send ring (post "
                        "with rnic_post_send; softnic and mlx5 have one)",
                        qp->dev->name);
    *out = qp->sq;
    return 0;
}

int rnic_ring_doorbell(struct rnic_qp *qp, uint32_t sq_pi)
{
    int rc = qp->dev->ops->ring_doorbell(qp, sq_pi);

    if (rc == 0)
        qp->sq_pi = sq_pi;
    return rc;
}

/*
 * The WQE's size in 16-byte segments, or 0 for an opcode rnic_post_send()
 * does not know: ctrl, then raddr (RDMA, atomics), atomic (CAS, FADD) or
 * wait/enable, then the data segments.
 */
static unsigned send_wr_ds(const struct rnic_send_wr *wr)
{
    switch (wr->opcode) {
    case MLX5_OPCODE_NOP:
        return 1;
    case MLX5_OPCODE_SEND:
    case MLX5_OPCODE_SEND_IMM:
        return 1 + wr->nsg;
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
    case MLX5_OPCODE_RDMA_READ:
        return 2 + wr->nsg;
    case MLX5_OPCODE_ATOMIC_CS:
    case MLX5_OPCODE_ATOMIC_FA:
        return 3 + wr->nsg;
    case MLX5_OPCODE_WAIT:
    case MLX5_OPCODE_SEND_EN:
    case MLX5_OPCODE_RECV_EN:
        return 2;
    default:
        return 0;
    }
}

static bool takes_data(uint8_t opcode)
{
    return opcode != MLX5_OPCODE_NOP && opcode != MLX5_OPCODE_WAIT &&
           opcode != MLX5_OPCODE_SEND_EN && opcode != MLX5_OPCODE_RECV_EN;
}

static uint8_t *ring_seg(const struct rnic_sq *sq, uint32_t index, unsigned s)
{
    uint32_t mask = sq->wqebb_cnt * MLX5_SEND_WQE_BB - 1;

    return sq->buf + ((index * MLX5_SEND_WQE_BB + s * MLX5_SEND_WQE_DS) & mask);
}

/* Writes wr at the producer index last rung and rings past it. */
static int ring_post(struct rnic_qp *qp, const struct rnic_send_wr *wr,
                     unsigned ds)
{
    unsigned nbb =
        (ds * MLX5_SEND_WQE_DS + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
    uint32_t pi = qp->sq_pi;
    unsigned s = 1;
    uint8_t *ctrl;

    if (nbb > qp->sq.wqebb_cnt)
        return rnic_err(-ENOSPC, "rnic_post_send: WQE larger than the ring");
    for (unsigned b = 0; b < nbb; b++)
        memset(ring_seg(&qp->sq, pi + b, 0), 0, MLX5_SEND_WQE_BB);
    switch (wr->opcode) {
    case MLX5_OPCODE_WAIT:
    case MLX5_OPCODE_SEND_EN:
    case MLX5_OPCODE_RECV_EN:
        mlx5_put_wait_en_seg(ring_seg(&qp->sq, pi, s++), wr->index, wr->obj);
        break;
    case MLX5_OPCODE_ATOMIC_CS:
    case MLX5_OPCODE_ATOMIC_FA:
        mlx5_put_raddr_seg(ring_seg(&qp->sq, pi, s++), wr->raddr, wr->rkey);
        mlx5_put_atomic_seg(ring_seg(&qp->sq, pi, s++), wr->opcode,
                            wr->swap_add, wr->compare);
        break;
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
    case MLX5_OPCODE_RDMA_READ:
        mlx5_put_raddr_seg(ring_seg(&qp->sq, pi, s++), wr->raddr, wr->rkey);
        break;
    }
    for (unsigned i = 0; i < wr->nsg; i++)
        mlx5_put_data_seg(ring_seg(&qp->sq, pi, s++), wr->sg[i].length,
                          wr->sg[i].lkey, wr->sg[i].addr);
    ctrl = ring_seg(&qp->sq, pi, 0);
    mlx5_put_be32(ctrl, mlx5_ctrl_word0(0, (uint16_t)pi, wr->opcode));
    mlx5_put_be32(ctrl + 4, mlx5_ctrl_word1(qp->num, (uint8_t)ds));
    ctrl[MLX5_CTRL_FLAGS_OFF] = wr->flags;
    mlx5_put_be32(ctrl + MLX5_CTRL_IMM_OFF, wr->imm);
    return rnic_ring_doorbell(qp, pi + nbb);
}

int rnic_post_send(struct rnic_qp *qp, const struct rnic_send_wr *wr)
{
    const uint8_t flags =
        MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_FENCE | MLX5_WQE_CTRL_SOLICITED;
    unsigned ds;

    if (!qp || !wr || (wr->nsg && !wr->sg) || wr->nsg > RNIC_SEND_MAX_SGE ||
        (wr->flags & ~flags))
        return rnic_err(-EINVAL, "rnic_post_send: bad argument");
    ds = send_wr_ds(wr);
    if (!ds)
        return rnic_err(-EINVAL, "rnic_post_send: unknown opcode 0x%02x",
                        wr->opcode);
    if ((wr->opcode == MLX5_OPCODE_ATOMIC_CS ||
         wr->opcode == MLX5_OPCODE_ATOMIC_FA) &&
        (wr->nsg != 1 || wr->sg[0].length != 8 || (wr->raddr & 7)))
        return rnic_err(-EINVAL, "rnic_post_send: an atomic needs one "
                                 "8-byte result buffer and an 8-aligned "
                                 "target");
    if (wr->nsg && !takes_data(wr->opcode))
        return rnic_err(-EINVAL,
                        "rnic_post_send: opcode 0x%02x takes no "
                        "data segments",
                        wr->opcode);
    if (qp->dev->ops->post_send)
        return qp->dev->ops->post_send(qp, wr);
    return ring_post(qp, wr, ds);
}

int rnic_post_recv(struct rnic_qp *qp, const struct rnic_sge *sge, unsigned n,
                   uint64_t wr_id)
{
    if (!qp || !sge || n == 0 || n > MLX5_RECV_MAX_SGE)
        return rnic_err(-EINVAL, "rnic_post_recv: bad argument");
    return qp->dev->ops->post_recv(qp, sge, n, wr_id);
}

void *rnic_qp_rq_doorbell(struct rnic_qp *qp)
{
    if (!qp || !qp->dev->ops->qp_rq_doorbell)
        return NULL;
    return qp->dev->ops->qp_rq_doorbell(qp);
}

static int valid_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;

    return n >= 1 && n <= 63;
}

int rnic_persist(struct rnic_device *dev, enum rnic_obj_type type, void *obj,
                 const char *name)
{
    if (!dev || !obj || !valid_name(name) || type > RNIC_OBJ_QP)
        return rnic_err(-EINVAL, "rnic_persist: bad argument");
    if (!dev->ops->persist)
        return rnic_err(-EOPNOTSUPP,
                        "rnic_persist: device %s has no "
                        "persistence",
                        dev->name);
    return dev->ops->persist(dev, type, obj, name);
}

int rnic_attach(struct rnic_device *dev, enum rnic_obj_type type,
                const char *name, void **out)
{
    if (!dev || !out || !valid_name(name) || type > RNIC_OBJ_QP)
        return rnic_err(-EINVAL, "rnic_attach: bad argument");
    if (!dev->ops->attach)
        return rnic_err(-EOPNOTSUPP,
                        "rnic_attach: device %s has no "
                        "persistence",
                        dev->name);
    return dev->ops->attach(dev, type, name, out);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/chain/chain_persist.c - keeping chain objects alive across the death of
 * their process (rnic_persist) and re-attaching them in a new one
 * (rnic_attach), under names derived from a caller's prefix:
 *
 *   chain_buf   <name>.mem, <name>.mr
 *   chain_cq    <name>
 *   chain_q     <prefix>.scq, <prefix>.rcq (the CQs it owns), <prefix>.qp,
 *               <prefix>.ring (ring MR), <prefix>.sink (a chain_buf),
 *               <prefix>.rqdb (doorbell record MR, with a receive queue)
 *
 * Only the NIC's state survives: what the chain library counts on the host
 * (a CQ's expected count, a queue's producer and enable indexes, posted
 * receives) is not restored, so a re-attached queue is for chains that
 * need no more posting (recycled ones), for watching and for closing.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/chain/chain_int.h"

#define CHAIN_NAME_MAX 63 /* rnic_persist's limit */

/* name + suffix into out (CHAIN_NAME_MAX + 1 bytes); -ENAMETOOLONG. */
static int chain_name(char *out, const char *name, const char *suffix,
                      const char *fn)
{
    int n;

    if (!name || !*name)
        return chain_err(-EINVAL, "%s: empty name", fn);
    n = snprintf(out, CHAIN_NAME_MAX + 1, "%s%s", name, suffix);
    if (n < 0 || n > CHAIN_NAME_MAX)
        return chain_err(-ENAMETOOLONG,
                         "%s: '%s%s' is longer than %d "
                         "characters",
                         fn, name, suffix, CHAIN_NAME_MAX);
    return 0;
}

/* rnic_persist() of obj under name+suffix. */
static int persist_obj(struct rnic_device *dev, enum rnic_obj_type type,
                       void *obj, const char *name, const char *suffix,
                       const char *fn)
{
    char full[CHAIN_NAME_MAX + 1];
    int rc = chain_name(full, name, suffix, fn);

    if (rc < 0)
        return rc;
    rc = rnic_persist(dev, type, obj, full);
    if (rc < 0)
        return chain_err(rc, "%s: '%s': %s", fn, full, rnic_errmsg());
    return 0;
}

/* rnic_attach() of name+suffix. */
static int attach_obj(struct rnic_device *dev, enum rnic_obj_type type,
                      const char *name, const char *suffix, const char *fn,
                      void **out)
{
    char full[CHAIN_NAME_MAX + 1];
    int rc = chain_name(full, name, suffix, fn);

    if (rc < 0)
        return rc;
    rc = rnic_attach(dev, type, full, out);
    if (rc < 0)
        return chain_err(rc, "%s: '%s': %s", fn, full, rnic_errmsg());
    return 0;
}

/* ---- buffers and CQs -------------------------------------------------- */

int chain_buf_persist(struct chain_buf *b, const char *name)
{
    int rc;

    if (!b || !b->dev || !b->mr)
        return chain_err(-EINVAL, "chain_buf_persist: bad argument");
    rc = persist_obj(b->dev, RNIC_OBJ_MEM, b->ptr, name, ".mem",
                     "chain_buf_persist");
    if (rc < 0)
        return rc;
    return persist_obj(b->dev, RNIC_OBJ_MR, b->mr, name, ".mr",
                       "chain_buf_persist");
}

int chain_buf_attach(struct rnic_device *dev, const char *name,
                     struct chain_buf *out)
{
    void *mem, *mr;
    int rc;

    if (!dev || !out)
        return chain_err(-EINVAL, "chain_buf_attach: bad argument");
    memset(out, 0, sizeof(*out));
    rc = attach_obj(dev, RNIC_OBJ_MEM, name, ".mem", "chain_buf_attach", &mem);
    if (rc < 0)
        return rc;
    rc = attach_obj(dev, RNIC_OBJ_MR, name, ".mr", "chain_buf_attach", &mr);
    if (rc < 0)
        return rc;
    out->mr = mr;
    if (out->mr->addr != mem || out->mr->length > rnic_mem_len(dev, mem))
        return chain_err(-EINVAL,
                         "chain_buf_attach: '%s.mr' does not "
                         "cover '%s.mem' from its start",
                         name, name);
    out->dev = dev;
    out->ptr = mem;
    out->len = out->mr->length; /* what chain_buf_open registered */
    return 0;
}

int chain_cq_persist(struct chain_cq *cq, const char *name)
{
    if (!cq || !cq->cq || !cq->dev)
        return chain_err(-EINVAL, "chain_cq_persist: bad argument");
    return persist_obj(cq->dev, RNIC_OBJ_CQ, cq->cq, name, "",
                       "chain_cq_persist");
}

int chain_cq_attach(struct rnic_device *dev, const char *name,
                    struct chain_cq *out)
{
    void *cq;
    int rc;

    if (!dev || !out)
        return chain_err(-EINVAL, "chain_cq_attach: bad argument");
    memset(out, 0, sizeof(*out));
    rc = attach_obj(dev, RNIC_OBJ_CQ, name, "", "chain_cq_attach", &cq);
    if (rc < 0)
        return rc;
    out->cq = cq;
    out->num = rnic_cq_num(out->cq);
    out->dev = dev;
    return 0;
}

/* ---- queues ----------------------------------------------------------- */

/* A CQ the queue owns, as <prefix><suffix>. */
static int persist_own_cq(struct chain_cq *cq, const char *prefix,
                          const char *suffix)
{
    char name[CHAIN_NAME_MAX + 1];
    int rc = chain_name(name, prefix, suffix, "chain_q_persist");

    return rc < 0 ? rc : chain_cq_persist(cq, name);
}

int chain_q_persist(struct chain_q *q, const char *prefix)
{
    const char *fn = "chain_q_persist";
    char sink[CHAIN_NAME_MAX + 1];
    int rc;

    if (!q || !q->qp || !q->ring_mr)
        return chain_err(-EINVAL, "%s: bad argument", fn);
    /* Dependencies first: the CQs it owns, the QP, then MRs on it. */
    if (q->own_scq.cq) {
        rc = persist_own_cq(&q->own_scq, prefix, ".scq");
        if (rc < 0)
            return rc;
    }
    if (q->own_rcq.cq) {
        rc = persist_own_cq(&q->own_rcq, prefix, ".rcq");
        if (rc < 0)
            return rc;
    }
    rc = persist_obj(q->dev, RNIC_OBJ_QP, q->qp, prefix, ".qp", fn);
    if (rc < 0)
        return rc;
    rc = persist_obj(q->dev, RNIC_OBJ_MR, q->ring_mr, prefix, ".ring", fn);
    if (rc < 0)
        return rc;
    if (q->rq_db_mr) {
        rc = persist_obj(q->dev, RNIC_OBJ_MR, q->rq_db_mr, prefix, ".rqdb", fn);
        if (rc < 0)
            return rc;
    }
    rc = chain_name(sink, prefix, ".sink", fn);
    if (rc < 0)
        return rc;
    return chain_buf_persist(&q->sink_buf, sink);
}

/* Attaches the CQ the queue owned (given == NULL) or takes the caller's. */
static int attach_own_cq(struct chain_q *q, const char *prefix,
                         const char *suffix, struct chain_cq *given,
                         struct chain_cq *own, struct chain_cq **slot)
{
    char name[CHAIN_NAME_MAX + 1];
    int rc;

    if (given) {
        *slot = given;
        return 0;
    }
    rc = chain_name(name, prefix, suffix, "chain_q_attach");
    if (rc < 0)
        return rc;
    rc = chain_cq_attach(q->dev, name, own);
    if (rc < 0)
        return rc;
    *slot = own;
    return 0;
}

/* The MRs on the QP, checked against the QP they must belong to. */
static int attach_q_mrs(struct chain_q *q, const char *prefix)
{
    const char *fn = "chain_q_attach";
    void *mr;
    int rc;

    rc = attach_obj(q->dev, RNIC_OBJ_MR, prefix, ".ring", fn, &mr);
    if (rc < 0)
        return rc;
    q->ring_mr = mr;
    if (q->ring_mr->addr != q->sq.buf)
        return chain_err(-EINVAL, "%s: '%s.ring' is not QP %u's ring", fn,
                         prefix, q->qpn);
    if (!q->rq_size)
        return 0;
    rc = attach_obj(q->dev, RNIC_OBJ_MR, prefix, ".rqdb", fn, &mr);
    if (rc < 0)
        return rc;
    q->rq_db_mr = mr;
    if (q->rq_db_mr->addr != rnic_qp_rq_doorbell(q->qp))
        return chain_err(-EINVAL,
                         "%s: '%s.rqdb' is not QP %u's receive "
                         "doorbell record",
                         fn, prefix, q->qpn);
    q->rq_db = chain_loc_mr(q->rq_db_mr, q->rq_db_mr->addr, sizeof(uint32_t));
    return 0;
}

/* Everything but the argument checks and the clean-up of chain_q_attach. */
static int attach_q(struct chain_q *q, const char *prefix, uint32_t rq_size,
                    struct chain_cq *scq, struct chain_cq *rcq)
{
    char sink[CHAIN_NAME_MAX + 1];
    void *qp;
    int rc;

    rc = attach_own_cq(q, prefix, ".scq", scq, &q->own_scq, &q->scq);
    if (rc < 0)
        return rc;
    if (rq_size) {
        rc = attach_own_cq(q, prefix, ".rcq", rcq, &q->own_rcq, &q->rcq);
        if (rc < 0)
            return rc;
    }
    rc = attach_obj(q->dev, RNIC_OBJ_QP, prefix, ".qp", "chain_q_attach", &qp);
    if (rc < 0)
        return rc;
    q->qp = qp;
    q->qpn = rnic_qp_num(q->qp);
    rc = rnic_qp_sq(q->qp, &q->sq);
    if (rc < 0)
        return chain_err(rc, "chain_q_attach: %s", rnic_errmsg());
    if (!rnic_qp_rq_doorbell(q->qp) != !rq_size)
        return chain_err(-EINVAL,
                         "chain_q_attach: rq_size %u, but QP %u %s a "
                         "receive queue",
                         rq_size, q->qpn, rq_size ? "has no" : "has");
    q->rq_size = rq_size;
    rc = attach_q_mrs(q, prefix);
    if (rc < 0)
        return rc;
    rc = chain_name(sink, prefix, ".sink", "chain_q_attach");
    if (rc < 0)
        return rc;
    rc = chain_buf_attach(q->dev, sink, &q->sink_buf);
    if (rc < 0)
        return rc;
    q->sink = chain_buf_loc(&q->sink_buf, 0, (uint32_t)q->sink_buf.len);
    if (rq_size && !(q->recvs = calloc(rq_size, sizeof(*q->recvs))))
        return chain_err(-ENOMEM, "chain_q_attach: out of memory");
    return 0;
}

/*
 * On failure *out is zeroed and the objects attached so far are not
 * destroyed: they stay persistent in the daemon (a wrong rq_size must not
 * cost the chain), and rnic_close(dev) releases their handles.
 */
int chain_q_attach(struct rnic_device *dev, const char *prefix, unsigned flags,
                   uint32_t rq_size, struct chain_cq *scq, struct chain_cq *rcq,
                   struct chain_q *out)
{
    int rc;

    if (!dev || !out)
        return chain_err(-EINVAL, "chain_q_attach: bad argument");
    if (rq_size & (rq_size - 1))
        return chain_err(-EINVAL,
                         "chain_q_attach: rq_size %u is not a "
                         "power of two",
                         rq_size);
    memset(out, 0, sizeof(*out));
    out->dev = dev;
    out->flags = flags;
    rc = attach_q(out, prefix, rq_size, scq, rcq);
    if (rc < 0) {
        free(out->recvs);
        memset(out, 0, sizeof(*out));
    }
    return rc;
}

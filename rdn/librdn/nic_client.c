/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/nic_client.c - requests, answers and their verification on the
 * client's NIC (see nic_client.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "proto/byteorder.h"
#include "rdn/librdn/nic_client.h"

/*
 * librdn polls for an answer this long before sleeping on its CQ: ten times
 * the benches' CHAIN_POLL_SPIN_NS. An application that asks the NIC for a
 * GET wants the answer in microseconds, and a descheduled engine thread (an
 * unpinned rdn-nicd on a busy machine) can take tens of them; sleeping
 * early turns that into a futex wake-up on top (demo under load: p50 9 us
 * with 200 us of polling, 40 us with 20 us).
 */
#define OFL_SPIN_NS 200000

int ofl_client_open(struct rnic_device *dev, uint32_t depth, uint32_t slot_size,
                    struct ofl_client *c)
{
    struct chain_q_attr a;
    int rc;

    if (!dev || !c || depth == 0 || (depth & (depth - 1)) ||
        slot_size < rdn_resp_slot_size(0) || slot_size % 64)
        return -EINVAL;
    memset(c, 0, sizeof(*c));
    memset(&a, 0, sizeof(a));
    a.sq_wqebb = 2 * depth; /* one block per SEND */
    a.rq_wqe = depth;
    a.max_recv_sge = 1;
    a.cq_depth = 4 * depth;
    c->dev = dev;
    c->depth = depth;
    c->slot_size = slot_size;
    rc = chain_q_open(dev, &a, &c->q);
    if (rc == 0)
        rc = chain_buf_open(dev, (size_t)depth * slot_size,
                            RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE,
                            &c->slots);
    if (rc == 0)
        rc = chain_buf_open(dev, depth * sizeof(struct rdn_get_req),
                            RNIC_ACCESS_LOCAL_WRITE, &c->reqs);
    if (rc < 0)
        ofl_client_close(c);
    return rc;
}

int ofl_client_hello(const struct ofl_client *c, struct rdn_hello *h)
{
    struct rnic_addr a;
    int rc;

    if (!c || !h)
        return -EINVAL;
    rc = rnic_qp_addr(c->q.qp, &a);
    if (rc < 0)
        return rc;
    memset(h, 0, sizeof(*h));
    memcpy(h->qp_addr, a.bytes, sizeof(h->qp_addr));
    h->buf_addr = (uint64_t)(uintptr_t)c->slots.ptr;
    h->buf_rkey = c->slots.mr->rkey;
    h->slot_size = c->slot_size;
    h->depth = c->depth;
    return 0;
}

/* A receive for one answer: WRITE_IMM consumes it without scattering. */
static int post_answer_recv(struct ofl_client *c)
{
    struct rnic_sge s = chain_loc_sge(chain_loc_part(c->q.sink, 0, 8));

    return chain_post_recv(&c->q, &s, 1, 0);
}

int ofl_client_connect(struct ofl_client *c,
                       const uint8_t addr[RDN_QP_ADDR_LEN])
{
    struct rnic_addr a;
    int rc;

    if (!c || !addr)
        return -EINVAL;
    memcpy(a.bytes, addr, sizeof(a.bytes));
    rc = rnic_connect(c->q.qp, &a);
    for (uint32_t i = 0; i < c->depth && rc == 0; i++)
        rc = post_answer_recv(c);
    return rc;
}

/* Retires sends that completed; -EIO if one failed. */
static int reap_sends(struct ofl_client *c)
{
    struct rnic_wc wc[16];
    int n;

    while ((n = rnic_poll_cq(c->q.scq->cq, 16, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            uint32_t r = c->q.retired;

            if (wc[i].status != RNIC_WC_SUCCESS)
                return -EIO;
            /* wqe_counter: the low 16 bits of the SEND's index. */
            chain_q_retire(&c->q,
                           r + (uint16_t)(wc[i].wqe_counter - (uint16_t)r) + 1);
        }
    }
    return n < 0 ? n : 0;
}

/*
 * Only every (depth / 2)-th SEND asks for a completion, which retires it
 * and the ones before it: the ring (2 x depth blocks) keeps room, and the
 * NIC pushes and the client polls one send CQE per depth / 2 GETs, not one
 * per GET. A failed SEND completes with its error signaled or not.
 */
static unsigned send_flags(const struct ofl_client *c, uint64_t n)
{
    uint32_t every = c->depth > 1 ? c->depth / 2 : 1;

    return (n & (every - 1)) == every - 1 ? CHAIN_SIGNALED : 0;
}

void ofl_client_build_req(const struct ofl_client *c,
                          const struct rdn_geometry *g,
                          const struct rdn_keyhash *kh, uint64_t n,
                          struct rdn_get_req *r)
{
    be64 cmp = cpu_to_be64(rdn_slot_match(kh->fp));

    r->bucket_addr[0] = cpu_to_be64(rdn_bucket_addr(g, kh->bucket1));
    r->bucket_addr[1] = cpu_to_be64(rdn_bucket_addr(g, kh->bucket2));
    for (unsigned i = 0; i < RDN_REQ_CMP; i++)
        r->compare[i] = cmp;
    r->req_id = cpu_to_be32((uint32_t)n);
    rdn_get_req_set_lap(r, &c->plan, n);
}

int64_t ofl_client_send(struct ofl_client *c, const struct rdn_geometry *g,
                        const struct rdn_keyhash *kh)
{
    struct rdn_get_req r;

    if (!c || !g || !kh)
        return -EINVAL;
    ofl_client_build_req(c, g, kh, c->sent, &r);
    return ofl_client_send_req(c, &r);
}

int64_t ofl_client_send_req(struct ofl_client *c, const struct rdn_get_req *req)
{
    uint64_t n;
    uint8_t *slot;
    struct rdn_get_req *r;
    struct rnic_sge s;
    int rc;

    if (!c || !req)
        return -EINVAL;
    if (c->sent - c->answered >= c->depth)
        return -EBUSY;
    /* Completed sends are reaped only when the ring is full: a poll of
     * the send CQ per GET costs the client more than the rest of the send. */
    rc = chain_q_room(&c->q) ? 0 : reap_sends(c);
    if (rc == 0 && chain_q_room(&c->q) == 0)
        rc = -EBUSY; /* sends not acknowledged yet */
    if (rc < 0)
        return rc;
    n = c->sent;
    slot = ofl_client_slot(c, n);
    memset(slot, 0, RDN_RESP_ITEM_OFF + sizeof(struct rdn_item));
    ((struct rdn_item *)(slot + RDN_RESP_ITEM_OFF))->stamp = RDN_RESP_UNTOUCHED;
    r = (struct rdn_get_req *)(c->reqs.ptr + (n & (c->depth - 1)) * sizeof(*r));
    *r = *req;
    s = chain_loc_sge(
        chain_buf_loc(&c->reqs, (uint8_t *)r - c->reqs.ptr, sizeof(*r)));
    rc = chain_send(&c->q, &s, 1, send_flags(c, n), NULL);
    if (rc == 0)
        rc = chain_q_doorbell(&c->q);
    if (rc < 0)
        return rc;
    c->sent++;
    return (int64_t)n;
}

/* The next answer, if one is there: 1, 0, or a negative errno. */
static int take_answer(struct ofl_client *c, uint64_t *req)
{
    struct rnic_wc wc;
    int n = rnic_poll_cq(c->q.rcq->cq, 1, &wc);

    if (n <= 0)
        return n;
    if (wc.status != RNIC_WC_SUCCESS)
        return -EIO;
    if (!(wc.flags & RNIC_WC_WITH_IMM) || c->answered == c->sent ||
        wc.imm != (uint32_t)c->answered)
        return -EPROTO;
    *req = c->answered++;
    n = post_answer_recv(c);
    return n < 0 ? n : 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ofl_client_poll(struct ofl_client *c, uint64_t *req)
{
    if (!c || !req)
        return -EINVAL;
    /* A failed SEND needs no reaping to be seen: it fails the QP, which
     * flushes the answers' receives. */
    return take_answer(c, req);
}

int ofl_client_wait(struct ofl_client *c, int timeout_ms, uint64_t *req)
{
    uint64_t spin_end = now_ns() + OFL_SPIN_NS;

    if (!c || !req)
        return -EINVAL;
    for (unsigned spin = 0;; spin++) {
        int rc = ofl_client_poll(c, req);

        if (rc != 0)
            return rc;
        /* An answer takes microseconds: spin a while before sleeping. */
        if (spin % 64 || now_ns() < spin_end)
            continue;
        rc = rnic_cq_wait(c->q.rcq->cq, timeout_ms);
        if (rc <= 0)
            return rc < 0 ? rc : take_answer(c, req);
    }
}

enum ofl_verdict ofl_client_judge(const struct ofl_client *c, uint64_t n,
                                  const struct rdn_geometry *g, const char *key,
                                  size_t nkey, uint32_t now,
                                  const struct rdn_item **out)
{
    const uint8_t *slot = ofl_client_slot(c, n);
    const struct rdn_item *it = (const void *)(slot + RDN_RESP_ITEM_OFF);
    uint64_t gen, stamp;

    memcpy(&gen, slot + RDN_RESP_GEN_OFF, sizeof(gen));
    if (gen != g->gen_word)
        return OFL_STALE;
    stamp = it->stamp;
    if (stamp == RDN_RESP_UNTOUCHED)
        return OFL_MISS;
    if (stamp == 0 || it->nkey == 0 || it->nkey > RDN_KEY_MAX ||
        it->nbytes > g->item_size_max ||
        RDN_RESP_ITEM_OFF + rdn_item_total_len(it->nkey, it->nbytes) >
            c->slot_size)
        return OFL_TORN;
    if (*rdn_item_tail((struct rdn_item *)it) != stamp)
        return OFL_TORN;
    if (it->nkey != nkey ||
        memcmp(rdn_item_key((struct rdn_item *)it), key, nkey) != 0)
        return OFL_OTHER_KEY;
    if (it->exptime != 0 && it->exptime <= now + 1)
        return OFL_EXPIRY_DOUBT;
    *out = it;
    return OFL_HIT;
}

const char *ofl_verdict_name(enum ofl_verdict v)
{
    static const char *const names[] = {
        [OFL_HIT] = "hit",     [OFL_MISS] = "miss",
        [OFL_STALE] = "stale", [OFL_OTHER_KEY] = "other-key",
        [OFL_TORN] = "torn",   [OFL_EXPIRY_DOUBT] = "expiry-doubt",
    };

    return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

void ofl_client_close(struct ofl_client *c)
{
    if (!c || !c->dev)
        return;
    chain_q_close(&c->q);
    chain_buf_close(&c->slots);
    chain_buf_close(&c->reqs);
    memset(c, 0, sizeof(*c));
}

/*
 * rdn/offload_chain.h - one client's offloaded-GET pipeline on the server's
 * NIC: the chains that answer a GET with no server CPU (DESIGN.md section
 * 6, the RedN-Parallel construction), and their re-arming.
 *
 * Three queues per client:
 *   resp  the client-facing QP (managed send queue, receive queue; it
 *         serves no inbound RDMA, so a client reaches no server memory:
 *         it can only make the NIC run what the server posted). Its
 *         receives scatter each GET request (proto/rdn_wire.h) into the
 *         chain; its send queue holds, per GET, eight response WQEs (one per
 *         slot of both buckets, NOP unless a CAS turned it into a WRITE of
 *         the item) and one WRITE_IMM that writes the generation word and
 *         carries the request id.
 *   wa,wb the two workers (managed, cross-channel, connected to themselves),
 *         one per candidate bucket, so they run in parallel. Iteration k:
 *
 *   wa: WAIT(resp recv CQ >= k+1)  SEND_EN(wa: body k, head k+1)
 *       READ bucket 1 -> match words onto resp ctrl words 0..3,
 *                        descriptors onto their data segments
 *       CAS resp[0..3].ctrl (first FENCE: after the READ landed):
 *           compare = the request's match word, swap = a real WRITE
 *       WAIT(wb CQ: its enable of iteration k-1)
 *       for i in 0..3: WAIT(wa CQ: CAS i)  SEND_EN(resp up to resp[i])
 *   wb: WAIT(resp recv CQ >= k+1)  SEND_EN(wb: body k, head k+1)
 *       READ bucket 2 -> resp 4..7; CAS resp[4..7].ctrl
 *       WAIT(wb CQ: its CASes)  WAIT(wa CQ: its last enable)
 *       SEND_EN(resp: iteration k)
 *   resp: resp[0..7], WRITE_IMM(generation word -> slot header, request id)
 *
 * Doorbell-ordered steps per GET: the workers' self-enable after the
 * receive, then the response queue's enables. resp runs its WQEs one at a
 * time, so worker a releases each of its four as soon as that slot's CAS
 * completed: they run while its later CASes and worker b's are still in
 * flight, and only bucket 2's WQEs and the WRITE_IMM wait for all eight.
 * Every enable follows the CASes of all the WQEs it releases, and resp's
 * enables come in ring order (wa's of k after wb's of k-1, wb's after
 * wa's), so no limit ever releases an unresolved WQE. The
 * head of iteration k+1 is written when iteration k is armed, and the
 * receive of iteration k is posted only after that, so a SEND_EN never
 * releases WQEs that are not written yet. Response WQEs of iteration k
 * write into client slot k % depth.
 *
 * Threads: a pipeline is driven by one thread at a time (the caller
 * serialises ofl_pipe_* calls on one pipeline, and on pipelines that share
 * a done CQ or master queue).
 */
#ifndef RDN_OFFLOAD_CHAIN_H
#define RDN_OFFLOAD_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/rdn_wire.h"
#include "rdn/chain.h"

#define OFL_RESP_WQES  (2 * RDN_BUCKET_SLOTS) /* response WQEs per GET */
#define OFL_HEAD_WQEBB 2 /* a worker's head: WAIT + SEND_EN, a block each */

struct ofl_pipe_cfg {
    uint32_t iters;     /* iterations kept armed, a power of two */
    uint32_t depth;     /* client response slots, a power of two */
    uint64_t slot_addr; /* client response buffer */
    uint32_t slot_size;
    uint32_t slot_rkey;
    const struct rnic_mr *table_mr; /* the buckets (remote read, loopback) */
    struct chain_loc gen;           /* the 8-byte generation word (local) */
    struct chain_cq *done_cq;       /* send CQ of resp (may be shared) */
    struct chain_q *master;         /* cross-channel queue for the kick */
};

/* What the pipeline remembers of an armed iteration. */
struct ofl_iter {
    struct chain_wqe resp[OFL_RESP_WQES];
    uint32_t wa_end, wb_end, resp_end; /* ring indexes after it */
};

struct ofl_pipe {
    struct ofl_pipe_cfg cfg;
    struct chain_q wa, wb, resp;
    struct ofl_iter *iter; /* [k % iters] */
    uint64_t armed;        /* iterations armed (receives posted) */
    uint64_t received;     /* receive completions seen */
    uint64_t done;         /* iterations completed */
    uint64_t hits, misses; /* completed iterations with / without a WRITE */
    uint32_t wb_en_count;  /* wb's CQ count once its last resp enable ran */
    bool started;
    bool failed; /* a QP of the pipeline is in the error state */
};

/* Creates the three queues and posts the workers' first heads. */
int ofl_pipe_open(struct rnic_device *dev, const struct ofl_pipe_cfg *cfg,
                  struct ofl_pipe *p);
/* The client-facing QP's address (for the client to connect to). */
int ofl_pipe_addr(struct ofl_pipe *p, struct rnic_addr *out);
/* Connects the client-facing QP to the client's QP. */
int ofl_pipe_connect(struct ofl_pipe *p, const struct rnic_addr *client);
/*
 * Arms cfg.iters iterations and releases the workers' first heads through
 * cfg.master (a SEND_EN of each worker up to OFL_HEAD_WQEBB, the first
 * head at index 0 of a fresh ring).
 */
int ofl_pipe_start(struct ofl_pipe *p);
/*
 * Counts receive completions (requests that started on the NIC). Returns
 * how many new ones, or a negative errno (the pipeline then failed).
 */
int ofl_pipe_poll_recv(struct ofl_pipe *p);
/* Takes one completion of the done CQ that belongs to this pipeline. */
void ofl_pipe_complete(struct ofl_pipe *p, const struct rnic_wc *wc);
/* Arms iterations until cfg.iters are ahead of the completed ones.
 * Returns how many were armed, or a negative errno. */
int ofl_pipe_rearm(struct ofl_pipe *p);
/* True once any of the pipeline's QPs is in the error state. */
bool ofl_pipe_failed(struct ofl_pipe *p);
/* Requests received whose answer has not completed yet. */
static inline uint64_t ofl_pipe_inflight(const struct ofl_pipe *p)
{
    return p->received - p->done;
}
void ofl_pipe_close(struct ofl_pipe *p);

#endif /* RDN_OFFLOAD_CHAIN_H */

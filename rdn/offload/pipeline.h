/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/offload/pipeline.h - one client's offloaded-GET pipeline on the
 * server's NIC: a recycled chain that answers GETs with no server CPU,
 * forever (the paper's recycled loop applied to its hash GET;
 * docs/design.md, "One GET, WQE by WQE", lays both units out block by
 * block).
 *
 * Two queues per client, built once and never posted to again:
 *   resp  the client-facing QP (managed send queue, receive queue; it
 *         serves no inbound RDMA, so a client reaches no server memory:
 *         it can only make the NIC run what the server posted). Its
 *         receives scatter each GET request (proto/rdn_wire.h) into the
 *         chain; its send queue holds, per GET, four response WQEs (one
 *         per slot of both buckets, NOP unless a CAS turned it into a WRITE
 *         of the item), one WRITE_IMM that writes the generation word and
 *         carries the request id, and a NOP that pads the unit.
 *   w     the worker (managed, cross-channel, connected to itself). Unit i
 *         of its ring serves iteration k = lap * iters + i:
 *
 *     WAIT(resp recv CQ >= k+1)  SEND_EN(w: unit i, head of unit i+1)
 *     READ bucket 1 -> match words onto resp[0..1]'s ctrl words,
 *                      descriptors onto their data segments
 *     READ bucket 2 -> resp[2..3]
 *     CAS resp[0..3].ctrl (the first FENCEd: after both READs landed;
 *         none signaled): compare = the request's match word, swap = a
 *         real WRITE
 *     SEND_EN(resp: the whole response unit), FENCEd: after the CASes
 *   (cfg.seq, the paper's RedN-Seq for experiments: READ bucket 1, its
 *   CASes, a FENCEd release of its WQEs, and only then READ bucket 2, its
 *   CASes and the release of the rest.)
 *   (11 WQEBBs padded to 16; RedN-Seq's 12 likewise: OFL_W_UNIT)
 *
 * Recycling. Both rings hold exactly one lap of `iters` units, so unit i
 * runs again one lap later. Everything a request changes is rewritten by
 * the next request before it is used: the receive scatters bucket
 * addresses, compares and the request id; the READs rewrite the response
 * WQEs' ctrl words (back to NOP-shaped match words) and data segments.
 * The indexes move on without any WQE of the chain: the receive of
 * request k scatters the request's lap words (ofl_pipe_plan(), which the
 * client gets in its welcome) into the receive doorbell record, k + 1 +
 * iters, which re-posts the unit's receive (its scatter list never
 * changes) for request k + iters, and into the head's WAIT count, its
 * SEND_EN index and the releases' indexes of unit (k - depth) % iters,
 * for its iteration k - depth + iters. That unit ran to its end before the
 * client could send request k (it needs answer k - depth to reuse the
 * slot), and the NIC fetches it again only after request
 * k - depth + iters - 1 arrived, which follows request k as
 * depth <= iters / 2: so no WQE is rewritten while the NIC may fetch it.
 * A client must keep at most `depth` GETs in flight (it has depth
 * response slots); one that sends more, or other lap words, only garbles
 * or stalls its own answers. Response slot k % depth: iters is a multiple
 * of depth.
 *
 * The NIC ignores the wqe_index of the ctrl words the CASes write (as
 * softnic does; ConnectX checks it unless told not to, see the paper's
 * firmware note): they are built for lap 0.
 *
 * Threads: a pipeline is driven by one thread at a time (the caller
 * serialises ofl_pipe_* calls on one pipeline, and on pipelines that share
 * a done CQ or master queue).
 */
#ifndef RDN_OFFLOAD_PIPELINE_H
#define RDN_OFFLOAD_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/rdn_wire.h"
#include "rdn/chain/chain.h"

#define OFL_RESP_WQES (2 * RDN_BUCKET_SLOTS) /* response WQEs per GET */
#define OFL_W_UNIT    16 /* WQEBBs of a worker unit, either search */
#define OFL_RESP_UNIT 8  /* WQEBBs of a response unit */
/* Units per lap at most: the worker's ring is the larger one, and 32768
 * WQEBBs is ConnectX-5's and softnic's limit. */
#define OFL_MAX_ITERS (32768 / OFL_W_UNIT)

struct ofl_pipe_cfg {
    uint32_t iters;     /* units per lap, a power of two, 4..OFL_MAX_ITERS */
    uint32_t depth;     /* client response slots, a power of two <= iters/2 */
    uint64_t slot_addr; /* client response buffer */
    uint32_t slot_size;
    uint32_t slot_rkey;
    const struct rnic_mr *table_mr; /* the buckets (remote read, loopback) */
    struct chain_loc gen;           /* the 8-byte generation word (local) */
    struct chain_cq *done_cq;       /* send CQ of resp (may be shared) */
    struct chain_q *master;         /* cross-channel queue for the kick */
    bool seq; /* bucket 2 READ only after bucket 1's CASes (RedN-Seq) */
};

struct ofl_pipe {
    struct ofl_pipe_cfg cfg;
    struct chain_q w, resp;
    uint64_t received;     /* receive completions seen */
    uint64_t done;         /* iterations completed */
    uint64_t hits, misses; /* completed iterations with / without a WRITE */
    bool started;
    bool failed; /* a QP of the pipeline is in the error state */
};

/*
 * Creates the queues on dev and builds the whole lap; the receives are
 * posted, nothing runs yet. Built in place: the queues point into *p,
 * which must not move until ofl_pipe_close(). Returns 0, -EINVAL (a bad
 * cfg), -EPROTO (the lap does not fit its fixed unit sizes: a build bug),
 * or the chain_* error; ofl_errmsg() says which step failed and why.
 * Nothing is left open on failure. cfg's objects (table MR, generation word,
 * done CQ, master queue) stay the caller's and must outlive the pipeline.
 */
int ofl_pipe_open(struct rnic_device *dev, const struct ofl_pipe_cfg *cfg,
                  struct ofl_pipe *p);
/*
 * Writes the plan of the lap words that a client of a pipeline opened
 * with cfg puts in its requests (see above) into *out; unused words are
 * 0 + 0 * n. cfg must be one ofl_pipe_open() accepts.
 */
void ofl_pipe_plan(const struct ofl_pipe_cfg *cfg, struct rdn_lap_plan *out);
/*
 * Makes the client-facing QP speak from the local address of the client's
 * handshake socket fd (rnic_qp_set_gid_sock), before ofl_pipe_addr() and
 * ofl_pipe_connect(). Returns 1 (set), 0 (the QP keeps the device's
 * default address) or -errno.
 */
int ofl_pipe_source(struct ofl_pipe *p, int fd);
/* Writes the client-facing QP's address (for the client to connect to)
 * into *out. Returns 0 or -EINVAL. */
int ofl_pipe_addr(struct ofl_pipe *p, struct rnic_addr *out);
/* Connects the client-facing QP to the client's QP. Returns 0 or
 * rnic_connect()'s error. */
int ofl_pipe_connect(struct ofl_pipe *p, const struct rnic_addr *client);
/*
 * Releases the worker's first head through cfg.master (and waits up to 5 s
 * for that SEND_EN): the chain runs from then on. Returns 0, -EINVAL
 * (started already), -EIO (the SEND_EN failed), -ETIMEDOUT; the pipeline
 * is then failed.
 */
int ofl_pipe_start(struct ofl_pipe *p);
/*
 * Counts receive completions (requests that started on the NIC). Returns
 * how many new ones, or a negative errno (the pipeline then failed).
 */
int ofl_pipe_poll_recv(struct ofl_pipe *p);
/*
 * Counts one completion of the done CQ that belongs to this pipeline (the
 * caller matches wc->qpn): an answered GET, a hit or a miss. An error
 * completion marks the pipeline failed.
 */
void ofl_pipe_complete(struct ofl_pipe *p, const struct rnic_wc *wc);
/* Returns true once any of the pipeline's QPs is in the error state. */
bool ofl_pipe_failed(struct ofl_pipe *p);
/* Returns the requests received whose answer has not completed yet. */
static inline uint64_t ofl_pipe_inflight(const struct ofl_pipe *p)
{
    return p->received - p->done;
}
/*
 * Persistence: marks every object of an open pipeline persistent under
 * prefix (1..40 chars), so it keeps serving while no process owns it;
 * ofl_pipe_attach() takes such a pipeline over in a new process (cfg as
 * when it was opened; cfg.done_cq attached by the caller), already
 * started. Both return 0, -EINVAL (bad prefix or cfg), or the chain_*
 * persistence error (-ENOENT: no such pipeline, -EEXIST: the prefix is
 * taken); a failed attach leaves *p closed.
 */
int ofl_pipe_persist(struct ofl_pipe *p, const char *prefix);
int ofl_pipe_attach(struct rnic_device *dev, const struct ofl_pipe_cfg *cfg,
                    const char *prefix, struct ofl_pipe *p);
/*
 * Frees whatever parts of the persistent pipeline called prefix exist
 * (iters as it was opened with; done_cq attached, or zeroed if it is gone).
 * Returns how many parts it found (0: no such pipeline).
 */
int ofl_pipe_release(struct rnic_device *dev, const char *prefix,
                     uint32_t iters, struct chain_cq *done_cq);
/*
 * Destroys the pipeline's queues (persistent ones too: they
 * are gone from the domain) and zeroes *p; no-op if zeroed. The client
 * sees its QP fail.
 */
void ofl_pipe_close(struct ofl_pipe *p);

/*
 * Describes the calling thread's last failure of an ofl_ function (each one
 * that returns -errno sets it; it wraps the chain or NIC message that
 * caused it). Returns "no error" before any failure. The string is
 * thread-local: valid until the thread's next failing ofl_ call.
 */
const char *ofl_errmsg(void);

#endif /* RDN_OFFLOAD_PIPELINE_H */

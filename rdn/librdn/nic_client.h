/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/nic_client.h - the NIC half of an RDMA client of the offloaded
 * GET: its QP, its response slots, building and sending requests
 * (proto/rdn_wire.h), receiving the answers and judging them.
 *
 * No TCP here: librdn (rdn/librdn/client.h) does the handshake and the
 * fallback; tests and benchmarks drive this part directly.
 *
 * Request n (from 0) uses slot n % depth; at most depth requests are in
 * flight; answers complete in request order. A slot's contents stay valid
 * until request n + depth is sent.
 *
 * Threads: one thread at a time per client.
 */
#ifndef RDN_LIBRDN_NIC_CLIENT_H
#define RDN_LIBRDN_NIC_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/rdn_wire.h"
#include "rdn/chain/chain.h"

struct ofl_client {
    struct rnic_device *dev;
    struct chain_q q;       /* sends requests, receives answers */
    struct chain_buf slots; /* depth * slot_size, remote write */
    struct chain_buf reqs;  /* depth request buffers */
    uint32_t depth, slot_size;
    struct rdn_lap_plan plan; /* the welcome's: each request's lap words */
    uint64_t sent;            /* requests sent */
    uint64_t answered;        /* answers received */
};

/*
 * Creates the QP on dev and registers depth (a power of two) response
 * slots of slot_size bytes (a multiple of 64, >= rdn_resp_slot_size() of
 * the server's item size) for remote write. Returns 0, -EINVAL, or the
 * chain_* error (message in chain_errmsg()); nothing is left open on
 * failure. The caller owns *c (dev stays the caller's) and closes it with
 * ofl_client_close().
 */
int ofl_client_open(struct rnic_device *dev, uint32_t depth, uint32_t slot_size,
                    struct ofl_client *c);
/*
 * Fills the handshake's hello with the QP address and the slots (flags
 * 0). Returns 0 or rnic_qp_addr()'s error.
 */
int ofl_client_hello(const struct ofl_client *c, struct rdn_hello *h);
/*
 * Connects to the server's client-facing QP (the WELCOME's address) and
 * posts one receive per slot for the answers' WRITE_IMMs. Set c->depth to
 * the depth the server granted and c->plan to the welcome's plan first.
 * Returns 0 or the rnic_connect() / chain_post_recv() error.
 */
int ofl_client_connect(struct ofl_client *c,
                       const uint8_t addr[RDN_QP_ADDR_LEN]);

/*
 * Sends the request for a key (kh from rdn_keyhash at g->hashpower) after
 * clearing its slot. Returns the request number (>= 0), -EBUSY when depth
 * requests are in flight, or another negative errno.
 */
int64_t ofl_client_send(struct ofl_client *c, const struct rdn_geometry *g,
                        const struct rdn_keyhash *kh);
/*
 * The two halves of ofl_client_send(), for tests that send what no client
 * would: ofl_client_build_req() writes request n for a key into *r;
 * ofl_client_send_req() clears the next request's slot and sends *r as it
 * is (its req_id and lap words should be for request c->sent). Returns as
 * ofl_client_send().
 */
void ofl_client_build_req(const struct ofl_client *c,
                          const struct rdn_geometry *g,
                          const struct rdn_keyhash *kh, uint64_t n,
                          struct rdn_get_req *r);
int64_t ofl_client_send_req(struct ofl_client *c,
                            const struct rdn_get_req *req);
/*
 * Waits up to timeout_ms for the next answer. Returns 1 with *req set to
 * its request number, 0 on timeout, or a negative errno (-EIO: the QP
 * failed; -EPROTO: an answer that is not the next one).
 */
int ofl_client_wait(struct ofl_client *c, int timeout_ms, uint64_t *req);
/* The next answer if one is there, without waiting: as ofl_client_wait()
 * with 0 for "none yet". */
int ofl_client_poll(struct ofl_client *c, uint64_t *req);

enum ofl_verdict {
    OFL_HIT,          /* the key's item, verified */
    OFL_MISS,         /* no slot matched */
    OFL_STALE,        /* the generation word differs: refresh */
    OFL_OTHER_KEY,    /* a fingerprint collision: another key's item */
    OFL_TORN,         /* stamps or lengths inconsistent: retry */
    OFL_EXPIRY_DOUBT, /* expires within a second of now: ask the server */
};

/*
 * Judges the answer to request n (answered: ofl_client_wait() returned
 * it) for key: generation, both stamps, the lengths, the key, and the
 * expiry time against now (the server's clock as the caller estimates
 * it). Returns the verdict; on OFL_HIT *it points into the slot, valid
 * until request n + depth is sent.
 */
enum ofl_verdict ofl_client_judge(const struct ofl_client *c, uint64_t n,
                                  const struct rdn_geometry *g, const char *key,
                                  size_t nkey, uint32_t now,
                                  const struct rdn_item **it);
/* Returns a static name for a verdict ("?" for others). */
const char *ofl_verdict_name(enum ofl_verdict v);

/* Returns the response slot of request n. */
static inline uint8_t *ofl_client_slot(const struct ofl_client *c, uint64_t n)
{
    return c->slots.ptr + (n & (c->depth - 1)) * (size_t)c->slot_size;
}

/* Destroys the QP and frees the slots; no-op if zeroed or closed. */
void ofl_client_close(struct ofl_client *c);

#endif /* RDN_LIBRDN_NIC_CLIENT_H */

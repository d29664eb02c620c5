/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/timing.h - softnic's timing presets.
 *
 * `fast` adds no delay. `cx5` delays every step in real time as a
 * ConnectX-5 on 100 Gb/s InfiniBand would; its parameters are calibrated
 * once against the RedN paper's Figure 7 (rdn/softnic/timing.c has the
 * table and the fit) and never tuned to end-to-end results. Any parameter
 * can be overridden with RDN_SOFTNIC_TIMING="name=value,..." (nanoseconds,
 * byte_ps in picoseconds per byte) to model another NIC.
 */
#ifndef RDN_SOFTNIC_TIMING_H
#define RDN_SOFTNIC_TIMING_H

#include <stdint.h>

struct sn_timing {
    char name[16];
    int timed;        /* 0: fast (all below ignored) */
    uint32_t db_ns;   /* doorbell write until the NIC starts the fetch */
    uint32_t dma_ns;  /* one DMA read of host memory by the NIC */
    uint32_t wqe_ns;  /* processing of one WQE (not WAIT) */
    uint32_t wait_ns; /* processing of a WAIT once its CQ count is met */
    uint32_t wire_ns; /* one-way latency NIC to NIC */
    uint32_t byte_ps; /* serialization per byte (80 ps = 100 Gb/s) */
    uint32_t hdr_b;   /* header bytes of every packet on the wire */
    uint32_t cqe_ns;  /* completion inside the NIC until host-visible */
    /* NIC parallelism and rates (0: unbounded). */
    uint32_t pu_n;      /* processing units shared by the send queues */
    uint32_t atomic_ns; /* the atomic unit's time per CAS/FADD served */
    uint32_t rd_msg_ns; /* port time per READ request sent */
    uint32_t wr_msg_ns; /* port time per WRITE/SEND message sent */
    /* One-way latency beyond the NIC (switches, distance) between two
     * NICs; 0 = back to back as in the calibration. */
    uint32_t net_ns;
};

/* Processing units a device can model at most. */
#define SN_TIMING_MAX_PU 64

/*
 * Fills *out with preset name ("fast" or "cx5"), then applies overrides
 * (a "k=v,k=v" string, may be NULL). Returns 0 or -EINVAL with *why set.
 */
int sn_timing_get(const char *name, const char *overrides,
                  struct sn_timing *out, const char **why);

/* A modelled resource used one use at a time (a port, the atomic unit). */
struct sn_timing_res {
    uint64_t free_ns; /* when the last use claimed ends */
    uint64_t want_ns; /* the latest time a use was claimed for */
};

/*
 * Claims r for `busy` ns from `at` on: returns when the use starts,
 * max(at, r->free_ns), and moves free_ns to that start + busy. Uses are
 * claimed in the engine's real-time order, which differs from model time
 * when the engine fell behind (a busy host): a use wanted before a use
 * claimed earlier was wanted goes at its own time instead of queueing
 * behind that later one (later claims still queue behind its end), so the
 * engine's lateness never turns into model delay. Lock-free: engine
 * threads may share a device.
 */
uint64_t sn_timing_claim(struct sn_timing_res *r, uint64_t at, uint64_t busy);
/*
 * The same over a pool of n identical units (n <= SN_TIMING_MAX_PU, 0 =
 * unbounded: returns at and claims nothing): the unit free first.
 */
uint64_t sn_timing_claim_pool(uint64_t *free_ns, uint32_t n, uint64_t at,
                              uint64_t busy);

/* Serialization time of a packet carrying payload bytes. */
static inline uint64_t sn_timing_ser_ns(const struct sn_timing *tm,
                                        uint64_t payload)
{
    return ((payload + tm->hdr_b) * tm->byte_ps + 999) / 1000;
}

#endif /* RDN_SOFTNIC_TIMING_H */

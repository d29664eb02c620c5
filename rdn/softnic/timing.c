/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/timing.c - the timing presets and their calibration.
 *
 * What each cx5 parameter models (all delays are applied in real time; an
 * item waiting for its time never blocks other QPs):
 *
 *   db_ns   435  doorbell MMIO write until the NIC starts fetching the WQE
 *                (unmanaged queue that was idle).
 *   cqe_ns  435  a completion inside the NIC until the host can poll it
 *                (CQE DMA write). Only db_ns + cqe_ns is identifiable from
 *                Figure 7; it is split evenly, and every CPU-to-CPU path
 *                pays exactly one of each, so the split changes nothing
 *                the benchmarks measure.
 *   dma_ns  170  one DMA read of host memory: the READ responder reading
 *                the data, the atomic responder reading the target, the
 *                WQE fetch after a doorbell or after SEND_EN (managed
 *                queues are never prefetched).
 *   wqe_ns  170  processing of one WQE by the send queue (pipelined: the
 *                next WQE starts when this one ends).
 *   wait_ns  20  processing of a WAIT once its completion count is met.
 *   wire_ns 190  one-way latency NIC to NIC (cable, switchless).
 *   byte_ps  80  serialization per byte: 100 Gb/s.
 *   hdr_b    40  header bytes per packet (IB LRH+BTH+RETH/AETH+CRCs).
 *
 * The fit (done once, by hand, against the paper's Figure 7 and never
 * against end-to-end results). Model formulas, ser(n) = (n+40)*0.08 ns:
 *   first NOP        = db + dma + wqe + cqe                       = 1.21 us
 *   +1 NOP, WQ order = wqe                                        = 0.17 us
 *   +1 NOP, completion order (WAIT before each NOP) = wait + wqe  = 0.19 us
 *   +1 NOP, doorbell order (WAIT + SEND_EN of a managed queue)
 *                    = wait + wqe (SEND_EN) + dma (fetch) + wqe   = 0.54 us
 *   WRITE 64 B       = first NOP + 2 wire + ser(64) + ser(0)      = 1.60 us
 *   READ 64 B        = first NOP + 2 wire + ser(0) + dma + ser(64) = 1.80 us
 *   CAS              = first NOP + 2 wire + ser(0) + dma + ser(8)  = 1.73 us
 * wqe = 0.17 and wait = 0.02 follow exactly. dma appears in three
 * equations: READ - WRITE gives 0.20, CAS - WRITE 0.13 and the doorbell
 * step 0.18; the least-squares value is their mean, 0.17. Then db + cqe =
 * 1.21 - 0.17 - 0.17 = 0.87, and WRITE gives wire = (1.60 - 1.21 - 0.012)/2
 * = 0.19. Predicted vs paper: first NOP 1.21/1.21, WQ 0.17/0.17,
 * completion 0.19/0.19, doorbell 0.53/0.54 (-2%), WRITE 1.60/1.60,
 * READ 1.77/1.80 (-1.5%), CAS 1.77/1.73 (+2.2%).
 *
 * Parallelism and rates. A NIC has a bounded number of processing units
 * and one atomic unit, and its port has a message rate; without them,
 * spreading a chain over more queues would be free. The paper measures
 * per-port throughput with many QPs in flight (its verb throughput
 * microbenchmark, next to Figure 7): READ 65 M/s, WRITE 63 M/s, CAS and
 * FADD 8.4 M/s. In the model:
 *   pu_n       11  processing units, shared by every send queue of the
 *                  device: a WQE other than WAIT holds one for wqe_ns.
 *                  65 M READs/s at wqe = 0.17 us each need 65 M/s *
 *                  0.17 us = 11.05 units; 11 give 64.7 M/s (-0.5%).
 *   rd_msg_ns  15  port time per READ request: 1 / 65 M/s = 15.4 ns.
 *   wr_msg_ns  16  port time per WRITE / SEND message: 1 / 63 M/s = 15.9.
 *                  A packet holds the port for max(serialization, its
 *                  message time); responses and ACKs only serialize.
 *   atomic_ns 119  the atomic unit of the responding NIC serves one CAS
 *                  or FADD per 1 / 8.4 M/s = 119 ns (a use starts when
 *                  both the request and the unit are there; the target's
 *                  DMA read follows). Eleven units at 0.17 us could issue
 *                  65 M atomics/s: the atomic unit is what holds them to
 *                  8.4 M/s.
 * None of the three changes a Figure 7 chain (one queue, one WQE at a
 * time), so the fit above stands as it was.
 *
 *   net_ns      0  one-way latency beyond the NIC between two NICs
 *                  (switch hops, distance): Figure 7 is back to back, so
 *                  0 is its fit; a deployment question, swept by the
 *                  bench (scripts/bench --net-sweep). Loopback traffic (a
 *                  QP connected to a QP of its own NIC) never pays it.
 *
 * Every delay is an absolute ready time derived from the previous step's
 * model time (doorbell timestamp, WQE end, packet arrival), never "now +
 * delay", so the engine's own CPU time is absorbed as long as it is
 * shorter than the modelled step. Check (2 cores, engine pinned):
 *   RDN_SOFTNIC_CPUS=1 taskset -c 0 bench/rdn-bench micro --model cx5
 * gives steps of 0.170 / 0.190 / 0.530 us, as predicted; single verbs and
 * the first NOP come out 0.06-0.12 us above the model: the host's own
 * doorbell and polling time, which the paper's numbers contain in db + cqe
 * and ours add on top (measured from the doorbell, chains pre-posted).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "proto/barrier.h"
#include "rdn/softnic/timing.h"

static const struct sn_timing sn_presets[] = {
    {.name = "fast", .timed = 0},
    {
        .name = "cx5",
        .timed = 1,
        .db_ns = 435,
        .dma_ns = 170,
        .wqe_ns = 170,
        .wait_ns = 20,
        .wire_ns = 190,
        .byte_ps = 80,
        .hdr_b = 40,
        .cqe_ns = 435,
        .pu_n = 11,
        .atomic_ns = 119,
        .rd_msg_ns = 15,
        .wr_msg_ns = 16,
        .net_ns = 0,
    },
};

static uint32_t *sn_timing_field(struct sn_timing *t, const char *k, size_t n)
{
    static const struct {
        const char *name;
        size_t off;
    } f[] = {
        {"db_ns", offsetof(struct sn_timing, db_ns)},
        {"dma_ns", offsetof(struct sn_timing, dma_ns)},
        {"wqe_ns", offsetof(struct sn_timing, wqe_ns)},
        {"wait_ns", offsetof(struct sn_timing, wait_ns)},
        {"wire_ns", offsetof(struct sn_timing, wire_ns)},
        {"byte_ps", offsetof(struct sn_timing, byte_ps)},
        {"hdr_b", offsetof(struct sn_timing, hdr_b)},
        {"cqe_ns", offsetof(struct sn_timing, cqe_ns)},
        {"pu_n", offsetof(struct sn_timing, pu_n)},
        {"atomic_ns", offsetof(struct sn_timing, atomic_ns)},
        {"rd_msg_ns", offsetof(struct sn_timing, rd_msg_ns)},
        {"wr_msg_ns", offsetof(struct sn_timing, wr_msg_ns)},
        {"net_ns", offsetof(struct sn_timing, net_ns)},
    };

    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        if (strlen(f[i].name) == n && !strncmp(f[i].name, k, n))
            return (uint32_t *)((char *)t + f[i].off);
    return NULL;
}

int sn_timing_get(const char *name, const char *overrides,
                  struct sn_timing *out, const char **why)
{
    const char *p = overrides;
    size_t i;

    for (i = 0; i < sizeof(sn_presets) / sizeof(sn_presets[0]); i++)
        if (!strcmp(sn_presets[i].name, name))
            break;
    if (i == sizeof(sn_presets) / sizeof(sn_presets[0])) {
        *why = "unknown timing model (use fast or cx5)";
        return -EINVAL;
    }
    *out = sn_presets[i];
    while (p && *p) {
        const char *eq = strchr(p, '='), *end = strchr(p, ',');
        uint32_t *field = eq ? sn_timing_field(out, p, (size_t)(eq - p)) : NULL;
        char *num_end;
        unsigned long v;

        if (!field) {
            *why = "RDN_SOFTNIC_TIMING: unknown parameter";
            return -EINVAL;
        }
        v = strtoul(eq + 1, &num_end, 10);
        if (num_end == eq + 1 || (*num_end && *num_end != ',') ||
            v > 100000000ul) {
            *why = "RDN_SOFTNIC_TIMING: bad value";
            return -EINVAL;
        }
        if (field == &out->pu_n && v > SN_TIMING_MAX_PU) {
            *why = "RDN_SOFTNIC_TIMING: pu_n above SN_TIMING_MAX_PU";
            return -EINVAL;
        }
        *field = (uint32_t)v;
        if (!out->timed) { /* overrides turn fast into a timed custom NIC */
            out->timed = 1;
            strcpy(out->name, "custom");
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

uint64_t sn_timing_claim(struct sn_timing_res *r, uint64_t at, uint64_t busy)
{
    uint64_t cur = load_relaxed(&r->free_ns), start;
    uint64_t last = load_relaxed(&r->want_ns);

    if (at < last) { /* claimed late: it goes before the later use */
        while (cur < at + busy && !cas_relaxed(&r->free_ns, &cur, at + busy))
            ;
        return at;
    }
    while (last < at && !cas_relaxed(&r->want_ns, &last, at))
        ;
    do {
        start = at > cur ? at : cur;
    } while (!cas_relaxed(&r->free_ns, &cur, start + busy));
    return start;
}

uint64_t sn_timing_claim_pool(uint64_t *free_ns, uint32_t n, uint64_t at,
                              uint64_t busy)
{
    for (;;) {
        uint32_t best = 0;
        uint64_t v, start;

        if (n == 0)
            return at;
        v = load_relaxed(&free_ns[0]);
        for (uint32_t i = 1; i < n && v > at; i++) {
            uint64_t w = load_relaxed(&free_ns[i]);

            if (w < v) {
                v = w;
                best = i;
            }
        }
        start = at > v ? at : v;
        if (cas_relaxed(&free_ns[best], &v, start + busy))
            return start;
    }
}

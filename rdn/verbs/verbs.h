/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/verbs/verbs.h - the "verbs" provider of rdn/rnic/rnic.h: any RDMA NIC
 * through libibverbs (rdma-core), e.g. Linux Soft-RoCE (rxe) or a ConnectX
 * used as a plain verbs device.
 *
 * Devices are named "verbs:<libibverbs device>" ("verbs:rxe0"). What it
 * does: a protection domain per device, memory from mmap registered with
 * the rnic access flags, CQs with a completion channel (rnic_cq_wait), RC
 * QPs on port 1 connected through the rnic_addr layout below, and posting
 * through rnic_post_send() (ibv_post_send: SEND, SEND_IMM, WRITE,
 * WRITE_IMM, READ, CAS, FADD with gather/scatter lists) and
 * rnic_post_recv(). What plain verbs cannot do is refused with
 * -EOPNOTSUPP and a message naming the provider that can: cross-channel
 * and managed queues, WAIT / SEND_EN / RECV_EN / NOP, raw send rings
 * (rnic_qp_sq), receive doorbell records, overrun-ignoring CQs and
 * persistence.
 *
 * The GID used is the first RoCEv2 GID of port 1 holding an IPv4-mapped
 * address, else the first RoCEv2 one, else index 0 (InfiniBand);
 * $RDN_VERBS_GID_INDEX picks one explicitly.
 *
 * Address (struct rnic_addr, 32 bytes, shared with softnic's RoCE path):
 *   0  gid[16]     the QP's GID (IPv4 as ::ffff:a.b.c.d)
 *   16 qpn         big-endian, low 24 bits
 *   20 psn         big-endian, low 24 bits
 *   24 udp_port    big-endian; 4791 (0 also means 4791)
 *   26 mtu         enum ibv_mtu (1 = 256 .. 5 = 4096)
 *   27 flags       bit 0: gid valid
 *   28 priv[4]     0 (softnic keeps its engine id there)
 *
 * Threads: as rnic.h; one device's objects may be created from several
 * threads (a mutex guards its lists).
 */
#ifndef RDN_VERBS_VERBS_H
#define RDN_VERBS_VERBS_H

#include <infiniband/verbs.h>

#include "rdn/rnic/provider.h"

extern const struct rnic_provider verbs_provider;

/*
 * For the mlx5 provider, which is a verbs device whose CQs and QPs are
 * DevX objects: memory, MRs, the PD, the GID and the address format are
 * the verbs device's.
 */

/*
 * Opens ibname (without "verbs:") with a context from open_fn (NULL:
 * ibv_open_device; mlx5: mlx5dv_open_device with DevX). The device is a
 * complete verbs device (rnic_close() closes it). 0 or -errno.
 */
int verbs_open_with(const char *ibname,
                    struct ibv_context *(*open_fn)(struct ibv_device *),
                    struct rnic_device **out);
struct ibv_context *verbs_context(struct rnic_device *dev);
struct ibv_pd *verbs_pd(struct rnic_device *dev);
/* The GID rnic_addr carries, its index, and the port's active MTU. */
void verbs_port(struct rnic_device *dev, union ibv_gid *gid, int *gid_index,
                enum ibv_mtu *mtu);

/* The remote end an rnic_addr names, checked (see verbs_parse_addr). */
struct verbs_peer {
    union ibv_gid gid;
    uint32_t qpn, psn;
    enum ibv_mtu mtu;
};

/* Fills *out (the layout above) for QP qpn of dev with initial PSN psn. */
void verbs_fill_addr(struct rnic_device *dev, uint32_t qpn, uint32_t psn,
                     struct rnic_addr *out);
/*
 * Reads a peer's address: -EHOSTUNREACH without a GID, -EOPNOTSUPP for a
 * UDP port other than 4791, -EINVAL for a bad MTU (rnic_errmsg says).
 */
int verbs_parse_addr(struct rnic_device *dev, const struct rnic_addr *a,
                     struct verbs_peer *out);
/* A random initial PSN (24 bits). */
uint32_t verbs_new_psn(void);

#endif /* RDN_VERBS_VERBS_H */

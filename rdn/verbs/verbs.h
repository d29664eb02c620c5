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

#include "rdn/rnic/provider.h"

extern const struct rnic_provider verbs_provider;

#endif /* RDN_VERBS_VERBS_H */

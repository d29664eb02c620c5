/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/mlx5/mlx5_prm.h - the pure part of the mlx5 provider: DevX command
 * layouts (the PRM's big-endian bit fields), the QP and CQ contexts RedN
 * needs, doorbell and index arithmetic, CQE decoding and the capability
 * verdicts rdn-hwcheck prints. Nothing here touches a device, so all of it
 * is unit tested (t/test_mlx5_prm.c) on machines without a ConnectX.
 *
 * Field offsets are the PRM's: bit 0 is the most significant bit of the
 * first big-endian 32-bit word of a command. They were taken from the
 * public mlx5_ifc layouts (rdma-core providers/mlx5, Linux, DPDK) and are
 * written here as offset/width pairs, checked by the tests against the
 * layouts' own reserved_at_<offset> landmarks.
 */
#ifndef RDN_MLX5_MLX5_PRM_H
#define RDN_MLX5_MLX5_PRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/byteorder.h"
#include "rdn/rnic/rnic.h"

/* Command opcodes. */
enum {
    M5_CMD_QUERY_HCA_CAP = 0x100,
    M5_CMD_CREATE_CQ = 0x400,
    M5_CMD_DESTROY_CQ = 0x401,
    M5_CMD_CREATE_QP = 0x500,
    M5_CMD_DESTROY_QP = 0x501,
    M5_CMD_RST2INIT_QP = 0x502,
    M5_CMD_INIT2RTR_QP = 0x503,
    M5_CMD_RTR2RTS_QP = 0x504,
    M5_CMD_2ERR_QP = 0x507,
};

/* A field: bit offset and width (<= 32 inside one word, or 64 aligned). */
struct m5_field {
    uint16_t off, bits;
};

/* Sets / reads a field of a command buffer. */
void m5_set(void *buf, struct m5_field f, uint64_t v);
uint64_t m5_get(const void *buf, struct m5_field f);
/* f moved by base bits (a field of a context embedded at base). */
struct m5_field m5_at(unsigned base, struct m5_field f);

/* Command sizes in bytes. */
#define M5_CREATE_QP_IN  (0x880 / 8)
#define M5_MODIFY_QP_IN  (0x880 / 8)
#define M5_CREATE_CQ_IN  (0x880 / 8)
#define M5_CMD_OUT       (0x80 / 8) /* status, syndrome, object number */
#define M5_QUERY_CAP_IN  (0x80 / 8)
#define M5_QUERY_CAP_OUT (0x80 / 8 + 0x1000 / 8)
#define M5_CAP_OFF       0x80 /* bits: where the capability starts */

/* What CREATE_QP needs (RC, WQ buffer and doorbell record in umems). */
struct m5_qp_params {
    uint32_t pdn, uar_page, cqn_snd, cqn_rcv;
    uint32_t sq_wqebb;  /* power of two */
    uint32_t rq_wqe;    /* power of two, 0: zero-size receive queue */
    uint32_t rq_stride; /* bytes per receive WQE: 16 * sge, power of 2 */
    unsigned flags;     /* enum rnic_qp_flags: the cd_* bits */
    uint32_t wq_umem_id, dbr_umem_id;
    uint64_t dbr_offset;    /* the record's offset in its umem */
    unsigned log_page_size; /* of the WQ umem, minus 12 */
};

/*
 * Builds CREATE_QP's input. The cross-channel bits are those the kernel's
 * mlx5 driver sets for IB_QP_CREATE_CROSS_CHANNEL (cd_master),
 * MANAGED_SEND (cd_slave_send) and MANAGED_RECV (cd_slave_receive).
 */
void m5_create_qp_in(uint8_t in[M5_CREATE_QP_IN], const struct m5_qp_params *p);

/* The remote end of an RC connection (RoCE). */
struct m5_path {
    uint8_t rgid[16];
    uint8_t rmac[6];
    uint8_t sgid_index, hop_limit, port;
    uint16_t udp_sport;
    uint8_t mtu; /* enum ibv_mtu */
    uint32_t remote_qpn, rq_psn, sq_psn;
    uint8_t log_rd_atomic; /* log2 of outstanding READ/atomics each way */
};

/* RST2INIT with the responder access (RNIC_ACCESS_REMOTE_* bits). */
void m5_rst2init_in(uint8_t in[M5_MODIFY_QP_IN], uint32_t qpn, uint8_t port,
                    unsigned access);
void m5_init2rtr_in(uint8_t in[M5_MODIFY_QP_IN], uint32_t qpn,
                    const struct m5_path *p);
void m5_rtr2rts_in(uint8_t in[M5_MODIFY_QP_IN], uint32_t qpn,
                   const struct m5_path *p);

struct m5_cq_params {
    uint32_t depth; /* power of two */
    uint32_t uar_page, eqn;
    bool overrun_ignore; /* RNIC_CQ_IGNORE_OVERRUN: the CQC's oi bit */
    uint32_t cq_umem_id, dbr_umem_id;
    uint64_t dbr_offset;
    unsigned log_page_size;
};

void m5_create_cq_in(uint8_t in[M5_CREATE_CQ_IN], const struct m5_cq_params *p);

/* The status (0 = ok) and object number (QPN, CQN) of a command output. */
uint8_t m5_out_status(const uint8_t out[M5_CMD_OUT]);
uint32_t m5_out_syndrome(const uint8_t out[M5_CMD_OUT]);
uint32_t m5_out_obj(const uint8_t out[M5_CMD_OUT]);

/* ---- rings and doorbells ---------------------------------------------- */

/*
 * The WQ buffer: the receive queue first (rq_wqe * rq_stride bytes), then
 * the send queue, as the PRM lays out a QP's WQ. Offsets in bytes.
 */
size_t m5_sq_offset(uint32_t rq_wqe, uint32_t rq_stride);
size_t m5_wq_bytes(uint32_t sq_wqebb, uint32_t rq_wqe, uint32_t rq_stride);

/* Doorbell record words (big-endian, as stored): receive [0], send [1]. */
be32 m5_dbr_value(uint32_t counter);

/*
 * The 64-bit word written to the UAR doorbell register after the record,
 * as stored in memory: the ctrl segment's first 8 bytes for the WQE at
 * index idx, with opmod 0, the true wqe_index and QPN and that WQE's
 * opcode and ds. The chains keep operands in those ctrl fields in the
 * ring, so the doorbell is built from the facts, not copied from the ring.
 */
uint64_t m5_uar_db_word(uint8_t opcode, uint8_t ds, uint16_t idx, uint32_t qpn);

/*
 * The index of the last WQE that starts in [from, to) of a ring of
 * wqebb_cnt blocks, walking the WQEs' ds fields from from; to if none
 * does, or if a ds of 0 stops the walk (a malformed WQE the NIC fails).
 */
uint32_t m5_last_wqe(const uint8_t *ring, uint32_t wqebb_cnt, uint32_t from,
                     uint32_t to);

/*
 * BlueFlame. A UAR page's doorbell register (mlx5dv_devx_uar.reg_addr,
 * 2^log_bf_reg_size bytes: m5_caps) is two buffers of half that, written
 * in turn: each ring writes the 8-byte doorbell word, or a copy of the
 * WQE itself, to the other one than the last ring (as rdma-core's mlx5
 * provider does), so a doorbell never lands in a buffer the NIC may still
 * be reading. A copy saves the NIC the WQE's fetch; it needs the bf
 * capability, the page mapped write-combining, and one WQE pending (the
 * copy stands for only the WQE it holds). Copies are at most M5_BF_MAX
 * bytes (ConnectX-5/6: 512-byte registers, 256-byte buffers).
 */
#define M5_BF_MAX 256
/* The CQ arm doorbell: this offset from the UAR page's base. */
#define M5_CQ_DOORBELL 0x20

/* The buffer offset (from reg_addr) a ring after one at offset off uses,
 * for buffers of half bytes (m5_bf_half()). */
uint32_t m5_bf_next(uint32_t off, uint32_t half);

enum m5_db_path {
    M5_DB_NONE,      /* no WQE starts between the last ring and now */
    M5_DB_REGULAR,   /* the doorbell word: the NIC fetches the WQEs */
    M5_DB_BLUEFLAME, /* the one pending WQE, copied to the register */
};

struct m5_db_plan {
    enum m5_db_path path;
    uint32_t last;     /* index of the last WQE rung */
    uint64_t word;     /* m5_uar_db_word() of that WQE */
    uint32_t bf_bytes; /* BLUEFLAME: bytes to copy, a multiple of 64 */
};

/*
 * How to ring up to sq_pi after rung: the last WQE that starts in between
 * (m5_last_wqe()) and its UAR word (opcode and ds from the ring, true
 * index and qpn); BLUEFLAME when that WQE is the only one pending and
 * fits bf_max bytes (0: no BlueFlame; at most M5_BF_MAX), else REGULAR;
 * NONE when no WQE starts in between.
 */
void m5_db_plan(const uint8_t *ring, uint32_t wqebb_cnt, uint32_t rung,
                uint32_t sq_pi, uint32_t qpn, uint32_t bf_max,
                struct m5_db_plan *p);

/*
 * The bytes a BLUEFLAME plan writes to the register: the pending WQE's
 * p->bf_bytes from the ring (wrapping at its end), its first 8 bytes
 * replaced by p->word, so the copy names the WQE as the regular doorbell
 * would whatever operands a chain keeps in its ctrl segment. out holds
 * M5_BF_MAX bytes; those past bf_bytes are left alone.
 */
void m5_bf_image(const uint8_t *ring, uint32_t wqebb_cnt,
                 const struct m5_db_plan *p, uint8_t out[M5_BF_MAX]);

/*
 * Writes receive WQE (stride bytes) with n scatter entries; the unused
 * entries get the invalid lkey that ends the list. n <= stride / 16.
 */
void m5_put_recv(uint8_t *wqe, uint32_t stride, const struct rnic_sge *sge,
                 unsigned n);

/* ---- completions ------------------------------------------------------ */

#define M5_CQE_BYTES 64

/*
 * Decodes the CQE at consumer index ci of a CQ of depth entries (a power
 * of two) into *wc. Returns 1 if the CQE is the hardware's for this lap
 * (owner bit = lap parity, opcode not INVALID), else 0 (not yet written).
 */
int m5_cqe_decode(const uint8_t cqe[M5_CQE_BYTES], uint32_t ci, uint32_t depth,
                  struct rnic_wc *wc);
/* The event type of a CQ's completion events (DevX subscriptions). */
#define M5_EVENT_COMPLETION 0x00

/* The CQ doorbell record's consumer word (set_ci), as stored. */
be32 m5_cq_ci_value(uint32_t ci);
/*
 * Arming a CQ for one completion event (any CQE, not only solicited ones)
 * after consumer index ci: the doorbell record's arm word (record word 1)
 * and the 64-bit word for UAR page + M5_CQ_DOORBELL, both as stored. sn is
 * the arm sequence number: events taken so far (the low 2 bits count).
 */
be32 m5_cq_arm_value(uint32_t sn, uint32_t ci);
uint64_t m5_cq_arm_db_word(uint32_t sn, uint32_t ci, uint32_t cqn);

/* ---- capabilities ----------------------------------------------------- */

/* The general device capabilities RedN depends on. */
struct m5_caps {
    bool cd;     /* cross-channel: WAIT, SEND_EN, RECV_EN, cd_* QPs */
    bool cq_oi;  /* CQs that ignore overrun */
    bool atomic; /* RDMA atomics */
    bool bf;     /* BlueFlame doorbell registers */
    /*
     * wqe_index_ignore_cap: the NIC can run WQEs whose ctrl wqe_index is
     * not their position, which DPDK's packet pacing requires of its
     * cyclic cross-channel rings (docs/mlx5.md).
     */
    bool wqe_index_ignore;
    unsigned log_max_qp_sz, log_max_cq_sz;
    unsigned log_bf_reg_size; /* of a UAR doorbell register, in bytes */
};

/* QUERY_HCA_CAP of the current general capabilities. */
void m5_query_cap_in(uint8_t in[M5_QUERY_CAP_IN]);
/* Reads them from a QUERY_HCA_CAP (general, current) output. */
void m5_caps_parse(const uint8_t out[M5_QUERY_CAP_OUT], struct m5_caps *c);

/*
 * Describes c in buf (n bytes, NUL-terminated, cut to fit) as one line of
 * "name value" pairs, the PRM's names; wc: whether the UAR page is
 * write-combining. What rnic_device_caps() reports for mlx5.
 */
void m5_caps_describe(const struct m5_caps *c, bool wc, char *buf, size_t n);

/* The size of one of a doorbell register's two BlueFlame buffers; 0
 * without BlueFlame. */
uint32_t m5_bf_half(const struct m5_caps *c);
/*
 * The largest BlueFlame copy for a QP of rnic_qp_flags qp_flags on a
 * device with buffers of half bytes, whose UAR page is write-combining
 * (wc) or not: m5_db_plan()'s bf_max. 0 for cross-channel queues: a chain
 * may rewrite a WQE of theirs after the ring while a WAIT holds the queue,
 * and a NIC that kept the copy would run the stale bytes. 0 without wc.
 */
uint32_t m5_qp_bf_max(uint32_t half, bool wc, unsigned qp_flags);

/* What the provider can promise with caps c: -EOPNOTSUPP lists the need. */
int m5_caps_check_qp(const struct m5_caps *c, const struct rnic_qp_init_attr *a,
                     char *why, size_t n);
int m5_caps_check_cq(const struct m5_caps *c, const struct rnic_cq_init_attr *a,
                     char *why, size_t n);

#endif /* RDN_MLX5_MLX5_PRM_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/mlx5/mlx5_prm.c - DevX command layouts, doorbells and CQEs (see
 * mlx5_prm.h). Pure: no device calls.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/mlx5.h"
#include "rdn/mlx5/mlx5_prm.h"
#include "rdn/rnic/provider.h"

#define F(o, b) ((struct m5_field){(o), (b)})

/* Command header and output. */
static const struct m5_field CMD_OPCODE = F(0x00, 16), CMD_OP_MOD = F(0x30, 16),
                             CMD_QPN = F(0x48, 24), OUT_STATUS = F(0x00, 8),
                             OUT_SYNDROME = F(0x20, 32), OUT_OBJ = F(0x48, 24);

/* create_qp_in / *2*_qp_in: the QPC starts at bit 0xc0. */
#define QPC 0xc0
static const struct m5_field QP_WQ_UMEM_ID = F(0x840, 32),
                             QP_WQ_UMEM_VALID = F(0x860, 1);

/* The QP context. */
static const struct m5_field
    QPC_ST = F(0x08, 8),
    QPC_PM_STATE = F(0x13, 2), QPC_PD = F(0x28, 24), QPC_MTU = F(0x40, 3),
    QPC_LOG_MSG_MAX = F(0x43, 5), QPC_LOG_RQ_SIZE = F(0x49, 4),
    QPC_LOG_RQ_STRIDE = F(0x4d, 3), QPC_LOG_SQ_SIZE = F(0x51, 4),
    QPC_UAR_PAGE = F(0x68, 24), QPC_LOG_PAGE_SIZE = F(0xa3, 5),
    QPC_REMOTE_QPN = F(0xa8, 24), QPC_LOG_SRA_MAX = F(0x388, 3),
    QPC_RETRY_COUNT = F(0x38d, 3), QPC_RNR_RETRY = F(0x390, 3),
    QPC_NEXT_SEND_PSN = F(0x3c8, 24), QPC_CQN_SND = F(0x3e8, 24),
    QPC_LOG_RRA_MAX = F(0x488, 3), QPC_RRE = F(0x490, 1), QPC_RWE = F(0x491, 1),
    QPC_RAE = F(0x492, 1), QPC_CD_SLAVE_RECEIVE = F(0x49d, 1),
    QPC_CD_SLAVE_SEND = F(0x49e, 1), QPC_CD_MASTER = F(0x49f, 1),
    QPC_MIN_RNR_NAK = F(0x4a3, 5), QPC_NEXT_RCV_PSN = F(0x4a8, 24),
    QPC_CQN_RCV = F(0x4e8, 24), QPC_DBR_ADDR = F(0x500, 64),
    QPC_RQ_TYPE = F(0x565, 3), QPC_DBR_UMEM_VALID = F(0x683, 1),
    QPC_DBR_UMEM_ID = F(0x720, 32);

/* The primary address path (ads) inside the QPC. */
#define ADS 0xc0
static const struct m5_field ADS_PKEY_INDEX = F(0x10, 16), ADS_GRH = F(0x28, 1),
                             ADS_ACK_TIMEOUT = F(0x40, 5),
                             ADS_SRC_ADDR_INDEX = F(0x48, 8),
                             ADS_HOP_LIMIT = F(0x58, 8),
                             ADS_UDP_SPORT = F(0x90, 16),
                             ADS_VHCA_PORT = F(0xa8, 8),
                             ADS_RGID = F(0x80, 128),
                             ADS_RMAC_47_32 = F(0x130, 16),
                             ADS_RMAC_31_0 = F(0x140, 32);

/* create_cq_in: the CQC at 0x80, then the CQ buffer's umem. */
#define CQC 0x80
static const struct m5_field CQ_UMEM_ID = F(0x2c0, 32),
                             CQ_UMEM_VALID = F(0x2e0, 1),
                             CQC_DBR_UMEM_VALID = F(0x06, 1),
                             CQC_CQE_SZ = F(0x08, 3), CQC_OI = F(0x0f, 1),
                             CQC_DBR_UMEM_ID = F(0x20, 32),
                             CQC_LOG_CQ_SIZE = F(0x63, 5),
                             CQC_UAR_PAGE = F(0x68, 24), CQC_C_EQN = F(0xb8, 8),
                             CQC_LOG_PAGE_SIZE = F(0xc3, 5),
                             CQC_DBR_ADDR = F(0x1c0, 64);

/* cmd_hca_cap, at M5_CAP_OFF of QUERY_HCA_CAP's output. */
static const struct m5_field CAP_LOG_MAX_QP_SZ = F(0x88, 8),
                             CAP_LOG_MAX_CQ_SZ = F(0xc8, 8),
                             CAP_ATOMIC = F(0x21e, 1), CAP_CQ_OI = F(0x220, 1),
                             CAP_CD = F(0x22c, 1), CAP_BF = F(0x260, 1),
                             CAP_WQE_INDEX_IGNORE = F(0x99, 1),
                             CAP_LOG_BF_REG_SIZE = F(0x26b, 5);

#define QPC_ST_RC        0x0
#define QPC_PM_MIGRATED  0x3
#define QPC_RQ_ZERO_SIZE 0x3
#define M5_LOG_MSG_MAX   30 /* 1 GB messages */

struct m5_field m5_at(unsigned base, struct m5_field f)
{
    return F((uint16_t)(base + f.off), f.bits);
}

void m5_set(void *buf, struct m5_field f, uint64_t v)
{
    uint8_t *p = buf;

    if (f.bits > 32) { /* 64 bits, or a byte string (a GID) */
        if (f.bits == 64)
            mlx5_put_be64(p + f.off / 8, v);
        return;
    }
    {
        be32 *w = (be32 *)(void *)(p + (f.off / 32) * 4);
        unsigned shift = 32 - f.off % 32 - f.bits;
        uint32_t mask = (f.bits == 32 ? UINT32_MAX : (1u << f.bits) - 1)
                        << shift;
        uint32_t host = be32_to_cpu(*w);

        host = (host & ~mask) | (((uint32_t)v << shift) & mask);
        *w = cpu_to_be32(host);
    }
}

uint64_t m5_get(const void *buf, struct m5_field f)
{
    const uint8_t *p = buf;
    be32 bw;
    uint32_t w;

    if (f.bits == 64) {
        be64 be;

        memcpy(&be, p + f.off / 8, 8);
        return be64_to_cpu(be);
    }
    memcpy(&bw, p + (f.off / 32) * 4, 4);
    w = be32_to_cpu(bw) >> (32 - f.off % 32 - f.bits);
    return f.bits == 32 ? w : w & ((1u << f.bits) - 1);
}

static unsigned log2u(uint32_t v)
{
    unsigned l = 0;

    while ((1u << l) < v)
        l++;
    return l;
}

#define QSET(in, f, v) m5_set((in), m5_at(QPC, (f)), (v))
#define ASET(in, f, v) m5_set((in), m5_at(QPC + ADS, (f)), (v))

void m5_create_qp_in(uint8_t in[M5_CREATE_QP_IN], const struct m5_qp_params *p)
{
    memset(in, 0, M5_CREATE_QP_IN);
    m5_set(in, CMD_OPCODE, M5_CMD_CREATE_QP);
    QSET(in, QPC_ST, QPC_ST_RC);
    QSET(in, QPC_PM_STATE, QPC_PM_MIGRATED);
    QSET(in, QPC_PD, p->pdn);
    QSET(in, QPC_UAR_PAGE, p->uar_page);
    QSET(in, QPC_LOG_SQ_SIZE, log2u(p->sq_wqebb));
    if (p->rq_wqe) {
        QSET(in, QPC_LOG_RQ_SIZE, log2u(p->rq_wqe));
        /* log_rq_stride counts 16-byte units above one: stride 16 << n. */
        QSET(in, QPC_LOG_RQ_STRIDE, log2u(p->rq_stride) - 4);
    } else {
        QSET(in, QPC_RQ_TYPE, QPC_RQ_ZERO_SIZE);
    }
    QSET(in, QPC_CQN_SND, p->cqn_snd);
    QSET(in, QPC_CQN_RCV, p->cqn_rcv);
    QSET(in, QPC_CD_MASTER, !!(p->flags & RNIC_QP_CROSS_CHANNEL));
    QSET(in, QPC_CD_SLAVE_SEND, !!(p->flags & RNIC_QP_MANAGED_SEND));
    QSET(in, QPC_CD_SLAVE_RECEIVE, !!(p->flags & RNIC_QP_MANAGED_RECV));
    QSET(in, QPC_LOG_PAGE_SIZE, p->log_page_size);
    QSET(in, QPC_DBR_UMEM_VALID, 1);
    QSET(in, QPC_DBR_UMEM_ID, p->dbr_umem_id);
    QSET(in, QPC_DBR_ADDR, p->dbr_offset);
    m5_set(in, QP_WQ_UMEM_ID, p->wq_umem_id);
    m5_set(in, QP_WQ_UMEM_VALID, 1);
}

static void modify_head(uint8_t *in, uint16_t opcode, uint32_t qpn)
{
    memset(in, 0, M5_MODIFY_QP_IN);
    m5_set(in, CMD_OPCODE, opcode);
    m5_set(in, CMD_QPN, qpn);
}

void m5_rst2init_in(uint8_t in[M5_MODIFY_QP_IN], uint32_t qpn, uint8_t port,
                    unsigned access)
{
    modify_head(in, M5_CMD_RST2INIT_QP, qpn);
    ASET(in, ADS_VHCA_PORT, port);
    ASET(in, ADS_PKEY_INDEX, 0);
    QSET(in, QPC_RRE, !!(access & RNIC_ACCESS_REMOTE_READ));
    QSET(in, QPC_RWE, !!(access & RNIC_ACCESS_REMOTE_WRITE));
    QSET(in, QPC_RAE, !!(access & RNIC_ACCESS_REMOTE_ATOMIC));
}

void m5_init2rtr_in(uint8_t in[M5_MODIFY_QP_IN], uint32_t qpn,
                    const struct m5_path *p)
{
    uint32_t mac_lo = (uint32_t)p->rmac[2] << 24 | (uint32_t)p->rmac[3] << 16 |
                      (uint32_t)p->rmac[4] << 8 | p->rmac[5];

    modify_head(in, M5_CMD_INIT2RTR_QP, qpn);
    QSET(in, QPC_MTU, p->mtu);
    QSET(in, QPC_LOG_MSG_MAX, M5_LOG_MSG_MAX);
    QSET(in, QPC_REMOTE_QPN, p->remote_qpn);
    QSET(in, QPC_NEXT_RCV_PSN, p->rq_psn);
    QSET(in, QPC_LOG_RRA_MAX, p->log_rd_atomic);
    QSET(in, QPC_MIN_RNR_NAK, 12); /* 0.64 ms, as the verbs provider */
    ASET(in, ADS_GRH, 1);
    ASET(in, ADS_SRC_ADDR_INDEX, p->sgid_index);
    ASET(in, ADS_HOP_LIMIT, p->hop_limit);
    ASET(in, ADS_UDP_SPORT, p->udp_sport);
    ASET(in, ADS_VHCA_PORT, p->port);
    memcpy(in + (QPC + ADS + ADS_RGID.off) / 8, p->rgid, 16);
    ASET(in, ADS_RMAC_47_32, (uint32_t)p->rmac[0] << 8 | p->rmac[1]);
    ASET(in, ADS_RMAC_31_0, mac_lo);
}

void m5_rtr2rts_in(uint8_t in[M5_MODIFY_QP_IN], uint32_t qpn,
                   const struct m5_path *p)
{
    modify_head(in, M5_CMD_RTR2RTS_QP, qpn);
    QSET(in, QPC_NEXT_SEND_PSN, p->sq_psn);
    QSET(in, QPC_LOG_SRA_MAX, p->log_rd_atomic);
    QSET(in, QPC_RETRY_COUNT, 7);
    QSET(in, QPC_RNR_RETRY, 7); /* infinite, as softnic */
    ASET(in, ADS_ACK_TIMEOUT, 14);
}

void m5_create_cq_in(uint8_t in[M5_CREATE_CQ_IN], const struct m5_cq_params *p)
{
    memset(in, 0, M5_CREATE_CQ_IN);
    m5_set(in, CMD_OPCODE, M5_CMD_CREATE_CQ);
    m5_set(in, m5_at(CQC, CQC_CQE_SZ), 0); /* 64-byte CQEs */
    m5_set(in, m5_at(CQC, CQC_OI), p->overrun_ignore);
    m5_set(in, m5_at(CQC, CQC_LOG_CQ_SIZE), log2u(p->depth));
    m5_set(in, m5_at(CQC, CQC_UAR_PAGE), p->uar_page);
    m5_set(in, m5_at(CQC, CQC_C_EQN), p->eqn);
    m5_set(in, m5_at(CQC, CQC_LOG_PAGE_SIZE), p->log_page_size);
    m5_set(in, m5_at(CQC, CQC_DBR_UMEM_VALID), 1);
    m5_set(in, m5_at(CQC, CQC_DBR_UMEM_ID), p->dbr_umem_id);
    m5_set(in, m5_at(CQC, CQC_DBR_ADDR), p->dbr_offset);
    m5_set(in, CQ_UMEM_ID, p->cq_umem_id);
    m5_set(in, CQ_UMEM_VALID, 1);
}

uint8_t m5_out_status(const uint8_t out[M5_CMD_OUT])
{
    return (uint8_t)m5_get(out, OUT_STATUS);
}

uint32_t m5_out_syndrome(const uint8_t out[M5_CMD_OUT])
{
    return (uint32_t)m5_get(out, OUT_SYNDROME);
}

uint32_t m5_out_obj(const uint8_t out[M5_CMD_OUT])
{
    return (uint32_t)m5_get(out, OUT_OBJ);
}

/* ---- rings and doorbells ---------------------------------------------- */

size_t m5_sq_offset(uint32_t rq_wqe, uint32_t rq_stride)
{
    return (size_t)rq_wqe * rq_stride;
}

size_t m5_wq_bytes(uint32_t sq_wqebb, uint32_t rq_wqe, uint32_t rq_stride)
{
    return m5_sq_offset(rq_wqe, rq_stride) +
           (size_t)sq_wqebb * MLX5_SEND_WQE_BB;
}

be32 m5_dbr_value(uint32_t counter)
{
    return cpu_to_be32(counter & 0xffff);
}

uint64_t m5_uar_db_word(uint8_t opcode, uint8_t ds, uint16_t idx, uint32_t qpn)
{
    be32 w[2] = {cpu_to_be32(mlx5_ctrl_word0(0, idx, opcode)),
                 cpu_to_be32(mlx5_ctrl_word1(qpn, ds))};
    uint64_t mem;

    memcpy(&mem, w, 8);
    return mem;
}

static const struct mlx5_ctrl_seg *ctrl_at(const uint8_t *ring,
                                           uint32_t wqebb_cnt, uint32_t idx)
{
    return (const void *)(ring +
                          (size_t)(idx & (wqebb_cnt - 1)) * MLX5_SEND_WQE_BB);
}

/* The WQEBBs a WQE of ds 16-byte units occupies. */
static uint32_t wqe_blocks(unsigned ds)
{
    return (ds * MLX5_SEND_WQE_DS + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
}

uint32_t m5_last_wqe(const uint8_t *ring, uint32_t wqebb_cnt, uint32_t from,
                     uint32_t to)
{
    uint32_t idx = from, last = to;

    while ((int32_t)(to - idx) > 0) {
        unsigned ds = mlx5_ctrl_ds(ctrl_at(ring, wqebb_cnt, idx));

        if (ds == 0)
            break;
        last = idx;
        idx += wqe_blocks(ds);
    }
    return last;
}

uint32_t m5_bf_next(uint32_t off, uint32_t half)
{
    return off ^ half;
}

void m5_db_plan(const uint8_t *ring, uint32_t wqebb_cnt, uint32_t rung,
                uint32_t sq_pi, uint32_t qpn, uint32_t bf_max,
                struct m5_db_plan *p)
{
    const struct mlx5_ctrl_seg *c;
    uint32_t bytes;

    memset(p, 0, sizeof(*p));
    p->last = m5_last_wqe(ring, wqebb_cnt, rung, sq_pi);
    if (p->last == sq_pi)
        return; /* M5_DB_NONE */
    c = ctrl_at(ring, wqebb_cnt, p->last);
    p->word = m5_uar_db_word(mlx5_ctrl_opcode(c), mlx5_ctrl_ds(c),
                             (uint16_t)p->last, qpn);
    bytes = wqe_blocks(mlx5_ctrl_ds(c)) * MLX5_SEND_WQE_BB;
    p->path = M5_DB_REGULAR;
    if (p->last == rung && bytes <= bf_max && bytes <= M5_BF_MAX) {
        p->path = M5_DB_BLUEFLAME;
        p->bf_bytes = bytes;
    }
}

void m5_bf_image(const uint8_t *ring, uint32_t wqebb_cnt,
                 const struct m5_db_plan *p, uint8_t out[M5_BF_MAX])
{
    for (uint32_t b = 0; b < p->bf_bytes / MLX5_SEND_WQE_BB; b++)
        memcpy(out + b * MLX5_SEND_WQE_BB,
               ctrl_at(ring, wqebb_cnt, p->last + b), MLX5_SEND_WQE_BB);
    memcpy(out, &p->word, 8);
}

void m5_put_recv(uint8_t *wqe, uint32_t stride, const struct rnic_sge *sge,
                 unsigned n)
{
    for (unsigned i = 0; i < stride / MLX5_SEND_WQE_DS; i++)
        mlx5_put_data_seg(wqe + i * MLX5_SEND_WQE_DS, i < n ? sge[i].length : 0,
                          i < n ? sge[i].lkey : MLX5_INVALID_LKEY,
                          i < n ? sge[i].addr : 0);
}

be32 m5_cq_ci_value(uint32_t ci)
{
    return cpu_to_be32(ci & 0xffffff);
}

/* The arm word: sn in bits 29:28, the command in 24 (0: any CQE), ci. */
#define CQ_ARM_SN_SHIFT 28
#define CQ_ARM_ANY      (0u << 24)

be32 m5_cq_arm_value(uint32_t sn, uint32_t ci)
{
    return cpu_to_be32((sn & 3) << CQ_ARM_SN_SHIFT | CQ_ARM_ANY |
                       (ci & 0xffffff));
}

uint64_t m5_cq_arm_db_word(uint32_t sn, uint32_t ci, uint32_t cqn)
{
    be32 w[2] = {m5_cq_arm_value(sn, ci), cpu_to_be32(cqn & 0xffffff)};
    uint64_t mem;

    memcpy(&mem, w, 8);
    return mem;
}

/* CQE fields (byte offsets in the 64-byte CQE). */
#define CQE_IMM       36
#define CQE_BYTE_CNT  44
#define CQE_QPN       56 /* low 24 bits; the top byte: WQE opcode (REQ) */
#define CQE_WQE_CTR   60
#define CQE_SYNDROME  55 /* error CQEs */
#define CQE_OP_OWN    63
#define CQE_REQ       0x0
#define CQE_RESP_WIMM 0x1
#define CQE_RESP_SEND 0x2
#define CQE_RESP_SIMM 0x3
#define CQE_REQ_ERR   0xd
#define CQE_RESP_ERR  0xe
#define CQE_INVALID   0xf

static uint32_t be32_at(const uint8_t *p)
{
    be32 v;

    memcpy(&v, p, 4);
    return be32_to_cpu(v);
}

static uint8_t syndrome_status(uint8_t s)
{
    switch (s) {
    case 0x01:
        return RNIC_WC_LOC_LEN_ERR;
    case 0x04:
    case 0x11:
        return RNIC_WC_LOC_PROT_ERR;
    case 0x05:
        return RNIC_WC_WR_FLUSH_ERR;
    case 0x12:
        return RNIC_WC_REM_INV_REQ_ERR;
    case 0x13:
        return RNIC_WC_REM_ACCESS_ERR;
    case 0x14:
        return RNIC_WC_REM_OP_ERR;
    case 0x15:
    case 0x16:
        return RNIC_WC_RETRY_EXC_ERR;
    default:
        return RNIC_WC_LOC_QP_OP_ERR;
    }
}

int m5_cqe_decode(const uint8_t cqe[M5_CQE_BYTES], uint32_t ci, uint32_t depth,
                  struct rnic_wc *wc)
{
    uint8_t op_own = cqe[CQE_OP_OWN], op = op_own >> 4;
    uint32_t qpn_word = be32_at(cqe + CQE_QPN);

    /* The owner bit flips every lap; software's parity is ci / depth. */
    if (op == CQE_INVALID || (op_own & 1) != ((ci / depth) & 1))
        return 0;
    memset(wc, 0, sizeof(*wc));
    wc->qpn = qpn_word & 0xffffff;
    wc->wqe_counter = (uint16_t)(cqe[CQE_WQE_CTR] << 8 | cqe[CQE_WQE_CTR + 1]);
    wc->byte_len = be32_at(cqe + CQE_BYTE_CNT);
    switch (op) {
    case CQE_REQ:
        wc->opcode = rnic_wc_opcode_of((uint8_t)(qpn_word >> 24));
        break;
    case CQE_RESP_WIMM:
    case CQE_RESP_SIMM:
        wc->opcode = op == CQE_RESP_WIMM ? RNIC_WC_RECV_RDMA_IMM : RNIC_WC_RECV;
        wc->flags = RNIC_WC_WITH_IMM;
        wc->imm = be32_at(cqe + CQE_IMM);
        break;
    case CQE_RESP_SEND:
        wc->opcode = RNIC_WC_RECV;
        break;
    case CQE_REQ_ERR:
    case CQE_RESP_ERR:
        wc->opcode = op == CQE_REQ_ERR ? RNIC_WC_SEND : RNIC_WC_RECV;
        wc->status = syndrome_status(cqe[CQE_SYNDROME]);
        break;
    default:
        wc->status = RNIC_WC_LOC_QP_OP_ERR;
        break;
    }
    return 1;
}

/* ---- capabilities ----------------------------------------------------- */

void m5_query_cap_in(uint8_t in[M5_QUERY_CAP_IN])
{
    memset(in, 0, M5_QUERY_CAP_IN);
    m5_set(in, CMD_OPCODE, M5_CMD_QUERY_HCA_CAP);
    /* op_mod: capability type (0: general device) << 1 | 1: current. */
    m5_set(in, CMD_OP_MOD, 1);
}

void m5_caps_parse(const uint8_t out[M5_QUERY_CAP_OUT], struct m5_caps *c)
{
    const uint8_t *cap = out + M5_CAP_OFF / 8;

    c->cd = m5_get(cap, CAP_CD);
    c->cq_oi = m5_get(cap, CAP_CQ_OI);
    c->atomic = m5_get(cap, CAP_ATOMIC);
    c->log_max_qp_sz = (unsigned)m5_get(cap, CAP_LOG_MAX_QP_SZ);
    c->log_max_cq_sz = (unsigned)m5_get(cap, CAP_LOG_MAX_CQ_SZ);
    c->wqe_index_ignore = m5_get(cap, CAP_WQE_INDEX_IGNORE);
    c->bf = m5_get(cap, CAP_BF);
    c->log_bf_reg_size = (unsigned)m5_get(cap, CAP_LOG_BF_REG_SIZE);
}

void m5_caps_describe(const struct m5_caps *c, bool wc, char *buf, size_t n)
{
    snprintf(buf, n,
             "cd %d, cq_oi %d, atomic %d, wqe_index_ignore_cap %d, "
             "bf %d (%u-byte buffers, UAR %s), log_max_qp_sz %u, "
             "log_max_cq_sz %u",
             c->cd, c->cq_oi, c->atomic, c->wqe_index_ignore, c->bf,
             m5_bf_half(c), wc ? "write-combining" : "uncached",
             c->log_max_qp_sz, c->log_max_cq_sz);
}

uint32_t m5_bf_half(const struct m5_caps *c)
{
    /* A buffer holds at least the 8-byte doorbell word. */
    return c->bf && c->log_bf_reg_size >= 4 && c->log_bf_reg_size < 31
               ? (1u << c->log_bf_reg_size) / 2
               : 0;
}

/* The flags of the queues RedN's cross-channel constructs use. */
#define CROSS_FLAGS                                                            \
    (RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND | RNIC_QP_MANAGED_RECV)

uint32_t m5_qp_bf_max(uint32_t half, bool wc, unsigned qp_flags)
{
    if (!wc || (qp_flags & CROSS_FLAGS))
        return 0;
    return half < M5_BF_MAX ? half : M5_BF_MAX;
}

int m5_caps_check_qp(const struct m5_caps *c, const struct rnic_qp_init_attr *a,
                     char *why, size_t n)
{
    if ((a->flags & CROSS_FLAGS) && !c->cd) {
        snprintf(why, n, "the device has no cross-channel (HCA cap cd = 0)");
        return -EOPNOTSUPP;
    }
    if (log2u(a->sq_wqebb) > c->log_max_qp_sz ||
        (a->rq_wqe && log2u(a->rq_wqe) > c->log_max_qp_sz)) {
        snprintf(why, n, "queues hold at most 2^%u WQEs", c->log_max_qp_sz);
        return -EINVAL;
    }
    return 0;
}

int m5_caps_check_cq(const struct m5_caps *c, const struct rnic_cq_init_attr *a,
                     char *why, size_t n)
{
    if ((a->flags & RNIC_CQ_IGNORE_OVERRUN) && !c->cq_oi) {
        snprintf(why, n, "the device cannot ignore CQ overrun (cq_oi = 0)");
        return -EOPNOTSUPP;
    }
    if (log2u(a->depth) > c->log_max_cq_sz) {
        snprintf(why, n, "CQs hold at most 2^%u entries", c->log_max_cq_sz);
        return -EINVAL;
    }
    return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/mlx5.h - the byte format of send work queue entries (WQEs) as a
 * ConnectX (mlx5) NIC reads them, shared by the chain assembler, softnic and
 * the mlx5 provider.
 *
 * A WQE is built from 16-byte segments inside 64-byte basic blocks (WQEBBs).
 * Every multi-byte field of a segment is big-endian. The first segment is
 * always the control segment; ds counts the WQE's 16-byte segments,
 * including the control segment. Atomic targets in memory are host-endian
 * (little-endian on x86), as upstream mlx5 configures the NIC; the operands
 * inside the atomic segment are big-endian.
 *
 * Facts from the mlx5 programming reference and rdma-core's public headers;
 * the structures are written here from those facts.
 */
#ifndef PROTO_MLX5_H
#define PROTO_MLX5_H

#include <stddef.h>
#include <stdint.h>

#include "proto/byteorder.h"

#define MLX5_SEND_WQE_BB  64    /* bytes in one basic block */
#define MLX5_SEND_WQE_DS  16    /* bytes in one segment (the unit of ds) */
#define MLX5_WQE_MAX_DS   63    /* ds is 6 bits wide */
#define MLX5_RECV_MAX_SGE 16    /* scatter entries in one receive WQE */
#define MLX5_INVALID_LKEY 0x100 /* ends a receive scatter list early */

/* Send opcodes (low byte of the control segment's first word). */
enum mlx5_opcode {
    MLX5_OPCODE_NOP = 0x00,
    MLX5_OPCODE_RDMA_WRITE = 0x08,
    MLX5_OPCODE_RDMA_WRITE_IMM = 0x09,
    MLX5_OPCODE_SEND = 0x0a,
    MLX5_OPCODE_SEND_IMM = 0x0b,
    MLX5_OPCODE_WAIT = 0x0f,
    MLX5_OPCODE_RDMA_READ = 0x10,
    MLX5_OPCODE_ATOMIC_CS = 0x11,
    MLX5_OPCODE_ATOMIC_FA = 0x12,
    MLX5_OPCODE_RECV_EN = 0x16,
    MLX5_OPCODE_SEND_EN = 0x17,
};

/* fm_ce_se: fence mode, completion enable, solicited event. */
#define MLX5_WQE_CTRL_SOLICITED 0x02
#define MLX5_WQE_CTRL_CQ_UPDATE 0x08
#define MLX5_WQE_CTRL_FENCE     0x80

/* Control segment: 16 bytes, always first. */
struct mlx5_ctrl_seg {
    be32 opmod_idx_opcode; /* opmod << 24 | wqe_index << 8 | opcode */
    be32 qpn_ds;           /* qpn << 8 | ds */
    uint8_t signature;
    uint8_t rsvd[2];
    uint8_t fm_ce_se;
    be32 imm; /* immediate data of WRITE_IMM / SEND_IMM */
};

/* Remote address segment: READ, WRITE, WRITE_IMM and atomics. */
struct mlx5_raddr_seg {
    be64 raddr;
    be32 rkey;
    uint32_t rsvd;
};

/* Atomic segment: after the remote address segment of CAS / FADD. */
struct mlx5_atomic_seg {
    be64 swap_add; /* swap value (CAS) or addend (FADD) */
    be64 compare;  /* compare value (CAS); ignored by FADD */
};

/* Data segment: one gather (send side) or scatter (receive side) entry. */
struct mlx5_data_seg {
    be32 byte_count;
    be32 lkey;
    be64 addr; /* the application's virtual address */
};

/* Cross-channel segment of WAIT, SEND_EN and RECV_EN. */
struct mlx5_wait_en_seg {
    uint8_t rsvd[8];
    be32 index;   /* WAIT: CQ completion count; *_EN: producer index */
    be32 obj_num; /* CQN for WAIT, QPN for SEND_EN / RECV_EN */
};

_Static_assert(sizeof(struct mlx5_ctrl_seg) == 16, "ctrl segment is 16 B");
_Static_assert(sizeof(struct mlx5_raddr_seg) == 16, "raddr segment is 16 B");
_Static_assert(sizeof(struct mlx5_atomic_seg) == 16, "atomic seg is 16 B");
_Static_assert(sizeof(struct mlx5_data_seg) == 16, "data segment is 16 B");
_Static_assert(sizeof(struct mlx5_wait_en_seg) == 16, "wait/en seg is 16 B");

/* Byte offsets of the fields a self-modifying chain targets. */
#define MLX5_CTRL_OPCODE_OFF 0 /* 8-byte word: opmod/index/opcode + qpn/ds */
#define MLX5_CTRL_IMM_OFF    12
#define MLX5_CTRL_FLAGS_OFF  11

/* The first 32-bit word of a control segment, in host order. */
static inline uint32_t mlx5_ctrl_word0(uint8_t opmod, uint16_t wqe_index,
                                       uint8_t opcode)
{
    return (uint32_t)opmod << 24 | (uint32_t)wqe_index << 8 | opcode;
}

/* The second 32-bit word of a control segment, in host order. */
static inline uint32_t mlx5_ctrl_word1(uint32_t qpn, uint8_t ds)
{
    return (qpn & 0xffffff) << 8 | (ds & 0x3f);
}

/* Return the opcode, wqe_index, ds and qpn fields of a ctrl segment. */
static inline uint8_t mlx5_ctrl_opcode(const struct mlx5_ctrl_seg *c)
{
    return be32_to_cpu(c->opmod_idx_opcode) & 0xff;
}

static inline uint16_t mlx5_ctrl_wqe_index(const struct mlx5_ctrl_seg *c)
{
    return (be32_to_cpu(c->opmod_idx_opcode) >> 8) & 0xffff;
}

static inline uint8_t mlx5_ctrl_ds(const struct mlx5_ctrl_seg *c)
{
    return be32_to_cpu(c->qpn_ds) & 0x3f;
}

static inline uint32_t mlx5_ctrl_qpn(const struct mlx5_ctrl_seg *c)
{
    return be32_to_cpu(c->qpn_ds) >> 8;
}

/*
 * Segment writers: p is where the 16-byte segment goes (in a ring, never
 * straddling its end); values are host order, stored big-endian.
 */
static inline void mlx5_put_be32(void *p, uint32_t v)
{
    be32 be = cpu_to_be32(v);

    __builtin_memcpy(p, &be, 4);
}

static inline void mlx5_put_be64(void *p, uint64_t v)
{
    be64 be = cpu_to_be64(v);

    __builtin_memcpy(p, &be, 8);
}

static inline void mlx5_put_data_seg(void *p, uint32_t byte_count,
                                     uint32_t lkey, uint64_t addr)
{
    mlx5_put_be32(p, byte_count);
    mlx5_put_be32((uint8_t *)p + 4, lkey);
    mlx5_put_be64((uint8_t *)p + 8, addr);
}

static inline void mlx5_put_raddr_seg(void *p, uint64_t raddr, uint32_t rkey)
{
    mlx5_put_be64(p, raddr);
    mlx5_put_be32((uint8_t *)p + 8, rkey);
    __builtin_memset((uint8_t *)p + 12, 0, 4);
}

/* compare is stored for CAS only (FADD ignores the field: 0). */
static inline void mlx5_put_atomic_seg(void *p, uint8_t opcode,
                                       uint64_t swap_add, uint64_t compare)
{
    mlx5_put_be64(p, swap_add);
    mlx5_put_be64((uint8_t *)p + 8,
                  opcode == MLX5_OPCODE_ATOMIC_CS ? compare : 0);
}

static inline void mlx5_put_wait_en_seg(void *p, uint32_t index,
                                        uint32_t obj_num)
{
    __builtin_memset(p, 0, 8);
    mlx5_put_be32((uint8_t *)p + 8, index);
    mlx5_put_be32((uint8_t *)p + 12, obj_num);
}

/*
 * The 48-bit operand of the paper's if-construct lives in the control
 * segment's opmod (8 bits), wqe_index (16 bits) and qpn (24 bits) fields.
 * mlx5_ctrl_id48() packs it the way those fields sit in memory, so an 8-byte
 * CAS on the first 8 bytes of the control segment compares opcode, operand
 * and ds at once.  The returned value is the 8 bytes as they are in memory,
 * read as a host-endian (little-endian) 64-bit integer: exactly what a
 * host-endian atomic compares.
 */
static inline uint64_t mlx5_ctrl_id48_word(uint64_t id48, uint8_t opcode,
                                           uint8_t ds)
{
    uint32_t w0 =
        mlx5_ctrl_word0((id48 >> 40) & 0xff, (id48 >> 24) & 0xffff, opcode);
    uint32_t w1 = mlx5_ctrl_word1(id48 & 0xffffff, ds);
    uint64_t mem;
    be32 be0 = cpu_to_be32(w0), be1 = cpu_to_be32(w1);

    __builtin_memcpy((uint8_t *)&mem, &be0, 4);
    __builtin_memcpy((uint8_t *)&mem + 4, &be1, 4);
    return mem;
}

#endif /* PROTO_MLX5_H */

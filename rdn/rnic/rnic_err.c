/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/rnic/rnic_err.c - the thread-local error message, the completion
 * status names and opcodes. Every provider reports through these, so they sit
 * in an object of their own: a program that links a provider without the
 * dispatch layer (rdn-nicd) does not pull the provider table in with them.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "proto/mlx5.h"
#include "rdn/rnic/provider.h"

static __thread char rnic_msg[256];

int rnic_err(int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(rnic_msg, sizeof(rnic_msg), fmt, ap);
    va_end(ap);
    return err;
}

const char *rnic_errmsg(void)
{
    return rnic_msg[0] ? rnic_msg : "no error";
}

const char *rnic_wc_status_str(int status)
{
    static const char *const names[] = {
        [RNIC_WC_SUCCESS] = "success",
        [RNIC_WC_LOC_LEN_ERR] = "local length error",
        [RNIC_WC_LOC_QP_OP_ERR] = "local QP operation error",
        [RNIC_WC_LOC_PROT_ERR] = "local protection error",
        [RNIC_WC_WR_FLUSH_ERR] = "work request flushed error",
        [RNIC_WC_REM_INV_REQ_ERR] = "remote invalid request error",
        [RNIC_WC_REM_ACCESS_ERR] = "remote access error",
        [RNIC_WC_REM_OP_ERR] = "remote operation error",
        [RNIC_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
        [RNIC_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
    };

    if (status < 0 || (size_t)status >= sizeof(names) / sizeof(names[0]))
        return "unknown status";
    return names[status];
}

uint8_t rnic_wc_opcode_of(uint8_t op)
{
    switch (op) {
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
        return RNIC_WC_RDMA_WRITE;
    case MLX5_OPCODE_SEND:
    case MLX5_OPCODE_SEND_IMM:
        return RNIC_WC_SEND;
    case MLX5_OPCODE_RDMA_READ:
        return RNIC_WC_RDMA_READ;
    case MLX5_OPCODE_ATOMIC_CS:
        return RNIC_WC_COMP_SWAP;
    case MLX5_OPCODE_ATOMIC_FA:
        return RNIC_WC_FETCH_ADD;
    case MLX5_OPCODE_WAIT:
        return RNIC_WC_WAIT;
    case MLX5_OPCODE_SEND_EN:
        return RNIC_WC_SEND_EN;
    case MLX5_OPCODE_RECV_EN:
        return RNIC_WC_RECV_EN;
    default:
        return RNIC_WC_NOP;
    }
}

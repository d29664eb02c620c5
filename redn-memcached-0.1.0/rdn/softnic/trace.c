/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/trace.c - writing the opt-in WQE trace (rdn/softnic/trace.h).
 * Engine threads share one file per device behind a mutex: tracing is for
 * debugging and breakdowns, not for speed.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/softnic/engine_int.h"
#include "rdn/softnic/trace.h"

struct sn_trace {
    pthread_mutex_t lock;
    FILE *f;
};

static const struct {
    uint8_t op;
    const char *name;
} sn_opnames[] = {
    {MLX5_OPCODE_NOP, "NOP"},
    {MLX5_OPCODE_RDMA_WRITE, "WRITE"},
    {MLX5_OPCODE_RDMA_WRITE_IMM, "WRITE_IMM"},
    {MLX5_OPCODE_SEND, "SEND"},
    {MLX5_OPCODE_SEND_IMM, "SEND_IMM"},
    {MLX5_OPCODE_WAIT, "WAIT"},
    {MLX5_OPCODE_RDMA_READ, "READ"},
    {MLX5_OPCODE_ATOMIC_CS, "CAS"},
    {MLX5_OPCODE_ATOMIC_FA, "FADD"},
    {MLX5_OPCODE_RECV_EN, "RECV_EN"},
    {MLX5_OPCODE_SEND_EN, "SEND_EN"},
};

const char *sn_opcode_name(uint8_t opcode, char buf[8])
{
    for (size_t i = 0; i < sizeof(sn_opnames) / sizeof(sn_opnames[0]); i++)
        if (sn_opnames[i].op == opcode)
            return sn_opnames[i].name;
    snprintf(buf, 8, "OP_%02x", opcode);
    return buf;
}

int sn_opcode_parse(const char *name)
{
    for (size_t i = 0; i < sizeof(sn_opnames) / sizeof(sn_opnames[0]); i++)
        if (!strcmp(sn_opnames[i].name, name))
            return sn_opnames[i].op;
    if (!strncmp(name, "OP_", 3))
        return (int)strtol(name + 3, NULL, 16);
    return -1;
}

int sn_trace_open(const char *path, struct sn_trace **out)
{
    struct sn_trace *tr = calloc(1, sizeof(*tr));

    if (!tr)
        return -ENOMEM;
    tr->f = fopen(path, "w");
    if (!tr->f) {
        int err = -errno;

        free(tr);
        return err;
    }
    pthread_mutex_init(&tr->lock, NULL);
    fprintf(tr->f, "%s\n", SN_TRACE_HEADER);
    fflush(tr->f);
    *out = tr;
    return 0;
}

void sn_trace_close(struct sn_trace *tr)
{
    fclose(tr->f);
    pthread_mutex_destroy(&tr->lock);
    free(tr);
}

void sn_trace_wqe(struct sn_trace *tr, uint32_t dev, uint32_t qpn,
                  const struct sn_out *o, uint64_t end_ns)
{
    char buf[8];

    pthread_mutex_lock(&tr->lock);
    fprintf(tr->f, "%u %x %x %s %u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", dev,
            qpn, o->wqe_counter, sn_opcode_name(o->opcode, buf), o->status,
            o->fetch_ns, o->start_ns, end_ns);
    fflush(tr->f);
    pthread_mutex_unlock(&tr->lock);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/ctl.h - softnic's control plane: the requests an application
 * makes to create and destroy NIC objects, and the engine-side handler.
 *
 * The same fixed-size messages serve both providers: "softnic-inproc" calls
 * sn_ctl_handle() directly, "softnic" sends them over rdn-nicd's Unix
 * socket (with at most one file descriptor each way, SCM_RIGHTS). Shared
 * memory is always created by the application (a sealed memfd, mapped by
 * both sides); the engine checks its seals and size before mapping it.
 */
#ifndef RDN_SOFTNIC_CTL_H
#define RDN_SOFTNIC_CTL_H

#include <stdint.h>
#include <sys/types.h>

#include "rdn/rnic/rnic.h"

#define SN_CTL_VERSION                                                         \
    6 /* 2: QP responder access; 3: big-endian rq_db;                          \
         4: RoCE (QP_ADDR, rc attributes); 5: QP_GID; 6: STATS bad_drops */
#define SN_PATH_MAX 256

enum sn_ctl_op {
    SN_CTL_HELLO = 1, /* -> ctl page fd, engine id, daemon pid */
    SN_CTL_DEV_OPEN,  /* -> dev id; opens or re-attaches a domain */
    SN_CTL_DEV_CLOSE,
    SN_CTL_MEM_REG, /* fd: memory from rnic_mem_alloc */
    SN_CTL_MEM_DEREG,
    SN_CTL_MR_REG,
    SN_CTL_MR_DEREG,
    SN_CTL_CQ_CREATE, /* fd: the CQ's memory */
    SN_CTL_CQ_DESTROY,
    SN_CTL_QP_CREATE, /* fd: the QP's memory */
    SN_CTL_QP_DESTROY,
    SN_CTL_QP_CONNECT,
    SN_CTL_PERSIST,
    SN_CTL_ATTACH,  /* -> the object's description and fd */
    SN_CTL_STATS,   /* -> what the whole engine holds */
    SN_CTL_QP_ADDR, /* obj.num: QPN -> its rnic_addr */
    SN_CTL_QP_GID,  /* gid: the address a QP speaks from */
};

struct sn_ctl_req {
    uint32_t op;
    uint32_t dev;
    union {
        struct {
            uint32_t version;
        } hello;
        struct {
            char model[16];
            char timing[128]; /* RDN_SOFTNIC_TIMING overrides */
            int32_t strict;
            char domain[64];
            char trace[SN_PATH_MAX];
        } dev_open;
        struct {
            uint64_t va, len;
        } mem;
        struct {
            uint64_t va, len;
            uint32_t access;
        } mr;
        struct {
            uint32_t key;
        } mr_dereg;
        struct {
            uint64_t va;
            uint32_t depth, flags;
        } cq;
        struct {
            uint64_t va;
            uint32_t send_cqn, recv_cqn, sq_wqebb, rq_wqe, rq_sge, flags;
            uint32_t access; /* REMOTE_* bits served (responder) */
            struct rnic_qp_rc_attr rc;
        } qp;
        struct {
            uint32_t num; /* CQN or QPN */
        } obj;
        struct {
            uint32_t qpn;
            struct rnic_addr remote;
        } connect;
        struct {
            uint32_t qpn;
            uint8_t gid[16];
        } gid;
        struct {
            uint32_t type; /* enum rnic_obj_type */
            uint64_t id;   /* MEM: va, MR: key, CQ: cqn, QP: qpn */
            char name[64];
        } persist;
        struct {
            uint32_t type;
            char name[64];
        } attach;
    } u;
};

/* What ATTACH returns about an object (the fields of its type). */
struct sn_ctl_obj {
    uint64_t va, len; /* MEM, MR, CQ, QP: the application address */
    uint32_t key;     /* MR */
    uint32_t access;  /* MR; QP: REMOTE_* bits served */
    uint32_t num;     /* CQN, QPN */
    uint32_t depth;   /* CQ */
    uint32_t flags;   /* CQ, QP */
    uint32_t thread;  /* QP: engine thread */
    uint32_t send_cqn, recv_cqn, sq_wqebb, rq_wqe, rq_sge; /* QP */
};

struct sn_ctl_resp {
    int32_t err; /* 0 or -errno */
    char msg[160];
    union {
        struct {
            uint64_t engine_id;
            uint32_t nthreads;
            int32_t pid;
        } hello;
        struct {
            uint32_t dev;
            uint32_t attached; /* an orphaned domain was re-attached */
            uint32_t timed;
            char model[16];
        } dev_open;
        struct {
            uint32_t key;
        } mr;
        struct sn_ctl_obj obj; /* CQ_CREATE, QP_CREATE, ATTACH */
        struct {
            uint32_t devices; /* live and orphaned */
            uint32_t orphans; /* persistent domains without a process */
            uint32_t mems, mrs, cqs, qps;
            /* RoCE endpoint counters (0 without --listen) */
            uint64_t roce_tx, roce_rx, retrans, timeouts;
            uint64_t seq_naks_rx, seq_naks_tx, rnr_naks_rx, rnr_naks_tx;
            uint64_t dups_rx, roce_errors, drops, credit_waits, raw_in;
            uint64_t bad_drops; /* of drops: malformed, ICRC wrong */
        } stats;
        struct rnic_addr addr; /* QP_ADDR */
    } u;
};

struct sn_engine;
struct sn_session;

/* Starts a session for the application pid on e; NULL when out of
 * memory. The caller ends it with sn_session_end(). */
struct sn_session *sn_session_new(struct sn_engine *e, pid_t pid);
/*
 * Ends a session (its application closed the device, died or
 * disconnected): frees what it owned except persistent objects, which
 * stay with their (now orphaned) domain.
 */
void sn_session_end(struct sn_session *s);
/* Frees every orphaned persistent domain (rdn-nicd is shutting down). */
void sn_engine_drop_domains(struct sn_engine *e);
/* Returns whether any device (live or orphaned) remains in the engine. */
int sn_engine_has_devices(struct sn_engine *e);

/*
 * Executes req for session s. fd_in is the request's descriptor (or -1);
 * the handler dups what it keeps. *fd_out receives a descriptor the caller
 * must close after use (or -1). Always fills resp (err, msg).
 */
void sn_ctl_handle(struct sn_session *s, const struct sn_ctl_req *req,
                   int fd_in, struct sn_ctl_resp *resp, int *fd_out);

/*
 * Defaults for devices whose DEV_OPEN names no model / strict window /
 * trace file (rdn-nicd's flags); trace_path may be NULL. 0 or -errno.
 */
int sn_engine_defaults(struct sn_engine *e, const char *model, int strict,
                       const char *trace_path);

#endif /* RDN_SOFTNIC_CTL_H */

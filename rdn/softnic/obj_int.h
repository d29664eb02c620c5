/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/obj_int.h - creating and destroying the engine's objects (areas,
 * MRs, CQs, QPs). Private to rdn/softnic/; every function here runs under
 * the engine's control lock (eng->lock) and reports failures by filling
 * resp (negative errno + message) and returning the errno.
 */
#ifndef RDN_SOFTNIC_OBJ_INT_H
#define RDN_SOFTNIC_OBJ_INT_H

#include "rdn/softnic/ctl.h"
#include "rdn/softnic/engine_int.h"

struct sn_session {
    struct sn_engine *eng;
    pid_t pid;
    struct sn_link devs; /* struct sn_dev.node of the devices it owns */
};

/* Fills resp with err and a message; returns err. */
int sn_fail(struct sn_ctl_resp *resp, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- mr.c ------------------------------------------------------------- */

/* Maps fd ([va, va+len) in the application) for device d. */
int sn_area_new(struct sn_dev *d, int fd, uint64_t va, uint64_t len,
                bool registrable, struct sn_ctl_resp *resp,
                struct sn_area **out);
/* Drops a reference; the last one unmaps (callers synced the engine). */
void sn_area_put(struct sn_area *a);
/* Takes the area out of the device's registrable list. */
void sn_area_unlink(struct sn_area *a);
struct sn_area *sn_area_find(struct sn_dev *d, uint64_t va, bool is_mem);
int sn_mem_dereg(struct sn_dev *d, uint64_t va, struct sn_ctl_resp *resp);
int sn_mr_reg(struct sn_dev *d, uint64_t va, uint64_t len, uint32_t access,
              struct sn_ctl_resp *resp, struct sn_mr **out);
struct sn_mr *sn_mr_find(struct sn_dev *d, uint32_t key);
void sn_mr_dereg(struct sn_mr *mr);

/* ---- obj.c ------------------------------------------------------------ */

int sn_cq_create(struct sn_dev *d, int fd, uint64_t va, uint32_t depth,
                 uint32_t flags, struct sn_ctl_resp *resp, struct sn_cq **out);
int sn_cq_destroy(struct sn_cq *cq, struct sn_ctl_resp *resp);
struct sn_cq *sn_cq_find(struct sn_dev *d, uint32_t cqn);
int sn_qp_create(struct sn_dev *d, int fd, const struct sn_ctl_req *req,
                 struct sn_ctl_resp *resp, struct sn_qp **out);
void sn_qp_destroy(struct sn_qp *qp);
struct sn_qp *sn_qp_find(struct sn_dev *d, uint32_t qpn);
int sn_qp_connect(struct sn_qp *qp, const struct rnic_addr *remote,
                  struct sn_ctl_resp *resp);
int sn_qp_source(struct sn_qp *qp, const uint8_t gid[16],
                 struct sn_ctl_resp *resp);
void sn_qp_describe(const struct sn_qp *qp, struct sn_ctl_obj *o);
void sn_cq_describe(const struct sn_cq *cq, struct sn_ctl_obj *o);

#endif /* RDN_SOFTNIC_OBJ_INT_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/rnic/provider.h - the table behind rdn/rnic/rnic.h.
 *
 * A provider (softnic in-process, softnic through rdn-nicd, verbs, mlx5)
 * fills a struct rnic_ops and embeds the common object headers below as the
 * first member of its own objects; rdn/rnic/rnic.c checks arguments and
 * dispatches through dev->ops. Adding a hardware provider means adding one
 * entry to the provider list in rdn/rnic/rnic.c: callers do not change.
 */
#ifndef RDN_RNIC_PROVIDER_H
#define RDN_RNIC_PROVIDER_H

#include "rdn/rnic/rnic.h"

struct rnic_ops;

/* Common heads of provider objects (the provider embeds them first). */
struct rnic_device {
    const struct rnic_ops *ops;
    char name[32];
};

struct rnic_cq {
    struct rnic_device *dev;
    uint32_t num;
};

struct rnic_qp {
    struct rnic_device *dev;
    uint32_t num;
    struct rnic_sq sq; /* buf NULL: no raw ring, ops->post_send posts */
    uint32_t sq_pi;    /* last doorbell rung through rnic.c */
};

/* What a provider allocates for an MR: the public part first. */
struct rnic_mr_obj {
    struct rnic_mr pub;
    struct rnic_device *dev;
};

struct rnic_ops {
    void (*close)(struct rnic_device *dev);
    int (*mem_alloc)(struct rnic_device *dev, size_t len, void **addr);
    int (*mem_free)(struct rnic_device *dev, void *addr);
    int (*reg_mr)(struct rnic_device *dev, void *addr, size_t len,
                  unsigned access, struct rnic_mr **out);
    int (*dereg_mr)(struct rnic_mr *mr);
    int (*create_cq)(struct rnic_device *dev,
                     const struct rnic_cq_init_attr *attr,
                     struct rnic_cq **out);
    int (*destroy_cq)(struct rnic_cq *cq);
    int (*poll_cq)(struct rnic_cq *cq, int max, struct rnic_wc *wc);
    int (*cq_wait)(struct rnic_cq *cq, int timeout_ms);
    int (*create_qp)(struct rnic_device *dev,
                     const struct rnic_qp_init_attr *attr,
                     struct rnic_qp **out);
    int (*destroy_qp)(struct rnic_qp *qp);
    enum rnic_qp_state (*qp_state)(const struct rnic_qp *qp);
    int (*qp_addr)(const struct rnic_qp *qp, struct rnic_addr *out);
    int (*connect)(struct rnic_qp *qp, const struct rnic_addr *remote);
    /* NULL: one address per device (rnic_qp_set_gid says -EOPNOTSUPP) */
    int (*qp_set_gid)(struct rnic_qp *qp, const uint8_t gid[16]);
    int (*ring_doorbell)(struct rnic_qp *qp, uint32_t sq_pi);
    /*
     * NULL for a provider with a raw ring: rnic.c writes the WQE there and
     * rings. Set (and sq.buf NULL) for one whose driver owns the ring.
     */
    int (*post_send)(struct rnic_qp *qp, const struct rnic_send_wr *wr);
    int (*post_recv)(struct rnic_qp *qp, const struct rnic_sge *sge, unsigned n,
                     uint64_t wr_id);
    /* NULL: the provider has no RDMA-writable record (rnic_qp_rq_doorbell) */
    void *(*qp_rq_doorbell)(struct rnic_qp *qp);
    /* Persistence (NULL: the provider has none, calls fail -EOPNOTSUPP). */
    int (*persist)(struct rnic_device *dev, enum rnic_obj_type type, void *obj,
                   const char *name);
    int (*attach)(struct rnic_device *dev, enum rnic_obj_type type,
                  const char *name, void **out);
    size_t (*mem_len)(struct rnic_device *dev, void *addr);
    /* NULL: no capabilities to report (rnic_device_caps: -EOPNOTSUPP). */
    int (*device_caps)(const struct rnic_device *dev, char *buf, size_t len);
};

/*
 * A provider: open() returns -ENODEV when the name is not one of its
 * devices, so rnic_open() can try the next provider.
 */
struct rnic_provider {
    const char *name;
    int (*open)(const char *name, const struct rnic_open_opts *opts,
                struct rnic_device **out);
};

/*
 * The completion opcode (enum rnic_wc_opcode) of a send WQE of mlx5 opcode
 * op; RNIC_WC_NOP for NOP and opcodes without a completion kind.
 */
uint8_t rnic_wc_opcode_of(uint8_t op);

/*
 * Records the calling thread's error message (printf format) and returns
 * err (a negative errno), so providers can write `return rnic_err(...)`.
 */
int rnic_err(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* RDN_RNIC_PROVIDER_H */

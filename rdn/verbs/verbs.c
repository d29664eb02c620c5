/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/verbs/verbs.c - the rnic provider over libibverbs (see verbs.h).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "proto/mlx5.h"
#include "rdn/verbs/verbs.h"

#define VB_PREFIX     "verbs:"
#define VB_PORT       1
#define VB_UDP_PORT   4791
#define VB_ADDR_GIDOK 0x01
#define VB_MAX_RD     16 /* outstanding READ/atomics asked for per QP */

/* Who can do what plain verbs cannot, for the -EOPNOTSUPP messages. */
#define VB_CROSS_CHANNEL "softnic or mlx5 (a ConnectX through DevX)"

/* The agreed rnic_addr layout (verbs.h). */
struct vb_addr {
    uint8_t gid[16];
    be32 qpn;
    be32 psn;
    be16 udp_port;
    uint8_t mtu;
    uint8_t flags;
    uint8_t priv[4];
};

_Static_assert(sizeof(struct vb_addr) == sizeof(struct rnic_addr),
               "the address fills struct rnic_addr");

/* Every object is on its device's list, so rnic_close() frees what is left. */
struct vb_link {
    struct vb_link *prev, *next;
};

struct vb_mem {
    struct vb_link link;
    void *addr;
    size_t len;
};

struct vb_mr {
    struct rnic_mr_obj pub;
    struct vb_link link;
    struct ibv_mr *mr;
};

struct vb_cq {
    struct rnic_cq pub;
    struct vb_link link;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq;
    struct ibv_wc stash; /* taken by cq_wait, handed out by poll_cq */
    bool stashed;
};

struct vb_qp {
    struct rnic_qp pub;
    struct vb_link link;
    struct ibv_qp *qp;
    uint32_t psn;
    unsigned access; /* IBV_ACCESS_REMOTE_* it serves */
    bool has_rq;
};

struct vb_dev {
    struct rnic_device pub;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_device_attr attr;
    int gid_index;
    union ibv_gid gid;
    enum ibv_mtu mtu;
    pthread_mutex_t lock;
    struct vb_link mems, mrs, cqs, qps;
};

static const struct rnic_ops vb_ops;

#define vb_of(ptr, type, member)                                               \
    ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static void list_init(struct vb_link *head)
{
    head->prev = head->next = head;
}

static void list_add(struct vb_dev *d, struct vb_link *head, struct vb_link *l)
{
    pthread_mutex_lock(&d->lock);
    l->next = head->next;
    l->prev = head;
    head->next->prev = l;
    head->next = l;
    pthread_mutex_unlock(&d->lock);
}

static void list_del(struct vb_dev *d, struct vb_link *l)
{
    pthread_mutex_lock(&d->lock);
    l->prev->next = l->next;
    l->next->prev = l->prev;
    pthread_mutex_unlock(&d->lock);
}

static struct vb_dev *dev_of(struct rnic_device *dev)
{
    return (struct vb_dev *)dev;
}

/* ---- device ----------------------------------------------------------- */

/* The GID rnic_addr carries: see verbs.h for the order of preference. */
static int pick_gid(struct vb_dev *d, const struct ibv_port_attr *pa)
{
    const char *env = getenv("RDN_VERBS_GID_INDEX");
    int v2 = -1, v2_ipv4 = -1;

    if (env && *env) {
        char *end;
        long i = strtol(env, &end, 10);

        if (*end || i < 0 || i >= pa->gid_tbl_len)
            return rnic_err(-EINVAL,
                            "verbs: RDN_VERBS_GID_INDEX=%s is not "
                            "a GID index of %s",
                            env, d->pub.name);
        d->gid_index = (int)i;
    } else {
        for (int i = 0; i < pa->gid_tbl_len; i++) {
            struct ibv_gid_entry e;
            static const uint8_t v4_prefix[12] = {[10] = 0xff, [11] = 0xff};

            if (ibv_query_gid_ex(d->ctx, VB_PORT, (uint32_t)i, &e, 0) != 0 ||
                e.gid_type != IBV_GID_TYPE_ROCE_V2)
                continue;
            if (v2 < 0)
                v2 = i;
            if (v2_ipv4 < 0 && !memcmp(e.gid.raw, v4_prefix, 12))
                v2_ipv4 = i;
        }
        d->gid_index = v2_ipv4 >= 0 ? v2_ipv4 : v2 >= 0 ? v2 : 0;
    }
    if (ibv_query_gid(d->ctx, VB_PORT, d->gid_index, &d->gid) != 0)
        return rnic_err(-EIO, "verbs: %s has no GID %d on port %d", d->pub.name,
                        d->gid_index, VB_PORT);
    return 0;
}

static int open_ctx(struct vb_dev *d, const char *ibname,
                    struct ibv_context *(*open_fn)(struct ibv_device *))
{
    struct ibv_device **list;
    int n, rc = -ENODEV;

    list = ibv_get_device_list(&n);
    if (!list)
        return rnic_err(-errno ? -errno : -ENODEV,
                        "verbs: no RDMA devices (%s)", strerror(errno));
    for (int i = 0; i < n; i++) {
        if (strcmp(ibv_get_device_name(list[i]), ibname) != 0)
            continue;
        d->ctx = open_fn ? open_fn(list[i]) : ibv_open_device(list[i]);
        rc = d->ctx ? 0 : -(errno ? errno : EIO);
        break;
    }
    ibv_free_device_list(list);
    if (rc == -ENODEV)
        return rnic_err(rc, "verbs: no RDMA device '%s'", ibname);
    if (rc < 0)
        return rnic_err(rc, "verbs: cannot open %s: %s", ibname, strerror(-rc));
    return 0;
}

static int open_dev(const char *name,
                    struct ibv_context *(*open_fn)(struct ibv_device *),
                    struct rnic_device **out)
{
    struct ibv_port_attr pa;
    struct vb_dev *d;
    int rc;

    if (strlen(name) >= sizeof(d->pub.name) || !name[strlen(VB_PREFIX)])
        return rnic_err(-EINVAL, "verbs: bad device name '%s'", name);
    d = calloc(1, sizeof(*d));
    if (!d)
        return rnic_err(-ENOMEM, "verbs: out of memory");
    d->pub.ops = &vb_ops;
    strcpy(d->pub.name, name);
    pthread_mutex_init(&d->lock, NULL);
    list_init(&d->mems);
    list_init(&d->mrs);
    list_init(&d->cqs);
    list_init(&d->qps);
    rc = open_ctx(d, name + strlen(VB_PREFIX), open_fn);
    if (rc < 0)
        goto free_dev;
    if (ibv_query_device(d->ctx, &d->attr) != 0 ||
        ibv_query_port(d->ctx, VB_PORT, &pa) != 0) {
        rc = rnic_err(-EIO, "verbs: cannot query %s", name);
        goto close_ctx;
    }
    if (pa.state != IBV_PORT_ACTIVE) {
        rc = rnic_err(-ENETDOWN, "verbs: port %d of %s is not active", VB_PORT,
                      name);
        goto close_ctx;
    }
    d->mtu = pa.active_mtu;
    rc = pick_gid(d, &pa);
    if (rc < 0)
        goto close_ctx;
    d->pd = ibv_alloc_pd(d->ctx);
    if (!d->pd) {
        rc = rnic_err(-ENOMEM, "verbs: %s: no protection domain", name);
        goto close_ctx;
    }
    *out = &d->pub;
    return 0;
close_ctx:
    ibv_close_device(d->ctx);
free_dev:
    pthread_mutex_destroy(&d->lock);
    free(d);
    return rc;
}

static int vb_open(const char *name, const struct rnic_open_opts *opts,
                   struct rnic_device **out)
{
    if (strncmp(name, VB_PREFIX, strlen(VB_PREFIX)) != 0)
        return -ENODEV;
    if (opts && opts->domain)
        return rnic_err(-EOPNOTSUPP,
                        "verbs: %s has no persistent domains "
                        "(only the softnic daemon has them)",
                        name);
    return open_dev(name, NULL, out);
}

int verbs_open_with(const char *ibname,
                    struct ibv_context *(*open_fn)(struct ibv_device *),
                    struct rnic_device **out)
{
    char name[sizeof(((struct rnic_device *)0)->name)];

    if ((size_t)snprintf(name, sizeof(name), VB_PREFIX "%s", ibname) >=
        sizeof(name))
        return rnic_err(-EINVAL, "verbs: bad device name '%s'", ibname);
    return open_dev(name, open_fn, out);
}

struct ibv_context *verbs_context(struct rnic_device *dev)
{
    return dev_of(dev)->ctx;
}

struct ibv_pd *verbs_pd(struct rnic_device *dev)
{
    return dev_of(dev)->pd;
}

void verbs_port(struct rnic_device *dev, union ibv_gid *gid, int *gid_index,
                enum ibv_mtu *mtu)
{
    *gid = dev_of(dev)->gid;
    *gid_index = dev_of(dev)->gid_index;
    *mtu = dev_of(dev)->mtu;
}

static int vb_destroy_qp(struct rnic_qp *qp);
static int vb_destroy_cq(struct rnic_cq *cq);
static int vb_dereg_mr(struct rnic_mr *mr);
static int vb_mem_free(struct rnic_device *dev, void *addr);

static void vb_close(struct rnic_device *dev)
{
    struct vb_dev *d = dev_of(dev);

    while (d->qps.next != &d->qps)
        vb_destroy_qp(&vb_of(d->qps.next, struct vb_qp, link)->pub);
    while (d->mrs.next != &d->mrs)
        vb_dereg_mr(&vb_of(d->mrs.next, struct vb_mr, link)->pub.pub);
    while (d->cqs.next != &d->cqs)
        vb_destroy_cq(&vb_of(d->cqs.next, struct vb_cq, link)->pub);
    while (d->mems.next != &d->mems)
        vb_mem_free(dev, vb_of(d->mems.next, struct vb_mem, link)->addr);
    ibv_dealloc_pd(d->pd);
    ibv_close_device(d->ctx);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* ---- memory ----------------------------------------------------------- */

static int vb_mem_alloc(struct rnic_device *dev, size_t len, void **addr)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct vb_mem *m = calloc(1, sizeof(*m));

    if (!m)
        return rnic_err(-ENOMEM, "verbs: out of memory");
    m->len = (len + page - 1) & ~(page - 1);
    m->addr = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m->addr == MAP_FAILED) {
        int err = errno;

        free(m);
        return rnic_err(-err, "verbs: mmap of %zu bytes: %s", len,
                        strerror(err));
    }
    list_add(dev_of(dev), &dev_of(dev)->mems, &m->link);
    *addr = m->addr;
    return 0;
}

static struct vb_mem *find_mem(struct vb_dev *d, const void *addr)
{
    struct vb_mem *found = NULL;

    pthread_mutex_lock(&d->lock);
    for (struct vb_link *l = d->mems.next; l != &d->mems; l = l->next) {
        struct vb_mem *m = vb_of(l, struct vb_mem, link);

        if (m->addr == addr) {
            found = m;
            break;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return found;
}

static int vb_mem_free(struct rnic_device *dev, void *addr)
{
    struct vb_mem *m = find_mem(dev_of(dev), addr);

    if (!m)
        return rnic_err(-EINVAL, "verbs: %p is not memory of %s", addr,
                        dev->name);
    list_del(dev_of(dev), &m->link);
    munmap(m->addr, m->len);
    free(m);
    return 0;
}

static size_t vb_mem_len(struct rnic_device *dev, void *addr)
{
    struct vb_mem *m = find_mem(dev_of(dev), addr);

    return m ? m->len : 0;
}

static int ibv_access(unsigned access)
{
    return ((access & RNIC_ACCESS_LOCAL_WRITE) ? IBV_ACCESS_LOCAL_WRITE : 0) |
           ((access & RNIC_ACCESS_REMOTE_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0) |
           ((access & RNIC_ACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
           ((access & RNIC_ACCESS_REMOTE_ATOMIC) ? IBV_ACCESS_REMOTE_ATOMIC
                                                 : 0);
}

static int vb_reg_mr(struct rnic_device *dev, void *addr, size_t len,
                     unsigned access, struct rnic_mr **out)
{
    struct vb_mr *m = calloc(1, sizeof(*m));

    if (!m)
        return rnic_err(-ENOMEM, "verbs: out of memory");
    m->mr = ibv_reg_mr(dev_of(dev)->pd, addr, len, ibv_access(access));
    if (!m->mr) {
        int err = errno ? errno : EINVAL;

        free(m);
        return rnic_err(-err, "verbs: ibv_reg_mr(%p, %zu): %s", addr, len,
                        strerror(err));
    }
    m->pub.pub.addr = addr;
    m->pub.pub.length = len;
    m->pub.pub.lkey = m->mr->lkey;
    m->pub.pub.rkey = m->mr->rkey;
    m->pub.pub.access = access;
    m->pub.dev = dev;
    list_add(dev_of(dev), &dev_of(dev)->mrs, &m->link);
    *out = &m->pub.pub;
    return 0;
}

static int vb_dereg_mr(struct rnic_mr *mr)
{
    struct vb_mr *m = (struct vb_mr *)mr;
    int rc = ibv_dereg_mr(m->mr);

    if (rc != 0)
        return rnic_err(-rc, "verbs: ibv_dereg_mr: %s", strerror(rc));
    list_del(dev_of(m->pub.dev), &m->link);
    free(m);
    return 0;
}

/* ---- completion queues ------------------------------------------------ */

static int vb_create_cq(struct rnic_device *dev,
                        const struct rnic_cq_init_attr *attr,
                        struct rnic_cq **out)
{
    struct vb_dev *d = dev_of(dev);
    struct vb_cq *c;
    int rc;

    if (attr->flags & RNIC_CQ_IGNORE_OVERRUN)
        return rnic_err(
            -EOPNOTSUPP,
            "verbs: %s: CQs that ignore overrun need " VB_CROSS_CHANNEL,
            dev->name);
    if ((int)attr->depth > d->attr.max_cqe)
        return rnic_err(-EINVAL, "verbs: CQ depth %u > %s's %d", attr->depth,
                        dev->name, d->attr.max_cqe);
    c = calloc(1, sizeof(*c));
    if (!c)
        return rnic_err(-ENOMEM, "verbs: out of memory");
    c->ch = ibv_create_comp_channel(d->ctx);
    if (!c->ch) {
        rc = rnic_err(-(errno ? errno : ENOMEM),
                      "verbs: ibv_create_comp_channel: %s", strerror(errno));
        goto free_cq;
    }
    if (fcntl(c->ch->fd, F_SETFL, fcntl(c->ch->fd, F_GETFL) | O_NONBLOCK)) {
        rc = rnic_err(-errno, "verbs: completion channel: %s", strerror(errno));
        goto destroy_ch;
    }
    c->cq = ibv_create_cq(d->ctx, (int)attr->depth, c, c->ch, 0);
    if (!c->cq) {
        rc = rnic_err(-(errno ? errno : ENOMEM), "verbs: ibv_create_cq: %s",
                      strerror(errno));
        goto destroy_ch;
    }
    c->pub.dev = dev;
    /* No WAIT names a verbs CQ: its number is only an identity. */
    c->pub.num = c->cq->handle;
    list_add(d, &d->cqs, &c->link);
    *out = &c->pub;
    return 0;
destroy_ch:
    ibv_destroy_comp_channel(c->ch);
free_cq:
    free(c);
    return rc;
}

static int vb_destroy_cq(struct rnic_cq *cq)
{
    struct vb_cq *c = (struct vb_cq *)cq;
    int rc = ibv_destroy_cq(c->cq);

    if (rc != 0)
        return rnic_err(-rc, "verbs: ibv_destroy_cq: %s (QPs still use it?)",
                        strerror(rc));
    ibv_destroy_comp_channel(c->ch);
    list_del(dev_of(cq->dev), &c->link);
    free(c);
    return 0;
}

static uint8_t wc_status(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS:
        return RNIC_WC_SUCCESS;
    case IBV_WC_LOC_LEN_ERR:
        return RNIC_WC_LOC_LEN_ERR;
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_MW_BIND_ERR:
        return RNIC_WC_LOC_PROT_ERR;
    case IBV_WC_WR_FLUSH_ERR:
        return RNIC_WC_WR_FLUSH_ERR;
    case IBV_WC_REM_INV_REQ_ERR:
        return RNIC_WC_REM_INV_REQ_ERR;
    case IBV_WC_REM_ACCESS_ERR:
        return RNIC_WC_REM_ACCESS_ERR;
    case IBV_WC_REM_OP_ERR:
        return RNIC_WC_REM_OP_ERR;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return RNIC_WC_RETRY_EXC_ERR;
    default: /* QP operation, EEC, fatal...: the local QP failed */
        return RNIC_WC_LOC_QP_OP_ERR;
    }
}

static uint8_t wc_opcode(enum ibv_wc_opcode op)
{
    switch (op) {
    case IBV_WC_RDMA_WRITE:
        return RNIC_WC_RDMA_WRITE;
    case IBV_WC_RDMA_READ:
        return RNIC_WC_RDMA_READ;
    case IBV_WC_COMP_SWAP:
        return RNIC_WC_COMP_SWAP;
    case IBV_WC_FETCH_ADD:
        return RNIC_WC_FETCH_ADD;
    case IBV_WC_RECV:
        return RNIC_WC_RECV;
    case IBV_WC_RECV_RDMA_WITH_IMM:
        return RNIC_WC_RECV_RDMA_IMM;
    default:
        return RNIC_WC_SEND;
    }
}

static void to_rnic_wc(const struct ibv_wc *w, struct rnic_wc *out)
{
    memset(out, 0, sizeof(*out));
    out->wr_id = w->wr_id;
    out->qpn = w->qp_num;
    out->status = wc_status(w->status);
    /* An error completion's opcode is undefined in verbs (flushed
     * receives included): only wr_id and qpn tell what failed. */
    out->opcode =
        w->status == IBV_WC_SUCCESS ? wc_opcode(w->opcode) : RNIC_WC_SEND;
    out->byte_len = w->byte_len;
    if (!(w->opcode & IBV_WC_RECV))
        out->wqe_counter = (uint16_t)w->wr_id;
    if (w->status == IBV_WC_SUCCESS && (w->wc_flags & IBV_WC_WITH_IMM)) {
        out->flags |= RNIC_WC_WITH_IMM;
        out->imm = be32_to_cpu((__force be32)w->imm_data);
    }
}

static int vb_poll_cq(struct rnic_cq *cq, int max, struct rnic_wc *wc)
{
    struct vb_cq *c = (struct vb_cq *)cq;
    struct ibv_wc w[16];
    int got = 0;

    if (max > 0 && c->stashed) {
        to_rnic_wc(&c->stash, &wc[got++]);
        c->stashed = false;
    }
    while (got < max) {
        int want = max - got < 16 ? max - got : 16;
        int n = ibv_poll_cq(c->cq, want, w);

        if (n < 0)
            return rnic_err(-EIO, "verbs: ibv_poll_cq failed");
        for (int i = 0; i < n; i++)
            to_rnic_wc(&w[i], &wc[got++]);
        if (n < want)
            break;
    }
    return got;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Takes one completion into the stash, if there is one: 1, 0 or -errno. */
static int stash_one(struct vb_cq *c)
{
    int n;

    if (c->stashed)
        return 1;
    n = ibv_poll_cq(c->cq, 1, &c->stash);
    if (n < 0)
        return rnic_err(-EIO, "verbs: ibv_poll_cq failed");
    c->stashed = n == 1;
    return n;
}

/*
 * Arms the CQ, polls once more (a completion that came before the arm
 * raises no event), then sleeps on the channel. Events are acknowledged
 * one by one, so destroying the CQ never waits.
 */
static int vb_cq_wait(struct rnic_cq *cq, int timeout_ms)
{
    struct vb_cq *c = (struct vb_cq *)cq;
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

    for (;;) {
        struct pollfd pfd = {.fd = c->ch->fd, .events = POLLIN};
        struct ibv_cq *ev_cq;
        void *ev_ctx;
        int left, rc = stash_one(c);

        if (rc != 0)
            return rc;
        if (ibv_req_notify_cq(c->cq, 0) != 0)
            return rnic_err(-EIO, "verbs: ibv_req_notify_cq failed");
        rc = stash_one(c);
        if (rc != 0)
            return rc;
        left = deadline < 0 ? -1 : (int)(deadline - now_ms());
        if (deadline >= 0 && left <= 0)
            return 0;
        rc = poll(&pfd, 1, left);
        if (rc < 0 && errno != EINTR)
            return rnic_err(-errno, "verbs: poll: %s", strerror(errno));
        if (rc > 0 && ibv_get_cq_event(c->ch, &ev_cq, &ev_ctx) == 0)
            ibv_ack_cq_events(ev_cq, 1);
    }
}

/* ---- queue pairs ------------------------------------------------------ */

static struct vb_qp *qp_of(const struct rnic_qp *qp)
{
    return (struct vb_qp *)(uintptr_t)qp;
}

static int modify(struct vb_qp *q, struct ibv_qp_attr *a, int mask,
                  const char *what)
{
    int rc = ibv_modify_qp(q->qp, a, mask);

    if (rc != 0)
        return rnic_err(-rc, "verbs: QP %u to %s: %s", q->pub.num, what,
                        strerror(rc));
    return 0;
}

static int vb_create_qp(struct rnic_device *dev,
                        const struct rnic_qp_init_attr *attr,
                        struct rnic_qp **out)
{
    struct vb_dev *d = dev_of(dev);
    struct ibv_qp_init_attr ia;
    struct ibv_qp_attr a;
    struct vb_qp *q;
    int rc;

    if (attr->flags &
        (RNIC_QP_CROSS_CHANNEL | RNIC_QP_MANAGED_SEND | RNIC_QP_MANAGED_RECV))
        return rnic_err(-EOPNOTSUPP,
                        "verbs: %s: cross-channel and managed queues "
                        "need " VB_CROSS_CHANNEL,
                        dev->name);
    if ((int)attr->sq_wqebb > d->attr.max_qp_wr ||
        (int)attr->rq_wqe > d->attr.max_qp_wr)
        return rnic_err(-EINVAL, "verbs: %s takes at most %d WRs per queue",
                        dev->name, d->attr.max_qp_wr);
    q = calloc(1, sizeof(*q));
    if (!q)
        return rnic_err(-ENOMEM, "verbs: out of memory");
    memset(&ia, 0, sizeof(ia));
    ia.send_cq = ((struct vb_cq *)attr->send_cq)->cq;
    ia.recv_cq =
        ((struct vb_cq *)(attr->recv_cq ? attr->recv_cq : attr->send_cq))->cq;
    ia.qp_type = IBV_QPT_RC;
    /* Each request takes at least one WQEBB of the caller's ring. */
    ia.cap.max_send_wr = attr->sq_wqebb;
    ia.cap.max_send_sge = d->attr.max_sge < RNIC_SEND_MAX_SGE
                              ? (uint32_t)d->attr.max_sge
                              : RNIC_SEND_MAX_SGE;
    ia.cap.max_recv_wr = attr->rq_wqe ? attr->rq_wqe : 1;
    ia.cap.max_recv_sge = attr->rq_wqe ? attr->max_recv_sge : 1;
    q->qp = ibv_create_qp(d->pd, &ia);
    if (!q->qp) {
        rc = rnic_err(-(errno ? errno : ENOMEM), "verbs: ibv_create_qp: %s",
                      strerror(errno));
        goto free_qp;
    }
    q->pub.dev = dev;
    q->pub.num = q->qp->qp_num;
    q->has_rq = attr->rq_wqe > 0;
    q->access = (attr->flags & RNIC_QP_RESTRICT_ACCESS)
                    ? (unsigned)ibv_access(attr->access)
                    : IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                          IBV_ACCESS_REMOTE_ATOMIC;
    q->psn = verbs_new_psn();
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = VB_PORT;
    a.qp_access_flags = (int)q->access;
    rc = modify(q, &a,
                IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                    IBV_QP_ACCESS_FLAGS,
                "INIT");
    if (rc < 0)
        goto destroy_qp;
    list_add(d, &d->qps, &q->link);
    *out = &q->pub;
    return 0;
destroy_qp:
    ibv_destroy_qp(q->qp);
free_qp:
    free(q);
    return rc;
}

static int vb_destroy_qp(struct rnic_qp *qp)
{
    struct vb_qp *q = qp_of(qp);
    int rc = ibv_destroy_qp(q->qp);

    if (rc != 0)
        return rnic_err(-rc, "verbs: ibv_destroy_qp: %s", strerror(rc));
    list_del(dev_of(qp->dev), &q->link);
    free(q);
    return 0;
}

static enum rnic_qp_state vb_qp_state(const struct rnic_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;

    if (ibv_query_qp(qp_of(qp)->qp, &a, IBV_QP_STATE, &ia) != 0)
        return RNIC_QPS_ERR;
    switch (a.qp_state) {
    case IBV_QPS_RESET:
    case IBV_QPS_INIT:
    case IBV_QPS_RTR:
        return RNIC_QPS_RESET;
    case IBV_QPS_RTS:
    case IBV_QPS_SQD:
        return RNIC_QPS_RTS;
    default:
        return RNIC_QPS_ERR;
    }
}

uint32_t verbs_new_psn(void)
{
    uint32_t psn;

    if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
        psn = (uint32_t)now_ms();
    return psn & 0xffffff;
}

void verbs_fill_addr(struct rnic_device *dev, uint32_t qpn, uint32_t psn,
                     struct rnic_addr *out)
{
    struct vb_dev *d = dev_of(dev);
    struct vb_addr a;

    memset(&a, 0, sizeof(a));
    memcpy(a.gid, d->gid.raw, sizeof(a.gid));
    a.qpn = cpu_to_be32(qpn & 0xffffff);
    a.psn = cpu_to_be32(psn & 0xffffff);
    a.udp_port = cpu_to_be16(VB_UDP_PORT);
    a.mtu = (uint8_t)d->mtu;
    a.flags = VB_ADDR_GIDOK;
    memcpy(out->bytes, &a, sizeof(a));
}

int verbs_parse_addr(struct rnic_device *dev, const struct rnic_addr *remote,
                     struct verbs_peer *out)
{
    struct vb_dev *d = dev_of(dev);
    struct vb_addr r;
    uint16_t port;

    memcpy(&r, remote->bytes, sizeof(r));
    port = be16_to_cpu(r.udp_port);
    if (!(r.flags & VB_ADDR_GIDOK))
        return rnic_err(-EHOSTUNREACH,
                        "verbs: the peer's address has no GID (a softnic QP "
                        "without RoCE?): %s cannot reach it",
                        dev->name);
    if (port != 0 && port != VB_UDP_PORT)
        return rnic_err(-EOPNOTSUPP,
                        "verbs: the peer listens on UDP port %u; verbs "
                        "devices always send to 4791",
                        port);
    if (r.mtu < IBV_MTU_256 || r.mtu > IBV_MTU_4096)
        return rnic_err(-EINVAL, "verbs: the peer's MTU code %u is not 1..5",
                        r.mtu);
    memcpy(out->gid.raw, r.gid, sizeof(r.gid));
    out->qpn = be32_to_cpu(r.qpn) & 0xffffff;
    out->psn = be32_to_cpu(r.psn) & 0xffffff;
    out->mtu = r.mtu < d->mtu ? (enum ibv_mtu)r.mtu : d->mtu;
    return 0;
}

static int vb_qp_addr(const struct rnic_qp *qp, struct rnic_addr *out)
{
    verbs_fill_addr(qp->dev, qp->num, qp_of(qp)->psn, out);
    return 0;
}

static int vb_connect(struct rnic_qp *qp, const struct rnic_addr *remote)
{
    struct vb_dev *d = dev_of(qp->dev);
    struct vb_qp *q = qp_of(qp);
    struct verbs_peer r;
    struct ibv_qp_attr a;
    int rc = verbs_parse_addr(qp->dev, remote, &r);

    if (rc < 0)
        return rc;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = r.mtu;
    a.dest_qp_num = r.qpn;
    a.rq_psn = r.psn;
    a.max_dest_rd_atomic =
        (uint8_t)(d->attr.max_qp_rd_atom < VB_MAX_RD ? d->attr.max_qp_rd_atom
                                                     : VB_MAX_RD);
    a.min_rnr_timer = 12; /* 0.64 ms */
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = r.gid;
    a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.port_num = VB_PORT;
    rc = modify(q, &a,
                IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                    IBV_QP_MIN_RNR_TIMER,
                "RTR");
    if (rc < 0)
        return rc;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14; /* 67 ms per try */
    a.retry_cnt = 7;
    a.rnr_retry = 7; /* infinite, as softnic */
    a.sq_psn = q->psn;
    a.max_rd_atomic = (uint8_t)(d->attr.max_qp_init_rd_atom < VB_MAX_RD
                                    ? d->attr.max_qp_init_rd_atom
                                    : VB_MAX_RD);
    return modify(q, &a,
                  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                      IBV_QP_MAX_QP_RD_ATOMIC,
                  "RTS");
}

static int vb_ring_doorbell(struct rnic_qp *qp, uint32_t sq_pi)
{
    return rnic_err(-EOPNOTSUPP,
                    "verbs: %s has no raw send ring to ring (post with "
                    "rnic_post_send; raw rings need " VB_CROSS_CHANNEL ")",
                    qp->dev->name);
}

static int vb_post_send(struct rnic_qp *qp, const struct rnic_send_wr *wr)
{
    struct ibv_sge sg[RNIC_SEND_MAX_SGE];
    struct ibv_send_wr w, *bad;
    int rc;

    memset(&w, 0, sizeof(w));
    for (unsigned i = 0; i < wr->nsg; i++) {
        sg[i].addr = wr->sg[i].addr;
        sg[i].length = wr->sg[i].length;
        sg[i].lkey = wr->sg[i].lkey;
    }
    w.wr_id = wr->wr_id;
    w.sg_list = sg;
    w.num_sge = (int)wr->nsg;
    w.send_flags =
        ((wr->flags & MLX5_WQE_CTRL_CQ_UPDATE) ? IBV_SEND_SIGNALED : 0) |
        ((wr->flags & MLX5_WQE_CTRL_FENCE) ? IBV_SEND_FENCE : 0) |
        ((wr->flags & MLX5_WQE_CTRL_SOLICITED) ? IBV_SEND_SOLICITED : 0);
    switch (wr->opcode) {
    case MLX5_OPCODE_SEND:
        w.opcode = IBV_WR_SEND;
        break;
    case MLX5_OPCODE_SEND_IMM:
        w.opcode = IBV_WR_SEND_WITH_IMM;
        w.imm_data = (__force __be32)cpu_to_be32(wr->imm);
        break;
    case MLX5_OPCODE_RDMA_WRITE:
    case MLX5_OPCODE_RDMA_WRITE_IMM:
    case MLX5_OPCODE_RDMA_READ:
        w.opcode = wr->opcode == MLX5_OPCODE_RDMA_WRITE ? IBV_WR_RDMA_WRITE
                   : wr->opcode == MLX5_OPCODE_RDMA_READ
                       ? IBV_WR_RDMA_READ
                       : IBV_WR_RDMA_WRITE_WITH_IMM;
        w.imm_data = (__force __be32)cpu_to_be32(wr->imm);
        w.wr.rdma.remote_addr = wr->raddr;
        w.wr.rdma.rkey = wr->rkey;
        break;
    case MLX5_OPCODE_ATOMIC_CS:
    case MLX5_OPCODE_ATOMIC_FA:
        w.opcode = wr->opcode == MLX5_OPCODE_ATOMIC_CS
                       ? IBV_WR_ATOMIC_CMP_AND_SWP
                       : IBV_WR_ATOMIC_FETCH_AND_ADD;
        w.wr.atomic.remote_addr = wr->raddr;
        w.wr.atomic.rkey = wr->rkey;
        w.wr.atomic.compare_add =
            wr->opcode == MLX5_OPCODE_ATOMIC_CS ? wr->compare : wr->swap_add;
        w.wr.atomic.swap = wr->swap_add;
        break;
    default:
        return rnic_err(-EOPNOTSUPP,
                        "verbs: %s cannot post opcode 0x%02x (NOP, WAIT, "
                        "SEND_EN and RECV_EN need " VB_CROSS_CHANNEL ")",
                        qp->dev->name, wr->opcode);
    }
    rc = ibv_post_send(qp_of(qp)->qp, &w, &bad);
    if (rc == ENOMEM)
        return rnic_err(-ENOSPC, "verbs: send queue of QP %u is full", qp->num);
    if (rc != 0)
        return rnic_err(-rc, "verbs: ibv_post_send on QP %u: %s", qp->num,
                        strerror(rc));
    return 0;
}

static int vb_post_recv(struct rnic_qp *qp, const struct rnic_sge *sge,
                        unsigned n, uint64_t wr_id)
{
    struct ibv_sge sg[MLX5_RECV_MAX_SGE];
    struct ibv_recv_wr w, *bad;
    int rc;

    if (!qp_of(qp)->has_rq)
        return rnic_err(-EINVAL, "verbs: QP %u has no receive queue", qp->num);
    for (unsigned i = 0; i < n; i++) {
        sg[i].addr = sge[i].addr;
        sg[i].length = sge[i].length;
        sg[i].lkey = sge[i].lkey;
    }
    memset(&w, 0, sizeof(w));
    w.wr_id = wr_id;
    w.sg_list = sg;
    w.num_sge = (int)n;
    rc = ibv_post_recv(qp_of(qp)->qp, &w, &bad);
    if (rc == ENOMEM)
        return rnic_err(-ENOSPC, "verbs: receive queue of QP %u is full",
                        qp->num);
    if (rc != 0)
        return rnic_err(-rc, "verbs: ibv_post_recv on QP %u: %s", qp->num,
                        strerror(rc));
    return 0;
}

static const struct rnic_ops vb_ops = {
    .close = vb_close,
    .mem_alloc = vb_mem_alloc,
    .mem_free = vb_mem_free,
    .reg_mr = vb_reg_mr,
    .dereg_mr = vb_dereg_mr,
    .create_cq = vb_create_cq,
    .destroy_cq = vb_destroy_cq,
    .poll_cq = vb_poll_cq,
    .cq_wait = vb_cq_wait,
    .create_qp = vb_create_qp,
    .destroy_qp = vb_destroy_qp,
    .qp_state = vb_qp_state,
    .qp_addr = vb_qp_addr,
    .connect = vb_connect,
    .ring_doorbell = vb_ring_doorbell,
    .post_send = vb_post_send,
    .post_recv = vb_post_recv,
    .mem_len = vb_mem_len,
};

const struct rnic_provider verbs_provider = {
    .name = "verbs",
    .open = vb_open,
};

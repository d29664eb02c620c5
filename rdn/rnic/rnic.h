/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/rnic/rnic.h - the NIC interface: a small verbs-like API over a provider
 * (softnic, the software NIC that is always built, or mlx5 where a ConnectX
 * exists). Shaped after libibverbs, with the cross-channel features RedN
 * needs (WAIT, SEND_EN, RECV_EN, managed queues) and raw access to the send
 * ring: callers write mlx5-format WQE bytes (proto/mlx5.h) into the ring and
 * ring the doorbell with the new producer index.
 *
 * Errors: every int-returning call returns 0 (or a count) on success and a
 * negative errno on failure; rnic_errmsg() then describes the failure in
 * words (thread-local, valid until the thread's next rnic_* call). -EINVAL
 * always means a bad argument (NULL, out of range, an object of another
 * device); the other codes are listed per call.
 *
 * Ownership: a device owns every object created on it; rnic_close() frees
 * what is left. Handles stay valid until the object is destroyed.
 *
 * Threads: objects may be used from any thread, but one QP's send ring, and
 * one CQ's polling, must be driven by one thread at a time (as in verbs).
 * Creating and destroying objects of one device may happen from several
 * threads (the provider serialises them).
 *
 * What softnic executes exactly (index checks, byte_count 0, atomics, RNR,
 * errors, limits) is written down at the top of rdn/softnic/engine_int.h
 * and explained in docs/softnic.md.
 */
#ifndef RDN_RNIC_RNIC_H
#define RDN_RNIC_RNIC_H

#include <stddef.h>
#include <stdint.h>

#include "proto/byteorder.h"

struct rnic_device;
struct rnic_cq;
struct rnic_qp;

/* ---- devices ---------------------------------------------------------- */

/*
 * Options of rnic_open(); NULL means all defaults. Fields left 0 / NULL take
 * their value from the environment, then from the built-in default:
 *   model     RDN_SOFTNIC_MODEL   "fast" (no delay) or "cx5" (ConnectX-5)
 *   strict    RDN_SOFTNIC_STRICT  prefetch window of unmanaged queues in
 *                                 WQEs (0 = just-in-time fetch)
 *   trace     RDN_SOFTNIC_TRACE   file that receives the WQE trace
 *   socket    RDN_NICD_SOCKET     rdn-nicd's Unix socket
 *   autostart RDN_NICD_AUTOSTART  "0" forbids starting rdn-nicd
 *   domain    (no variable)       softnic daemon only: names the device's
 *                                 persistent domain (see "persistence"
 *                                 below); opening an orphaned domain by
 *                                 name re-attaches to it
 * Engine threads of "softnic-inproc" come from RDN_SOFTNIC_THREADS (default
 * 1), RDN_SOFTNIC_CPUS (comma list of CPUs to pin them to) and
 * RDN_SOFTNIC_SPIN_US (how long an idle engine thread polls before it
 * sleeps, default 50); rdn-nicd has flags for all three (rdn-nicd --help).
 * RDN_SOFTNIC_TIMING="wire_ns=300,..."
 * overrides single timing parameters (rdn/softnic/timing.h).
 */
struct rnic_open_opts {
    const char *model;
    int strict;
    const char *trace;
    const char *socket;
    int no_autostart;
    const char *domain; /* persistent domain; NULL = none */
};

/*
 * Opens a device by name: "softnic" (through the rdn-nicd daemon, started if
 * absent), "softnic-inproc" (an engine inside this process, for tests),
 * "verbs:<ibv device>" (any RDMA NIC through libibverbs, e.g. "verbs:rxe0",
 * "verbs:mlx5_0": RC send/receive, RDMA and atomics, no cross-channel), or
 * "mlx5:<ibv device>" (a ConnectX through mlx5dv/DevX, with the raw ring
 * and the cross-channel features, where built). NULL or "" means
 * $RDN_DEVICE, else "softnic". opts may be NULL (all defaults).
 *
 * Returns 0 with *out set, or a negative errno with *out NULL: -ENODEV (no
 * provider has that device), -EBUSY (opts->domain is held by a live
 * process), -EINVAL (a bad option, e.g. an unknown timing model),
 * -ENOMEM, or the error of reaching or starting rdn-nicd (or of opening
 * the hardware device). The caller owns the device and closes it with
 * rnic_close().
 */
int rnic_open(const char *name, const struct rnic_open_opts *opts,
              struct rnic_device **out);
/*
 * Closes dev and frees every object of it still open (their handles become
 * invalid); softnic's daemon keeps the ones marked persistent. NULL is a
 * no-op. No other thread may use dev or its objects meanwhile.
 */
void rnic_close(struct rnic_device *dev);

/* Returns the name dev was opened under ("" for NULL); owned by dev. */
const char *rnic_device_name(const struct rnic_device *dev);
/*
 * Writes into buf (len bytes, always NUL-terminated, cut to fit) the
 * hardware capabilities RedN depends on as dev's provider read them from
 * the NIC, as one line: mlx5's HCA capability bits, for instance.
 * Returns 0, -EINVAL (bad argument) or -EOPNOTSUPP (the provider has none
 * to report: softnic, which models every feature, and verbs).
 * Thread-safe.
 */
int rnic_device_caps(const struct rnic_device *dev, char *buf, size_t len);
/*
 * The name of the i-th provider built into this program, in rnic_open()'s
 * order (what --version reports), or NULL when i is past the last one.
 * Thread-safe: the table is constant.
 */
const char *rnic_provider_name(size_t i);

/*
 * Returns the message of the calling thread's last failed rnic_* call
 * ("no error" if none): thread-local storage, valid until that thread's
 * next failing rnic_* call.
 */
const char *rnic_errmsg(void);

/* ---- memory ----------------------------------------------------------- */

/*
 * Allocates len bytes (rounded up to pages) of zeroed memory the NIC can
 * reach (memfd-backed and shared with the engine for softnic). Only such
 * memory can be registered.
 *
 * Returns 0 with *addr set, or -EINVAL (len 0), -ENOMEM. The memory
 * belongs to dev: rnic_mem_free() or rnic_close() frees it.
 */
int rnic_mem_alloc(struct rnic_device *dev, size_t len, void **addr);

/*
 * Frees memory from rnic_mem_alloc() (addr exactly as returned). Returns
 * 0, -ENOENT (not memory from rnic_mem_alloc()), or -EBUSY (an MR still
 * covers it: deregister it first).
 */
int rnic_mem_free(struct rnic_device *dev, void *addr);

enum rnic_access {
    RNIC_ACCESS_LOCAL_WRITE = 1 << 0,
    RNIC_ACCESS_REMOTE_WRITE = 1 << 1,
    RNIC_ACCESS_REMOTE_READ = 1 << 2,
    RNIC_ACCESS_REMOTE_ATOMIC = 1 << 3,
};

/* A registered region; the provider owns it, callers read the fields. */
struct rnic_mr {
    void *addr;
    size_t length;
    uint32_t lkey;
    uint32_t rkey;
    unsigned access; /* enum rnic_access bits */
};

/*
 * Registers [addr, addr+len) with the given access (enum rnic_access bits;
 * REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE, as in verbs). The range
 * must lie in one piece of memory from rnic_mem_alloc() (WQ rings
 * included: see rnic_qp_sq()).
 *
 * Returns 0 with *out set, or -EINVAL (bad access bits, a range outside
 * NIC memory), -ENOMEM (the MR table is full). The MR belongs to dev;
 * rnic_dereg_mr() frees it.
 */
int rnic_reg_mr(struct rnic_device *dev, void *addr, size_t len,
                unsigned access, struct rnic_mr **out);

/*
 * Deregisters mr; its keys fail from then on (a stale key never names a
 * later MR). Returns 0 or -ENOENT. The caller makes sure no posted WQE
 * still uses it.
 */
int rnic_dereg_mr(struct rnic_mr *mr);

/* ---- completion queues ------------------------------------------------ */

enum rnic_wc_status {
    RNIC_WC_SUCCESS = 0,
    RNIC_WC_LOC_LEN_ERR,       /* scatter list too short, bad length */
    RNIC_WC_LOC_QP_OP_ERR,     /* malformed WQE: bad opcode, ds, ring */
    RNIC_WC_LOC_PROT_ERR,      /* bad lkey, bounds or local access */
    RNIC_WC_WR_FLUSH_ERR,      /* flushed: the QP was in the error state */
    RNIC_WC_REM_INV_REQ_ERR,   /* remote: no receive queue, bad request */
    RNIC_WC_REM_ACCESS_ERR,    /* remote: bad rkey, bounds or access */
    RNIC_WC_REM_OP_ERR,        /* remote: the responder failed the op */
    RNIC_WC_RETRY_EXC_ERR,     /* the peer is gone (disconnected) */
    RNIC_WC_RNR_RETRY_EXC_ERR, /* RoCE: the peer had no receive posted,
                                  rnr_retry times */
};

enum rnic_wc_opcode {
    RNIC_WC_SEND,
    RNIC_WC_RDMA_WRITE,
    RNIC_WC_RDMA_READ,
    RNIC_WC_COMP_SWAP,
    RNIC_WC_FETCH_ADD,
    RNIC_WC_NOP,
    RNIC_WC_WAIT,
    RNIC_WC_SEND_EN,
    RNIC_WC_RECV_EN,
    RNIC_WC_RECV,          /* a SEND arrived */
    RNIC_WC_RECV_RDMA_IMM, /* a WRITE_IMM arrived */
};

#define RNIC_WC_WITH_IMM 0x1

struct rnic_wc {
    uint64_t wr_id;       /* receive completions: wr_id of rnic_post_recv */
    uint32_t qpn;         /* the local QP */
    uint32_t byte_len;    /* bytes received, read or written */
    uint32_t imm;         /* immediate data, host order (WITH_IMM) */
    uint16_t wqe_counter; /* send completions: the WQE's index in WQEBBs */
    uint8_t opcode;       /* enum rnic_wc_opcode */
    uint8_t status;       /* enum rnic_wc_status */
    uint8_t flags;        /* RNIC_WC_WITH_IMM */
};

/* Returns a static name for an enum rnic_wc_status ("unknown status" for
 * other values). */
const char *rnic_wc_status_str(int status);

/*
 * Creates a CQ that holds at most depth completions (1..2^22). Overflow is
 * a CQ error: the completion is dropped, the CQ stops counting and
 * rnic_poll_cq() returns -EOVERFLOW from then on (see
 * rnic_create_cq_ex() for a CQ that cannot overflow). Returns 0 with *out
 * set, or -EINVAL, -ENOMEM (out of memory or CQ numbers). The CQ belongs
 * to dev; rnic_destroy_cq() frees it.
 */
int rnic_create_cq(struct rnic_device *dev, uint32_t depth,
                   struct rnic_cq **out);

/*
 * CQ flags. RNIC_CQ_IGNORE_OVERRUN is mlx5's "overrun ignore" CQ context
 * bit (what RedN's cross-channel CQs use): a full CQ overwrites its oldest
 * entries instead of failing, and keeps counting, so a CQ that only WAITs
 * watch never needs polling. A poller of such a CQ that fell behind by
 * more than depth silently skips the lost entries.
 */
enum rnic_cq_flags {
    RNIC_CQ_IGNORE_OVERRUN = 1 << 0,
};

struct rnic_cq_init_attr {
    uint32_t depth; /* 1..2^22, rounded up to a power of two */
    unsigned flags; /* enum rnic_cq_flags */
};

/* Creates a CQ as rnic_create_cq() does, with attr's flags. */
int rnic_create_cq_ex(struct rnic_device *dev,
                      const struct rnic_cq_init_attr *attr,
                      struct rnic_cq **out);

/*
 * Destroys cq. Returns 0, -ENOENT, or -EBUSY (a QP still uses it: destroy
 * the QP first).
 */
int rnic_destroy_cq(struct rnic_cq *cq);

/* Returns the CQ number a WAIT names (0 for NULL). */
uint32_t rnic_cq_num(const struct rnic_cq *cq);

/*
 * Takes up to max completions, oldest first, into wc. Returns how many
 * (0..max), or -EOVERFLOW (a CQ without IGNORE_OVERRUN overflowed; it
 * stays broken). One poller per CQ at a time.
 */
int rnic_poll_cq(struct rnic_cq *cq, int max, struct rnic_wc *wc);
/*
 * Sleeps until the CQ holds a completion or timeout_ms passes (-1 = no
 * limit): the completion-channel path of event-driven servers. Returns 1 if
 * a completion is ready (or the CQ overflowed: rnic_poll_cq() says so), 0
 * on timeout, -errno on error. It takes nothing from the CQ; call it from
 * the CQ's poller.
 */
int rnic_cq_wait(struct rnic_cq *cq, int timeout_ms);

/* ---- queue pairs ------------------------------------------------------ */

enum rnic_qp_flags {
    RNIC_QP_CROSS_CHANNEL = 1 << 0,   /* may post WAIT, SEND_EN, RECV_EN */
    RNIC_QP_MANAGED_SEND = 1 << 1,    /* send queue runs only when enabled */
    RNIC_QP_MANAGED_RECV = 1 << 2,    /* receive queue likewise (RECV_EN) */
    RNIC_QP_RESTRICT_ACCESS = 1 << 3, /* serve only attr.access */
};

/*
 * Responder access (verbs' qp_access_flags). Which inbound RDMA
 * operations a QP serves for its peer: RNIC_ACCESS_REMOTE_WRITE (WRITE,
 * WRITE_IMM), RNIC_ACCESS_REMOTE_READ (READ), RNIC_ACCESS_REMOTE_ATOMIC
 * (CAS, FADD). SENDs are always served (they need a posted receive).
 * Opt-in, for compatibility with callers that zero the struct: without
 * RNIC_QP_RESTRICT_ACCESS in flags the QP serves all three and access must
 * be 0; with it, exactly the REMOTE_* bits in access (0 = none). A request
 * the QP does not serve fails like a bad rkey: REM_ACCESS_ERR at the
 * requester, and the responder QP goes to the error state (RC).
 *
 * This, not the rkey, is the defence against a hostile peer: softnic's
 * keys carry 8 random bits per registration, which a peer allowed to send
 * requests can simply enumerate. A QP facing untrusted peers should serve
 * nothing it does not need (e.g. access 0 for a QP that only receives
 * SENDs), so that no rkey of the device is reachable through it.
 */

/*
 * Reliability over a network (softnic's RoCEv2; verbs' QP attributes of
 * the same names), used when the QP connects to a peer on another host.
 * All 0 means the defaults: timeout 14 (67 ms), retry_cnt 7, rnr_retry 7
 * (retry for ever), min_rnr_timer 12 (0.64 ms).
 *   timeout        1..31: the ACK timeout is 4.096 us * 2^timeout
 *   retry_cnt      0..7: retransmissions after a timeout or a lost
 *                  response before the WQE fails with RETRY_EXC_ERR
 *   rnr_retry      0..7 (7 = for ever): retries after an RNR NAK before
 *                  the WQE fails with RNR_RETRY_EXC_ERR
 *   min_rnr_timer  1..31 (IBA's table, 0.01 ms..491.52 ms; 0 = 655.36 ms):
 *                  the delay this QP's RNR NAKs ask of its peer
 */
struct rnic_qp_rc_attr {
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t min_rnr_timer;
    unsigned set; /* nonzero: use the four fields above, else defaults */
};

struct rnic_qp_init_attr {
    struct rnic_cq *send_cq;
    struct rnic_cq *recv_cq;
    uint32_t sq_wqebb;     /* send ring size in 64-B blocks, power of two */
    uint32_t rq_wqe;       /* receive ring entries, power of two, 0 = none */
    uint32_t max_recv_sge; /* 1..16 */
    unsigned flags;        /* enum rnic_qp_flags */
    unsigned access;       /* REMOTE_* bits, with RNIC_QP_RESTRICT_ACCESS */
    struct rnic_qp_rc_attr rc; /* across hosts; zeroed = defaults */
};

enum rnic_qp_state {
    RNIC_QPS_RESET, /* created, not connected */
    RNIC_QPS_RTS,   /* connected, running */
    RNIC_QPS_ERR,   /* a WQE failed or the peer went away */
};

/*
 * Creates an RC QP in the RESET state: a send ring of attr->sq_wqebb
 * blocks (a power of two, 1..32768), a receive ring when attr->rq_wqe is
 * not 0 (a power of two <= 32768, with a recv_cq and 1..16 max_recv_sge),
 * CQs of the same device. Returns 0 with *out set, or -EINVAL (bad sizes,
 * flags, access bits, CQs), -ENOMEM (out of memory or QP numbers). The QP
 * belongs to dev; rnic_destroy_qp() frees it.
 */
int rnic_create_qp(struct rnic_device *dev,
                   const struct rnic_qp_init_attr *attr, struct rnic_qp **out);

/*
 * Destroys qp; its peer sees it gone (RETRY_EXC_ERR on its next request).
 * Returns 0 or -ENOENT. Nobody may use the QP's ring or number afterwards.
 */
int rnic_destroy_qp(struct rnic_qp *qp);

/* Returns the QP number (0 for NULL). */
uint32_t rnic_qp_num(const struct rnic_qp *qp);

/* Returns the QP's state now (RNIC_QPS_ERR for NULL); any thread. */
enum rnic_qp_state rnic_qp_state(const struct rnic_qp *qp);

/*
 * The address a peer needs to connect to a QP; exchange it out of band.
 * 32 bytes, the same for every provider, so that a verbs peer (e.g. Linux
 * rxe) and softnic can exchange it through the same handshake. Multi-byte
 * fields are big-endian. priv has 4 bytes, not 8: the fields before it
 * take 28 of the handshake's 32.
 */
struct rnic_addr {
    union {
        uint8_t bytes[32];
        struct {
            uint8_t gid[16]; /* IPv6 GID; IPv4 as ::ffff:a.b.c.d */
            be32 qpn;        /* low 24 bits */
            be32 psn;        /* initial PSN, low 24 bits */
            be16 udp_port;   /* RoCEv2 destination port; 0 = 4791 */
            uint8_t mtu;     /* path MTU as enum ibv_mtu: 1=256..5=4096 */
            uint8_t flags;   /* RNIC_ADDR_GID: gid is valid */
            uint8_t priv[4]; /* provider-private (softnic: engine id) */
        };
    };
};

_Static_assert(sizeof(struct rnic_addr) == 32, "rnic_addr is 32 bytes");

#define RNIC_ADDR_GID  0x01 /* flags: gid holds a network address */
#define RNIC_ROCE_PORT 4791 /* RoCEv2's UDP destination port (IANA) */
#define RNIC_MTU_256   1
#define RNIC_MTU_4096  5

/* Path MTU in bytes of an enum ibv_mtu code (1..5), 0 for others. */
static inline uint32_t rnic_mtu_bytes(uint8_t mtu)
{
    return mtu >= 1 && mtu <= 5 ? 128u << mtu : 0;
}

/* Writes the QP's address into *out. Returns 0 or -EINVAL. */
int rnic_qp_addr(const struct rnic_qp *qp, struct rnic_addr *out);

/*
 * Chooses the network address qp speaks from across hosts: gid (IPv4 as
 * ::ffff:a.b.c.d) must be one of the device's own, as a RoCE NIC's GID
 * table holds one per address of its port; ibverbs' sgid_index. Packets
 * go out from it, are accepted only at it, and rnic_qp_addr() announces
 * it. A device with several addresses (softnic: rdn-nicd --listen
 * 0.0.0.0) needs this to hand each peer an address it can reach; without
 * it a QP speaks from the device's default address. Call in RESET, before
 * rnic_qp_addr() and rnic_connect(). Returns 0, or -EINVAL (bad argument,
 * QP not in RESET), -EADDRNOTAVAIL (not an address of this device, or it
 * has no network endpoint), -EOPNOTSUPP (the provider keeps one address
 * per device: verbs, mlx5).
 */
int rnic_qp_set_gid(struct rnic_qp *qp, const uint8_t gid[16]);

/*
 * rnic_qp_set_gid() with the local address of the connected IPv4 socket
 * fd (getsockname): what a server on several addresses does so that a
 * peer gets the address it reached the server at. Returns 1 when set, 0
 * when qp keeps the device's default address (fd not IPv4, or
 * rnic_qp_set_gid() said -EADDRNOTAVAIL or -EOPNOTSUPP), or another
 * -errno (-EINVAL: QP not in RESET).
 */
int rnic_qp_set_gid_sock(struct rnic_qp *qp, int fd);

/*
 * Connects qp (RC, RESET -> RTS) to the QP that produced remote; a QP may
 * connect to itself. Returns 0, or -EINVAL (not an address of this
 * provider, or qp already connected), -ENOENT (no such peer QP),
 * -EHOSTUNREACH (the peer is on another host and this device has no
 * network endpoint: softnic needs rdn-nicd --listen).
 */
int rnic_connect(struct rnic_qp *qp, const struct rnic_addr *remote);

/*
 * The send ring: wqebb_cnt 64-byte blocks at buf (NIC-shared memory, so it
 * may be registered and rewritten by RDMA). WQE i starts at block
 * i % wqebb_cnt; a WQE longer than one block wraps to the ring's start.
 */
struct rnic_sq {
    uint8_t *buf;
    uint32_t wqebb_cnt;
};

/*
 * Describes qp's send ring in *out (owned by qp). Returns 0, -EINVAL, or
 * -EOPNOTSUPP when the provider has no ring that callers may write (verbs:
 * libibverbs owns its rings); such a QP is posted to through
 * rnic_post_send() only.
 */
int rnic_qp_sq(struct rnic_qp *qp, struct rnic_sq *out);

/*
 * Tells the NIC that the WQEs before producer index sq_pi (in WQEBBs,
 * free-running; the low 16 bits count as on mlx5) are ready. Ignored by a
 * MANAGED_SEND queue, which runs only up to what SEND_EN enabled. Returns
 * 0; the WQEs must be fully written before the call. qp must not be NULL
 * (the data path checks nothing). One thread per send ring.
 */
int rnic_ring_doorbell(struct rnic_qp *qp, uint32_t sq_pi);

/* A scatter/gather entry. */
struct rnic_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
};

/*
 * One send work request for rnic_post_send(). opcode is an mlx5 opcode
 * (proto/mlx5.h); every provider takes SEND, SEND_IMM, RDMA_WRITE,
 * RDMA_WRITE_IMM, RDMA_READ, ATOMIC_CS and ATOMIC_FA; NOP, WAIT, SEND_EN
 * and RECV_EN only those with a raw ring (softnic, mlx5). flags are the
 * ctrl segment's MLX5_WQE_CTRL_CQ_UPDATE (a completion), _FENCE and
 * _SOLICITED. Fields by opcode:
 *   SEND(_IMM)          sg/nsg gather, (imm, host order)
 *   RDMA_WRITE(_IMM)    sg/nsg gather, raddr, rkey, (imm)
 *   RDMA_READ           sg/nsg scatter, raddr, rkey
 *   ATOMIC_CS / _FA     sg: one 8-byte result buffer (the old value, host
 *                       order), raddr (8-aligned), rkey, compare, swap_add
 *                       (host values of the 8 target bytes)
 *   WAIT                index (CQ count), obj (CQN)
 *   SEND_EN / RECV_EN   index (producer index), obj (QPN)
 */
#define RNIC_SEND_MAX_SGE 30 /* data segments of one send WQE (ConnectX-5) */

struct rnic_send_wr {
    uint64_t wr_id; /* no ring: its completion's wr_id and wqe_counter */
    uint8_t opcode; /* enum mlx5_opcode */
    uint8_t flags;  /* MLX5_WQE_CTRL_* */
    const struct rnic_sge *sg;
    unsigned nsg; /* 0..RNIC_SEND_MAX_SGE */
    uint64_t raddr;
    uint32_t rkey;
    uint64_t compare, swap_add;
    uint32_t imm;
    uint32_t index, obj;
};

/*
 * Posts one send work request and releases it to the NIC: the way to post
 * on every provider. A provider without a raw ring hands it to its driver
 * (verbs: ibv_post_send); one with a ring writes the WQE at the producer
 * index last rung (rnic_ring_doorbell) and rings past it, so a caller that
 * also writes the ring itself must ring its own WQEs first. The send
 * completion's wqe_counter is the low 16 bits of the WQE's ring index: on
 * a ring provider the producer index it was written at, on a provider
 * without one (uint16_t)wr_id, so a caller that numbers its requests in
 * WQEBBs (rdn/chain) gets the counters a ring would give. Returns 0;
 * -EOPNOTSUPP for an opcode the device cannot post (rnic_errmsg() names the
 * provider that can); -ENOSPC when a driver's queue is full (a ring
 * provider does not track completions: the caller keeps at most the
 * ring's size in flight, as with the raw ring); -EINVAL for a malformed
 * request. Threads: as the ring, one poster per QP at a time.
 */
int rnic_post_send(struct rnic_qp *qp, const struct rnic_send_wr *wr);

/*
 * Posts one receive WQE with n (1..max_recv_sge) scatter entries, which may
 * point anywhere in registered local-write memory, WQ rings included.
 * For a MANAGED_RECV queue the WQE runs only once RECV_EN enabled it.
 * wr_id comes back in the receive's completion. Returns 0, -EINVAL (too
 * many entries, an entry longer than 2^31, no receive queue), or -ENOMEM
 * (the receive ring is full). One thread per receive queue.
 */
int rnic_post_recv(struct rnic_qp *qp, const struct rnic_sge *sge, unsigned n,
                   uint64_t wr_id);

/*
 * Returns the receive queue's doorbell record, or NULL when the QP has no
 * receive queue (or the provider cannot expose it). As on mlx5 it is 4
 * bytes of NIC-shared host memory holding the count of posted receives,
 * big-endian, of which the NIC uses the low 16 bits; rnic_post_recv()
 * advances it. It may be registered (rnic_reg_mr, LOCAL_WRITE, plus
 * REMOTE_WRITE for a WRITE to store into it) so that RDMA (a READ's or
 * RECV's scatter, a WRITE) stores a new count: the receives up to that
 * count then become available to the NIC, which reuses the ring's WQEs as
 * they are (a receive queue whose WQEs are never rewritten, for chains
 * that recycle their receives). Still capped at the ring size: a count
 * more than rq_wqe ahead of the consumed ones (e.g. one stored in the
 * wrong byte order) makes just the ring's WQEs available. For a
 * MANAGED_RECV queue, receives still need RECV_EN as well. Mixing such
 * stores with rnic_post_recv() on the same queue is the caller's race.
 */
void *rnic_qp_rq_doorbell(struct rnic_qp *qp);

/* ---- persistence (softnic through rdn-nicd) --------------------------- */

/*
 * When an application dies, rdn-nicd frees everything it owned, except the
 * objects it marked persistent under a name. Those stay alive in the daemon
 * (chains keep running, memory keeps its contents) and belong to the
 * device's domain (rnic_open_opts.domain, required to persist anything).
 * A restarted process opens the same domain and re-attaches each object by
 * name: memory is mapped again at the same virtual address (so WQEs and MRs
 * that hold addresses stay valid), MRs keep their keys, CQs and QPs keep
 * their numbers, rings and counters. Dependencies must be persistent first:
 * an MR's memory, a QP's CQs. A domain whose process is alive cannot be
 * opened twice (-EBUSY). The in-process provider has no persistence
 * (-EOPNOTSUPP).
 */
enum rnic_obj_type {
    RNIC_OBJ_MEM, /* obj: the address rnic_mem_alloc() returned */
    RNIC_OBJ_MR,  /* obj: struct rnic_mr * */
    RNIC_OBJ_CQ,  /* obj: struct rnic_cq * */
    RNIC_OBJ_QP,  /* obj: struct rnic_qp * */
};

/*
 * Marks obj persistent under name (1..63 chars, unique per type in the
 * domain). Returns 0, or -EINVAL (no domain, or a dependency is not
 * persistent yet), -EEXIST (the name is taken), -ENOENT (no such
 * object), -EOPNOTSUPP (the device has no persistence). The object stays
 * this process's until it dies; then the domain keeps it.
 */
int rnic_persist(struct rnic_device *dev, enum rnic_obj_type type, void *obj,
                 const char *name);

/*
 * Re-attaches the persistent object called name to dev (a device opened on
 * the object's domain). *out receives: MEM the address (void *), MR a
 * struct rnic_mr *, CQ a struct rnic_cq *, QP a struct rnic_qp *. The
 * object is then owned by this process and may be persisted again.
 * Returns 0, or -ENOENT (no persistent object of that type and name),
 * -EOPNOTSUPP (no persistence), -ENOMEM.
 */
int rnic_attach(struct rnic_device *dev, enum rnic_obj_type type,
                const char *name, void **out);

/* Returns the length of memory re-attached or allocated at addr (0 if
 * unknown). */
size_t rnic_mem_len(struct rnic_device *dev, void *addr);

#endif /* RDN_RNIC_RNIC_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/client.h - the application side of softnic, shared by both
 * providers: a transport carries control requests (a direct call into an
 * in-process engine, or rdn-nicd's socket); everything else goes through
 * shared memory.
 */
#ifndef RDN_SOFTNIC_CLIENT_H
#define RDN_SOFTNIC_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "rdn/rnic/provider.h"
#include "rdn/softnic/ctl.h"

struct sn_transport {
    /* Sends req (with fd_in if >= 0), fills resp and *fd_out (or -1). */
    int (*call)(struct sn_transport *tp, const struct sn_ctl_req *req,
                int fd_in, struct sn_ctl_resp *resp, int *fd_out);
    void (*close)(struct sn_transport *tp);
    int persistence; /* the transport's engine outlives the process */
};

/*
 * Where the memory and rings of a device opened on a domain go: a window
 * of the address space that the kernel's own placement leaves alone, so a
 * restarted process finds its predecessor's addresses free to map the
 * re-attached objects at (docs/softnic.md, "placement"). x86-64 Linux maps
 * top-down from the stack limit's distance below the stack (near 128 TiB;
 * at the lowest 21.3 TiB, the cap an unlimited stack gets) or, in the
 * legacy layout, bottom-up from 42.7 TiB; only a stack limit of about 88
 * to 104 TiB starts it inside the window. CQs, 32-bit builds and devices
 * without a domain take the kernel's choice.
 */
#define SN_PLACE_LO (UINT64_C(24) << 40) /* 24 TiB */
#define SN_PLACE_HI (UINT64_C(40) << 40) /* 40 TiB */

/*
 * Opens a device named name over tp (which it owns from then on, even on
 * failure): HELLO, map the control page, DEV_OPEN with opts and the
 * RDN_SOFTNIC_* environment. Returns 0 with *out set, or -ENOMEM, the
 * transport's error, or the engine's answer (-EBUSY: the domain is in use,
 * -EINVAL: a bad option, -EPROTO: another softnic protocol version).
 */
int sn_client_open(const char *name, struct sn_transport *tp,
                   const struct rnic_open_opts *opts, struct rnic_device **out);

/* What an engine thread counted so far (diagnostics for tests and tools). */
struct sn_thread_stats {
    uint64_t sleeps; /* times it slept on its futex */
    uint64_t yields; /* times it gave its CPU to a peer with work */
    bool asleep;     /* it is (about to be) asleep on its futex */
};

/*
 * Reads engine thread thr's counters through dev's control page; -EINVAL
 * if dev is not a softnic device, -ERANGE if the engine has no thread thr.
 */
int sn_client_thread_stats(struct rnic_device *dev, unsigned thr,
                           struct sn_thread_stats *out);

#endif /* RDN_SOFTNIC_CLIENT_H */

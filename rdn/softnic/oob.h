/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/oob.h - the out-of-band TCP channel over which rdma-core's
 * test tools (ibv_rc_pingpong, perftest) exchange QP addresses before any
 * RDMA traffic; rdn-pingpong and rdn-perftest speak it for softnic.
 */
#ifndef RDN_SOFTNIC_OOB_H
#define RDN_SOFTNIC_OOB_H

#include <stddef.h>

/*
 * Opens the channel: with host, connects to host:port (any address
 * family getaddrinfo gives); with host NULL, listens on port (every
 * address, IPv6 and IPv4) and accepts one peer, then closes the listener. Blocks until
 * connected. Returns the connected socket (the caller closes it), or
 * -errno: -ECONNREFUSED when nobody listens at host:port (yet), -EINVAL
 * when host or port do not resolve, others from socket(), bind(),
 * connect(), accept().
 */
int oob_open(const char *host, int port);

/*
 * Reads exactly n bytes into buf, across short reads. Returns 0, -EPIPE
 * when the peer closed the channel first, or -errno.
 */
int oob_read_full(int fd, void *buf, size_t n);

/*
 * Writes all n bytes of buf, in one write() when the kernel takes them:
 * the tools read each message with a single read() of its size. Returns 0
 * or -errno.
 */
int oob_write_full(int fd, const void *buf, size_t n);

#endif /* RDN_SOFTNIC_OOB_H */

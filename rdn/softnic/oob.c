/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/oob.c - the out-of-band TCP channel of rdma-core's test
 * tools (oob.h).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdn/softnic/oob.h"

/* The channel over one address family (AF_UNSPEC: any). */
static int oob_open_family(const char *host, int port, int family)
{
    struct addrinfo hints = {.ai_family = family,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = host ? 0 : AI_PASSIVE};
    struct addrinfo *res, *t;
    char service[16];
    int fd = -1, one = 1, zero = 0, err = -EADDRNOTAVAIL;

    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(host, service, &hints, &res) != 0)
        return -EINVAL;
    for (t = res; t && fd < 0; t = t->ai_next) {
        fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
        if (fd < 0) {
            err = -errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (t->ai_family == AF_INET6) /* a listener on :: takes IPv4 too */
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        if (host ? connect(fd, t->ai_addr, t->ai_addrlen) == 0
                 : bind(fd, t->ai_addr, t->ai_addrlen) == 0 &&
                       listen(fd, 1) == 0)
            break;
        err = -errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return err;
    if (!host) {
        int c = accept(fd, NULL, NULL);

        err = c < 0 ? -errno : 0;
        close(fd);
        fd = c < 0 ? err : c;
    }
    return fd;
}

/*
 * A server listens on :: (IPv4 peers arrive mapped), or on 0.0.0.0 where
 * the host has IPv6 off, so it serves a peer of either family.
 */
int oob_open(const char *host, int port)
{
    int fd;

    if (host)
        return oob_open_family(host, port, AF_UNSPEC);
    fd = oob_open_family(NULL, port, AF_INET6);
    return fd >= 0 ? fd : oob_open_family(NULL, port, AF_INET);
}

int oob_read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);

        if (r == 0)
            return -EPIPE;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        got += (size_t)r;
    }
    return 0;
}

int oob_write_full(int fd, const void *buf, size_t n)
{
    size_t put = 0;

    while (put < n) {
        ssize_t w = write(fd, (const char *)buf + put, n - put);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        put += (size_t)w;
    }
    return 0;
}

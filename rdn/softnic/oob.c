/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/oob.c - the out-of-band TCP channel of rdma-core's test
 * tools (oob.h).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdn/softnic/oob.h"

int oob_open(const char *host, int port)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = host ? 0 : AI_PASSIVE};
    struct addrinfo *res, *t;
    char service[16];
    int fd = -1, one = 1, err = -EADDRNOTAVAIL;

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

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/sock.c - messages with descriptors over rdn-nicd's socket.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rdn/softnic/sock.h"

int sn_sock_send(int sock, const void *buf, size_t len, int pass_fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n;

    if (pass_fd >= 0) {
        struct cmsghdr *c;

        memset(&ctl, 0, sizeof(ctl));
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof(ctl.buf);
        c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    do {
        n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    return (size_t)n == len ? 0 : -EPROTO;
}

int sn_sock_recv(int sock, void *buf, size_t len, int *got_fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov,
                         .msg_iovlen = 1,
                         .msg_control = ctl.buf,
                         .msg_controllen = sizeof(ctl.buf)};
    struct cmsghdr *c;
    ssize_t n;

    *got_fd = -1;
    do {
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len >= CMSG_LEN(sizeof(int)))
            memcpy(got_fd, CMSG_DATA(c), sizeof(int));
    if (n == 0)
        return 0;
    if ((size_t)n != len || (msg.msg_flags & MSG_TRUNC)) {
        if (*got_fd >= 0)
            close(*got_fd);
        *got_fd = -1;
        return -EPROTO;
    }
    return (int)n;
}

void sn_sock_path(const char *explicit_path, char *out, size_t n)
{
    const char *env = getenv("RDN_NICD_SOCKET");
    const char *run = getenv("XDG_RUNTIME_DIR");

    if (explicit_path && *explicit_path)
        snprintf(out, n, "%s", explicit_path);
    else if (env && *env)
        snprintf(out, n, "%s", env);
    else if (run && *run)
        snprintf(out, n, "%s/rdn-nicd.sock", run);
    else
        snprintf(out, n, "/tmp/rdn-nicd-%u.sock", (unsigned)getuid());
}

int sn_sock_connect(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int s;

    if (strlen(path) >= sizeof(a.sun_path))
        return -ENAMETOOLONG;
    strcpy(a.sun_path, path);
    s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
        int err = -errno;

        close(s);
        return err;
    }
    return s;
}

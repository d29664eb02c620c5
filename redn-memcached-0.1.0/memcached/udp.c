/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/udp.c - UDP request framing and reply fragmentation.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memcached/stats.h"
#include "memcached/udp.h"

#define UDP_DATAGRAMS_PER_EVENT 16
#define UDP_BODY                (UDP_MAX_PAYLOAD - UDP_HEADER_SIZE)
#define UDP_IOV_MAX             64

static __thread char *udp_buf;

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

/* Sends c's queued replies to its peer as numbered datagrams. */
static void udp_send(struct conn *c)
{
    struct outq *q = &c->out;
    size_t total = q->bytes;
    unsigned n = (unsigned)((total + UDP_BODY - 1) / UDP_BODY);
    int vi = 0;
    size_t voff = 0;

    if (total == 0)
        return;
    for (unsigned seq = 0; seq < n && seq <= UINT16_MAX; seq++) {
        unsigned char hdr[UDP_HEADER_SIZE];
        struct iovec iov[UDP_IOV_MAX];
        int niov = 1;
        size_t room = UDP_BODY;

        put16(hdr, c->udp_reqid);
        put16(hdr + 2, seq);
        put16(hdr + 4, n);
        put16(hdr + 6, 0);
        iov[0].iov_base = hdr;
        iov[0].iov_len = sizeof(hdr);
        while (room > 0 && vi < q->niov && niov < UDP_IOV_MAX) {
            size_t left = q->iov[vi].iov_len - voff;
            size_t take = left < room ? left : room;
            iov[niov].iov_base = (char *)q->iov[vi].iov_base + voff;
            iov[niov].iov_len = take;
            niov++;
            room -= take;
            voff += take;
            if (voff == q->iov[vi].iov_len) {
                vi++;
                voff = 0;
            }
        }
        struct msghdr m = {
            .msg_name = &c->peer,
            .msg_namelen = c->peerlen,
            .msg_iov = iov,
            .msg_iovlen = (size_t)niov,
        };
        ssize_t sent = sendmsg(c->fd, &m, 0);
        if (sent > 0)
            stats_add(TC_BYTES_WRITTEN, (uint64_t)sent);
    }
}

void udp_serve(struct conn *c)
{
    if (udp_buf == NULL) {
        udp_buf = malloc(UDP_READ_SIZE);
        if (udp_buf == NULL)
            return;
    }
    for (int i = 0; i < UDP_DATAGRAMS_PER_EVENT; i++) {
        c->peerlen = sizeof(c->peer);
        ssize_t n = recvfrom(c->fd, udp_buf, UDP_READ_SIZE, 0,
                             (struct sockaddr *)&c->peer, &c->peerlen);
        if (n < 0)
            return; /* EAGAIN: another worker took it, or none left */
        stats_add(TC_BYTES_READ, (uint64_t)n);
        if (n < UDP_HEADER_SIZE)
            continue;
        unsigned char *h = (unsigned char *)udp_buf;
        c->udp_reqid = (uint16_t)(h[0] << 8 | h[1]);
        c->noreply = false;
        if (h[4] != 0 || h[5] != 1)
            conn_out_error(c, "SERVER_ERROR multi-packet request not "
                              "supported");
        else
            conn_udp_process(c, udp_buf + UDP_HEADER_SIZE,
                             (size_t)n - UDP_HEADER_SIZE);
        udp_send(c);
        conn_udp_done(c);
    }
}

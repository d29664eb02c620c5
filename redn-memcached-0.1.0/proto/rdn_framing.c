/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/rdn_framing.c - framing of handshake messages (see rdn_framing.h).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "proto/rdn_framing.h"

int ofl_wire_send(int fd, uint16_t type, const void *payload, uint32_t len,
                  int nonblock)
{
    struct rdn_msg_hdr h = {.magic = RDN_WIRE_MAGIC,
                            .version = RDN_WIRE_VERSION,
                            .type = type,
                            .len = len};
    uint8_t buf[sizeof(h) + 256];
    const uint8_t *p = buf;
    size_t n = sizeof(h) + len;
    int flags = MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : 0);

    if (len > RDN_WIRE_MAX_MSG || (len && !payload))
        return -EINVAL;
    if (n <= sizeof(buf)) { /* one write for the usual small messages */
        memcpy(buf, &h, sizeof(h));
        if (len)
            memcpy(buf + sizeof(h), payload, len);
    } else {
        ssize_t w = send(fd, &h, sizeof(h), flags | MSG_MORE);

        if (w != (ssize_t)sizeof(h))
            return w < 0 ? -errno : -EAGAIN;
        p = payload;
        n = len;
    }
    while (n > 0) {
        ssize_t w = send(fd, p, n, flags);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w < (ssize_t)n && nonblock)
            return -EAGAIN; /* a partial message: the peer is not reading */
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads exactly n bytes before the deadline. */
static int read_full(int fd, void *buf, size_t n, int64_t deadline)
{
    uint8_t *p = buf;

    while (n > 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int64_t left = deadline - mono_ms();
        ssize_t r;

        if (left <= 0)
            return -ETIMEDOUT;
        if (poll(&pfd, 1, (int)left) < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        r = recv(fd, p, n, MSG_DONTWAIT);
        if (r == 0)
            return -ECONNRESET;
        if (r < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            return -errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int hdr_ok(const struct rdn_msg_hdr *h)
{
    return h->magic == RDN_WIRE_MAGIC && h->version == RDN_WIRE_VERSION &&
           h->len <= RDN_WIRE_MAX_MSG;
}

int ofl_wire_recv(int fd, int timeout_ms, uint16_t *type, void *payload,
                  size_t cap)
{
    int64_t deadline = mono_ms() + timeout_ms;
    struct rdn_msg_hdr h;
    int rc = read_full(fd, &h, sizeof(h), deadline);

    if (rc < 0)
        return rc;
    if (!hdr_ok(&h) || h.len > cap)
        return -EPROTO;
    rc = read_full(fd, payload, h.len, deadline);
    if (rc < 0)
        return rc;
    *type = h.type;
    return (int)h.len;
}

/* Bytes of the message at the buffer's start, or 0 if not known yet. */
static size_t msg_size(const struct ofl_inbuf *in)
{
    struct rdn_msg_hdr h;

    if (in->have < sizeof(h))
        return 0;
    memcpy(&h, in->buf, sizeof(h));
    return sizeof(h) + h.len;
}

int ofl_inbuf_read(int fd, struct ofl_inbuf *in, struct rdn_msg_hdr *hdr,
                   const uint8_t **payload)
{
    for (;;) {
        size_t want = msg_size(in);
        ssize_t r;

        if (in->have >= sizeof(*hdr)) {
            memcpy(hdr, in->buf, sizeof(*hdr));
            if (!hdr_ok(hdr))
                return -EPROTO;
            if (in->have >= want) {
                *payload = in->buf + sizeof(*hdr);
                return 1;
            }
        } else {
            want = sizeof(*hdr);
        }
        if (in->cap < want) {
            uint8_t *nb = realloc(in->buf, want);

            if (!nb)
                return -ENOMEM;
            in->buf = nb;
            in->cap = want;
        }
        r = recv(fd, in->buf + in->have, want - in->have, MSG_DONTWAIT);
        if (r == 0)
            return -ECONNRESET;
        if (r < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        in->have += (size_t)r;
    }
}

void ofl_inbuf_consume(struct ofl_inbuf *in)
{
    size_t n = msg_size(in);

    if (n == 0 || n > in->have)
        return;
    memmove(in->buf, in->buf + n, in->have - n);
    in->have -= n;
}

void ofl_inbuf_free(struct ofl_inbuf *in)
{
    free(in->buf);
    memset(in, 0, sizeof(*in));
}

/* ---- HITS ------------------------------------------------------------- */

void ofl_hits_reset(struct ofl_hits *h)
{
    h->len = 2;
    h->count = 0;
    h->buf[0] = h->buf[1] = 0;
}

int ofl_hits_add(struct ofl_hits *h, const char *key, size_t nkey)
{
    if (nkey == 0 || nkey > RDN_KEY_MAX || h->count >= RDN_HITS_MAX)
        return 0;
    h->buf[h->len++] = (uint8_t)nkey;
    memcpy(h->buf + h->len, key, nkey);
    h->len += nkey;
    h->count++;
    h->buf[0] = (uint8_t)(h->count & 0xff);
    h->buf[1] = (uint8_t)(h->count >> 8);
    return 1;
}

int ofl_hits_each(const uint8_t *p, size_t len,
                  void (*fn)(void *ctx, const char *key, size_t nkey),
                  void *ctx)
{
    size_t off = 2;
    unsigned count;

    if (len < 2)
        return -EPROTO;
    count = p[0] | (unsigned)p[1] << 8;
    if (count > RDN_HITS_MAX)
        return -EPROTO;
    for (unsigned i = 0; i < count; i++) {
        size_t nkey;

        if (off >= len)
            return -EPROTO;
        nkey = p[off++];
        if (nkey == 0 || nkey > RDN_KEY_MAX || nkey > len - off)
            return -EPROTO;
        fn(ctx, (const char *)p + off, nkey);
        off += nkey;
    }
    return off == len ? 0 : -EPROTO;
}

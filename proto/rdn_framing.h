/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto/rdn_framing.h - framing of the handshake connection's messages
 * (proto/rdn_wire.h), shared by the server's control thread and librdn.
 */
#ifndef PROTO_RDN_FRAMING_H
#define PROTO_RDN_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#include "proto/rdn_wire.h"

/*
 * Sends one message (header + payload) on a socket, without SIGPIPE. With
 * nonblock, a socket that cannot take it at once is an error (-EAGAIN):
 * the server does not wait for slow readers. Returns 0, -EINVAL (len over
 * RDN_WIRE_MAX_MSG, or no payload), -EAGAIN, or send()'s -errno (-EPIPE:
 * the peer closed). A message may be half sent after an error: the
 * connection is then unusable.
 */
int ofl_wire_send(int fd, uint16_t type, const void *payload, uint32_t len,
                  int nonblock);

/*
 * Receives one whole message on a blocking or nonblocking socket, waiting
 * up to timeout_ms in all. Returns the payload length (<= cap) with *type
 * set and the payload in payload; -ETIMEDOUT, -ECONNRESET (peer closed),
 * -EPROTO (bad magic or version, or a payload larger than cap), -errno.
 * After an error the connection is out of step: close it.
 */
int ofl_wire_recv(int fd, int timeout_ms, uint16_t *type, void *payload,
                  size_t cap);

/* Incremental reader for a nonblocking socket: zero it before first use;
 * it owns buf (ofl_inbuf_free()). One thread per reader. */
struct ofl_inbuf {
    uint8_t *buf;
    size_t have; /* bytes buffered */
    size_t cap;
};

/*
 * Reads what the socket has and reports whether a whole message is
 * buffered: 1 with *hdr and *payload set (valid until
 * ofl_inbuf_consume()), 0 when more bytes are needed, or -ECONNRESET /
 * -EPROTO / -ENOMEM / -errno.
 */
int ofl_inbuf_read(int fd, struct ofl_inbuf *in, struct rdn_msg_hdr *hdr,
                   const uint8_t **payload);
/* Drops the message ofl_inbuf_read() returned (no-op if none is whole). */
void ofl_inbuf_consume(struct ofl_inbuf *in);
/* Frees the buffer and zeroes *in (it may be used again). */
void ofl_inbuf_free(struct ofl_inbuf *in);

/* ---- RDN_MSG_HITS ----------------------------------------------------- */

/* A HITS payload being built. */
struct ofl_hits {
    uint8_t buf[2 + RDN_HITS_MAX * (1 + RDN_KEY_MAX)];
    size_t len;     /* bytes used, including the count */
    unsigned count; /* keys */
};

/* Empties the batch (also its first initialisation). */
void ofl_hits_reset(struct ofl_hits *h);
/*
 * Adds a key (1..RDN_KEY_MAX bytes). Returns 1, or 0 when the batch is
 * full (RDN_HITS_MAX keys) or the key's length is out of range.
 */
int ofl_hits_add(struct ofl_hits *h, const char *key, size_t nkey);
/*
 * Calls fn for each key of a received payload, in order. Returns 0, or
 * -EPROTO if the payload is malformed (fn may have been called for the
 * keys before the fault).
 */
int ofl_hits_each(const uint8_t *p, size_t len,
                  void (*fn)(void *ctx, const char *key, size_t nkey),
                  void *ctx);

#endif /* PROTO_RDN_FRAMING_H */

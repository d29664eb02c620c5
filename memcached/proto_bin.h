/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/proto_bin.h - memcached 1.6.18's binary protocol: every opcode
 * it serves (GET/GETQ/GETK/GETKQ, SET/ADD/REPLACE, APPEND/PREPEND, DELETE,
 * INCREMENT/DECREMENT, TOUCH, GAT/GATQ/GATK/GATKQ and their quiet forms,
 * FLUSH, NOOP, VERSION, QUIT, STAT with groups), the SASL opcodes (with
 * -S a login through memcached/auth_sasl.h, which every other opcode but
 * VERSION needs first: "Auth failure." and a close; without -S unknown
 * commands), and its status codes, error texts and connection closes for
 * malformed requests.
 *
 * Items stored here are the same items the ASCII and meta protocols store
 * (and the NIC path reads): only the framing differs. The wire format is in
 * proto_bin_wire.h.
 */
#ifndef MEMCACHED_PROTO_BIN_H
#define MEMCACHED_PROTO_BIN_H

#include <stddef.h>

#include "memcached/conn.h"

enum bin_result {
    BIN_NEED_MORE, /* the request is not all buffered yet; nothing done */
    BIN_DONE,      /* served (replies queued, maybe a data block to read) */
    BIN_CLOSE,     /* not a binary request: close without a reply */
};

/*
 * Serves the binary request at the start of buf (avail bytes buffered) on
 * c, its worker's thread. A request is served once its header, extras and
 * key are buffered; a value that follows is read by the connection
 * afterwards (conn_read_data(), then proto_bin_nread_done()), or skipped
 * (conn_swallow()). On BIN_DONE, *used is the number of bytes of buf the
 * request consumed; the caller advances its buffer by that much before
 * reading more. buf is only read, and only during the call.
 */
enum bin_result proto_bin_process(struct conn *c, const char *buf, size_t avail,
                                  size_t *used);

/* The value of a binary storage request (c->pend, pend.binary set) has
 * arrived: stores it and replies. */
void proto_bin_nread_done(struct conn *c);

#endif /* MEMCACHED_PROTO_BIN_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/udp.h - the UDP transport (-U): every worker reads requests
 * from the shared UDP socket. A request is one datagram: an 8-byte frame
 * header (request id, sequence number, datagram count, reserved; 16-bit
 * big-endian each) and ordinary ASCII commands, data blocks included. The
 * reply is split into datagrams of at most UDP_MAX_PAYLOAD bytes, each with
 * the request id, its sequence number and the total count.
 */
#ifndef MEMCACHED_UDP_H
#define MEMCACHED_UDP_H

#include "memcached/conn.h"

#define UDP_HEADER_SIZE 8
#define UDP_MAX_PAYLOAD 1400 /* bytes per reply datagram, header included */
#define UDP_READ_SIZE   65536

/* Serves the datagrams waiting on c's socket (its worker thread). */
void udp_serve(struct conn *c);

#endif /* MEMCACHED_UDP_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/softnic/sock.h - rdn-nicd's control socket: a Unix SOCK_SEQPACKET
 * socket carrying one fixed-size sn_ctl message per packet, with at most
 * one file descriptor attached (SCM_RIGHTS).
 */
#ifndef RDN_SOFTNIC_SOCK_H
#define RDN_SOFTNIC_SOCK_H

#include <stddef.h>

/* Sends len bytes and, if pass_fd >= 0, the descriptor. 0 or -errno. */
int sn_sock_send(int sock, const void *buf, size_t len, int pass_fd);
/*
 * Receives one message of exactly len bytes; *got_fd gets an attached
 * descriptor or -1. Returns len, 0 on end of file, or -errno.
 */
int sn_sock_recv(int sock, void *buf, size_t len, int *got_fd);
/*
 * The socket path to use: explicit if not NULL/empty, else
 * $RDN_NICD_SOCKET, else $XDG_RUNTIME_DIR/rdn-nicd.sock, else
 * /tmp/rdn-nicd-<uid>.sock.
 */
void sn_sock_path(const char *explicit_path, char *out, size_t n);
/* Connects to path; returns the socket or -errno. */
int sn_sock_connect(const char *path);

#endif /* RDN_SOFTNIC_SOCK_H */

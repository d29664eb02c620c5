/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/tls.h - TLS on the TCP listeners (-Z, -o ssl_*), through
 * OpenSSL, as memcached 1.6.18 has it.
 *
 * One server context holds the certificate chain, key, CA list and the
 * protocol settings. refresh_certs builds a new context from the files and
 * swaps it in; connections keep the context they started with (OpenSSL
 * counts its references), so a failed reload changes nothing.
 *
 * A connection's TLS session belongs to the thread serving it. The
 * handshake runs inside the first reads (the server side of SSL_read), on
 * the non-blocking socket: nothing here ever blocks. Only the memcached
 * protocol over TCP is encrypted; UDP, unix sockets and the RDMA path
 * (the rdn handshake, RoCE) are not.
 */
#ifndef MEMCACHED_TLS_H
#define MEMCACHED_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "memcached/stat_sink.h"

struct ssl_st; /* OpenSSL's SSL */

/* The TLS options as given (-Z, -o ssl_*); filled while the command line
 * is parsed (compat_opts.c), read-only once tls_start() ran. */
struct tls_config {
    bool enabled;           /* -Z */
    const char *chain_cert; /* ssl_chain_cert, PEM */
    const char *key;        /* ssl_key */
    int32_t keyformat;      /* ssl_keyformat: OpenSSL's SSL_FILETYPE_* */
    int32_t verify_mode;    /* ssl_verify_mode: 0 none .. 3 once */
    const char *ciphers;    /* ssl_ciphers, or NULL: OpenSSL's default */
    const char *ca_cert;    /* ssl_ca_cert: acceptable client CAs */
    uint32_t wbuf_kb;       /* ssl_wbuf_size: bytes per SSL_write, in KB */
    bool session_cache;     /* ssl_session_cache */
    bool kernel_tls;        /* ssl_kernel_tls */
    int32_t min_version;    /* ssl_min_version: 0 TLS 1.0 .. 3 TLS 1.3 */
};

extern struct tls_config tls_config;

/*
 * With -Z: builds the server context from tls_config, loading and checking
 * the certificate chain, key and CA file. Returns 0 (also without -Z) or
 * -EINVAL after printing memcached's message on stderr (the caller exits
 * 64, as memcached). Main thread, before any listener or worker starts.
 */
int tls_start(void);

/*
 * refresh_certs: builds a new context from the files and, if it loads,
 * makes it the one new connections use. Returns true, or false with
 * memcached's error reply ("Error ...\r\n") in err (NUL-terminated,
 * truncated to size). Any thread.
 */
bool tls_refresh_certs(char *err, size_t size);

/*
 * A TLS session on the accepted socket fd, server side, not yet
 * handshaken. NULL when out of memory or without -Z. The caller owns it:
 * tls_conn_free() ends it. Any thread.
 */
struct ssl_st *tls_conn_new(int fd);

/* Sends a close_notify if the socket takes it at once (never waits), then
 * frees the session. Before the socket is closed. NULL is ignored. */
void tls_conn_free(struct ssl_st *ssl);

/* How tls_read() and tls_writev() say they must wait. */
#define TLS_WAIT_READABLE (-1) /* retry once the socket is readable */
#define TLS_WAIT_WRITABLE (-2) /* retry once the socket is writable */
#define TLS_FAILED        (-3) /* the connection is dead: close it */

/*
 * Reads up to len decrypted bytes into buf, running the handshake first
 * if it is not done. Returns the count (> 0), 0 when the peer closed, or
 * one of TLS_WAIT_* / TLS_FAILED. A failed handshake (not TLS, a
 * certificate the verify mode refuses, a reset) counts in
 * ssl_handshake_errors; a peer that goes away without a word does not.
 * *more is set when decrypted bytes remain buffered in the session (the
 * socket may not turn readable for them).
 */
ssize_t tls_read(struct ssl_st *ssl, void *buf, size_t len, bool *more);

/*
 * Encrypts and sends the head of iov[0..niov): as many bytes as fit in
 * one ssl_wbuf_size buffer (copied into the calling thread's buffer).
 * After a TLS_WAIT_*, call again with the same data at the head (more may
 * follow it). Returns the bytes sent (> 0), TLS_WAIT_* or TLS_FAILED.
 */
ssize_t tls_writev(struct ssl_st *ssl, const struct iovec *iov, int niov);

/* "stats": ssl_new_sessions (with ssl_session_cache),
 * ssl_handshake_errors, time_since_server_cert_refresh; nothing
 * without -Z. */
void tls_stats(stat_sink_fn sink, void *ctx);

/* "stats settings": the ssl_* lines, as memcached prints them. */
void tls_settings_stats(stat_sink_fn sink, void *ctx);

#endif /* MEMCACHED_TLS_H */

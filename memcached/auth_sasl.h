/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/auth_sasl.h - -S: SASL authentication of binary-protocol
 * connections through Cyrus SASL (libsasl2), set up as memcached 1.6.18
 * sets it up: service name "memcached", the server's host name as its
 * realm, and the configuration (mech_list, sasldb_path, ...) read from the
 * directory $SASL_CONF_PATH, else from /etc/sasl/memcached.conf or
 * /etc/sasl2/memcached.conf. The mechanisms are the SASL library's (PLAIN,
 * CRAM-MD5, ... as libsasl2-modules provides them). With
 * $MEMCACHED_SASL_PWDB set (memcached's --enable-sasl-pwdb, which Debian's
 * build lacks), plaintext passwords (PLAIN) are checked against that file
 * of "user:password" lines first, read at every login.
 *
 * A build without libsasl2 (configure found none) has the same functions:
 * auth_sasl_available() is false and the rest fail with -ENOTSUP.
 *
 * Threads: every call may come from any worker; calls into the SASL
 * library are serialized here (its plugins are not known to be
 * thread-safe, and authentication is rare).
 */
#ifndef MEMCACHED_AUTH_SASL_H
#define MEMCACHED_AUTH_SASL_H

#include <stdbool.h>
#include <stddef.h>

/* One connection's SASL exchange; NULL until its first SASL command. */
struct auth_sasl;

/* Whether this build has SASL (-S). */
bool auth_sasl_available(void);

/* Initializes the SASL library (once, before any worker starts). Returns
 * 0, -ENOTSUP without SASL, -EIO when sasl_server_init() fails. */
int auth_sasl_init(void);

/*
 * The mechanisms, space-separated, in *out (len bytes, not NUL-terminated;
 * valid until the next call on *s). Creates *s if NULL. Returns 0, or
 * -EIO (the library failed), -ENOTSUP.
 */
int auth_sasl_list(struct auth_sasl **s, const char **out, size_t *len);

enum auth_sasl_result {
    AUTH_SASL_OK,       /* authenticated */
    AUTH_SASL_CONTINUE, /* the mechanism wants another STEP: send *out */
    AUTH_SASL_FAIL,     /* refused (or STEP without a started exchange) */
};

/*
 * SASL_AUTH (step false: starts mechanism mech, NUL-terminated, with the
 * client's first data) or SASL_STEP (step true: continues the exchange
 * started last on *s). *out, *outlen: the server's challenge, valid until
 * the next call on *s. Creates *s if NULL.
 */
enum auth_sasl_result auth_sasl_exchange(struct auth_sasl **s, bool step,
                                         const char *mech, const char *data,
                                         size_t len, const char **out,
                                         size_t *outlen);

/* Whether user/pass is a valid login for the SASL configuration (the
 * rdn handshake's check, memcached/auth.h). The strings are nuser and
 * npass bytes, not NUL-terminated; one that holds a NUL is refused. */
bool auth_sasl_checkpass(const char *user, size_t nuser, const char *pass,
                         size_t npass);

/* Ends and frees a connection's exchange; *s becomes NULL. */
void auth_sasl_free(struct auth_sasl **s);

#endif /* MEMCACHED_AUTH_SASL_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/auth.h - authentication as memcached 1.6.18 does it:
 *
 *   - -Y FILE (ASCII): the file holds "user:password" lines; an
 *     unauthenticated connection's only command is a "set" whose data block
 *     is "user password" (key, flags and exptime ignored). It is answered
 *     STORED (authenticated from then on), "CLIENT_ERROR authentication
 *     failure", or for any other line "CLIENT_ERROR unauthenticated".
 *     SIGHUP reloads the file (auth_file_reload()).
 *   - -S (SASL, binary protocol): memcached/auth_sasl.h.
 *
 * Both also guard the offloaded GET's handshake (rdn_glue.c): a client
 * proves the same credentials there (auth_check()) before it learns any
 * RDMA address or key.
 */
#ifndef MEMCACHED_AUTH_H
#define MEMCACHED_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "memcached/proto_bin.h"

/*
 * Loads the -Y file path as memcached parses it: a line is a user, ':'
 * and the password up to the line's end (so a password may hold ':' but
 * not a space, which the auth command could not carry). Replaces the
 * previous contents only on success. Returns 0, -errno of fopen()/fstat(),
 * -ENOMEM, or -EINVAL for a line without ':' (memcached's "malformed
 * entry", which includes an empty line). Thread-safe against auth_check().
 */
int auth_file_load(const char *path);

/* SIGHUP: loads settings.auth_file again; a failure keeps the old
 * entries (as memcached does) and is reported on stderr. */
void auth_file_reload(void);

/*
 * Whether user:pass (lengths given, any bytes) is a valid login: an entry
 * of the -Y file, or with -S a SASL password check (sasl_checkpass()
 * against the SASL configuration). false when neither is configured.
 * Compares in time independent of where the password differs. Any thread.
 */
bool auth_check(const char *user, size_t nuser, const char *pass, size_t npass);

/* Whether the server authenticates clients at all (-Y or -S). */
bool auth_enabled(void);

/*
 * -Y: serves the command at the start of buf (avail bytes, writable: it is
 * tokenized in place) on c, which is not authenticated yet, exactly as
 * memcached's try_read_command_asciiauth(), with proto_bin_process()'s
 * contract and results: BIN_NEED_MORE while the command is not all
 * buffered, BIN_DONE with *used bytes consumed (the reply queued on c, a
 * good login setting c->authenticated, auth_cmds / auth_errors counted),
 * BIN_CLOSE when 2048 bytes hold no newline.
 */
enum bin_result auth_ascii_process(struct conn *c, char *buf, size_t avail,
                                   size_t *used);

#endif /* MEMCACHED_AUTH_H */

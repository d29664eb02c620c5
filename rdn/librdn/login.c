/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/login.c - logins for servers that want one: memcached -Y's
 * ASCII login (a set whose data is "user password") and -S's SASL PLAIN
 * over the binary protocol, on librdn's own connection that asks a
 * server's "stats rdn" for its RDMA port, and on the libmemcached handle
 * of the TCP GETs.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdn/librdn/client_int.h"

/* A reader of "\r\n"-ended lines on a socket. */
struct lines {
    int fd;
    uint64_t deadline;
    char buf[4096];
    size_t len, off;
};

/* More bytes within the deadline: 0 or -errno. */
static int lines_fill(struct lines *r)
{
    struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
    uint64_t now = mono_ms();
    ssize_t got;

    if (now >= r->deadline || poll(&pfd, 1, (int)(r->deadline - now)) <= 0)
        return -ETIMEDOUT;
    got = read(r->fd, r->buf, sizeof(r->buf));
    if (got <= 0)
        return got < 0 ? -errno : -ECONNRESET;
    r->len = (size_t)got;
    r->off = 0;
    return 0;
}

/* The next line (without "\r\n", cut to cap - 1 bytes) within the
 * deadline: 0 or -errno. */
static int next_line(struct lines *r, char *line, size_t cap)
{
    size_t n = 0;
    char prev = 0;
    int rc;

    for (;;) {
        while (r->off < r->len) {
            char ch = r->buf[r->off++];

            if (ch == '\n' && prev == '\r') {
                if (n && line[n - 1] == '\r')
                    n--;
                line[n] = '\0';
                return 0;
            }
            if (n + 1 < cap)
                line[n++] = ch;
            prev = ch;
        }
        rc = lines_fill(r);
        if (rc < 0)
            return rc;
    }
}

/* Exactly n bytes within the deadline: 0 or -errno. */
static int next_bytes(struct lines *r, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n;) {
        if (r->off == r->len) {
            int rc = lines_fill(r);
            if (rc < 0)
                return rc;
        }
        size_t k = r->len - r->off < n - i ? r->len - r->off : n - i;
        memcpy(out + i, r->buf + r->off, k);
        r->off += k;
        i += k;
    }
    return 0;
}

/* A binary-protocol request (memcached's, no extras, CAS 0). */
static int bin_send(int fd, uint8_t op, const char *key, size_t nkey,
                    const char *value, size_t nvalue)
{
    uint8_t p[24 + 2 * RDN_AUTH_MAX + 64] = {0x80, op};
    size_t body = nkey + nvalue;

    if (body > sizeof(p) - 24)
        return -EINVAL;
    p[2] = (uint8_t)(nkey >> 8), p[3] = (uint8_t)nkey;
    for (int i = 0; i < 4; i++)
        p[8 + i] = (uint8_t)(body >> (24 - 8 * i));
    memcpy(p + 24, key, nkey);
    memcpy(p + 24 + nkey, value, nvalue);
    return write(fd, p, 24 + body) == (ssize_t)(24 + body) ? 0 : -EIO;
}

/* The next binary response: its status, key length and body (at most
 * cap bytes, else -EPROTO). 0 or -errno. */
static int bin_recv(struct lines *r, uint16_t *status, uint16_t *nkey,
                    uint8_t *body, size_t cap, size_t *nbody)
{
    uint8_t h[24];
    int rc = next_bytes(r, h, sizeof(h));

    if (rc < 0)
        return rc;
    *status = (uint16_t)(h[6] << 8 | h[7]);
    *nkey = (uint16_t)(h[2] << 8 | h[3]);
    *nbody =
        (size_t)h[8] << 24 | (size_t)h[9] << 16 | (size_t)h[10] << 8 | h[11];
    if (h[0] != 0x81 || *nbody > cap || *nkey > *nbody)
        return -EPROTO;
    return next_bytes(r, body, *nbody);
}

/*
 * "stats rdn" of a server that speaks the binary protocol only (memcached
 * -S): a SASL PLAIN login with opts' user and password, then STAT "rdn".
 * Sets s->rdn_port; 0 or -errno (-EACCES: the login was refused).
 */
static int probe_sasl(struct rdn_srv *s)
{
    char plain[2 * RDN_AUTH_MAX + 2], val[32];
    uint8_t body[512];
    struct lines r = {
        .fd = rdnc_tcp_connect(s->host, s->tcp_port, s->opts->timeout_ms),
        .deadline = mono_ms() + (uint64_t)s->opts->timeout_ms};
    size_t nu = strlen(s->opts->user), np = strlen(s->opts->password), nb;
    uint16_t status, nkey;
    int rc, port = 0;

    if (r.fd < 0)
        return r.fd;
    plain[0] = '\0';
    memcpy(plain + 1, s->opts->user, nu);
    plain[1 + nu] = '\0';
    memcpy(plain + 2 + nu, s->opts->password, np);
    rc = bin_send(r.fd, 0x21, "PLAIN", 5, plain, 2 + nu + np); /* SASL_AUTH */
    if (rc == 0)
        rc = bin_recv(&r, &status, &nkey, body, sizeof(body), &nb);
    if (rc == 0 && status != 0)
        rc = -EACCES;
    if (rc == 0)
        rc = bin_send(r.fd, 0x10, "rdn", 3, "", 0); /* STAT */
    while (rc == 0 &&
           (rc = bin_recv(&r, &status, &nkey, body, sizeof(body), &nb)) == 0) {
        if (status != 0) {
            rc = -EPROTO; /* not a server that knows STAT "rdn" */
            break;
        }
        if (nkey == 0)
            break;
        if (nkey == 8 && memcmp(body, "rdn_port", 8) == 0 &&
            nb - nkey < sizeof(val)) {
            memcpy(val, body + nkey, nb - nkey);
            val[nb - nkey] = '\0';
            port = atoi(val);
        }
    }
    close(r.fd);
    if (rc == 0)
        s->rdn_port = port > 0 && port <= 65535 ? port : 0;
    return rc;
}

/* Sends the whole string s on fd: 0 or -EIO. */
static int send_str(int fd, const char *str)
{
    size_t n = strlen(str);

    return write(fd, str, n) == (ssize_t)n ? 0 : -EIO;
}

/* Whether the server at host:port closes an ASCII connection unanswered
 * but answers a binary VERSION, as memcached -S does (it speaks the binary
 * protocol only); a server that is going away does neither. */
static bool binary_only(const char *host, int port, int timeout_ms)
{
    struct lines r = {.fd = rdnc_tcp_connect(host, port, timeout_ms),
                      .deadline = mono_ms() + (uint64_t)timeout_ms};
    uint8_t body[256];
    uint16_t status, nkey;
    size_t nb;
    char line[512];
    int rc;

    if (r.fd < 0)
        return false;
    /* padded to a binary header's 24 bytes, as rdnc_probe()'s */
    rc = send_str(r.fd, "version               \r\n");
    if (rc == 0)
        rc = next_line(&r, line, sizeof(line));
    close(r.fd);
    if (rc != -ECONNRESET)
        return false;
    r = (struct lines){.fd = rdnc_tcp_connect(host, port, timeout_ms),
                       .deadline = mono_ms() + (uint64_t)timeout_ms};
    if (r.fd < 0)
        return false;
    rc = bin_send(r.fd, 0x0b, "", 0, "", 0); /* VERSION */
    if (rc == 0)
        rc = bin_recv(&r, &status, &nkey, body, sizeof(body), &nb);
    close(r.fd);
    return rc == 0;
}

/* memcached -Y's login on an ASCII connection: a set whose data is
 * "user password". 0, or -EACCES (refused), -EIO. */
static int ascii_login(struct rdn_srv *s, struct lines *r)
{
    char cmd[2 * RDN_AUTH_MAX + 64], line[512];
    int n = snprintf(cmd, sizeof(cmd), "set rdn 0 0 %zu\r\n%s %s\r\n",
                     strlen(s->opts->user) + 1 + strlen(s->opts->password),
                     s->opts->user, s->opts->password);
    int rc = n > 0 && (size_t)n < sizeof(cmd) ? send_str(r->fd, cmd) : -EIO;

    if (rc == 0)
        rc = next_line(r, line, sizeof(line));
    return rc < 0 ? rc : strcmp(line, "STORED") == 0 ? 0 : -EACCES;
}

/*
 * Asks the server for "stats rdn" on a connection of its own (not the
 * application's handle, whose state is libmemcached's): sets s->rdn_port
 * from rdn_port, 0 if the server has none (rdn_enabled no). A server that
 * wants a login first gets opts' one: -Y's ASCII login, or for a server
 * that closes an ASCII connection (-S) SASL over the binary protocol. Returns 0
 * or a negative errno (the server did not answer, -EACCES: no login or a
 * refused one).
 */
int rdnc_probe(struct rdn_srv *s)
{
    /* Spaces to a binary header's 24 bytes: the same command to an ASCII
     * server, and a server of the binary protocol only closes at once
     * rather than wait for the rest of a header. */
    static const char cmd[] = "stats rdn             \r\n";
    struct lines r = {
        .fd = rdnc_tcp_connect(s->host, s->tcp_port, s->opts->timeout_ms),
        .deadline = mono_ms() + (uint64_t)s->opts->timeout_ms};
    int fd = r.fd, rc, port = 0;
    bool logged_in = false;
    char line[512];

    if (fd < 0)
        return fd;
    rc = send_str(fd, cmd);
    while (rc == 0 && (rc = next_line(&r, line, sizeof(line))) == 0) {
        if (strcmp(line, "END") == 0)
            break;
        if (strcmp(line, "CLIENT_ERROR unauthenticated") == 0 && !logged_in) {
            rc = s->opts->user ? ascii_login(s, &r) : -EACCES;
            if (rc == 0)
                rc = send_str(fd, cmd);
            logged_in = true;
            continue;
        }
        if (strncmp(line, "STAT ", 5) != 0) {
            rc = -EPROTO; /* ERROR: not a memcached that knows "stats rdn" */
            break;
        }
        if (sscanf(line, "STAT rdn_port %d", &port) == 1 &&
            (port <= 0 || port > 65535))
            port = 0;
    }
    close(fd);
    /* Closed unanswered: a server of the binary protocol only (-S). */
    if (rc == -ECONNRESET && s->opts->user)
        return probe_sasl(s);
    if (rc == 0)
        s->rdn_port = port;
    return rc;
}

/* Switches a handle to the binary protocol with a SASL PLAIN login of
 * opts' user (libmemcached logs in on every connection it makes). 0 or
 * -EIO. */
int rdnc_tcp_sasl_on(struct rdn_conn *c, memcached_st *mc)
{
    if (memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1) !=
            MEMCACHED_SUCCESS ||
        memcached_set_sasl_auth_data(mc, c->user, c->password) !=
            MEMCACHED_SUCCESS)
        return -EIO;
    return 0;
}

/* Whether key's server speaks the binary protocol only (-S). */
static bool key_binary_only(struct rdn_conn *c, const char *key, size_t nkey)
{
    memcached_return_t rc;
    const memcached_instance_st *in =
        memcached_server_by_key(c->mc, key, nkey, &rc);

    return in &&
           binary_only(memcached_server_name(in),
                       (int)memcached_server_port(in), c->opts.timeout_ms);
}

/*
 * Logs the handle in where a TCP GET of key failed with status, with opts'
 * user: a refusal ("CLIENT_ERROR unauthenticated", memcached -Y) gets -Y's
 * ASCII login on the connection to key's server (a set whose data is
 * "user password", sent to the server libmemcached places key on); a
 * server that closed the ASCII connection (-S speaks binary only) makes
 * librdn's own handle speak binary with a SASL PLAIN login. An
 * application's handle is never switched: its SASL setup is its own.
 * Without a user, a -S server's hang-up is -EACCES too. Returns 0 when
 * the GET is worth asking again, else -EACCES (the login was refused, or
 * is missing) or status. A handle speaks one protocol: a list that mixes
 * -S servers with others cannot be read over TCP through one handle.
 */
int rdnc_tcp_login(struct rdn_conn *c, const char *key, size_t nkey, int status)
{
    char data[2 * RDN_AUTH_MAX + 2];

    if (!c->opts.user) /* a -S server that hung up wants a login too */
        return status == -EIO && key_binary_only(c, key, nkey) ? -EACCES
                                                               : status;
    if (status == -EACCES && !c->tcp_sasl) {
        int n = snprintf(data, sizeof(data), "%s %s", c->user, c->password);
        memcached_return_t rc = memcached_set_by_key(c->mc, key, nkey, "rdn", 3,
                                                     data, (size_t)n, 0, 0);
        return rc == MEMCACHED_SUCCESS ? 0 : -EACCES;
    }
    if (status == -EIO && c->own_mc && !c->tcp_sasl) {
        if (!key_binary_only(c, key, nkey) || rdnc_tcp_sasl_on(c, c->mc) < 0)
            return status;
        c->tcp_sasl = true;
        return 0;
    }
    return status;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/client.h - librdn: GETs that complete on the server's NIC.
 *
 * A connection reads from a list of memcached servers, as libmemcached
 * sees it: rdn_connect_memc() takes an application's libmemcached handle,
 * rdn_connect_config() a libmemcached configuration string, rdn_connect()
 * one server. The server that owns a key is the one libmemcached picks
 * (its distribution, hashing, weights, and its failure handling: auto
 * eject, retry and dead timeouts); librdn asks libmemcached and never
 * places keys itself. Each server's RDMA port is found in its "stats rdn"
 * (rdn_port); a server started without --rdn-port, or whose port does not
 * answer, is read over TCP through the same libmemcached handle, and the
 * result says so and why. Every other command (SET, DELETE, ...) goes
 * through that handle as well (rdn_memc()).
 *
 * With a server's handshake done (docs/wire.md), rdn_get() SENDs one small
 * request over RDMA and the server's NIC answers it with no server CPU
 * (docs/design.md, "The offloaded GET"). Every answer is verified here
 * before it is returned: the generation of the server's table, both
 * stamps of the item, its lengths, the full key and its expiry time. What
 * the NIC cannot answer with certainty (a table being resized or flushed, a
 * fingerprint collision, an item expiring right now, a read torn by a
 * concurrent update that retries did not resolve, a broken RDMA connection) is
 * asked over TCP through libmemcached, so a wrong value is never returned. A
 * broken RDMA path is rebuilt (a new handshake) on a GET a second later, then
 * at doubling intervals up to 10 s while that fails; only that server's keys go
 * over TCP meanwhile.
 *
 * Return values: 0 found, -ENOENT not found, another negative errno on
 * failure. Values are malloc'ed, NUL-terminated (not counted in len) and
 * freed by the caller with free().
 *
 * Threads: a connection is used by one thread at a time.
 */
#ifndef RDN_LIBRDN_CLIENT_H
#define RDN_LIBRDN_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct rdn_conn;

/*
 * Options of a connection. The struct grows at its end from one librdn
 * release to the next, so a caller says which size it was built with:
 * start from RDN_OPTS(...) (or set size to sizeof(struct rdn_opts)). The
 * library reads the first size bytes; fields beyond them (a caller built
 * with an older header) take their defaults, as fields left 0 do. A size
 * beyond what this librdn knows is taken if the bytes it does not know are
 * all 0 (a newer header whose new fields are unused), else refused with
 * -E2BIG; a size below RDN_OPTS_SIZE_MIN (0 among them: size not set) or
 * not a multiple of 8, or rsvd not 0, is refused with -EINVAL. New fields
 * come in whole 8-byte words, so that every size a header has had ends
 * between fields.
 */
struct rdn_opts {
    uint32_t size;      /* sizeof(struct rdn_opts) of the caller's header */
    uint32_t rsvd;      /* 0 */
    const char *device; /* NIC: NULL means $RDN_DEVICE, else "softnic" */
    uint32_t depth;     /* GETs in flight, a power of two; 0: 8 */
    int timeout_ms;     /* for one NIC answer or handshake step; 0: 5000 */
    int no_fallback;    /* never ask over TCP: doubtful answers fail with
                           -EAGAIN (tests of the NIC path) */
    int search_seq;     /* ask the server's chain to search the buckets one
                           after the other (RedN-Seq; experiments only) */
    int while_down;     /* a server whose process is gone, enum rdn_down */
    /*
     * The login of a server that authenticates its clients (memcached -S
     * or -Y): its handshake wants it before anything else (docs/wire.md,
     * AUTH), and so does the "stats rdn" that finds the RDMA port (-Y's
     * ASCII login; with -S SASL PLAIN and the binary STAT "rdn").
     * NULL: none. At most 255 bytes each; copied. The TCP path logs in
     * with it too, when a GET over TCP is refused: -Y's ASCII login on
     * the connection to the key's server (any handle; again after each
     * reconnection), or, for a server that speaks the binary protocol
     * only (-S), a SASL PLAIN login: librdn's own handle (rdn_connect(),
     * rdn_connect_config()) then speaks binary with
     * memcached_set_sasl_auth_data(); an application's handle
     * (rdn_connect_memc()) is not switched, its SASL setup is its own.
     */
    const char *user;
    const char *password;
};

/* The smallest size taken: size, rsvd and device. */
#define RDN_OPTS_SIZE_MIN 16

/* struct rdn_opts o = RDN_OPTS(.device = "softnic", .depth = 16); */
#define RDN_OPTS(...)                                                          \
    ((struct rdn_opts){.size = sizeof(struct rdn_opts), __VA_ARGS__})

/*
 * When a server's process dies, its NIC still holds its table and its
 * chains, and would go on answering (RedN's availability across a crash)
 * until the restarted server re-attaches them. librdn sees the death (the
 * handshake connection closed, a RESUME refused) within a second.
 */
enum rdn_down {
    RDN_DOWN_DEFAULT, /* RDN_DOWN_TCP over a server list, RDN_DOWN_NIC for
                         rdn_connect() */
    RDN_DOWN_TCP,     /* its keys go to libmemcached, which fails them or
                         places them on other servers as its settings say
                         (auto eject, retry and dead timeouts) */
    RDN_DOWN_NIC,     /* its NIC goes on answering */
};

struct memcached_st;

/*
 * A connection over the servers of mc, which stays the caller's: it must
 * outlive the connection, and the caller and librdn use it in one thread
 * at a time. Servers added to mc later are taken up by the next GET.
 * Each server's NIC path is set up here (its stats, then the handshake);
 * a server that cannot be read on its NIC is read over TCP and tried
 * again later. opts may be NULL. Returns 0, -EINVAL (no servers, a bad
 * option or opts->size), -E2BIG (opts from a newer header that sets
 * fields this librdn does not know), -ENOMEM.
 */
int rdn_connect_memc(struct memcached_st *mc, const struct rdn_opts *opts,
                     struct rdn_conn **out);
/*
 * The same over a libmemcached handle made from config, the grammar of
 * libmemcached's memcached() ("--SERVER=10.0.0.1:11211 --SERVER=...
 * --DISTRIBUTION=consistent"); the connection owns that handle. Returns
 * -EINVAL for a string libmemcached refuses (err, if not NULL, receives
 * libmemcached's message, up to errlen bytes with the NUL).
 */
int rdn_connect_config(const char *config, const struct rdn_opts *opts,
                       struct rdn_conn **out, char *err, size_t errlen);
/*
 * One server, its RDMA port given: connects to the memcached on host. The
 * handshake on rdn_port (its --rdn-port) opens a NIC device
 * (opts->device), a QP and response slots, and the TCP fallback is set up
 * for tcp_port. opts may be NULL (the defaults above).
 *
 * Returns 0 with *out set, or a negative errno: -EINVAL (bad host, ports
 * or options), -E2BIG (as rdn_connect_memc()), -ENOMEM, -EHOSTUNREACH (host not
 * resolved), connect()'s error
 * (-ECONNREFUSED), -ETIMEDOUT (no answer within opts->timeout_ms), the
 * server's REJECT status (-EUSERS: the server is full, -EPROTONOSUPPORT:
 * another wire version, -EACCES: opts->user missing or refused, ...),
 * -EPROTO (an answer that breaks docs/wire.md), or rnic_open()'s error. Nothing
 * is left open on failure. The caller owns the connection and closes it with
 * rdn_close().
 */
int rdn_connect(const char *host, int rdn_port, int tcp_port,
                struct rdn_conn **out);
int rdn_connect_opts(const char *host, int rdn_port, int tcp_port,
                     const struct rdn_opts *opts, struct rdn_conn **out);

/*
 * Sends pending LRU reports and tears the connection down (each server
 * frees the client's chain when its handshake connection closes), and the
 * libmemcached handle too if the connection made it. NULL is a no-op.
 */
void rdn_close(struct rdn_conn *c);

/* The libmemcached handle of the connection, for every other command.
 * rdn_connect()'s own handle is replaced after a failure of its server (so
 * that the TCP path needs no retry timeout to see it back): ask for it
 * again rather than keeping it. */
struct memcached_st *rdn_memc(const struct rdn_conn *c);

/*
 * Gets one key (1..250 bytes, with the handle's namespace) through its
 * server's NIC, or over TCP when the NIC's answer is not certain (see
 * above). On 0, *value is the caller's (free()), and *len, *flags and
 * *cas (each may be NULL) are set. Returns 0, -ENOENT (not found),
 * -EINVAL (bad key or arguments), -EAGAIN (opts.no_fallback and the NIC
 * could not answer for sure), -EIO (the TCP fallback failed too: with
 * libmemcached's settings, a server that is down), -EACCES (the TCP
 * fallback was refused: the server wants a login and opts.user is missing
 * or refused), -ENOMEM,
 * -ENOTCONN (the handle has no servers).
 */
int rdn_get(struct rdn_conn *c, const char *key, size_t keylen, char **value,
            size_t *len, uint32_t *flags, uint64_t *cas);

enum rdn_source {
    RDN_SRC_NIC, /* the server's NIC answered */
    RDN_SRC_TCP, /* asked over TCP */
};

/*
 * A value that GETs reuse, as libmemcached's memcached_result_st: the
 * bytes land in buf, which grows (realloc) when a value does not fit and
 * is kept for the next GET, so GETs of values no larger than one seen
 * before allocate nothing. Start from {0}, or with buf a malloc'ed block
 * of cap bytes; free it with rdn_value_free().
 */
struct rdn_value {
    char *buf;  /* the value and a NUL (not counted in len) */
    size_t cap; /* bytes at buf */
    size_t len;
    uint32_t flags;
    uint64_t cas;
    enum rdn_source src; /* who answered (as rdn_last_source()) */
};

/*
 * rdn_get() into v: on 0 the value is at v->buf (valid until v's next use
 * or rdn_value_free()), with v->len, v->flags and v->cas; on any other
 * return v->len is 0 and v->buf keeps the last buffer. Returns rdn_get()'s
 * statuses; -ENOMEM when a larger buffer could not be had (v unchanged
 * but for len), -EINVAL also for a v with cap but no buf. v belongs to the
 * caller and may go with any connection; one thread at a time.
 */
int rdn_get_value(struct rdn_conn *c, const char *key, size_t keylen,
                  struct rdn_value *v);

/* Frees v's buffer and zeroes v (ready for reuse). NULL is a no-op. */
void rdn_value_free(struct rdn_value *v);

struct rdn_result {
    int status; /* as rdn_get() */
    char *value;
    size_t len;
    uint32_t flags;
    uint64_t cas;
    enum rdn_source src;
    const char *why; /* TCP: the reason (valid until the connection's next
                        call) */
    uint32_t server; /* the server libmemcached placed the key on (its
                        position in the handle's list) */
};

/*
 * Gets n keys, up to depth of them in flight on each server's NIC, on all
 * their servers at once; what the NICs did not answer goes to libmemcached
 * in one multi-get. out[i] receives key i's result, with rdn_get()'s
 * statuses (free out[i].value). Returns 0, or -EINVAL / -ENOMEM /
 * -ENOTCONN (the handle has no servers) when nothing could be asked at
 * all.
 */
int rdn_mget(struct rdn_conn *c, size_t n, const char *const *keys,
             const size_t *keylens, struct rdn_result *out);

/*
 * Return what answered the last rdn_get() (or rdn_get_value()) on c, and
 * why TCP did when it did, or why the NIC could not answer for sure when
 * the GET failed with -EAGAIN ("" after a NIC answer; valid until the
 * connection's next call).
 * rdn_mget() reports both per key instead (struct rdn_result).
 */
enum rdn_source rdn_last_source(const struct rdn_conn *c);
const char *rdn_last_reason(const struct rdn_conn *c);

struct rdn_client_stats {
    uint64_t nic_hits;     /* answered by the NIC: found */
    uint64_t nic_misses;   /* answered by the NIC: not found */
    uint64_t tcp_gets;     /* asked over TCP */
    uint64_t torn_retries; /* torn reads caught and asked again */
    uint64_t refreshes;    /* geometry refreshes (stale generation) */
    uint64_t collisions;   /* another key's item came back */
    uint64_t reconnects;   /* RDMA paths rebuilt after a failure */
    uint64_t resumes;      /* handshake connections taken up again */
};

/* Copies the connection's counters (since it was made, every server's
 * added up) into *out; rdn_server_info() has each server's. */
void rdn_client_stats(const struct rdn_conn *c, struct rdn_client_stats *out);

/* Returns the first server's id for this client ("stats rdn" lists it). */
uint32_t rdn_client_id(const struct rdn_conn *c);

/* One server of the connection as librdn sees it. */
struct rdn_server_info {
    const char *host; /* valid until the next rdn_mget() or rdn_close() */
    int tcp_port;
    int rdn_port;    /* from its stats; 0: none (or not known yet) */
    int nic;         /* its NIC path works now */
    const char *why; /* !nic: why its keys go over TCP */
    uint32_t client_id;
    struct rdn_client_stats st;
};

/* How many servers the connection knows (as of the last rdn_mget()). */
uint32_t rdn_server_count(const struct rdn_conn *c);
/* Server i's state: 0, or -ERANGE. */
int rdn_server_info(const struct rdn_conn *c, uint32_t i,
                    struct rdn_server_info *out);

#endif /* RDN_LIBRDN_CLIENT_H */

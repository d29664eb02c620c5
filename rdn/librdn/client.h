/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/client.h - librdn: GETs that complete on the server's NIC.
 *
 * rdn_connect() does the handshake with a memcached started with
 * --rdn-port (docs/wire.md); rdn_get() then SENDs one small request over
 * RDMA and the server's NIC answers it with no server CPU (docs/design.md,
 * "The offloaded GET"). Every answer is verified here before it is
 * returned: the generation of the server's table, both stamps of the
 * item, its lengths, the full key and its expiry time. What the NIC
 * cannot answer with certainty (a table
 * being resized or flushed, a fingerprint collision, an item expiring
 * right now, a read torn by a concurrent update that retries did not
 * resolve, a broken RDMA connection) is asked over TCP through
 * libmemcached, so a wrong value is never returned. A broken RDMA path is
 * rebuilt (a new handshake) at most once a second, on the next GET.
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

struct rdn_opts {
    const char *device; /* NIC: NULL means $RDN_DEVICE, else "softnic" */
    uint32_t depth;     /* GETs in flight, a power of two; 0: 8 */
    int timeout_ms;     /* for one NIC answer or handshake step; 0: 5000 */
    int no_fallback;    /* never ask over TCP: doubtful answers fail with
                           -EAGAIN (tests of the NIC path) */
    int search_seq;     /* ask the server's chain to search the buckets one
                           after the other (RedN-Seq; experiments only) */
};

/*
 * Connects to the memcached on host: the handshake on rdn_port (its
 * --rdn-port) opens a NIC device (opts->device), a QP and response slots,
 * and the TCP fallback is set up for tcp_port. opts may be NULL (the
 * defaults above).
 *
 * Returns 0 with *out set, or a negative errno: -EINVAL (bad host or
 * ports), -ENOMEM, -EHOSTUNREACH (host not resolved), connect()'s error
 * (-ECONNREFUSED), -ETIMEDOUT (no answer within opts->timeout_ms), the
 * server's REJECT status (-EUSERS: the server is full, -EPROTONOSUPPORT:
 * another wire version, ...), -EPROTO (an answer that breaks
 * docs/wire.md), or rnic_open()'s error. Nothing is left open on failure.
 * The caller owns the connection and closes it with rdn_close().
 */
int rdn_connect(const char *host, int rdn_port, int tcp_port,
                struct rdn_conn **out);
int rdn_connect_opts(const char *host, int rdn_port, int tcp_port,
                     const struct rdn_opts *opts, struct rdn_conn **out);

/*
 * Sends pending LRU reports and tears the connection down (the server
 * frees the client's chain when the handshake connection closes). NULL is
 * a no-op.
 */
void rdn_close(struct rdn_conn *c);

/*
 * Gets one key (1..250 bytes) through the server's NIC, or over TCP when
 * the NIC's answer is not certain (see above). On 0, *value is the
 * caller's (free()), and *len, *flags and *cas (each may be NULL) are set.
 * Returns 0, -ENOENT (not found), -EINVAL (bad key or arguments), -EAGAIN
 * (opts.no_fallback and the NIC could not answer for sure), -EIO (the TCP
 * fallback failed too), -ENOMEM.
 */
int rdn_get(struct rdn_conn *c, const char *key, size_t keylen, char **value,
            size_t *len, uint32_t *flags, uint64_t *cas);

enum rdn_source {
    RDN_SRC_NIC, /* the server's NIC answered */
    RDN_SRC_TCP, /* asked over TCP */
};

struct rdn_result {
    int status; /* as rdn_get() */
    char *value;
    size_t len;
    uint32_t flags;
    uint64_t cas;
    enum rdn_source src;
    const char *why; /* TCP: the reason (static string) */
};

/*
 * Gets n keys, up to depth of them in flight on the NIC at once; out[i]
 * receives key i's result, with rdn_get()'s statuses (free out[i].value).
 * Returns 0, or -EINVAL / -ENOMEM when nothing could be asked at all.
 */
int rdn_mget(struct rdn_conn *c, size_t n, const char *const *keys,
             const size_t *keylens, struct rdn_result *out);

/*
 * Return what answered the last rdn_get() on c, and why TCP did when it
 * did (a static string; "" after a NIC answer). rdn_mget() reports both
 * per key instead (struct rdn_result).
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

/* Copies the connection's counters (since rdn_connect) into *out. */
void rdn_client_stats(const struct rdn_conn *c, struct rdn_client_stats *out);

/* Returns the server's id for this client ("stats rdn" lists it). */
uint32_t rdn_client_id(const struct rdn_conn *c);

#endif /* RDN_LIBRDN_CLIENT_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/conn.h - a client connection: its state machine, read buffer,
 * data-block reads, and the output queue of iovecs that replies are built
 * in and sent with sendmsg().
 *
 * A connection belongs to one worker thread (thread.h) and is only touched
 * by it, except for the few fields "stats conns" reads under conns_lock
 * (conn.c says which). Conn structs are never freed, only reused for the
 * same file descriptor, possibly by another worker (handed over under
 * conns_lock). An idle
 * connection holds no buffer: the read buffer and output blocks go back to
 * the worker's cache whenever nothing is pending.
 *
 * Processing: each readable event reads once (more while the buffer fills),
 * then runs every complete command line (proto_text.c) or binary request
 * (proto_bin.c) up to settings.reqs_per_event commands, then flushes the
 * replies with one sendmsg() (with -Z: through the connection's TLS
 * session, conn_recv() and conn_send()). Data blocks of storage commands are
 * read straight into the new item's memory. Replies to a client that does not
 * read pile up at most until the socket is full: then the connection stops
 * reading input until its output drains. With -o idle_timeout, a connection
 * waiting for a command longer than that is closed (memcached's idle_kicks).
 */
#ifndef MEMCACHED_CONN_H
#define MEMCACHED_CONN_H

#include <event2/event.h>
#include <event2/event_struct.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "memcached/items.h"
#include "memcached/settings.h"

struct worker;
struct ssl_st;

enum transport { TRANSPORT_TCP, TRANSPORT_UNIX, TRANSPORT_UDP };

/* memcached's state names, as "stats conns" reports them. A zeroed struct
 * reads as closed (a connection being set up is not shown). */
enum conn_state {
    CONN_CLOSED,
    CONN_LISTENING,
    CONN_NEW_CMD,
    CONN_WAITING,
    CONN_READ,
    CONN_PARSE_CMD,
    CONN_WRITE,
    CONN_NREAD,
    CONN_SWALLOW,
    CONN_CLOSING,
    CONN_MWRITE,
    CONN_WATCH, /* handed over to a log watcher (watch.h) */
};

/* Why a connection closed, as memcached's connevents report it. */
enum conn_close_reason {
    CLOSE_ERROR,
    CLOSE_NORMAL,
    CLOSE_IDLE_TIMEOUT,
    CLOSE_SHUTDOWN,
};

/* One block of reply text; iovecs point into it. */
struct outblk {
    struct outblk *next;
    size_t used, size;
    bool cached; /* a worker cache buffer (else malloc'ed, larger) */
    char data[];
};

struct outq {
    struct iovec *iov;
    int niov, iov_cap;
    int iov_next;        /* first iovec not fully sent */
    struct item **items; /* references released once all is sent */
    int nitems, items_cap;
    struct outblk *blk_head, *blk_tail;
    size_t bytes; /* queued bytes not yet sent */
};

/* A position in the output queue, to discard what follows it. */
struct out_mark {
    int niov, nitems;
    size_t last_len;
    struct outblk *blk;
    size_t blk_used;
};

/* What a storage command needs once its data block has arrived. */
struct store_pending {
    struct item *it;
    struct store_req req;
    bool noreply; /* the command said noreply */
    bool meta;    /* ms: reply with meta codes and flags */
    bool key_b64; /* ms b: return the key base64 encoded */
    bool quiet;   /* ms q */
    uint8_t nstash;
    char stash[64];  /* ms: the return flags, in request order */
    bool binary;     /* binary protocol: no "\r\n" follows the value */
    uint8_t opcode;  /* binary: the request's opcode and opaque, for the */
    uint32_t opaque; /* reply */
};

struct conn {
    int fd;
    enum transport transport;
    enum conn_state state;
    struct worker *w;
    enum mc_protocol proto; /* MC_PROTO_NEGOTIATE until the first byte */
    struct event ev;
    short ev_flags; /* interest currently registered */
    bool ev_added;
    struct event idle_ev; /* -o idle_timeout: when to look for idleness */
    bool idle_added;

    char *rbuf; /* input; NULL while idle */
    size_t rsize, rstart, rend;
    bool rbuf_big; /* malloc'ed beyond WORKER_BUF_SIZE */

    char *nread_ptr; /* where the data block goes */
    size_t nread_left;
    struct store_pending pend;
    size_t swallow_left;

    struct outq out;
    /* -Z (memcached/tls.h): the TLS session, NULL on a plain connection.
     * A TLS read or write may have to wait for the other direction. */
    struct ssl_st *ssl;
    bool tls_read_blocked;  /* a read waits for the socket to be writable */
    bool tls_write_blocked; /* a write waits for it to be readable */
    bool noreply;           /* the current command's replies are dropped */
    bool close_after_write;
    enum conn_close_reason close_reason;

    /* memcached/auth.h: whether the client logged in (-S, -Y), its SASL
     * exchange, and with -Y the data bytes of the login command
     * awaited (0: a command line is). */
    bool authenticated;
    struct auth_sasl *sasl;
    size_t auth_data;

    /* A reply produced in parts (conn_stream()); NULL next: none. */
    bool (*stream_next)(struct conn *c, void *state);
    void (*stream_free)(void *state);
    void *stream_state;

    uint32_t last_cmd_time;
    struct sockaddr_storage peer;
    socklen_t peerlen;
    struct sockaddr_storage local;
    socklen_t locallen;
    uint16_t udp_reqid;
};

/*
 * Starts serving fd on worker w (its thread), over TLS if tls (a TCP
 * connection accepted on a -Z listener: the handshake runs in its first
 * reads). The conn struct for fd is reused if it exists. A TCP or unix fd
 * must hold a conns_reserve() reservation, which the connection keeps
 * until it closes. Returns NULL on failure: fd is then not closed and its
 * reservation not released (the caller uses conns_refuse()).
 */
struct conn *conn_new(struct worker *w, int fd, enum transport transport,
                      bool tls);

/* Sets up the per-fd connection table; max_fds bounds descriptors.
 * Returns 0 or -ENOMEM. Called once, before any connection. */
int conns_init(int max_fds);

/* Counters for "stats": open client connections and conn structs. */
uint64_t conns_current(void);
uint64_t conns_structures(void);
/* Returns whether fewer than -c (maxconns) connections are open. */
bool conns_accepting(void);

/*
 * Counts a just-accepted client connection as open, unless -c are open
 * already: then returns false and nothing changes. Called by the listener
 * before it hands the fd to a worker, so -c is a hard limit even while
 * workers have not picked up earlier connections yet.
 */
bool conns_reserve(void);

/* Closes a reserved fd that will not become a connection, and releases
 * its reservation. */
void conns_refuse(int fd);

/* "stats conns": one group of lines per connection and listener. */
void conns_stats(void (*sink)(void *ctx, const char *name, const char *value),
                 void *ctx);

/* Registers a listening socket so "stats conns" shows it. */
void conns_note_listener(int fd, enum transport transport);

/* ---- reply building, for the protocol layer ---- */

/* Appends line + "\r\n" unless the command is noreply. */
void conn_out_line(struct conn *c, const char *line);

/* Appends line + "\r\n" even for noreply commands (errors). */
void conn_out_error(struct conn *c, const char *line);

/* Appends raw bytes (copied). */
void conn_out_text(struct conn *c, const void *p, size_t len);

/* Appends printf output (raw; add "\r\n" yourself). */
void conn_out_printf(struct conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Room for up to len bytes of text written in place; conn_out_commit()
 * then appends the first n of them. NULL when memory is exhausted.
 */
char *conn_out_reserve(struct conn *c, size_t len);
void conn_out_commit(struct conn *c, size_t n);

/* Appends it's value by reference; takes over the caller's reference. */
void conn_out_value(struct conn *c, struct item *it);

/* Marks the queue's end, and drops everything appended after a mark. */
void conn_out_mark(struct conn *c, struct out_mark *m);
void conn_out_rollback(struct conn *c, const struct out_mark *m);

/*
 * A reply too large to build at once (lru_crawler metadump): from now on,
 * before any further command of c, next(c, state) is called to append the
 * next part of it, whenever the queued output is below the connection's
 * high-water mark, until it returns true (the reply is complete). Each
 * call counts as one command of the connection's per-event budget, so the
 * worker's other connections are served in between, and the replies
 * waiting to be sent stay bounded. free(state) runs once the reply is
 * complete or the connection closes. TCP and unix connections only. c's
 * worker thread.
 */
void conn_stream(struct conn *c, bool (*next)(struct conn *c, void *state),
                 void (*free)(void *state), void *state);

/* ---- input control, for the protocol layer ---- */

/*
 * Reads the data block of a storage command: pend->it's value plus the
 * "\r\n" after it (just the value when pend->binary), then calls the
 * protocol's completion.
 */
void conn_read_data(struct conn *c);

/* Discards the next n input bytes (a rejected data block). */
void conn_swallow(struct conn *c, size_t n);

/* Closes the connection once the replies so far are sent. */
void conn_close_after_write(struct conn *c);

/*
 * Hands c's descriptor over to another subsystem (watch.c) from within one
 * of c's commands: c stops being served (no more reading, no idle timer)
 * and is left in CONN_WATCH, open and counted, with no reply pending.
 * conn_end() closes it later, on c's worker.
 */
void conn_hand_over(struct conn *c);

/* Sends the replies queued so far now, from within a command (watch:
 * they go before the stream). Returns true if none is left (false: the
 * socket is full, or failed). */
bool conn_out_flush_now(struct conn *c);
void conn_end(struct conn *c);

/*
 * One read from c's socket, decrypted when c has a TLS session (which may
 * run its handshake first). Returns the byte count, 0 at the end of the
 * stream, -EAGAIN when nothing can be read now, or another -errno when the
 * connection is broken. *more: the TLS session holds more decrypted bytes
 * (the socket may not turn readable for them). c's thread.
 */
ssize_t conn_recv(struct conn *c, void *buf, size_t len, bool *more);

/*
 * Sends the head of iov[0..niov) on c's socket (through its TLS session:
 * at most -o ssl_wbuf_size bytes; a call after -EAGAIN must present the
 * same bytes at the head). Returns the bytes sent, -EAGAIN when the socket
 * takes none now, or another -errno when the connection is broken. c's
 * thread.
 */
ssize_t conn_send(struct conn *c, const struct iovec *iov, int niov);

/* For udp.c: runs the commands of one datagram (replies stay queued),
 * then drops the queued replies once udp.c has sent them. */
void conn_udp_process(struct conn *c, char *data, size_t len);
void conn_udp_done(struct conn *c);

/* Formats the peer (or local, for listeners) as memcached does. */
void conn_addr_string(const struct sockaddr_storage *ss, socklen_t len,
                      enum transport transport, char *buf, size_t size);

#endif /* MEMCACHED_CONN_H */

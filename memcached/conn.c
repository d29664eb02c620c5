/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/conn.c - connection state machine, input buffering and reply
 * transmission (see conn.h). UDP framing lives in udp.c.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "memcached/conn.h"
#include "memcached/auth.h"
#include "memcached/auth_sasl.h"
#include "memcached/proto_bin.h"
#include "memcached/proto_bin_wire.h"
#include "memcached/proto_text.h"
#include "memcached/settings.h"
#include "memcached/stats.h"
#include "memcached/thread.h"
#include "memcached/tls.h"
#include "memcached/udp.h"
#include "memcached/watch.h"
#include "proto/barrier.h"

#define LINE_PLAIN_MAX  2048 /* memcached: longer lines must be gets */
#define LINE_BIG_MAX    (32 * 1024 * 1024) /* longest multiget line kept */
#define OUT_HIGH_WATER  (256 * 1024)       /* flush mid-batch beyond this */
#define OUT_IOV_INIT    32
#define OUT_IOV_KEEP    256  /* larger arrays are freed when idle */
#define DIRECT_READ_MIN 4096 /* data blocks read in place */

/*
 * Who protects what:
 *   conn_table[], conn_table_size  set up once by conns_init(); entries are
 *                     published with release stores, read with acquire.
 *   curr_conns        atomic: incremented only by conns_reserve() (the
 *                     listener), decremented when a connection closes.
 *   conns_lock        the hand-over of a conn struct between workers: a
 *                     worker that closes an fd ends with it (conn_close()),
 *                     the worker that gets the reused fd number starts with
 *                     it (conn_new()). It also protects the fields that
 *                     "stats conns" reads of other workers' connections:
 *                     transport, peer/peerlen, local/locallen, and the
 *                     switches of state to and from CONN_CLOSED.
 *   state, last_cmd_time  also changed by the owner without conns_lock,
 *                     so every access from another thread is atomic.
 *   everything else   owned by the connection's worker.
 */
static struct conn **conn_table;
static int conn_table_size;
static uint64_t curr_conns;
static uint64_t conn_structs;
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const state_names[] = {
    [CONN_LISTENING] = "conn_listening", [CONN_NEW_CMD] = "conn_new_cmd",
    [CONN_WAITING] = "conn_waiting",     [CONN_READ] = "conn_read",
    [CONN_PARSE_CMD] = "conn_parse_cmd", [CONN_WRITE] = "conn_write",
    [CONN_NREAD] = "conn_nread",         [CONN_SWALLOW] = "conn_swallow",
    [CONN_CLOSING] = "conn_closing",     [CONN_MWRITE] = "conn_mwrite",
    [CONN_CLOSED] = "conn_closed",       [CONN_WATCH] = "conn_watch",
};

static void conn_event_cb(evutil_socket_t fd, short which, void *arg);
static void conn_close(struct conn *c);

/* ---- the per-fd table ---- */

/* Allocates the per-fd table for descriptors below max_fds (before any
 * listener or worker starts). 0 or -ENOMEM. */
int conns_init(int max_fds)
{
    conn_table = calloc((size_t)max_fds, sizeof(*conn_table));
    if (conn_table == NULL)
        return -ENOMEM;
    conn_table_size = max_fds;
    return 0;
}

uint64_t conns_current(void)
{
    return load_relaxed(&curr_conns);
}

uint64_t conns_structures(void)
{
    return load_relaxed(&conn_structs);
}

bool conns_accepting(void)
{
    return conns_current() < (uint64_t)settings.maxconns;
}

/* A compare-and-swap loop, so the count never passes -c even if more than
 * one thread reserved (only the listener does today). */
bool conns_reserve(void)
{
    uint64_t n = conns_current();

    do {
        if (n >= (uint64_t)settings.maxconns)
            return false;
    } while (!cas_relaxed(&curr_conns, &n, n + 1));
    return true;
}

/* Undoes conns_reserve() for fd, closing it (thread.c's failure paths). */
void conns_refuse(int fd)
{
    close(fd);
    fetch_sub_relaxed(&curr_conns, 1);
}

/* The table's struct for fd, created on first use. */
static struct conn *conn_slot(int fd)
{
    struct conn *c;

    if (fd < 0 || fd >= conn_table_size)
        return NULL;
    c = load_acquire(&conn_table[fd]);
    if (c)
        return c;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    fetch_add_relaxed(&conn_structs, 1);
    store_release(&conn_table[fd], c);
    return c;
}

/* Records a listening socket in the table, as CONN_LISTENING with its
 * local address, for "stats conns". Main thread, before workers start. */
void conns_note_listener(int fd, enum transport transport)
{
    struct conn *c = conn_slot(fd);

    if (c == NULL)
        return;
    c->fd = fd;
    c->transport = transport;
    c->locallen = sizeof(c->local);
    getsockname(fd, (struct sockaddr *)&c->local, &c->locallen);
    c->last_cmd_time = items_now();
    c->state = CONN_LISTENING;
}

/* Formats ss as memcached's "stats conns" does: "tcp:1.2.3.4:port",
 * "tcp6:[::1]:port", "udp:...", or "unix:path". Always NUL-terminates. */
void conn_addr_string(const struct sockaddr_storage *ss, socklen_t len,
                      enum transport transport, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN];
    const char *proto = transport == TRANSPORT_UDP ? "udp" : "tcp";

    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
        snprintf(buf, size, "%s:%s:%u", proto, host, ntohs(s->sin_port));
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
        snprintf(buf, size, "%s6:[%s]:%u", proto, host, ntohs(s->sin6_port));
    } else if (ss->ss_family == AF_UNIX &&
               len > offsetof(struct sockaddr_un, sun_path)) {
        const struct sockaddr_un *s = (const struct sockaddr_un *)ss;
        snprintf(buf, size, "unix:%s", s->sun_path);
    } else {
        snprintf(buf, size, "unix:");
    }
}

/*
 * The state as the unsigned int it is stored as: "stats conns" reads it from
 * other threads, and sparse's atomic builtins take no enum.
 */
_Static_assert(sizeof(enum conn_state) == sizeof(unsigned), "state is 4 B");

static unsigned *state_word(struct conn *c)
{
    return (unsigned *)&c->state;
}

/* What "stats conns" shows of one connection, copied under conns_lock. */
struct conn_view {
    enum conn_state state;
    enum transport transport;
    uint32_t last_cmd_time;
    struct sockaddr_storage peer, local;
    socklen_t peerlen, locallen;
};

/* Copies fd's connection into *v; false if there is none open. */
static bool conn_view_of(int fd, struct conn_view *v)
{
    struct conn *c = load_acquire(&conn_table[fd]);
    bool open = false;

    if (c == NULL)
        return false;
    pthread_mutex_lock(&conns_lock);
    v->state = (enum conn_state)load_relaxed(state_word(c));
    if (v->state != CONN_CLOSED) {
        open = true;
        v->transport = c->transport;
        v->last_cmd_time = load_relaxed(&c->last_cmd_time);
        v->peer = c->peer;
        v->peerlen = c->peerlen;
        v->local = c->local;
        v->locallen = c->locallen;
    }
    pthread_mutex_unlock(&conns_lock);
    return open;
}

/*
 * "stats conns": for every open connection and listener, its address,
 * listen_addr, state and secs_since_last_cmd, copied under conns_lock one
 * connection at a time (sink is called without the lock).
 */
void conns_stats(void (*sink)(void *ctx, const char *name, const char *value),
                 void *ctx)
{
    char name[64], value[160];
    uint32_t now = items_now();
    struct conn_view v;

    for (int fd = 0; fd < conn_table_size; fd++) {
        if (!conn_view_of(fd, &v))
            continue;
        snprintf(name, sizeof(name), "%d:addr", fd);
        if (v.state == CONN_LISTENING) {
            conn_addr_string(&v.local, v.locallen, v.transport, value,
                             sizeof(value));
            sink(ctx, name, value);
        } else {
            conn_addr_string(&v.peer, v.peerlen, v.transport, value,
                             sizeof(value));
            sink(ctx, name, value);
            snprintf(name, sizeof(name), "%d:listen_addr", fd);
            conn_addr_string(&v.local, v.locallen, v.transport, value,
                             sizeof(value));
            sink(ctx, name, value);
        }
        snprintf(name, sizeof(name), "%d:state", fd);
        sink(ctx, name, state_names[v.state]);
        snprintf(name, sizeof(name), "%d:secs_since_last_cmd", fd);
        snprintf(value, sizeof(value), "%u", now - v.last_cmd_time);
        sink(ctx, name, value);
    }
}

static void set_state(struct conn *c, enum conn_state st)
{
    store_relaxed(state_word(c), st);
}

/* ---- output queue ---- */

/* Doubles q's iovec array; false (q unchanged) when out of memory. */
static bool out_grow_iov(struct outq *q)
{
    int cap = q->iov_cap ? q->iov_cap * 2 : OUT_IOV_INIT;
    struct iovec *iov = realloc(q->iov, (size_t)cap * sizeof(*iov));

    if (iov == NULL)
        return false;
    q->iov = iov;
    q->iov_cap = cap;
    return true;
}

/* Queues len bytes at p (which must stay valid until sent). Out of memory
 * makes the connection close once what is queued is sent. */
static void out_add_iov(struct conn *c, const void *p, size_t len)
{
    struct outq *q = &c->out;

    if (len == 0)
        return;
    if (q->niov == q->iov_cap && !out_grow_iov(q)) {
        conn_close_after_write(c);
        return;
    }
    q->iov[q->niov].iov_base = (void *)p;
    q->iov[q->niov].iov_len = len;
    q->niov++;
    q->bytes += len;
}

/* A block with room for len more bytes at its end. */
static struct outblk *out_block(struct conn *c, size_t len)
{
    struct outq *q = &c->out;
    struct outblk *b = q->blk_tail;
    size_t cap = WORKER_BUF_SIZE - sizeof(struct outblk);

    if (b && b->size - b->used >= len)
        return b;
    if (len <= cap) {
        b = worker_buf_get(c->w);
        if (b == NULL)
            return NULL;
        b->size = cap;
        b->cached = true;
    } else {
        b = malloc(sizeof(*b) + len);
        if (b == NULL)
            return NULL;
        b->size = len;
        b->cached = false;
    }
    b->used = 0;
    b->next = NULL;
    if (q->blk_tail)
        q->blk_tail->next = b;
    else
        q->blk_head = b;
    q->blk_tail = b;
    return b;
}

/* Room for len bytes at the end of the last output block (a new block if
 * it is full, a large one for len beyond a cache buffer). NULL, and the
 * connection closes after its pending output, when out of memory. */
char *conn_out_reserve(struct conn *c, size_t len)
{
    struct outblk *b = out_block(c, len);

    if (b == NULL) {
        conn_close_after_write(c);
        return NULL;
    }
    return b->data + b->used;
}

/* Queues the first n bytes of the last conn_out_reserve(); text adjacent
 * to the previous text in the same block grows its iovec instead of
 * adding one. */
void conn_out_commit(struct conn *c, size_t n)
{
    struct outq *q = &c->out;
    struct outblk *b = q->blk_tail;
    char *p = b->data + b->used;

    b->used += n;
    /* Text right after the previous text extends its iovec. */
    if (q->niov > q->iov_next) {
        struct iovec *last = &q->iov[q->niov - 1];
        if ((char *)last->iov_base + last->iov_len == p) {
            last->iov_len += n;
            q->bytes += n;
            return;
        }
    }
    out_add_iov(c, p, n);
}

void conn_out_text(struct conn *c, const void *p, size_t len)
{
    char *dst = conn_out_reserve(c, len);

    if (dst == NULL)
        return;
    memcpy(dst, p, len);
    conn_out_commit(c, len);
}

/* printf into the output; replies longer than 511 bytes are cut (callers
 * format short stats and error lines only). */
void conn_out_printf(struct conn *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    conn_out_text(c, buf,
                  (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void verbose_reply(struct conn *c, const char *line)
{
    if (SETTING_GET(verbose) > 1)
        fprintf(stderr, ">%d %s\n", c->fd, line);
}

/* Queues line + CRLF, noreply or not (memcached sends errors even to
 * noreply commands), and echoes it at -vv. */
void conn_out_error(struct conn *c, const char *line)
{
    size_t n = strlen(line);
    char *p = conn_out_reserve(c, n + 2);

    verbose_reply(c, line);
    if (p == NULL)
        return;
    memcpy(p, line, n);
    memcpy(p + n, "\r\n", 2);
    conn_out_commit(c, n + 2);
}

void conn_out_line(struct conn *c, const char *line)
{
    if (!c->noreply)
        conn_out_error(c, line);
}

/* Queues it's value bytes by reference: the item's reference is kept in
 * the queue until the bytes are sent (out_reset). On out of memory the
 * reference is dropped and the connection closes after pending output. */
void conn_out_value(struct conn *c, struct item *it)
{
    struct outq *q = &c->out;

    if (q->nitems == q->items_cap) {
        int cap = q->items_cap ? q->items_cap * 2 : OUT_IOV_INIT;
        struct item **v = realloc(q->items, (size_t)cap * sizeof(*v));
        if (v == NULL) {
            item_release(it);
            conn_close_after_write(c);
            return;
        }
        q->items = v;
        q->items_cap = cap;
    }
    q->items[q->nitems++] = it;
    out_add_iov(c, item_value(it), it->nic.nbytes);
}

/* Remembers the end of the output queue in m for conn_out_rollback(). */
void conn_out_mark(struct conn *c, struct out_mark *m)
{
    struct outq *q = &c->out;

    m->niov = q->niov;
    m->nitems = q->nitems;
    m->last_len = q->niov ? q->iov[q->niov - 1].iov_len : 0;
    m->blk = q->blk_tail;
    m->blk_used = q->blk_tail ? q->blk_tail->used : 0;
}

static void blk_free(struct conn *c, struct outblk *b)
{
    if (b->cached)
        worker_buf_put(c->w, b);
    else
        free(b);
}

/*
 * Drops everything queued after m (a multiget that fails half-way sends
 * only its error): releases the items, trims the iovecs, frees the blocks
 * added since. Nothing after m may have been sent yet.
 */
void conn_out_rollback(struct conn *c, const struct out_mark *m)
{
    struct outq *q = &c->out;

    while (q->nitems > m->nitems)
        item_release(q->items[--q->nitems]);
    for (int i = m->niov; i < q->niov; i++)
        q->bytes -= q->iov[i].iov_len;
    q->niov = m->niov;
    if (q->niov > q->iov_next) {
        q->bytes -= q->iov[q->niov - 1].iov_len - m->last_len;
        q->iov[q->niov - 1].iov_len = m->last_len;
    }
    struct outblk *b = m->blk ? m->blk->next : q->blk_head;
    while (b) {
        struct outblk *next = b->next;
        blk_free(c, b);
        b = next;
    }
    if (m->blk) {
        m->blk->next = NULL;
        m->blk->used = m->blk_used;
    } else {
        q->blk_head = NULL;
    }
    q->blk_tail = m->blk;
}

/* Drops everything queued (sent or not) and returns the memory. */
static void out_reset(struct conn *c)
{
    struct outq *q = &c->out;

    for (int i = 0; i < q->nitems; i++)
        item_release(q->items[i]);
    q->nitems = 0;
    q->niov = q->iov_next = 0;
    q->bytes = 0;
    for (struct outblk *b = q->blk_head, *next; b; b = next) {
        next = b->next;
        blk_free(c, b);
    }
    q->blk_head = q->blk_tail = NULL;
}

/* Frees memory an idle connection does not need. */
static void release_idle_memory(struct conn *c)
{
    struct outq *q = &c->out;

    if (c->rbuf && c->rstart == c->rend && c->transport != TRANSPORT_UDP) {
        if (c->rbuf_big)
            free(c->rbuf);
        else
            worker_buf_put(c->w, c->rbuf);
        c->rbuf = NULL;
        c->rsize = c->rstart = c->rend = 0;
        c->rbuf_big = false;
    }
    if (q->iov_cap > OUT_IOV_KEEP) {
        free(q->iov);
        free(q->items);
        q->iov = NULL;
        q->items = NULL;
        q->iov_cap = q->items_cap = 0;
    }
}

/* See conn.h. */
ssize_t conn_recv(struct conn *c, void *buf, size_t len, bool *more)
{
    ssize_t n;

    *more = false;
    c->tls_read_blocked = false;
    if (c->ssl == NULL) {
        n = read(c->fd, buf, len);
        if (n >= 0)
            return n;
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return -EAGAIN;
        return -errno;
    }
    n = tls_read(c->ssl, buf, len, more);
    if (n == TLS_WAIT_WRITABLE)
        c->tls_read_blocked = true;
    if (n == TLS_WAIT_READABLE || n == TLS_WAIT_WRITABLE)
        return -EAGAIN;
    return n == TLS_FAILED ? -ECONNRESET : n;
}

/* See conn.h. */
ssize_t conn_send(struct conn *c, const struct iovec *iov, int niov)
{
    ssize_t n;

    c->tls_write_blocked = false;
    if (c->ssl == NULL) {
        struct msghdr m = {0};
        m.msg_iov = (struct iovec *)iov;
        m.msg_iovlen = (size_t)(niov > IOV_MAX ? IOV_MAX : niov);
        do
            n = sendmsg(c->fd, &m, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n >= 0)
            return n;
        return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
    n = tls_writev(c->ssl, iov, niov);
    if (n == TLS_WAIT_READABLE)
        c->tls_write_blocked = true;
    if (n == TLS_WAIT_READABLE || n == TLS_WAIT_WRITABLE)
        return -EAGAIN;
    return n == TLS_FAILED ? -EPIPE : n;
}

/*
 * Sends queued replies. Returns 1 when everything went out, 0 when the
 * socket is full (wait for wait_output()), -1 when the connection is
 * broken.
 */
static int out_flush(struct conn *c)
{
    struct outq *q = &c->out;

    while (q->iov_next < q->niov) {
        ssize_t sent =
            conn_send(c, &q->iov[q->iov_next], q->niov - q->iov_next);
        if (sent == -EAGAIN)
            return 0;
        if (sent < 0)
            return -1;
        stats_add(TC_BYTES_WRITTEN, (uint64_t)sent);
        q->bytes -= (size_t)sent;
        while (sent > 0) {
            struct iovec *v = &q->iov[q->iov_next];
            if ((size_t)sent >= v->iov_len) {
                sent -= (ssize_t)v->iov_len;
                q->iov_next++;
            } else {
                v->iov_base = (char *)v->iov_base + sent;
                v->iov_len -= (size_t)sent;
                sent = 0;
            }
        }
    }
    out_reset(c);
    return 1;
}

/* ---- events ---- */

/* Makes c's persistent event wait for flags (EV_READ or EV_WRITE) on the
 * worker's base; c->ev_added says whether that worked. */
static void set_interest(struct conn *c, short flags)
{
    if (c->ev_added && c->ev_flags == flags)
        return;
    if (c->ev_added)
        event_del(&c->ev);
    event_assign(&c->ev, c->w->base, c->fd, flags | EV_PERSIST, conn_event_cb,
                 c);
    c->ev_flags = flags;
    c->ev_added = event_add(&c->ev, NULL) == 0;
}

/* Waits for what the pending output needs: a writable socket, or with TLS
 * sometimes a readable one (the session has to read first). */
static void wait_output(struct conn *c)
{
    set_interest(c, c->tls_write_blocked ? EV_READ : EV_WRITE);
}

/* c's events stop: no more reading or idle checks. */
static void stop_events(struct conn *c)
{
    if (c->ev_added)
        event_del(&c->ev);
    c->ev_added = false;
    if (c->idle_added)
        event_del(&c->idle_ev);
    c->idle_added = false;
}

static const char *transport_name(const struct conn *c)
{
    static const char *const names[] = {
        [TRANSPORT_TCP] = "tcp",
        [TRANSPORT_UNIX] = "local",
        [TRANSPORT_UDP] = "udp",
    };
    return names[c->transport];
}

static void stream_end(struct conn *c)
{
    void (*fn)(void *) = c->stream_free;
    void *state = c->stream_state;

    c->stream_next = NULL;
    c->stream_free = NULL;
    c->stream_state = NULL;
    if (fn)
        fn(state);
}

void conn_stream(struct conn *c, bool (*next)(struct conn *c, void *state),
                 void (*free)(void *state), void *state)
{
    c->stream_next = next;
    c->stream_free = free;
    c->stream_state = state;
}

/*
 * Ends a TCP or unix connection: stops its event, releases queued replies,
 * a pending store, the TLS session and buffers, closes the fd and uncounts
 * it. Its struct stays in the table for reuse; the owner must not touch c
 * afterwards, since another worker may take it over as soon as the fd is
 * closed.
 */
static void conn_close(struct conn *c)
{
    static const char *const reasons[] = {
        [CLOSE_ERROR] = "error",
        [CLOSE_NORMAL] = "normal",
        [CLOSE_IDLE_TIMEOUT] = "idle_timeout",
        [CLOSE_SHUTDOWN] = "shutdown",
    };

    watch_log_conn(&c->peer, c->transport == TRANSPORT_UNIX ? 0 : c->peerlen,
                   transport_name(c), reasons[c->close_reason], c->fd);
    stop_events(c);
    stream_end(c);
    out_reset(c);
    if (c->pend.it) {
        item_release(c->pend.it);
        c->pend.it = NULL;
    }
    auth_sasl_free(&c->sasl);
    tls_conn_free(c->ssl);
    c->ssl = NULL;
    c->rstart = c->rend = 0;
    release_idle_memory(c);
    free(c->out.iov);
    free(c->out.items);
    c->out = (struct outq){0};
    /* The fd number may be reused at once, and its struct taken over by
     * another worker in conn_new(): hand everything over under the lock. */
    pthread_mutex_lock(&conns_lock);
    set_state(c, CONN_CLOSED);
    close(c->fd);
    pthread_mutex_unlock(&conns_lock);
    fetch_sub_relaxed(&curr_conns, 1);
}

void conn_close_after_write(struct conn *c)
{
    c->close_after_write = true;
    c->close_reason = CLOSE_NORMAL;
}

bool conn_out_flush_now(struct conn *c)
{
    return c->out.bytes == 0 || out_flush(c) > 0;
}

void conn_hand_over(struct conn *c)
{
    stop_events(c);
    set_state(c, CONN_WATCH);
}

void conn_end(struct conn *c)
{
    c->close_reason = CLOSE_NORMAL;
    conn_close(c);
}

/* Switches c to reading the data block of c->pend.it (value + CRLF)
 * straight into the item; proto_nread_done() runs when it is complete. */
void conn_read_data(struct conn *c)
{
    c->nread_ptr = item_value(c->pend.it);
    c->nread_left = c->pend.it->nic.nbytes + (c->pend.binary ? 0 : 2);
    set_state(c, CONN_NREAD);
}

void conn_swallow(struct conn *c, size_t n)
{
    c->swallow_left = n;
    set_state(c, CONN_SWALLOW);
}

/* ---- input ---- */

enum input { INPUT_MORE, INPUT_NONE, INPUT_CLOSED };

/* Gives an idle connection a read buffer from the worker's cache; false
 * when out of memory. */
static bool rbuf_ensure(struct conn *c)
{
    if (c->rbuf)
        return true;
    c->rbuf = worker_buf_get(c->w);
    if (c->rbuf == NULL)
        return false;
    c->rsize = WORKER_BUF_SIZE;
    c->rstart = c->rend = 0;
    c->rbuf_big = false;
    return true;
}

/* Makes room at the end of the read buffer: compacts, or grows a buffer
 * filled by one long multiget line. */
static bool rbuf_make_room(struct conn *c)
{
    if (c->rstart > 0) {
        memmove(c->rbuf, c->rbuf + c->rstart, c->rend - c->rstart);
        c->rend -= c->rstart;
        c->rstart = 0;
    }
    if (c->rend < c->rsize)
        return true;
    if (c->rsize * 2 > LINE_BIG_MAX)
        return false;
    char *nb = malloc(c->rsize * 2);
    if (nb == NULL)
        return false;
    memcpy(nb, c->rbuf, c->rend);
    if (c->rbuf_big)
        free(c->rbuf);
    else
        worker_buf_put(c->w, c->rbuf);
    c->rbuf = nb;
    c->rsize *= 2;
    c->rbuf_big = true;
    return true;
}

/* One read(): into the data block being received when it is large and
 * nothing is buffered, else into the read buffer. *full says whether the
 * read filled all the room it had (more may be waiting). */
static enum input read_input(struct conn *c, bool *full)
{
    char *dst;
    size_t room;

    *full = false;
    if (c->state == CONN_NREAD && c->rstart == c->rend &&
        c->nread_left >= DIRECT_READ_MIN) {
        dst = c->nread_ptr;
        room = c->nread_left;
    } else {
        if (!rbuf_ensure(c))
            return INPUT_CLOSED;
        if (c->rend == c->rsize || c->rstart > c->rsize / 2) {
            if (!rbuf_make_room(c))
                return INPUT_CLOSED;
        }
        dst = c->rbuf + c->rend;
        room = c->rsize - c->rend;
    }
    bool more;
    ssize_t n = conn_recv(c, dst, room, &more);
    if (n == 0) {
        c->close_reason = CLOSE_NORMAL;
        return INPUT_CLOSED;
    }
    if (n == -EAGAIN)
        return INPUT_NONE;
    if (n < 0)
        return INPUT_CLOSED;
    stats_add(TC_BYTES_READ, (uint64_t)n);
    if (dst == c->nread_ptr) {
        c->nread_ptr += n;
        c->nread_left -= (size_t)n;
    } else {
        c->rend += (size_t)n;
    }
    *full = (size_t)n == room || more;
    return INPUT_MORE;
}

enum progress { NEED_INPUT, YIELD, OUTPUT_FULL };

/* A long line without its end: only multigets may be that long (as in
 * memcached); anything else is garbage and the connection goes. */
static bool long_line_allowed(const char *p, size_t n)
{
    size_t i = 0;

    while (i < n && p[i] == ' ')
        i++;
    if (i > 100)
        return false;
    return (n - i >= 4 && memcmp(p + i, "get ", 4) == 0) ||
           (n - i >= 5 && memcmp(p + i, "gets ", 5) == 0);
}

/* Runs one binary request, or with -Y the login command of a connection
 * that has not logged in yet, if one is buffered. */
static enum progress next_framed_command(struct conn *c)
{
    char *buf = c->rbuf + c->rstart;
    size_t avail = c->rend - c->rstart, used = 0;
    enum bin_result r;

    c->noreply = false;
    set_state(c, CONN_PARSE_CMD);
    if (c->proto == MC_PROTO_BINARY)
        r = proto_bin_process(c, buf, avail, &used);
    else
        r = auth_ascii_process(c, buf, avail, &used);
    switch (r) {
    case BIN_NEED_MORE:
        set_state(c, CONN_WAITING);
        return NEED_INPUT;
    case BIN_CLOSE:
        set_state(c, CONN_CLOSING);
        return NEED_INPUT;
    case BIN_DONE:
        break;
    }
    c->rstart += used;
    store_relaxed(&c->last_cmd_time, items_now());
    if (c->state == CONN_PARSE_CMD)
        set_state(c, CONN_NEW_CMD);
    return YIELD; /* one command done; the caller counts */
}

/* Runs one complete command line or binary request, if one is buffered.
 * The first byte of a negotiating connection decides its protocol. */
static enum progress next_command(struct conn *c)
{
    if (c->proto == MC_PROTO_NEGOTIATE) {
        bool bin = (unsigned char)c->rbuf[c->rstart] == BIN_REQ_MAGIC;
        c->proto = bin ? MC_PROTO_BINARY : MC_PROTO_ASCII;
        if (SETTING_GET(verbose) > 1 && c->transport != TRANSPORT_UDP)
            fprintf(stderr, "%d: Client using the %s protocol\n", c->fd,
                    bin ? "binary" : "ascii");
    }
    if (c->proto == MC_PROTO_BINARY ||
        (settings.auth_file && !c->authenticated))
        return next_framed_command(c);

    char *start = c->rbuf + c->rstart;
    size_t avail = c->rend - c->rstart;
    char *nl = memchr(start, '\n', avail);

    if (nl == NULL) {
        if (avail > LINE_PLAIN_MAX && !long_line_allowed(start, avail))
            set_state(c, CONN_CLOSING);
        else
            set_state(c, avail ? CONN_WAITING : CONN_NEW_CMD);
        return NEED_INPUT;
    }
    size_t len = (size_t)(nl - start);
    if (len > 0 && start[len - 1] == '\r')
        len--;
    start[len] = '\0';
    c->rstart += (size_t)(nl - start) + 1;
    c->noreply = false;
    store_relaxed(&c->last_cmd_time, items_now());
    set_state(c, CONN_PARSE_CMD);
    proto_text_process(c, start, len);
    if (c->state == CONN_PARSE_CMD)
        set_state(c, CONN_NEW_CMD);
    return YIELD; /* one command done; the caller counts */
}

/* Feeds buffered input to the data block being read, or discards it. */
static bool consume_block(struct conn *c)
{
    size_t avail = c->rbuf ? c->rend - c->rstart : 0;

    if (c->state == CONN_NREAD) {
        size_t n = avail < c->nread_left ? avail : c->nread_left;
        if (n > 0)
            memcpy(c->nread_ptr, c->rbuf + c->rstart, n);
        c->nread_ptr += n;
        c->nread_left -= n;
        c->rstart += n;
        if (c->nread_left > 0)
            return false;
        set_state(c, CONN_NEW_CMD);
        /* Cleared first: the ASCII protocols never set it. */
        bool binary = c->pend.binary;
        c->pend.binary = false;
        if (binary)
            proto_bin_nread_done(c);
        else
            proto_nread_done(c);
        return true;
    }
    size_t n = avail < c->swallow_left ? avail : c->swallow_left;
    c->rstart += n;
    c->swallow_left -= n;
    if (c->swallow_left > 0)
        return false;
    set_state(c, CONN_NEW_CMD);
    return true;
}

/* Processes buffered input within the per-event command budget. */
static enum progress process_input(struct conn *c, int *budget)
{
    for (;;) {
        if (c->close_after_write || c->state == CONN_CLOSING ||
            c->state == CONN_WATCH)
            return NEED_INPUT;
        if (c->out.bytes > OUT_HIGH_WATER)
            return OUTPUT_FULL;
        if (c->stream_next) {
            if (*budget == 0)
                return YIELD;
            (*budget)--;
            if (c->stream_next(c, c->stream_state))
                stream_end(c);
            continue;
        }
        if (c->state == CONN_NREAD || c->state == CONN_SWALLOW) {
            if (!consume_block(c))
                return NEED_INPUT;
            continue;
        }
        if (c->rbuf == NULL || c->rstart == c->rend) {
            set_state(c, CONN_NEW_CMD);
            return NEED_INPUT;
        }
        if (*budget == 0)
            return YIELD;
        if (next_command(c) == NEED_INPUT)
            return NEED_INPUT;
        (*budget)--;
    }
}

/*
 * Reads, processes and replies until the socket has no more input, the
 * command budget is spent (then resumes from the event loop), or the
 * replies cannot be sent (then waits for the socket to drain).
 */
static void conn_drive(struct conn *c, bool can_read)
{
    int budget = settings.reqs_per_event;

    watch_set_cfd(c->fd);
    for (;;) {
        bool full = false;
        enum input in = can_read ? read_input(c, &full) : INPUT_NONE;
        if (in == INPUT_CLOSED) {
            conn_close(c);
            return;
        }
        enum progress p = process_input(c, &budget);
        if (c->state == CONN_WATCH)
            return; /* the watcher has it now */
        int fl = out_flush(c);
        if (fl < 0 || c->state == CONN_CLOSING ||
            (fl > 0 && c->close_after_write)) {
            conn_close(c);
            return;
        }
        if (fl == 0) {
            wait_output(c);
            return;
        }
        if (c->tls_read_blocked) {
            set_interest(c, EV_WRITE); /* the handshake sends first */
            return;
        }
        if (p == YIELD) {
            stats_inc(TC_CONN_YIELDS);
            event_active(&c->ev, EV_READ, 0);
            return;
        }
        if (p == OUTPUT_FULL || (in == INPUT_MORE && full)) {
            can_read = in == INPUT_MORE;
            continue;
        }
        break;
    }
    release_idle_memory(c);
}

/*
 * libevent callback of every connection of this worker: a UDP socket
 * serves its datagrams, a writable socket flushes the pending replies
 * (then resumes reading), a readable one drives input processing.
 */
static void conn_event_cb(evutil_socket_t fd, short which, void *arg)
{
    struct conn *c = arg;

    (void)fd;
    if (c->transport == TRANSPORT_UDP) {
        udp_serve(c);
        return;
    }
    if (which & EV_WRITE) {
        int fl = out_flush(c);
        if (fl < 0 || (fl > 0 && c->close_after_write)) {
            conn_close(c);
            return;
        }
        if (fl == 0) {
            wait_output(c);
            return;
        }
        set_interest(c, EV_READ);
        /* A TLS session may hold input the socket no longer signals, or
         * a read that waited for this. */
        conn_drive(c, c->ssl != NULL);
        return;
    }
    conn_drive(c, true);
}

/* Looks at c again in secs seconds (its worker's timer). */
static void idle_arm(struct conn *c, uint32_t secs)
{
    struct timeval tv = {.tv_sec = secs, .tv_usec = 0};

    c->idle_added = evtimer_add(&c->idle_ev, &tv) == 0;
}

/*
 * -o idle_timeout: a connection whose last command is more than
 * idle_timeout seconds old, and which waits for a command (not for the
 * rest of a data block), is closed and counted in idle_kicks, as memcached
 * does; otherwise the timer is set for when that could first be true.
 */
static void idle_cb(evutil_socket_t fd, short which, void *arg)
{
    struct conn *c = arg;
    uint32_t limit = (uint32_t)settings.idle_timeout;
    uint32_t idle = items_now() - c->last_cmd_time;

    (void)fd;
    (void)which;
    c->idle_added = false;
    if (idle <= limit) {
        idle_arm(c, limit - idle + 1);
        return;
    }
    if ((c->state != CONN_NEW_CMD && c->state != CONN_WAITING) ||
        c->ev_flags != EV_READ) {
        idle_arm(c, 1); /* mid data block, or replies still going out */
        return;
    }
    if (SETTING_GET(verbose) > 1)
        fprintf(stderr, "Closing idle fd %d\n", c->fd);
    stats_inc(TC_IDLE_KICKS);
    c->close_reason = CLOSE_IDLE_TIMEOUT;
    conn_close(c);
}

/*
 * A zeroed conn struct for fd: a fresh one for UDP (every worker has its
 * own on the shared socket), else fd's table entry, which the worker that
 * closed the fd's previous connection may have used last. conns_lock held.
 */
static struct conn *conn_claim(int fd, enum transport transport)
{
    struct conn *c;

    if (transport == TRANSPORT_UDP) {
        c = calloc(1, sizeof(*c));
        if (c != NULL)
            fetch_add_relaxed(&conn_structs, 1);
        return c;
    }
    c = conn_slot(fd);
    if (c != NULL)
        memset(c, 0, sizeof(*c));
    return c;
}

/* See conn.h. The struct is claimed and set up under conns_lock, so the
 * previous owner's last writes (conn_close) happen before ours. */
struct conn *conn_new(struct worker *w, int fd, enum transport transport,
                      bool tls)
{
    struct ssl_st *ssl = NULL;
    struct conn *c;

    if (tls && (ssl = tls_conn_new(fd)) == NULL)
        return NULL;
    pthread_mutex_lock(&conns_lock);
    c = conn_claim(fd, transport);
    if (c != NULL) {
        c->ssl = ssl;
        c->fd = fd;
        c->transport = transport;
        c->w = w;
        c->proto = settings.protocol;
        c->last_cmd_time = items_now();
        c->peerlen = sizeof(c->peer);
        c->locallen = sizeof(c->local);
        if (transport != TRANSPORT_UDP) {
            getpeername(fd, (struct sockaddr *)&c->peer, &c->peerlen);
            getsockname(fd, (struct sockaddr *)&c->local, &c->locallen);
        }
        set_state(c, transport == TRANSPORT_UDP ? CONN_READ : CONN_NEW_CMD);
    }
    pthread_mutex_unlock(&conns_lock);
    if (c == NULL) {
        tls_conn_free(ssl);
        return NULL;
    }
    set_interest(c, EV_READ);
    if (!c->ev_added) {
        tls_conn_free(ssl);
        c->ssl = NULL;
        pthread_mutex_lock(&conns_lock);
        set_state(c, CONN_CLOSED);
        pthread_mutex_unlock(&conns_lock);
        return NULL;
    }
    if (transport != TRANSPORT_UDP && settings.idle_timeout > 0) {
        evtimer_assign(&c->idle_ev, w->base, idle_cb, c);
        idle_arm(c, (uint32_t)settings.idle_timeout + 1);
    }
    if (transport != TRANSPORT_UDP) {
        static const char *const kind[] = {
            [MC_PROTO_NEGOTIATE] = "auto-negotiating client connection",
            [MC_PROTO_ASCII] = "ascii client connection.",
            [MC_PROTO_BINARY] = "binary client connection.",
        };
        stats_inc(TC_TOTAL_CONNS);
        if (SETTING_GET(verbose) > 1)
            fprintf(stderr, "<%d new %s\n", fd, kind[c->proto]);
        watch_log_conn(&c->peer, transport == TRANSPORT_UNIX ? 0 : c->peerlen,
                       transport_name(c), NULL, fd);
    }
    return c;
}

/* ---- for udp.c ---- */

/* Runs the commands of one datagram (data is the payload after the UDP
 * frame header); replies stay queued for udp.c. A storage command whose
 * data block is not all in the datagram is dropped. The datagram's first
 * byte says which protocol all of its commands speak, whatever -B says
 * (as memcached). */
void conn_udp_process(struct conn *c, char *data, size_t len)
{
    int budget = INT32_MAX;

    c->proto = MC_PROTO_NEGOTIATE;
    c->rbuf = data;
    c->rsize = c->rend = len;
    c->rstart = 0;
    set_state(c, CONN_NEW_CMD);
    process_input(c, &budget);
    /* A data block must come in the same datagram: drop a partial one. */
    if (c->pend.it) {
        item_release(c->pend.it);
        c->pend.it = NULL;
        c->pend.binary = false;
    }
    c->rbuf = NULL;
    c->rsize = c->rstart = c->rend = 0;
    c->close_after_write = false;
    set_state(c, CONN_READ);
}

void conn_udp_done(struct conn *c)
{
    out_reset(c);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/watch.c - log watchers (see watch.h).
 *
 * A watcher owns its connection's descriptor from "watch" on: conn.c stops
 * serving it (conn_hand_over()) and this file's events, on the same
 * worker's event base, send its buffer and notice when the client goes
 * away; then conn_end() closes it as any connection closes.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "memcached/conn.h"
#include "memcached/items.h"
#include "memcached/proto_text.h"
#include "memcached/settings.h"
#include "memcached/thread.h"
#include "memcached/watch.h"

#define WATCH_BUF_SIZE (256 * 1024) /* memcached's watcher_logbuf_size */
#define WATCH_LINE_MAX 2048         /* memcached's LOGGER_ENTRY_MAX_SIZE */
#define SKIPPED_MAX    64           /* room kept for a "skipped=" line */

struct watcher {
    struct conn *c;
    struct event_base *base; /* its worker's */
    int fd;
    unsigned kinds;
    struct event *wake; /* made active by producers: data to send */
    struct event *io;   /* the socket: readable (gone?) or writable */
    bool want_write;
    char *buf; /* [off, len) not sent yet (watch lock) */
    size_t off, len;
    uint64_t skipped;
};

static struct {
    pthread_mutex_t lock; /* everything below and every watcher's buffer */
    struct watcher *w[WATCH_LIMIT];
    unsigned n;
    unsigned kinds; /* union of the watchers' kinds; also read unlocked */
    uint64_t gid;
    struct watch_stats st;
} wl = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread int cur_fd = -1;

void watch_set_cfd(int fd)
{
    cur_fd = fd;
}

bool watch_wants(enum watch_kind kind)
{
    return (load_relaxed(&wl.kinds) & (unsigned)kind) != 0;
}

/* Recomputes the union of kinds (watch lock held). */
static void kinds_update(void)
{
    unsigned k = 0;

    for (unsigned i = 0; i < WATCH_LIMIT; i++)
        if (wl.w[i])
            k |= wl.w[i]->kinds;
    store_relaxed(&wl.kinds, k);
}

/* Appends len bytes to w's buffer if they fit, else counts them skipped.
 * Watch lock held. */
static void buf_offer(struct watcher *w, const char *line, size_t len)
{
    if (w->off > 0 && w->len + len + SKIPPED_MAX > WATCH_BUF_SIZE) {
        memmove(w->buf, w->buf + w->off, w->len - w->off);
        w->len -= w->off;
        w->off = 0;
    }
    if (w->len + len + SKIPPED_MAX > WATCH_BUF_SIZE) {
        w->skipped++;
        wl.st.watcher_skipped++;
        return;
    }
    if (w->skipped > 0) {
        w->len +=
            (size_t)snprintf(w->buf + w->len, SKIPPED_MAX, "skipped=%llu\n",
                             (unsigned long long)w->skipped);
        w->skipped = 0;
    }
    memcpy(w->buf + w->len, line, len);
    w->len += len;
    wl.st.watcher_sent++;
    event_active(w->wake, EV_WRITE, 0);
}

/*
 * Formats "ts=<sec>.<usec> gid=<n> " + fmt (memcached prints the
 * microseconds without padding) and offers it to every watcher of kind.
 */
static void emit(enum watch_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void emit(enum watch_kind kind, const char *fmt, ...)
{
    char body[WATCH_LINE_MAX], line[WATCH_LINE_MAX + 64];
    struct timeval tv;
    va_list ap;

    gettimeofday(&tv, NULL);
    va_start(ap, fmt);
    int m = vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t)m >= sizeof(body)) {
        pthread_mutex_lock(&wl.lock);
        wl.st.worker_dropped++;
        pthread_mutex_unlock(&wl.lock);
        return;
    }
    pthread_mutex_lock(&wl.lock);
    int n = snprintf(line, sizeof(line), "ts=%lld.%d gid=%llu %s",
                     (long long)tv.tv_sec, (int)tv.tv_usec,
                     (unsigned long long)++wl.gid, body);
    wl.st.worker_written++;
    for (unsigned i = 0; i < WATCH_LIMIT; i++) {
        struct watcher *w = wl.w[i];
        if (w && (w->kinds & (unsigned)kind))
            buf_offer(w, line, (size_t)n);
    }
    pthread_mutex_unlock(&wl.lock);
}

/* A key as memcached's lines show it, NUL-terminated. */
static void uri_key(char *out, const char *key, size_t nkey)
{
    *uri_encode(out, key, nkey) = '\0';
}

void watch_log_get(const char *key, size_t nkey, const char *status,
                   const struct item *it)
{
    char k[3 * KEY_MAX_LENGTH + 1];

    if (!watch_wants(WATCH_FETCHERS) || nkey > KEY_MAX_LENGTH)
        return;
    uri_key(k, key, nkey);
    emit(WATCH_FETCHERS,
         "type=item_get key=%s status=%s clsid=%u cfd=%d "
         "size=%u\n",
         k, status, it ? it->clsid : 0u, cur_fd, it ? it->nic.nbytes : 0u);
}

void watch_log_store(const char *key, size_t nkey, const char *status,
                     const char *cmd, const struct item *it)
{
    char k[3 * KEY_MAX_LENGTH + 1];
    uint32_t ttl = 0;

    if (!watch_wants(WATCH_MUTATIONS) || nkey > KEY_MAX_LENGTH)
        return;
    uri_key(k, key, nkey);
    if (it && it->nic.exptime != 0)
        ttl = it->nic.exptime - items_now(); /* unsigned, as memcached */
    emit(WATCH_MUTATIONS,
         "type=item_store key=%s status=%s cmd=%s ttl=%u "
         "clsid=%u cfd=%d size=%u\n",
         k, status, cmd, ttl, it ? it->clsid : 0u, cur_fd,
         it ? it->nic.nbytes : 0u);
}

void watch_log_eviction(const struct item *it)
{
    char k[3 * KEY_MAX_LENGTH + 1];
    uint32_t now = items_now();

    if (!watch_wants(WATCH_EVICTIONS))
        return;
    uri_key(k, rdn_item_key((struct rdn_item *)&it->nic), it->nic.nkey);
    emit(WATCH_EVICTIONS,
         "type=eviction key=%s fetch=%s ttl=%lld la=%d "
         "clsid=%u size=%u\n",
         k, (it->it_flags & ITEM_FETCHED) ? "yes" : "no",
         it->nic.exptime ? (long long)it->nic.exptime - now : -1LL,
         (int)(now - it->atime), it->clsid, it->nic.nbytes);
}

/* memcached's rip/rport: the address, or "unix" and 0. */
static void endpoint(const struct sockaddr_storage *ss, socklen_t len,
                     char *rip, size_t size, unsigned *rport)
{
    *rport = 0;
    snprintf(rip, size, "unix");
    if (len == 0)
        return;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, rip, (socklen_t)size);
        *rport = ntohs(a->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, rip, (socklen_t)size);
        *rport = ntohs(a->sin6_port);
    }
}

void watch_log_conn(const struct sockaddr_storage *peer, socklen_t len,
                    const char *transport, const char *close_reason, int fd)
{
    char rip[64];
    unsigned rport;

    if (!watch_wants(WATCH_CONNEVENTS))
        return;
    endpoint(peer, len, rip, sizeof(rip), &rport);
    if (close_reason == NULL)
        emit(WATCH_CONNEVENTS,
             "type=conn_new rip=%s rport=%u transport=%s cfd=%d\n", rip, rport,
             transport, fd);
    else
        emit(WATCH_CONNEVENTS,
             "type=conn_close rip=%s rport=%u transport=%s reason=%s "
             "cfd=%d\n",
             rip, rport, transport, close_reason, fd);
}

void watch_log_slab_move(unsigned src, unsigned dst)
{
    if (watch_wants(WATCH_SYSEVENTS))
        emit(WATCH_SYSEVENTS, "type=slab_move src=%u dst=%u\n", src, dst);
}

void watch_stats(struct watch_stats *s)
{
    pthread_mutex_lock(&wl.lock);
    *s = wl.st;
    s->watchers = wl.n;
    pthread_mutex_unlock(&wl.lock);
}

/* ---- the watcher's side, on its worker ---- */

static void watcher_io_cb(evutil_socket_t fd, short which, void *arg);

/* Removes w, frees it and closes its connection (its worker). */
static void watcher_end(struct watcher *w)
{
    pthread_mutex_lock(&wl.lock);
    for (unsigned i = 0; i < WATCH_LIMIT; i++)
        if (wl.w[i] == w)
            wl.w[i] = NULL;
    wl.n--;
    kinds_update();
    pthread_mutex_unlock(&wl.lock);
    event_free(w->wake);
    event_free(w->io);
    free(w->buf);
    conn_end(w->c);
    free(w);
}

/* Waits for the socket to be readable, and writable too if want_write. */
static void io_interest(struct watcher *w, bool want_write)
{
    if (w->want_write == want_write)
        return;
    event_del(w->io);
    event_assign(w->io, w->base, w->fd,
                 (short)(EV_READ | EV_PERSIST | (want_write ? EV_WRITE : 0)),
                 watcher_io_cb, w);
    event_add(w->io, NULL);
    w->want_write = want_write;
}

/* Sends what the buffer holds; false if the connection failed. */
static bool watcher_flush(struct watcher *w)
{
    bool ok = true, blocked = false;

    pthread_mutex_lock(&wl.lock);
    while (w->off < w->len) {
        struct iovec v = {.iov_base = w->buf + w->off,
                          .iov_len = w->len - w->off};
        ssize_t n = conn_send(w->c, &v, 1); /* TLS too, on this thread */
        if (n < 0) {
            blocked = n == -EAGAIN;
            ok = blocked;
            break;
        }
        w->off += (size_t)n;
    }
    if (w->off == w->len)
        w->off = w->len = 0;
    pthread_mutex_unlock(&wl.lock);
    if (ok)
        io_interest(w, blocked);
    return ok;
}

static void watcher_wake_cb(evutil_socket_t fd, short which, void *arg)
{
    struct watcher *w = arg;

    (void)fd;
    (void)which;
    if (!watcher_flush(w))
        watcher_end(w);
}

/* Input is ignored, as memcached does; end of stream or an error ends the
 * watcher. */
static void watcher_io_cb(evutil_socket_t fd, short which, void *arg)
{
    struct watcher *w = arg;
    char sink[256];

    (void)fd; /* w's connection reads (through TLS if it has it) */
    if (which & EV_READ) {
        bool more;
        ssize_t n = conn_recv(w->c, sink, sizeof(sink), &more);
        if (n == 0 || (n < 0 && n != -EAGAIN)) {
            watcher_end(w);
            return;
        }
    }
    if ((which & EV_WRITE) && !watcher_flush(w))
        watcher_end(w);
}

/* "rawcmds" and the proxy kinds are accepted as memcached does; this
 * server logs none of them (memcached 1.6.18 logs no rawcmds either). */
static const struct {
    const char *name;
    enum watch_kind kind;
} kind_names[] = {
    {"rawcmds", WATCH_RAWCMDS},     {"evictions", WATCH_EVICTIONS},
    {"fetchers", WATCH_FETCHERS},   {"mutations", WATCH_MUTATIONS},
    {"sysevents", WATCH_SYSEVENTS}, {"connevents", WATCH_CONNEVENTS},
    {"proxyreqs", WATCH_PROXYREQS}, {"proxyevents", WATCH_PROXYEVENTS},
    {"proxyuser", WATCH_PROXYUSER},
};

static bool parse_kinds(struct token *t, size_t nt, unsigned *kinds)
{
    *kinds = 0;
    if (nt <= 2) {
        *kinds = WATCH_FETCHERS;
        return true;
    }
    for (size_t x = 1; x < nt - 1; x++) {
        size_t k = 0;
        while (k < sizeof(kind_names) / sizeof(kind_names[0]) &&
               strcmp(t[x].value, kind_names[k].name) != 0)
            k++;
        if (k == sizeof(kind_names) / sizeof(kind_names[0]))
            return false;
        *kinds |= kind_names[k].kind;
    }
    return true;
}

void proto_watch(struct conn *c, struct token *t, size_t nt)
{
    unsigned kinds;
    struct watcher *w;

    proto_noreply_maybe(c, t, nt);
    if (!settings.watch_enabled) {
        conn_out_line(c, "CLIENT_ERROR watch commands not allowed");
        return;
    }
    if (!conn_out_flush_now(c)) {
        conn_out_line(c, "ERROR cannot pipeline other commands before watch");
        return;
    }
    if (!parse_kinds(t, nt, &kinds)) {
        conn_out_line(c, "ERROR");
        return;
    }
    if (c->transport == TRANSPORT_UDP) {
        conn_out_line(c, "WATCHER_FAILED failed to add log watcher");
        return;
    }
    w = calloc(1, sizeof(*w));
    if (w != NULL)
        w->buf = malloc(WATCH_BUF_SIZE);
    if (w != NULL && w->buf != NULL) {
        w->wake = event_new(c->w->base, -1, 0, watcher_wake_cb, w);
        w->io = event_new(c->w->base, c->fd, EV_READ | EV_PERSIST,
                          watcher_io_cb, w);
    }
    if (w == NULL || w->buf == NULL || w->wake == NULL || w->io == NULL) {
        if (w != NULL) {
            if (w->wake)
                event_free(w->wake);
            if (w->io)
                event_free(w->io);
            free(w->buf);
            free(w);
        }
        conn_out_line(c, "WATCHER_FAILED failed to add log watcher");
        return;
    }
    w->c = c;
    w->base = c->w->base;
    w->fd = c->fd;
    w->kinds = kinds;
    pthread_mutex_lock(&wl.lock);
    unsigned slot = 0;
    while (slot < WATCH_LIMIT && wl.w[slot] != NULL)
        slot++;
    if (slot == WATCH_LIMIT) {
        pthread_mutex_unlock(&wl.lock);
        event_free(w->wake);
        event_free(w->io);
        free(w->buf);
        free(w);
        conn_out_line(c, "WATCHER_TOO_MANY log watcher limit reached");
        return;
    }
    memcpy(w->buf, "OK\r\n", 4);
    w->len = 4;
    wl.w[slot] = w;
    wl.n++;
    kinds_update();
    pthread_mutex_unlock(&wl.lock);
    conn_hand_over(c);
    event_add(w->io, NULL);
    event_active(w->wake, EV_WRITE, 0);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/listen.c - listening sockets and accepting (see listen.h).
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "memcached/conn.h"
#include "memcached/listen.h"
#include "memcached/settings.h"
#include "memcached/stats.h"
#include "memcached/thread.h"
#include "memcached/tls.h"
#include "proto/barrier.h"

#define MAX_LISTENERS 16
#define DEFAULT_INTER "127.0.0.1"

struct listener {
    int fd;
    enum transport transport;
    bool tls; /* -Z, and not a notls: address */
    struct event *ev;
};

static struct listener listeners[MAX_LISTENERS];
static int nlisteners;

/* -o no_maxconns_fast: while -c connections are open the listeners are
 * paused (new clients wait in the backlog, as with memcached), and this
 * timer of the main loop looks every ACCEPT_RETRY_US whether one closed. */
#define ACCEPT_RETRY_US 10000
static struct event *resume_ev;
static uint64_t listen_disabled; /* times paused; main thread only */

/* Splits "host", "host:port", "[v6]:port" or "v6" into host and port. */
static int split_addr(char *a, char **host, char **port)
{
    char *colon;

    *port = NULL;
    if (a[0] == '[') {
        char *end = strchr(a, ']');
        if (end == NULL)
            return -1;
        *end = '\0';
        *host = a + 1;
        if (end[1] == ':')
            *port = end + 2;
        else if (end[1] != '\0')
            return -1;
        return 0;
    }
    *host = a;
    colon = strchr(a, ':');
    if (colon && strchr(colon + 1, ':') == NULL) {
        *colon = '\0';
        *port = colon + 1;
    }
    return 0;
}

static int open_socket(const struct addrinfo *ai)
{
    int fd =
        socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
               ai->ai_protocol);
    int one = 1;

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int add_listener(int fd, enum transport transport, bool tls)
{
    if (nlisteners == MAX_LISTENERS) {
        fprintf(stderr, "too many listening sockets\n");
        close(fd);
        return -1;
    }
    listeners[nlisteners].fd = fd;
    listeners[nlisteners].transport = transport;
    listeners[nlisteners].tls = tls;
    nlisteners++;
    conns_note_listener(fd, transport);
    return 0;
}

/* Binds one address; returns the fd or -1 after printing why. */
static int bind_one(char *addr, int port, int socktype)
{
    char *host, *pstr, portbuf[16];
    struct addrinfo hints = {.ai_flags = AI_PASSIVE,
                             .ai_family = AF_UNSPEC,
                             .ai_socktype = socktype};
    struct addrinfo *res;

    if (split_addr(addr, &host, &pstr) != 0) {
        fprintf(stderr, "invalid listen address: %s\n", addr);
        return -1;
    }
    if (pstr == NULL || socktype == SOCK_DGRAM) {
        snprintf(portbuf, sizeof(portbuf), "%d", port);
        pstr = portbuf;
    }
    int rc = getaddrinfo(host, pstr, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "getaddrinfo(%s): %s\n", host, gai_strerror(rc));
        return -1;
    }
    int fd = open_socket(res);
    if (fd < 0)
        fprintf(stderr, "failed to listen on %s port %s: %s\n", host, pstr,
                strerror(errno));
    freeaddrinfo(res);
    return fd;
}

/*
 * Takes memcached's "notls:" prefix off *a: false if it has one (a plain
 * listener), true if not. Without -Z the prefix is memcached's error
 * (*bad set).
 */
static bool strip_notls(char **a, bool *bad)
{
    static const char prefix[] = "notls";

    *bad = false;
    if (strncmp(*a, prefix, sizeof(prefix) - 1) != 0)
        return true;
    if (!tls_config.enabled) {
        fprintf(stderr, "'notls' option is valid only when SSL is enabled\n");
        *bad = true;
    }
    *a += sizeof(prefix) - 1;
    if (**a == ':')
        (*a)++;
    return false;
}

int listen_tcp_bind(const char *inter, int port, int backlog)
{
    char *list = strdup(inter ? inter : DEFAULT_INTER);
    char *save = NULL;
    int rc = 0;

    if (list == NULL)
        return -1;
    for (char *a = strtok_r(list, ", ", &save); a && rc == 0;
         a = strtok_r(NULL, ", ", &save)) {
        bool bad;
        bool tls = strip_notls(&a, &bad) && tls_config.enabled;
        if (bad) {
            rc = -1;
            break;
        }
        int fd = bind_one(a, port, SOCK_STREAM);
        if (fd < 0 || listen(fd, backlog) != 0) {
            if (fd >= 0) {
                perror("listen");
                close(fd);
            }
            rc = -1;
        } else {
            rc = add_listener(fd, TRANSPORT_TCP, tls);
        }
    }
    free(list);
    return rc;
}

int listen_udp_bind(const char *inter, int port)
{
    char *list = strdup(inter ? inter : DEFAULT_INTER);
    char *save = NULL;
    int fd = -1;

    if (list == NULL)
        return -1;
    char *first = strtok_r(list, ", ", &save);
    bool bad;
    if (first)
        strip_notls(&first, &bad); /* UDP is never TLS */
    if (first)
        fd = bind_one(first, port, SOCK_DGRAM);
    free(list);
    if (fd >= 0)
        conns_note_listener(fd, TRANSPORT_UDP);
    return fd;
}

int listen_unix_bind(const char *path, int access, int backlog)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat st;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "unix socket path too long: %s\n", path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    /* A stale socket from an earlier run is replaced, anything else kept. */
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("socket");
        return -1;
    }
    mode_t old = umask((mode_t)(~access & 0777));
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    umask(old);
    if (rc != 0 || listen(fd, backlog) != 0) {
        fprintf(stderr, "failed to listen on unix socket %s: %s\n", path,
                strerror(errno));
        close(fd);
        return -1;
    }
    return add_listener(fd, TRANSPORT_UNIX, false);
}

/*
 * Turns a connection away when -c is reached (memcached maxconns_fast).
 * Counted first: a client that saw the close may ask for stats at once.
 */
static void reject(int fd)
{
    static const char msg[] = "ERROR Too many open connections\r\n";

    stats_inc(TC_REJECTED_CONNS);
    if (write(fd, msg, sizeof(msg) - 1) < 0) {
        /* the client is gone already */
    }
    close(fd);
}

/* Stops or resumes accepting on every listener (main thread). */
static void listeners_enable(bool on)
{
    for (int i = 0; i < nlisteners; i++) {
        if (on)
            event_add(listeners[i].ev, NULL);
        else
            event_del(listeners[i].ev);
    }
}

static void arm_resume(void)
{
    struct timeval tv = {0, ACCEPT_RETRY_US};

    evtimer_add(resume_ev, &tv);
}

static void resume_cb(evutil_socket_t fd, short which, void *arg)
{
    (void)fd;
    (void)which;
    (void)arg;
    if (conns_accepting())
        listeners_enable(true);
    else
        arm_resume();
}

uint64_t listen_disabled_count(void)
{
    return load_relaxed(&listen_disabled);
}

static void accept_cb(evutil_socket_t lfd, short which, void *arg)
{
    struct listener *l = arg;

    (void)which;
    for (;;) {
        if (!settings.maxconns_fast && !conns_accepting()) {
            listeners_enable(false);
            fetch_add_relaxed(&listen_disabled, 1);
            arm_resume();
            return;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE)
                perror("accept");
            return;
        }
        if (!conns_reserve()) {
            reject(fd);
            continue;
        }
        if (l->transport == TRANSPORT_TCP) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
        thread_dispatch(fd, l->transport, l->tls);
    }
}

int listen_start(struct event_base *base)
{
    resume_ev = evtimer_new(base, resume_cb, NULL);
    if (resume_ev == NULL)
        return -1;
    for (int i = 0; i < nlisteners; i++) {
        struct listener *l = &listeners[i];
        l->ev = event_new(base, l->fd, EV_READ | EV_PERSIST, accept_cb, l);
        if (l->ev == NULL || event_add(l->ev, NULL) != 0)
            return -1;
    }
    return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/librdn/rdn-cli.c - a terminal client of the offloaded GET.
 *
 *   rdn-cli [-s host] [-p rdn_port] [-t tcp_port] [-d device] [-v] get KEY...
 *   rdn-cli [-s host] [-t tcp_port] set KEY VALUE [FLAGS [EXPTIME]]
 *   rdn-cli [-s host] [-t tcp_port] stats
 *   rdn-cli --servers CONFIG [-d device] [-v] get|set|stats ...
 *   rdn-cli -a FILE ...: log in first, for a server started with -Y or -S
 *
 * --servers names a server list in the grammar of libmemcached's
 * memcached() ("--SERVER=a:11211 --SERVER=b:11211 --DISTRIBUTION=
 * consistent"): keys are placed by libmemcached, each server's RDMA port
 * comes from its stats, and stats prints every server's, each after a
 * "server HOST:PORT" line.
 *
 * get prints each value followed by a newline, as memccat does; a key that
 * is not found is reported on stderr. Exit status: 0 when every key was
 * found, 1 when any was not, 2 on error. With -v, stderr also says for each
 * key whether the server's NIC or the TCP fallback answered, and why.
 * set and stats use TCP (libmemcached, and "stats" + "stats rdn").
 *
 * -a FILE: the first line of FILE is "user:password", in the format of
 * memcached's -Y file. get logs in on the handshake with it (docs/wire.md,
 * AUTH) and on the TCP path (librdn); set and stats, told
 * "unauthenticated" (-Y), log in with -Y's ASCII login and ask again, and
 * to a server that hangs up on ASCII (-S) they speak the binary protocol
 * with a SASL PLAIN login.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <libmemcached/memcached.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdn/librdn/client.h"

#define EXIT_MISS  1
#define EXIT_ERROR 2

struct cli {
    const char *servers; /* a libmemcached configuration string, or NULL */
    const char *host;
    int rdn_port, tcp_port;
    const char *device;
    int verbose;
    char *user, *password; /* -a, else NULL */
};

/* -a: "user:password" on the file's first line (the rest is ignored). */
static void read_login(struct cli *o, const char *path)
{
    static char line[600];
    FILE *f = fopen(path, "r");
    char *colon = NULL;

    if (f && fgets(line, sizeof(line), f))
        colon = strchr(line, ':');
    if (f)
        fclose(f);
    if (!colon || colon == line) {
        fprintf(stderr, "rdn-cli: -a %s: no \"user:password\" line\n", path);
        exit(EXIT_ERROR);
    }
    *colon = '\0';
    line[strcspn(colon + 1, "\r\n") + (size_t)(colon + 1 - line)] = '\0';
    o->user = line;
    o->password = colon + 1;
}

/* memcached -Y's login: a set of any key whose data is "user password". */
static memcached_return_t ascii_login(const struct cli *o, memcached_st *mc)
{
    char data[1200];
    int n = snprintf(data, sizeof(data), "%s %s", o->user, o->password);

    return memcached_set(mc, "rdn", 3, data, (size_t)n, 0, 0);
}

/* memcached -S's login: the binary protocol with a SASL PLAIN login
 * (libmemcached logs in on every connection it makes). */
static memcached_return_t sasl_on(const struct cli *o, memcached_st *mc)
{
    memcached_return_t rc =
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);

    return rc == MEMCACHED_SUCCESS
               ? memcached_set_sasl_auth_data(mc, o->user, o->password)
               : rc;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rdn-cli [options] get KEY...\n"
            "       rdn-cli [options] set KEY VALUE [FLAGS [EXPTIME]]\n"
            "       rdn-cli [options] stats\n"
            "  -s HOST    server (default 127.0.0.1)\n"
            "  -p PORT    the server's --rdn-port (default 11212)\n"
            "  -t PORT    the server's TCP port (default 11211)\n"
            "  -d DEVICE  RDMA device: softnic, verbs:IBDEV (verbs:rxe0)\n"
            "             or mlx5:IBDEV (default $RDN_DEVICE, else softnic)\n"
            "  --servers CONFIG  a server list instead (libmemcached's\n"
            "             configuration string: --SERVER=h:p ...)\n"
            "  -v         say on stderr who answered each GET (nic/tcp)\n"
            "  -a FILE    log in with the \"user:password\" of FILE's first "
            "line\n"
            "             (a server started with -Y or -S)\n");
}

static int cmd_get(const struct cli *o, int n, char **keys)
{
    struct rdn_opts ro =
        RDN_OPTS(.device = o->device, .user = o->user, .password = o->password);
    struct rdn_conn *c;
    struct rdn_result *res = calloc((size_t)n, sizeof(*res));
    size_t *lens = calloc((size_t)n, sizeof(*lens));
    int rc, status = EXIT_SUCCESS;

    if (!res || !lens)
        return EXIT_ERROR;
    char err[256] = "";

    if (o->servers)
        rc = rdn_connect_config(o->servers, &ro, &c, err, sizeof(err));
    else
        rc = rdn_connect_opts(o->host, o->rdn_port, o->tcp_port, &ro, &c);
    if (rc < 0 && o->servers) {
        fprintf(stderr, "rdn-cli: --servers: %s\n", err);
        return EXIT_ERROR;
    }
    if (rc < 0) {
        fprintf(stderr, "rdn-cli: cannot connect to %s:%d: %s\n", o->host,
                o->rdn_port, strerror(-rc));
        return EXIT_ERROR;
    }
    for (int i = 0; i < n; i++)
        lens[i] = strlen(keys[i]);
    rc = rdn_mget(c, (size_t)n, (const char *const *)keys, lens, res);
    for (int i = 0; i < n && rc == 0; i++) {
        struct rdn_server_info si;

        if (o->verbose && rdn_server_info(c, res[i].server, &si) == 0)
            fprintf(stderr, "%s: %s%s%s (%s:%d)\n", keys[i],
                    res[i].src == RDN_SRC_NIC ? "nic" : "tcp",
                    res[i].src == RDN_SRC_TCP ? ", " : "",
                    res[i].src == RDN_SRC_TCP ? res[i].why : "", si.host,
                    si.tcp_port);
        if (res[i].status == 0) {
            fwrite(res[i].value, 1, res[i].len, stdout);
            putchar('\n');
            fflush(stdout); /* in step with the -v lines on stderr */
        } else if (res[i].status == -ENOENT) {
            fprintf(stderr, "rdn-cli: %s not found\n", keys[i]);
            if (status == EXIT_SUCCESS)
                status = EXIT_MISS;
        } else {
            fprintf(stderr, "rdn-cli: %s: %s\n", keys[i],
                    strerror(-res[i].status));
            status = EXIT_ERROR;
        }
        free(res[i].value);
    }
    if (rc < 0) {
        fprintf(stderr, "rdn-cli: get: %s\n", strerror(-rc));
        status = EXIT_ERROR;
    }
    rdn_close(c);
    free(res);
    free(lens);
    return status;
}

/* The libmemcached handle of -s/-t or --servers; NULL said on stderr. */
static memcached_st *handle(const struct cli *o)
{
    memcached_st *mc;
    char err[256];

    if (o->servers) {
        if (libmemcached_check_configuration(o->servers, strlen(o->servers),
                                             err, sizeof(err)) !=
            MEMCACHED_SUCCESS) {
            fprintf(stderr, "rdn-cli: --servers: %s\n", err);
            return NULL;
        }
        return memcached(o->servers, strlen(o->servers));
    }
    mc = memcached_create(NULL);
    if (mc && memcached_server_add(mc, o->host, (in_port_t)o->tcp_port) !=
                  MEMCACHED_SUCCESS) {
        memcached_free(mc);
        mc = NULL;
    }
    return mc;
}

static int cmd_set(const struct cli *o, int argc, char **argv)
{
    memcached_st *mc = handle(o);
    uint32_t flags = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 0;
    time_t exptime = argc > 3 ? (time_t)strtol(argv[3], NULL, 10) : 0;
    memcached_return_t rc;

    if (!mc)
        return EXIT_ERROR;
    rc = memcached_set(mc, argv[0], strlen(argv[0]), argv[1], strlen(argv[1]),
                       exptime, flags);
    /* "CLIENT_ERROR unauthenticated" (-Y): log in, then again; a server
     * that hung up on ASCII (-S): again in binary with a SASL login. */
    if (o->user && rc != MEMCACHED_SUCCESS &&
        (rc == MEMCACHED_CLIENT_ERROR ? ascii_login(o, mc) : sasl_on(o, mc)) ==
            MEMCACHED_SUCCESS)
        rc = memcached_set(mc, argv[0], strlen(argv[0]), argv[1],
                           strlen(argv[1]), exptime, flags);
    if (rc != MEMCACHED_SUCCESS)
        fprintf(stderr, "rdn-cli: set %s: %s\n", argv[0],
                memcached_strerror(mc, rc));
    memcached_free(mc);
    return rc == MEMCACHED_SUCCESS ? EXIT_SUCCESS : EXIT_ERROR;
}

/* Sends one stats command and copies the reply up to END to stdout; with
 * -a, a server that wants a login first gets one. */
static int stats_dump(const struct cli *o, FILE *f, const char *cmd)
{
    bool logged_in = false;
    char line[512];

    if (fprintf(f, "%s\r\n", cmd) < 0 || fflush(f) != 0)
        return -EIO;
    while (fgets(line, sizeof(line), f)) {
        if (strcmp(line, "END\r\n") == 0)
            return 0;
        if (strcmp(line, "CLIENT_ERROR unauthenticated\r\n") == 0 && o->user &&
            !logged_in) {
            size_t n = strlen(o->user) + 1 + strlen(o->password);
            logged_in = true;
            if (fprintf(f, "set rdn 0 0 %zu\r\n%s %s\r\n%s\r\n", n, o->user,
                        o->password, cmd) < 0 ||
                fflush(f) != 0 || !fgets(line, sizeof(line), f) ||
                strcmp(line, "STORED\r\n") != 0)
                return -EACCES;
            continue;
        }
        if (strncmp(line, "STAT ", 5) != 0)
            return -EPROTO;
        line[strcspn(line, "\r\n")] = '\0';
        puts(line + 5);
    }
    return ferror(f) ? -EIO : -ECONNRESET;
}

static memcached_return_t print_stat(const memcached_instance_st *in,
                                     const char *key, size_t nkey,
                                     const char *value, size_t nvalue,
                                     void *ctx)
{
    (void)in;
    (void)ctx;
    printf("%.*s %.*s\n", (int)nkey, key, (int)nvalue, value);
    return MEMCACHED_SUCCESS;
}

/* "stats" and "stats rdn" of a server that speaks the binary protocol only
 * (-S): binary STATs after a SASL login. */
static int stats_sasl(const struct cli *o, const char *host, int tcp_port)
{
    memcached_st *mc = memcached_create(NULL);
    memcached_return_t rc = MEMCACHED_MEMORY_ALLOCATION_FAILURE;

    if (mc)
        rc = memcached_server_add(mc, host, (in_port_t)tcp_port);
    if (rc == MEMCACHED_SUCCESS)
        rc = sasl_on(o, mc);
    if (rc == MEMCACHED_SUCCESS)
        rc = memcached_stat_execute(mc, NULL, print_stat, NULL);
    if (rc == MEMCACHED_SUCCESS)
        rc = memcached_stat_execute(mc, "rdn", print_stat, NULL);
    if (rc != MEMCACHED_SUCCESS)
        fprintf(stderr, "rdn-cli: stats %s:%d: %s\n", host, tcp_port,
                mc ? memcached_strerror(mc, rc) : "out of memory");
    memcached_free(mc);
    return rc == MEMCACHED_SUCCESS ? EXIT_SUCCESS : EXIT_ERROR;
}

/* "stats" and "stats rdn" of one server. */
static int stats_of(const struct cli *o, const char *host, int tcp_port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai;
    char port[16];
    FILE *f;
    int fd, rc;

    snprintf(port, sizeof(port), "%d", tcp_port);
    if (getaddrinfo(host, port, &hints, &ai) != 0)
        return EXIT_ERROR;
    fd = socket(ai->ai_family, ai->ai_socktype, 0);
    rc = fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : -1;
    freeaddrinfo(ai);
    f = rc == 0 ? fdopen(fd, "r+") : NULL;
    if (!f) {
        fprintf(stderr, "rdn-cli: cannot connect to %s:%d\n", host, tcp_port);
        if (fd >= 0)
            close(fd);
        return EXIT_ERROR;
    }
    /* Spaces to a binary header's 24 bytes: a server of the binary
     * protocol only (-S) closes at once rather than wait for the rest. */
    rc = stats_dump(o, f, "stats                 ");
    if (rc == 0)
        rc = stats_dump(o, f, "stats rdn");
    fclose(f);
    /* Closed without a word: -S, which wants the binary protocol. */
    if (rc == -ECONNRESET && o->user)
        return stats_sasl(o, host, tcp_port);
    if (rc == -EACCES)
        fprintf(stderr, "rdn-cli: stats %s:%d: login refused\n", host,
                tcp_port);
    return rc == 0 ? EXIT_SUCCESS : EXIT_ERROR;
}

static int cmd_stats(const struct cli *o)
{
    memcached_st *mc;
    int status = EXIT_SUCCESS;

    if (!o->servers)
        return stats_of(o, o->host, o->tcp_port);
    mc = handle(o);
    if (!mc)
        return EXIT_ERROR;
    for (uint32_t i = 0; i < memcached_server_count(mc); i++) {
        const memcached_instance_st *in =
            memcached_server_instance_by_position(mc, i);

        printf("server %s:%u\n", memcached_server_name(in),
               (unsigned)memcached_server_port(in));
        fflush(stdout);
        if (stats_of(o, memcached_server_name(in),
                     (int)memcached_server_port(in)) != EXIT_SUCCESS)
            status = EXIT_ERROR;
    }
    memcached_free(mc);
    return status;
}

static int port_arg(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (end == s || *end || v <= 0 || v > 65535) {
        fprintf(stderr, "rdn-cli: bad port \"%s\"\n", s);
        exit(EXIT_ERROR);
    }
    return (int)v;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"servers", required_argument, NULL, 'L'},
        {"auth-file", required_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cli o = {.host = "127.0.0.1", .rdn_port = 11212, .tcp_port = 11211};
    int ch;

    while ((ch = getopt_long(argc, argv, "+s:p:t:d:a:vh", lo, NULL)) != -1) {
        switch (ch) {
        case 'L':
            o.servers = optarg;
            break;
        case 's':
            o.host = optarg;
            break;
        case 'p':
            o.rdn_port = port_arg(optarg);
            break;
        case 't':
            o.tcp_port = port_arg(optarg);
            break;
        case 'd':
            o.device = optarg;
            break;
        case 'a':
            read_login(&o, optarg);
            break;
        case 'v':
            o.verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return EXIT_SUCCESS;
        default:
            usage(stderr);
            return EXIT_ERROR;
        }
    }
    argc -= optind;
    argv += optind;
    if (argc >= 2 && strcmp(argv[0], "get") == 0)
        return cmd_get(&o, argc - 1, argv + 1);
    if (argc >= 3 && argc <= 5 && strcmp(argv[0], "set") == 0)
        return cmd_set(&o, argc - 1, argv + 1);
    if (argc == 1 && strcmp(argv[0], "stats") == 0)
        return cmd_stats(&o);
    usage(stderr);
    return EXIT_ERROR;
}

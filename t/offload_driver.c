/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/offload_driver.c - the RDMA client the offload's end-to-end tests
 * (t/offload_*.py) run against a real memcached --rdn-port through
 * rdn-nicd. Not a test by itself.
 *
 *   offload_driver [-s host] [-p rdn_port] [-t tcp_port] [-n]
 *                  [-u user -w pass] MODE ARGS
 *
 *   -s: the server's IPv4 address (default 127.0.0.1)
 *
 *   serve            reads commands on stdin, one reply line each:
 *                      get HEXKEY...  -> per key "STATUS SRC FLAGS CAS xHEX"
 *                                        (STATUS 0 / -2 ENOENT / -errno;
 *                                        SRC nic|tcp; x + the value in
 *                                        hex, or - when not found)
 *                      vget HEXKEY... -> the same, one rdn_get_value() per
 *                                        key into the session's one
 *                                        struct rdn_value
 *                      vstats         -> "cap C moves M": that buffer's
 *                                        size, how often it moved
 *                      stats          -> "k v k v ..." client counters
 *                      quit
 *                    -n: no TCP fallback (doubtful answers are -11)
 *                    -u, -w: the handshake's login (memcached -Y, -S)
 *   hash HP          reads hex keys on stdin, prints "fp bucket1 bucket2"
 *   write N SECS     sets keys race-0..N-1 in a loop with self-checking
 *                    values for SECS seconds; prints "sets K"
 *   race N SECS MAX  GETs keys race-0..N-1 (8 in flight) for SECS seconds
 *                    or MAX GETs, checking every value; prints "gets G
 *                    nic A tcp B hits H misses M wrong W torn T"
 *   hostile KIND     does one hostile thing (random, range, oversize,
 *                    short, stalegen, silent) and prints what it saw
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmemcached/memcached.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "proto/byteorder.h"
#include "proto/keyhash.h"
#include "proto/rdn_framing.h"
#include "rdn/librdn/client.h"
#include "rdn/librdn/nic_client.h"

static int rdn_port = 11212, tcp_port = 11211, no_fallback;
static const char *host = "127.0.0.1";
static const char *user, *password;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int unhex(const char *h, char *out, size_t cap)
{
    size_t n = strlen(h) / 2;

    if (strlen(h) % 2 || n > cap)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;

        if (sscanf(h + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (char)v;
    }
    return (int)n;
}

static void print_hex(const char *p, size_t n)
{
    static const char d[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        putchar(d[(unsigned char)p[i] >> 4]);
        putchar(d[(unsigned char)p[i] & 15]);
    }
}

static struct rdn_conn *conn_open(void)
{
    struct rdn_opts o = RDN_OPTS(.no_fallback = no_fallback, .user = user,
                                 .password = password);
    struct rdn_conn *c;
    int rc = rdn_connect_opts(host, rdn_port, tcp_port, &o, &c);

    if (rc < 0) {
        fprintf(stderr, "offload_driver: connect: %s\n", strerror(-rc));
        exit(2);
    }
    return c;
}

/* ---- serve ------------------------------------------------------------ */

/* The GET reply of one key: "STATUS SRC FLAGS CAS xHEX" or "... -". */
static void print_answer(int status, enum rdn_source src, uint32_t flags,
                         uint64_t cas, const char *value, size_t len)
{
    printf("%d %s %u %llu ", status, src == RDN_SRC_NIC ? "nic" : "tcp", flags,
           (unsigned long long)cas);
    if (status == 0) {
        putchar('x'); /* so that an empty value is a word too */
        print_hex(value, len);
    } else {
        putchar('-');
    }
}

static void serve_get(struct rdn_conn *c, char *args)
{
    char *keys[64], *save = NULL;
    size_t lens[64], n = 0;
    struct rdn_result res[64];

    for (char *t = strtok_r(args, " \n", &save); t && n < 64;
         t = strtok_r(NULL, " \n", &save)) {
        keys[n] = malloc(RDN_KEY_MAX + 1);
        int len = keys[n] ? unhex(t, keys[n], RDN_KEY_MAX + 1) : -1;

        lens[n++] = len < 0 ? 0 : (size_t)len;
    }
    if (rdn_mget(c, n, (const char *const *)keys, lens, res) < 0) {
        puts("ERROR");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        print_answer(res[i].status, res[i].src, res[i].flags, res[i].cas,
                     res[i].value, res[i].len);
        putchar(i + 1 < n ? ' ' : '\n');
        free(res[i].value);
        free(keys[i]);
    }
}

/* vget: each key through rdn_get_value() into v, whose moves are counted. */
static void serve_vget(struct rdn_conn *c, char *args, struct rdn_value *v,
                       unsigned long *moves)
{
    char key[RDN_KEY_MAX + 1], *save = NULL;
    bool first = true;

    for (char *t = strtok_r(args, " \n", &save); t;
         t = strtok_r(NULL, " \n", &save)) {
        int len = unhex(t, key, sizeof(key));
        char *before = v->buf;
        int rc = rdn_get_value(c, key, len < 0 ? 0 : (size_t)len, v);

        *moves += v->buf != before;
        /* the value ends in a NUL that len does not count */
        if (rc == 0 && v->buf[v->len] != '\0')
            rc = -EBADMSG;
        if (!first)
            putchar(' ');
        first = false;
        print_answer(rc, v->src, v->flags, v->cas, v->buf, v->len);
    }
    putchar('\n');
}

static int serve(void)
{
    struct rdn_conn *c = conn_open();
    struct rdn_value v = {0};
    unsigned long moves = 0;
    char *line = NULL;
    size_t cap = 0;

    puts("READY");
    fflush(stdout);
    while (getline(&line, &cap, stdin) > 0) {
        if (strncmp(line, "get ", 4) == 0) {
            serve_get(c, line + 4);
        } else if (strncmp(line, "vget ", 5) == 0) {
            serve_vget(c, line + 5, &v, &moves);
        } else if (strncmp(line, "vstats", 6) == 0) {
            printf("cap %zu moves %lu\n", v.cap, moves);
        } else if (strncmp(line, "stats", 5) == 0) {
            struct rdn_client_stats s;

            rdn_client_stats(c, &s);
            printf("nic_hits %llu nic_misses %llu tcp_gets %llu torn %llu "
                   "refreshes %llu collisions %llu reconnects %llu "
                   "resumes %llu id %u\n",
                   (unsigned long long)s.nic_hits,
                   (unsigned long long)s.nic_misses,
                   (unsigned long long)s.tcp_gets,
                   (unsigned long long)s.torn_retries,
                   (unsigned long long)s.refreshes,
                   (unsigned long long)s.collisions,
                   (unsigned long long)s.reconnects,
                   (unsigned long long)s.resumes, rdn_client_id(c));
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        } else {
            puts("ERROR");
        }
        fflush(stdout);
    }
    free(line);
    rdn_value_free(&v);
    rdn_close(c);
    return 0;
}

/* ---- hash ------------------------------------------------------------- */

static int hash(unsigned hp)
{
    char line[1024], key[RDN_KEY_MAX + 1];

    while (fgets(line, sizeof(line), stdin)) {
        struct rdn_keyhash kh;
        int n;

        line[strcspn(line, "\n")] = '\0';
        n = unhex(line, key, sizeof(key));
        if (n <= 0)
            return 2;
        rdn_keyhash(key, (size_t)n, hp, &kh);
        printf("%llu %llu %llu\n", (unsigned long long)kh.fp,
               (unsigned long long)kh.bucket1, (unsigned long long)kh.bucket2);
    }
    return 0;
}

/* ---- race: self-checking values --------------------------------------- */

static uint64_t fnv64(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

/* "KEY|SEQ|payload|fnv64 of what precedes", 40 .. ~3000 bytes. */
static size_t race_value(char *buf, const char *key, uint64_t seq)
{
    size_t n = (size_t)sprintf(buf, "%s|%llu|", key, (unsigned long long)seq);
    size_t pay = (seq * 2654435761u) % 3000;

    for (size_t i = 0; i < pay; i++)
        buf[n++] = (char)('a' + (seq + i) % 26);
    n +=
        (size_t)sprintf(buf + n, "|%016llx", (unsigned long long)fnv64(buf, n));
    return n;
}

static int race_check(const char *key, const char *v, size_t n)
{
    char want[64];
    size_t kl = (size_t)snprintf(want, sizeof(want), "%s|", key);
    unsigned long long sum;

    if (n < kl + 18 || memcmp(v, want, kl) != 0 || v[n - 17] != '|')
        return 0;
    if (sscanf(v + n - 16, "%16llx", &sum) != 1)
        return 0;
    return sum == fnv64(v, n - 17);
}

static volatile sig_atomic_t stop_writing;

static void on_term(int sig)
{
    (void)sig;
    stop_writing = 1;
}

/* Writes until SECS passed or SIGTERM; prints how many SETs it did. */
static int writer(int nkeys, double secs)
{
    memcached_st *mc = memcached_create(NULL);
    static char buf[4096];
    char key[32];
    uint64_t seq = 0;
    double end = now_s() + secs;

    signal(SIGTERM, on_term);
    memcached_server_add(mc, host, (in_port_t)tcp_port);
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    while (now_s() < end && !stop_writing) {
        snprintf(key, sizeof(key), "race-%d", (int)(seq % (uint64_t)nkeys));
        size_t n = race_value(buf, key, seq);

        memcached_return_t rc =
            memcached_set(mc, key, strlen(key), buf, n, 0, 0);

        if (rc != MEMCACHED_SUCCESS) {
            fprintf(stderr, "offload_driver: set %llu failed: %s\n",
                    (unsigned long long)seq, memcached_strerror(mc, rc));
            return 2;
        }
        seq++;
    }
    printf("sets %llu\n", (unsigned long long)seq);
    memcached_free(mc);
    return 0;
}

static int race(int nkeys, double secs, unsigned long long max)
{
    struct rdn_conn *c = conn_open();
    char names[8][32];
    const char *keys[8];
    size_t lens[8];
    struct rdn_result res[8];
    unsigned long long gets = 0, nic = 0, tcp = 0, hits = 0, misses = 0,
                       wrong = 0, round = 0;
    double end = now_s() + secs;
    struct rdn_client_stats st;

    while (now_s() < end && gets < max) {
        for (int i = 0; i < 8; i++) {
            snprintf(names[i], sizeof(names[i]), "race-%d",
                     (int)((round * 8 + (unsigned)i) % (unsigned)nkeys));
            keys[i] = names[i];
            lens[i] = strlen(names[i]);
        }
        round++;
        if (rdn_mget(c, 8, keys, lens, res) < 0)
            return 2;
        for (int i = 0; i < 8; i++) {
            gets++;
            res[i].src == RDN_SRC_NIC ? nic++ : tcp++;
            if (res[i].status == 0) {
                hits++;
                if (!race_check(keys[i], res[i].value, res[i].len)) {
                    wrong++;
                    fprintf(stderr, "WRONG %s: %.*s\n", keys[i],
                            (int)(res[i].len < 80 ? res[i].len : 80),
                            res[i].value);
                }
            } else if (res[i].status == -ENOENT) {
                misses++;
            } else {
                fprintf(stderr, "error %d\n", res[i].status);
                return 2;
            }
            free(res[i].value);
        }
    }
    rdn_client_stats(c, &st);
    printf("gets %llu nic %llu tcp %llu hits %llu misses %llu wrong %llu "
           "torn %llu\n",
           gets, nic, tcp, hits, misses, wrong,
           (unsigned long long)st.torn_retries);
    rdn_close(c);
    return wrong ? 1 : 0;
}

/* ---- hostile ---------------------------------------------------------- */

static int ctl_connect(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)rdn_port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        perror("offload_driver: connect");
        exit(2);
    }
    return fd;
}

/* A bare client: the handshake by hand, then raw requests. */
struct bare {
    int ctl;
    struct rnic_device *dev;
    struct ofl_client nic;
    struct rdn_geometry geo;
};

static void bare_open(struct bare *b, int post_recvs)
{
    struct rdn_welcome w;
    struct rdn_hello h;
    uint16_t type;

    b->ctl = ctl_connect();
    if (ofl_wire_send(b->ctl, RDN_MSG_REFRESH, NULL, 0, 0) < 0 ||
        ofl_wire_recv(b->ctl, 5000, &type, &b->geo, sizeof(b->geo)) !=
            sizeof(b->geo) ||
        rnic_open(NULL, NULL, &b->dev) < 0 ||
        ofl_client_open(b->dev, 4,
                        (uint32_t)rdn_resp_slot_size(b->geo.item_size_max),
                        &b->nic) < 0 ||
        ofl_client_hello(&b->nic, &h) < 0 ||
        ofl_wire_send(b->ctl, RDN_MSG_HELLO, &h, sizeof(h), 0) < 0 ||
        ofl_wire_recv(b->ctl, 5000, &type, &w, sizeof(w)) != sizeof(w) ||
        type != RDN_MSG_WELCOME) {
        fprintf(stderr, "offload_driver: bare handshake failed\n");
        exit(2);
    }
    b->geo = w.geo;
    b->nic.depth = w.depth;
    b->nic.plan = w.plan;
    if (post_recvs) {
        if (ofl_client_connect(&b->nic, w.qp_addr) < 0)
            exit(2);
    } else {
        struct rnic_addr a;

        memcpy(a.bytes, w.qp_addr, sizeof(a.bytes));
        if (rnic_connect(b->nic.q.qp, &a) < 0)
            exit(2);
    }
}

/* Sends len raw bytes as one request (slot marked as ofl_client_send
 * marks it). */
static void bare_send(struct bare *b, const void *p, uint32_t len)
{
    struct chain_loc l = chain_buf_loc(&b->nic.reqs, 0, len);
    uint8_t *slot = ofl_client_slot(&b->nic, b->nic.sent);
    struct rnic_sge s;

    if (len > b->nic.reqs.len)
        exit(2); /* the send must come from registered memory */

    memset(slot, 0, RDN_RESP_ITEM_OFF + sizeof(struct rdn_item));
    ((struct rdn_item *)(slot + RDN_RESP_ITEM_OFF))->stamp = RDN_RESP_UNTOUCHED;

    memcpy(l.ptr, p, len);
    s = chain_loc_sge(l);
    if (chain_send(&b->nic.q, &s, 1, 0, NULL) < 0 ||
        chain_q_doorbell(&b->nic.q) < 0)
        exit(2);
    b->nic.sent++;
}

/* Says goodbye as librdn does: the server tears its side down first. */
static void bare_close(struct bare *b)
{
    struct timeval tv = {.tv_sec = 2};
    char buf[64];

    setsockopt(b->ctl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    shutdown(b->ctl, SHUT_WR);
    while (read(b->ctl, buf, sizeof(buf)) > 0)
        ;
    close(b->ctl);
    ofl_client_close(&b->nic);
    rnic_close(b->dev);
}

static const char *bare_answer(struct bare *b, const char *key)
{
    uint64_t n;
    const struct rdn_item *it;
    int rc = ofl_client_wait(&b->nic, 3000, &n);

    if (rc < 0)
        return "error";
    if (rc == 0)
        return "none";
    return ofl_verdict_name(ofl_client_judge(
        &b->nic, n, &b->geo, key, strlen(key), b->geo.server_time, &it));
}

static void fill_req(struct bare *b, const char *key, struct rdn_get_req *r)
{
    struct rdn_keyhash kh;

    rdn_keyhash(key, strlen(key), b->geo.hashpower, &kh);
    ofl_client_build_req(&b->nic, &b->geo, &kh, b->nic.sent, r);
}

/*
 * Sends GETs one at a time, each with lap words 1..4 (docs/wire.md: the
 * WAIT count and the enable indexes of the unit that served request
 * n - depth) spoiled: "lapwait" puts the WAIT count 2^20 ahead (the chain
 * stalls a lap later), "lapindex" makes the indexes random. Stops at the
 * first request without an answer; prints the last verdict.
 */
static const char *bad_laps(struct bare *b, bool indexes)
{
    const char *v = "none";

    for (int n = 0; n < 600; n++) {
        struct rdn_get_req r;

        fill_req(b, "hostile-key", &r);
        if (indexes)
            for (unsigned f = 1; f < RDN_LAP_WORDS; f++)
                r.lap[f] = cpu_to_be32((uint32_t)rand());
        else
            r.lap[1] = cpu_to_be32(be32_to_cpu(r.lap[1]) + (1u << 20));
        if (ofl_client_send_req(&b->nic, &r) < 0)
            return "error";
        v = bare_answer(b, "hostile-key");
        if (strcmp(v, "none") == 0 || strcmp(v, "error") == 0)
            break;
    }
    return v;
}

static int hostile(const char *kind)
{
    struct bare b;
    struct rdn_get_req r;
    uint8_t junk[256];

    bare_open(&b, strcmp(kind, "silent") != 0);
    srand((unsigned)time(NULL));
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)rand();
    fill_req(&b, "hostile-key", &r);
    if (strcmp(kind, "random") == 0) {
        bare_send(&b, junk, sizeof(r));
    } else if (strcmp(kind, "range") == 0) {
        r.bucket_addr[1] = cpu_to_be64(b.geo.table_addr + (UINT64_C(1) << 40));
        bare_send(&b, &r, sizeof(r));
    } else if (strcmp(kind, "oversize") == 0) {
        bare_send(&b, junk, 2 * sizeof(r)); /* twice what a receive takes */
    } else if (strcmp(kind, "short") == 0) {
        bare_send(&b, &r, 8);
    } else if (strcmp(kind, "stalegen") == 0) {
        b.geo.gen_word ^= 0x5a5a; /* what a client with old geometry has */
        bare_send(&b, &r, sizeof(r));
    } else if (strcmp(kind, "lowdb") == 0 || strcmp(kind, "bigdb") == 0) {
        /* lap word 0 (rq_db) posts no receive beyond this request, or 40000 the
         * ring does not have; then a well-formed request */
        uint32_t ahead = kind[0] == 'l' ? 0 : 40000;

        r.lap[0] = cpu_to_be32((uint32_t)b.nic.sent + 1 + ahead);
        bare_send(&b, &r, sizeof(r));
        printf("%s ", bare_answer(&b, "hostile-key"));
        fill_req(&b, "hostile-key", &r);
        bare_send(&b, &r, sizeof(r));
    } else if (strcmp(kind, "lapwait") == 0 || strcmp(kind, "lapindex") == 0) {
        printf("%s\n", bad_laps(&b, kind[3] == 'i'));
        bare_close(&b);
        return 0;
    } else if (strcmp(kind, "silent") == 0) {
        bare_send(&b, &r, sizeof(r)); /* no receive for the answer */
        sleep(4);
        puts("silent");
        return 0;
    } else {
        return 2;
    }
    printf("%s\n", bare_answer(&b, "hostile-key"));
    bare_close(&b);
    return 0;
}

int main(int argc, char **argv)
{
    int ch;

    while ((ch = getopt(argc, argv, "+s:p:t:nu:w:")) != -1) {
        if (ch == 's')
            host = optarg;
        else if (ch == 'u')
            user = optarg;
        else if (ch == 'w')
            password = optarg;
        else if (ch == 'p')
            rdn_port = atoi(optarg);
        else if (ch == 't')
            tcp_port = atoi(optarg);
        else if (ch == 'n')
            no_fallback = 1;
        else
            return 2;
    }
    argc -= optind;
    argv += optind;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 1 && strcmp(argv[0], "serve") == 0)
        return serve();
    if (argc == 2 && strcmp(argv[0], "hash") == 0)
        return hash((unsigned)atoi(argv[1]));
    if (argc == 3 && strcmp(argv[0], "write") == 0)
        return writer(atoi(argv[1]), atof(argv[2]));
    if (argc == 4 && strcmp(argv[0], "race") == 0)
        return race(atoi(argv[1]), atof(argv[2]), strtoull(argv[3], NULL, 10));
    if (argc == 2 && strcmp(argv[0], "hostile") == 0)
        return hostile(argv[1]);
    fprintf(stderr, "offload_driver: bad arguments\n");
    return 2;
}

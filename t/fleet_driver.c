/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/fleet_driver.c - the librdn client of the server-list tests
 * (t/fleet_e2e.py): one connection over a libmemcached server list, driven
 * over pipes. Not a test by itself.
 *
 *   fleet_driver [-k] [-n] [-b BEHAVIOR=N]... CONFIG
 *
 * CONFIG is a libmemcached configuration string. Without -k or -b the
 * connection is made from it (rdn_connect_config()); else the driver makes
 * the handle itself, sets what the configuration grammar cannot say and
 * connects over it (rdn_connect_memc()): -k libketama-compatible weighted
 * ketama (the placement of twemproxy/nutcracker), -b a behavior
 * (auto_eject, failure_limit, retry_timeout, dead_timeout). -n: no TCP
 * fallback.
 *
 * Commands on stdin, one reply line each:
 *   fill P N V     sets P-0..P-N-1 to their version-V values through the
 *                  connection's handle: "stored S failed F"
 *   check P N V    rdn_mget of P-0..P-N-1, 100 at a time, each value checked
 *                  against version V: "hit H miss M wrong W err E nic X tcp Y
 *                  misplaced Z" then per server " | i h m e nic tcp" and
 *                  " | why REASON" (the first TCP answer's reason, or -)
 *   place P N      the server libmemcached's memcached_server_by_key() names
 *                  for each key, as one digit per key
 *   add HOST PORT  adds a server to the handle
 *   servers        per server " | i host:port rdn_port nic client_id why"
 *   quit
 */
#include "config.h"

#include <errno.h>
#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdn/librdn/client.h"

#define BATCH   100
#define MAX_SRV 16

/* The value of key i at version v: names both, 0..3000 bytes. */
static size_t value_of(const char *p, long i, long v, char *buf, size_t cap)
{
    size_t n = (size_t)((i * 7919 + v * 13) % 3000), at = 0;
    char unit[96];
    int u = snprintf(unit, sizeof(unit), "%s-%ld:v%ld;", p, i, v);

    if (n > cap)
        n = cap;
    while (at < n) {
        size_t k = n - at < (size_t)u ? n - at : (size_t)u;

        memcpy(buf + at, unit, k);
        at += k;
    }
    return n;
}

static void cmd_fill(struct rdn_conn *c, const char *p, long n, long v)
{
    memcached_st *mc = rdn_memc(c);
    static char val[4096];
    long stored = 0, failed = 0;

    for (long i = 0; i < n; i++) {
        char key[200];
        int kl = snprintf(key, sizeof(key), "%s-%ld", p, i);
        size_t vl = value_of(p, i, v, val, sizeof(val));

        memcached_return_t rc = MEMCACHED_FAILURE;

        /* A loaded test machine may time a SET out: it is asked again. */
        for (int tries = 0; tries < 3 && rc != MEMCACHED_SUCCESS; tries++)
            rc = memcached_set(mc, key, (size_t)kl, val, vl, 0, (uint32_t)i);
        if (rc == MEMCACHED_SUCCESS)
            stored++;
        else
            failed++;
    }
    printf("stored %ld failed %ld\n", stored, failed);
}

struct per_srv {
    long hit, miss, err, nic, tcp;
};

/* The position of the server libmemcached names for key. */
static uint32_t owner(memcached_st *mc, const char *key, size_t kl)
{
    memcached_return_t rc;
    const memcached_instance_st *in = memcached_server_by_key(mc, key, kl, &rc);

    for (uint32_t i = 0; in && i < memcached_server_count(mc); i++)
        if (memcached_server_instance_by_position(mc, i) == in)
            return i;
    return UINT32_MAX;
}

static void cmd_check(struct rdn_conn *c, const char *p, long n, long v)
{
    static char keys[BATCH][200], want[4096];
    const char *kp[BATCH];
    size_t kl[BATCH];
    struct rdn_result res[BATCH];
    struct per_srv ps[MAX_SRV] = {{0}};
    long hit = 0, miss = 0, wrong = 0, err = 0, nic = 0, tcp = 0, mis = 0;
    char why[160] = "-";

    for (long at = 0; at < n; at += BATCH) {
        size_t m = (size_t)(n - at < BATCH ? n - at : BATCH);

        for (size_t k = 0; k < m; k++) {
            kl[k] = (size_t)snprintf(keys[k], sizeof(keys[k]), "%s-%ld", p,
                                     at + (long)k);
            kp[k] = keys[k];
        }
        if (rdn_mget(c, m, kp, kl, res) < 0) {
            err += (long)m;
            continue;
        }
        for (size_t k = 0; k < m; k++) {
            struct rdn_result *r = &res[k];
            struct per_srv *s = &ps[r->server % MAX_SRV];
            size_t wl = value_of(p, at + (long)k, v, want, sizeof(want));

            if (r->server != owner(rdn_memc(c), keys[k], kl[k]))
                mis++;
            if (r->status == 0 && r->len == wl &&
                memcmp(r->value, want, wl) == 0 &&
                r->flags == (uint32_t)(at + (long)k)) {
                hit++;
                s->hit++;
            } else if (r->status == 0) {
                wrong++;
                s->err++;
            } else if (r->status == -ENOENT) {
                miss++;
                s->miss++;
            } else {
                err++;
                s->err++;
            }
            if (r->src == RDN_SRC_NIC) {
                nic++;
                s->nic++;
            } else {
                tcp++;
                s->tcp++;
                if (strcmp(why, "-") == 0 && r->why)
                    snprintf(why, sizeof(why), "%s", r->why);
            }
            free(r->value);
        }
    }
    printf("hit %ld miss %ld wrong %ld err %ld nic %ld tcp %ld misplaced %ld",
           hit, miss, wrong, err, nic, tcp, mis);
    for (uint32_t i = 0; i < rdn_server_count(c) && i < MAX_SRV; i++)
        printf(" | %u %ld %ld %ld %ld %ld", i, ps[i].hit, ps[i].miss, ps[i].err,
               ps[i].nic, ps[i].tcp);
    printf(" | why %s\n", why);
}

static void cmd_place(struct rdn_conn *c, const char *p, long n)
{
    for (long i = 0; i < n; i++) {
        char key[200];
        int kl = snprintf(key, sizeof(key), "%s-%ld", p, i);
        uint32_t s = owner(rdn_memc(c), key, (size_t)kl);

        putchar(s < 10 ? '0' + (int)s : '?');
    }
    putchar('\n');
}

static void cmd_servers(struct rdn_conn *c)
{
    printf("%u", rdn_server_count(c));
    for (uint32_t i = 0; i < rdn_server_count(c); i++) {
        struct rdn_server_info si;

        if (rdn_server_info(c, i, &si) == 0)
            printf(" | %u %s:%d %d %d %u %s", i, si.host, si.tcp_port,
                   si.rdn_port, si.nic, si.client_id, si.nic ? "-" : si.why);
    }
    putchar('\n');
}

static const struct {
    const char *name;
    memcached_behavior_t b;
} behaviors[] = {
    {"auto_eject", MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS},
    {"failure_limit", MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT},
    {"retry_timeout", MEMCACHED_BEHAVIOR_RETRY_TIMEOUT},
    {"dead_timeout", MEMCACHED_BEHAVIOR_DEAD_TIMEOUT},
};

/* Sets "NAME=N" (-b) on mc: 0, or -EINVAL for an unknown name. */
static int set_behavior(memcached_st *mc, const char *arg)
{
    const char *eq = strchr(arg, '=');

    for (size_t i = 0; eq && i < sizeof(behaviors) / sizeof(behaviors[0]); i++)
        if (strlen(behaviors[i].name) == (size_t)(eq - arg) &&
            strncmp(arg, behaviors[i].name, (size_t)(eq - arg)) == 0)
            return memcached_behavior_set(mc, behaviors[i].b,
                                          strtoull(eq + 1, NULL, 10)) ==
                           MEMCACHED_SUCCESS
                       ? 0
                       : -EINVAL;
    return -EINVAL;
}

/* Connects; *own receives the handle the driver made (-k, -b), else NULL. */
static int connect_to(const char *config, int ketama, char **bs, int nb,
                      int no_fallback, struct rdn_conn **c, memcached_st **own)
{
    struct rdn_opts o = RDN_OPTS(.no_fallback = no_fallback);
    char err[256] = "";
    memcached_st *mc;
    int rc = 0;

    *own = NULL;
    if (!ketama && !nb) {
        rc = rdn_connect_config(config, &o, c, err, sizeof(err));
        if (rc < 0)
            fprintf(stderr, "fleet_driver: %s: %s\n", config, err);
        return rc;
    }
    mc = memcached(config, strlen(config));
    if (!mc)
        return -EINVAL;
    if (ketama)
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    for (int i = 0; i < nb && rc == 0; i++)
        rc = set_behavior(mc, bs[i]);
    if (rc == 0)
        rc = rdn_connect_memc(mc, &o, c);
    if (rc < 0)
        memcached_free(mc);
    else
        *own = mc;
    return rc;
}

int main(int argc, char **argv)
{
    int ketama = 0, no_fallback = 0, a = 1, rc, nb = 0;
    char *bs[8];
    struct rdn_conn *c;
    memcached_st *own;
    char line[1024];

    for (; a < argc && argv[a][0] == '-' && argv[a][1] != '-'; a++) {
        ketama |= strcmp(argv[a], "-k") == 0;
        no_fallback |= strcmp(argv[a], "-n") == 0;
        if (strcmp(argv[a], "-b") == 0 && a + 1 < argc && nb < 8)
            bs[nb++] = argv[++a];
    }
    if (a != argc - 1) {
        fprintf(stderr,
                "usage: fleet_driver [-k] [-n] [-b BEHAVIOR=N]... CONFIG\n");
        return 2;
    }
    rc = connect_to(argv[a], ketama, bs, nb, no_fallback, &c, &own);
    if (rc < 0) {
        fprintf(stderr, "fleet_driver: connect: %s\n", strerror(-rc));
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("READY\n");
    while (fgets(line, sizeof(line), stdin)) {
        char p[128], host[256];
        long n = 0, v = 0;

        if (sscanf(line, "fill %127s %ld %ld", p, &n, &v) == 3)
            cmd_fill(c, p, n, v);
        else if (sscanf(line, "check %127s %ld %ld", p, &n, &v) == 3)
            cmd_check(c, p, n, v);
        else if (sscanf(line, "place %127s %ld", p, &n) == 2)
            cmd_place(c, p, n);
        else if (sscanf(line, "add %255s %ld", host, &n) == 2)
            printf("%s\n",
                   memcached_server_add(rdn_memc(c), host, (in_port_t)n) ==
                           MEMCACHED_SUCCESS
                       ? "OK"
                       : "FAILED");
        else if (strncmp(line, "servers", 7) == 0)
            cmd_servers(c);
        else if (strncmp(line, "quit", 4) == 0)
            break;
        else
            printf("ERROR\n");
    }
    rdn_close(c);
    if (own)
        memcached_free(own); /* after the connection that used it */
    return 0;
}

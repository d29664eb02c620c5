/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/sasl_login.c - a SASL PLAIN login through libmemcached, a client
 * nobody here wrote: memcached_set_sasl_auth_data() on a binary-protocol
 * handle, then a set and a get of one key. Driven by t/proto_auth.py
 * against memcached -S (ours and Debian's).
 *
 *   sasl_login PORT USER PASSWORD KEY VALUE
 *
 * Prints "set: <libmemcached's result>" and "get: <result> <value>";
 * exits 0 when the value came back, 1 otherwise.
 */
#include "config.h"

#include <libmemcached/memcached.h>
#include <sasl/sasl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    memcached_return_t rc;
    size_t len = 0;
    uint32_t flags = 0;

    if (argc != 6) {
        fprintf(stderr, "usage: sasl_login PORT USER PASSWORD KEY VALUE\n");
        return 2;
    }
    /* libmemcached leaves the SASL library's client side to the caller. */
    if (sasl_client_init(NULL) != SASL_OK) {
        fprintf(stderr, "sasl_client_init failed\n");
        return 2;
    }
    memcached_st *mc = memcached_create(NULL);
    if (mc == NULL ||
        memcached_server_add(mc, "127.0.0.1", (in_port_t)atoi(argv[1])) !=
            MEMCACHED_SUCCESS ||
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1) !=
            MEMCACHED_SUCCESS ||
        memcached_set_sasl_auth_data(mc, argv[2], argv[3]) !=
            MEMCACHED_SUCCESS) {
        fprintf(stderr, "libmemcached setup failed\n");
        return 2;
    }
    rc = memcached_set(mc, argv[4], strlen(argv[4]), argv[5], strlen(argv[5]),
                       0, 0);
    printf("set: %s\n", memcached_strerror(mc, rc));
    char *v = memcached_get(mc, argv[4], strlen(argv[4]), &len, &flags, &rc);
    printf("get: %s %.*s\n", memcached_strerror(mc, rc), v ? (int)len : 1,
           v ? v : "-");
    int ok = v && len == strlen(argv[5]) && memcmp(v, argv[5], len) == 0;
    free(v);
    memcached_destroy_sasl_auth_data(mc);
    memcached_free(mc);
    sasl_done();
    return ok ? 0 : 1;
}

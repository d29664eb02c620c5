/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/install_client.c - a librdn program as a user writes it, built by
 * t/install_tree.py against an installed tree only (pkg-config librdn),
 * never by this build: it reads one key through the NIC, no TCP fallback.
 *
 *   install_client RDN_PORT TCP_PORT KEY  -> prints "VALUE nic"
 *
 * Exit status: 0 found, 1 not found, 2 on an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdn/librdn/client.h>

int main(int argc, char **argv)
{
    struct rdn_opts opts = RDN_OPTS(.no_fallback = 1);
    struct rdn_conn *c;
    char *value = NULL;
    size_t len;
    int rc;

    if (argc != 4) {
        fprintf(stderr, "usage: install_client RDN_PORT TCP_PORT KEY\n");
        return 2;
    }
    rc = rdn_connect_opts("127.0.0.1", atoi(argv[1]), atoi(argv[2]), &opts, &c);
    if (rc < 0) {
        fprintf(stderr, "rdn_connect_opts: %s\n", strerror(-rc));
        return 2;
    }
    rc = rdn_get(c, argv[3], strlen(argv[3]), &value, &len, NULL, NULL);
    if (rc == 0)
        printf("%.*s %s\n", (int)len, value,
               rdn_last_source(c) == RDN_SRC_NIC ? "nic" : "tcp");
    else
        fprintf(stderr, "rdn_get: %s\n", strerror(-rc));
    free(value);
    rdn_close(c);
    return rc == 0 ? 0 : rc == -ENOENT ? 1 : 2;
}

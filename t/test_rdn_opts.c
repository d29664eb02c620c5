/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_rdn_opts.c - struct rdn_opts's size contract (rdn/librdn/client.h):
 * RDN_OPTS() sets the size; a size of 0 (a caller that did not set it), one
 * below RDN_OPTS_SIZE_MIN, one not a multiple of 8, or rsvd set is -EINVAL;
 * an older header's smaller size is taken and the fields beyond it are not
 * read (garbage there changes nothing); a newer header's larger size is
 * taken when the fields this librdn does not know are 0, else -E2BIG. The
 * same through rdn_connect_config() (no NIC needed: a server that is not
 * there is read over TCP) and rdn_connect_opts() (the handshake to a port
 * that refuses: -ECONNREFUSED once the options pass).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdn/librdn/client.h"
#include "t/support/testutil.h"

/* The options as a newer header would have them: two more words. */
struct newer_opts {
    struct rdn_opts known;
    uint64_t more[2];
};

static int refusing_port, sock = -1;
static char config[64], long_user[300];

/* A port bound but not listening: connect() is refused, never taken. */
static void setup(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);

    sock = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(sock, 0);
    ck_assert_int_eq(bind(sock, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(sock, (struct sockaddr *)&a, &len), 0);
    refusing_port = ntohs(a.sin_port);
    snprintf(config, sizeof(config), "--SERVER=127.0.0.1:%d", refusing_port);
    memset(long_user, 'u', sizeof(long_user) - 1);
}

static void teardown(void)
{
    close(sock);
}

/* rdn_connect_config() with o: its status (a connection made is closed). */
static int via_config(const void *o)
{
    struct rdn_conn *c = NULL;
    int rc = rdn_connect_config(config, o, &c, NULL, 0);

    if (rc == 0)
        rdn_close(c);
    return rc;
}

static int via_opts(const void *o)
{
    struct rdn_conn *c = NULL;
    int rc = rdn_connect_opts("127.0.0.1", refusing_port, refusing_port, o, &c);

    if (rc == 0)
        rdn_close(c);
    return rc;
}

START_TEST(test_macro)
{
    struct rdn_opts o = RDN_OPTS(.timeout_ms = 500);

    ck_assert_uint_eq(o.size, sizeof(struct rdn_opts));
    ck_assert_int_eq(via_config(&o), 0);
    ck_assert_int_eq(via_opts(&o), -ECONNREFUSED);
    ck_assert_int_eq(via_config(NULL), 0);
}
END_TEST

START_TEST(test_bad_sizes)
{
    struct rdn_opts o = {.timeout_ms = 500}; /* size not set */

    ck_assert_int_eq(via_config(&o), -EINVAL);
    ck_assert_int_eq(via_opts(&o), -EINVAL);
    o.size = RDN_OPTS_SIZE_MIN - 8;
    ck_assert_int_eq(via_config(&o), -EINVAL);
    o.size = sizeof(o) - 4;
    ck_assert_int_eq(via_config(&o), -EINVAL);
    ck_assert_int_eq(via_opts(&o), -EINVAL);
    o = RDN_OPTS(.rsvd = 1);
    ck_assert_int_eq(via_config(&o), -EINVAL);
}
END_TEST

START_TEST(test_older_header)
{
    /* A caller built when the struct ended after timeout_ms: what follows
     * is not its, so a user too long to be valid there is never read. */
    struct rdn_opts o = RDN_OPTS(.timeout_ms = 500, .user = long_user);

    ck_assert_int_eq(via_config(&o), -EINVAL); /* read: refused */
    o.size = offsetof(struct rdn_opts, no_fallback);
    ck_assert_int_eq(via_config(&o), 0);
    ck_assert_int_eq(via_opts(&o), -ECONNREFUSED);
    o.size = RDN_OPTS_SIZE_MIN; /* device only */
    o.timeout_ms = -1;          /* beyond the size: not read either */
    ck_assert_int_eq(via_config(&o), 0);
}
END_TEST

START_TEST(test_newer_header)
{
    struct newer_opts n = {.known = RDN_OPTS(.timeout_ms = 500)};

    n.known.size = sizeof(n);
    ck_assert_int_eq(via_config(&n), 0); /* new fields unused */
    ck_assert_int_eq(via_opts(&n), -ECONNREFUSED);
    n.more[1] = 1; /* a field this librdn cannot honour */
    ck_assert_int_eq(via_config(&n), -E2BIG);
    ck_assert_int_eq(via_opts(&n), -E2BIG);
}
END_TEST

START_TEST(test_fields_still_checked)
{
    struct rdn_opts o = RDN_OPTS(.depth = 3);

    ck_assert_int_eq(via_config(&o), -EINVAL);
    o = RDN_OPTS(.user = long_user);
    ck_assert_int_eq(via_opts(&o), -EINVAL);
    o = RDN_OPTS(.while_down = 7);
    ck_assert_int_eq(via_config(&o), -EINVAL);
}
END_TEST

static Suite *opts_suite(void)
{
    Suite *s = suite_create("rdn_opts");
    TCase *tc = tcase_create("size");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_macro);
    tcase_add_test(tc, test_bad_sizes);
    tcase_add_test(tc, test_older_header);
    tcase_add_test(tc, test_newer_header);
    tcase_add_test(tc, test_fields_still_checked);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return run_suite(opts_suite());
}

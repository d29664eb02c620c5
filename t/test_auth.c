/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_auth.c - unit tests of memcached/auth.c's -Y file: memcached's
 * line format (user, ':' and the password to the line's end, so the
 * password may hold ':'; CRLF lines; a last line without newline), the
 * refusals (a line without ':', an empty line, a missing file) that keep
 * the previous contents, exact-length matching, and more lines than
 * memcached's 8. With SASL: -S's check of the rdn handshake's login
 * against a sasldb that saslpasswd2 makes (memcached/auth_sasl.c), given
 * bytes that are no C strings.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memcached/auth.h"
#include "memcached/auth_sasl.h"
#include "memcached/settings.h"
#include "t/support/testutil.h"

static char path[] = "/tmp/test_auth_XXXXXX";

/* Writes len bytes of text to the test's file and loads it. */
static int load(const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    return auth_file_load(path);
}

#define LOAD(text) load(text, sizeof(text) - 1)

static bool ok(const char *user, const char *pass)
{
    return auth_check(user, strlen(user), pass, strlen(pass));
}

static void setup(void)
{
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    close(fd);
    settings_init();
    settings.auth_file = path;
}

static void teardown(void)
{
    unlink(path);
    memcpy(path + strlen(path) - 6, "XXXXXX", 6);
}

START_TEST(test_lines)
{
    ck_assert_int_eq(LOAD("alice:secret\nbob:pa:ss\r\ncarol:\neve:last"), 0);
    ck_assert(ok("alice", "secret"));
    ck_assert(ok("bob", "pa:ss"));
    ck_assert(ok("carol", ""));
    ck_assert(ok("eve", "last"));
    ck_assert(!ok("alice", "secre"));
    ck_assert(!ok("alice", "secrets"));
    ck_assert(!ok("alic", "secret"));
    ck_assert(!ok("bob", "pa"));
    ck_assert(!ok("bob", "pa:ss\r"));
    ck_assert(!ok("nobody", "secret"));
    ck_assert(!ok("alice", "last"));
}
END_TEST

START_TEST(test_bytes_not_strings)
{
    ck_assert_int_eq(LOAD("u:p\n"), 0);
    ck_assert(auth_check("u", 1, "p", 1));
    ck_assert(!auth_check("u", 1, "p\0", 2));
    ck_assert(!auth_check("u\0", 2, "p", 1));
    ck_assert(!auth_check("", 0, "", 0));
}
END_TEST

START_TEST(test_empty_file)
{
    ck_assert_int_eq(LOAD(""), 0);
    ck_assert(!ok("", ""));
    ck_assert(!ok("alice", "secret"));
}
END_TEST

START_TEST(test_malformed_keeps_old)
{
    ck_assert_int_eq(LOAD("alice:secret\n"), 0);
    ck_assert_int_eq(LOAD("bob:x\nno colon\n"), -EINVAL);
    ck_assert_int_eq(LOAD("bob:x\n\ncarol:y\n"), -EINVAL); /* empty line */
    ck_assert_int_eq(load("b\0b:x\n", 6), -EINVAL);        /* NUL in user */
    ck_assert(ok("alice", "secret"));
    ck_assert(!ok("bob", "x"));
    unlink(path);
    ck_assert_int_eq(auth_file_load(path), -ENOENT);
    ck_assert(ok("alice", "secret"));
}
END_TEST

START_TEST(test_reload_replaces)
{
    ck_assert_int_eq(LOAD("alice:old\n"), 0);
    ck_assert_int_eq(LOAD("alice:new\n"), 0);
    ck_assert(ok("alice", "new"));
    ck_assert(!ok("alice", "old"));
}
END_TEST

START_TEST(test_many_lines)
{
    char buf[64 * 32], *p = buf;

    for (int i = 0; i < 64; i++)
        p += sprintf(p, "user%d:pw%d\n", i, i);
    ck_assert_int_eq(load(buf, (size_t)(p - buf)), 0);
    ck_assert(ok("user0", "pw0"));
    ck_assert(ok("user63", "pw63")); /* memcached keeps only 8 lines */
    ck_assert(!ok("user63", "pw62"));
}
END_TEST

START_TEST(test_without_file)
{
    settings.auth_file = NULL;
    ck_assert(!auth_enabled());
    ck_assert(!ok("alice", "secret"));
}
END_TEST

#ifdef HAVE_SASL
static char sasl_dir[] = "/tmp/test_auth_sasl_XXXXXX";
static char sasl_conf[64], sasl_db[64];

/* A sasldb holding rdnuser:saslpw for memcached's SASL, which starts. */
static void sasl_setup(void)
{
    char cmd[160];

    ck_assert_ptr_nonnull(mkdtemp(sasl_dir));
    snprintf(sasl_conf, sizeof(sasl_conf), "%s/memcached.conf", sasl_dir);
    snprintf(sasl_db, sizeof(sasl_db), "%s/sasldb", sasl_dir);
    FILE *f = fopen(sasl_conf, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "mech_list: plain\nsasldb_path: %s\n", sasl_db);
    fclose(f);
    /* saslpasswd2: package sasl2-bin (scripts/setup) */
    snprintf(cmd, sizeof(cmd),
             "saslpasswd2 -a memcached -c -p -f %s rdnuser 2>&1", sasl_db);
    FILE *p = popen(cmd, "w");
    ck_assert_ptr_nonnull(p);
    fputs("saslpw", p);
    ck_assert_int_eq(pclose(p), 0);
    setenv("SASL_CONF_PATH", sasl_dir, 1);
    settings_init();
    settings.sasl = true;
    ck_assert_int_eq(auth_sasl_init(), 0);
}

static void sasl_teardown(void)
{
    unlink(sasl_db);
    unlink(sasl_conf);
    rmdir(sasl_dir);
    memcpy(sasl_dir + strlen(sasl_dir) - 6, "XXXXXX", 6);
}

START_TEST(test_sasl_lengths)
{
    /* The handshake's AUTH gives lengths, and the bytes after them are
     * whatever its buffer holds. */
    ck_assert(auth_check("rdnuser", 7, "saslpw", 6));
    ck_assert(auth_check("rdnuserXY", 7, "saslpwXYZ", 6));
    ck_assert(!auth_check("rdnuser", 7, "saslpwXYZ", 9));
    ck_assert(!auth_check("rdnuser", 7, "saslp", 5));
    ck_assert(!auth_check("rdnuser", 7, "saslpx", 6));
    ck_assert(!auth_check("rdnuse", 6, "saslpw", 6));
    ck_assert(!auth_check("nobody", 6, "saslpw", 6));
    /* The library reads a NUL as the end: never a shorter login. */
    ck_assert(!auth_check("rdnuser", 7, "saslpw\0x", 8));
    ck_assert(!auth_check("rdnuser\0x", 9, "saslpw", 6));
}
END_TEST
#endif /* HAVE_SASL */

static Suite *auth_suite(void)
{
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("file");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60); /* a loaded machine, not a slow test */
    tcase_add_test(tc, test_lines);
    tcase_add_test(tc, test_bytes_not_strings);
    tcase_add_test(tc, test_empty_file);
    tcase_add_test(tc, test_malformed_keeps_old);
    tcase_add_test(tc, test_reload_replaces);
    tcase_add_test(tc, test_many_lines);
    tcase_add_test(tc, test_without_file);
    suite_add_tcase(s, tc);
#ifdef HAVE_SASL
    tc = tcase_create("sasl");
    tcase_add_checked_fixture(tc, sasl_setup, sasl_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sasl_lengths);
    suite_add_tcase(s, tc);
#endif
    return s;
}

int main(void)
{
    return run_suite(auth_suite());
}

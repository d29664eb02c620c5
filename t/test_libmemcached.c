/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/test_libmemcached.c - round trips through libmemcached's C API (a
 * client no one here wrote) against a running server: set/get with flags,
 * add/replace/append/prepend, mget, gets + cas, incr/decr, delete, touch.
 *
 * Usage: test_libmemcached PORT [binary]. With "binary" every check runs
 * over the binary protocol (MEMCACHED_BEHAVIOR_BINARY_PROTOCOL), plus what
 * only it can do: incr/decr with an initial value, and quiet (noreply)
 * stores. Prints "ok <name>" or "FAIL <name>" per check (t/conformance.py
 * counts them) and exits 1 if any failed.
 */
#include <inttypes.h>
#include <libmemcached/memcached.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static bool binary;           /* over the binary protocol */
static const char *mode = ""; /* printed before every check's name */

static void check(const char *name, int ok, const char *detail)
{
    printf("%s %s%s%s%s\n", ok ? "ok" : "FAIL", mode, name, ok ? "" : ": ",
           ok ? "" : detail);
    if (!ok)
        failures++;
}

static void check_rc(memcached_st *m, const char *name, memcached_return_t rc,
                     memcached_return_t want)
{
    check(name, rc == want, memcached_last_error_message(m));
}

static memcached_return_t put(memcached_st *m, const char *key, const char *val,
                              uint32_t flags)
{
    return memcached_set(m, key, strlen(key), val, strlen(val), 0, flags);
}

/* key's value equals want (NULL: absent), with the given flags. */
static void expect_value(memcached_st *m, const char *name, const char *key,
                         const char *want, uint32_t want_flags)
{
    size_t len = 0;
    uint32_t flags = 0;
    memcached_return_t rc;
    char *v = memcached_get(m, key, strlen(key), &len, &flags, &rc);

    if (want == NULL) {
        check(name, v == NULL && rc == MEMCACHED_NOTFOUND,
              memcached_strerror(m, rc));
    } else {
        check(name,
              v && len == strlen(want) && memcmp(v, want, len) == 0 &&
                  flags == want_flags,
              v ? v : memcached_strerror(m, rc));
    }
    free(v);
}

static void test_basic(memcached_st *m)
{
    check_rc(m, "set", put(m, "alpha", "one", 17), MEMCACHED_SUCCESS);
    expect_value(m, "get with flags", "alpha", "one", 17);
    expect_value(m, "get missing", "nothing", NULL, 0);
    /* The binary protocol's status codes tell the two failures apart. */
    check_rc(m, "add existing", memcached_add(m, "alpha", 5, "x", 1, 0, 0),
             binary ? MEMCACHED_DATA_EXISTS : MEMCACHED_NOTSTORED);
    check_rc(m, "add new", memcached_add(m, "beta", 4, "b", 1, 0, 0),
             MEMCACHED_SUCCESS);
    check_rc(m, "replace", memcached_replace(m, "beta", 4, "bb", 2, 0, 3),
             MEMCACHED_SUCCESS);
    check_rc(m, "replace missing",
             memcached_replace(m, "gamma", 5, "g", 1, 0, 0),
             binary ? MEMCACHED_NOTFOUND : MEMCACHED_NOTSTORED);
    check_rc(m, "append", memcached_append(m, "alpha", 5, "!", 1, 0, 0),
             MEMCACHED_SUCCESS);
    check_rc(m, "prepend", memcached_prepend(m, "alpha", 5, "<", 1, 0, 0),
             MEMCACHED_SUCCESS);
    expect_value(m, "append/prepend result", "alpha", "<one!", 17);
    check_rc(m, "delete", memcached_delete(m, "beta", 4, 0), MEMCACHED_SUCCESS);
    check_rc(m, "delete missing", memcached_delete(m, "beta", 4, 0),
             MEMCACHED_NOTFOUND);
    check_rc(m, "touch", memcached_touch(m, "alpha", 5, 100),
             MEMCACHED_SUCCESS);
}

static void test_mget(memcached_st *m)
{
    const char *keys[] = {"k1", "k2", "missing", "k3"};
    size_t lens[] = {2, 2, 7, 2};
    int seen = 0, right = 0;
    memcached_return_t rc;

    for (int i = 1; i <= 3; i++) {
        char k[16], v[16];
        snprintf(k, sizeof(k), "k%d", i);
        snprintf(v, sizeof(v), "v%d", i);
        put(m, k, v, (uint32_t)i);
    }
    check_rc(m, "mget", memcached_mget(m, keys, lens, 4), MEMCACHED_SUCCESS);
    memcached_result_st *r;
    while ((r = memcached_fetch_result(m, NULL, &rc)) != NULL) {
        const char *k = memcached_result_key_value(r);
        const char *v = memcached_result_value(r);
        seen++;
        if (memcached_result_length(r) == 2 && v[0] == 'v' && v[1] == k[1] &&
            memcached_result_flags(r) == (uint32_t)(k[1] - '0'))
            right++;
        memcached_result_free(r);
    }
    check("mget returns the three present keys", seen == 3, "count");
    check("mget values and flags", right == 3, "values");
}

static void test_cas(memcached_st *m)
{
    const char *key = "caskey";
    size_t len = strlen(key);
    memcached_return_t rc;

    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
    put(m, key, "first", 0);
    check_rc(m, "gets", memcached_mget(m, &key, &len, 1), MEMCACHED_SUCCESS);
    memcached_result_st *r = memcached_fetch_result(m, NULL, &rc);
    check("gets result", r != NULL, memcached_strerror(m, rc));
    if (r == NULL)
        return;
    uint64_t cas = memcached_result_cas(r);
    memcached_result_free(r);
    while ((r = memcached_fetch_result(m, NULL, &rc)) != NULL)
        memcached_result_free(r);
    check("cas id non-zero", cas != 0, "0");
    check_rc(m, "cas mismatch",
             memcached_cas(m, key, len, "x", 1, 0, 0, cas + 1),
             MEMCACHED_DATA_EXISTS);
    check_rc(m, "cas match", memcached_cas(m, key, len, "second", 6, 0, 0, cas),
             MEMCACHED_SUCCESS);
    expect_value(m, "cas stored", key, "second", 0);
    check_rc(m, "cas stale id",
             memcached_cas(m, key, len, "third", 5, 0, 0, cas),
             MEMCACHED_DATA_EXISTS);
}

static void test_arith(memcached_st *m)
{
    uint64_t v = 0;

    put(m, "counter", "10", 0);
    check_rc(m, "incr", memcached_increment(m, "counter", 7, 5, &v),
             MEMCACHED_SUCCESS);
    check("incr value", v == 15, "value");
    check_rc(m, "decr", memcached_decrement(m, "counter", 7, 20, &v),
             MEMCACHED_SUCCESS);
    check("decr floors at 0", v == 0, "value");
    check_rc(m, "incr missing", memcached_increment(m, "nocounter", 9, 1, &v),
             MEMCACHED_NOTFOUND);
    put(m, "wrap", "18446744073709551615", 0);
    check_rc(m, "incr wrap", memcached_increment(m, "wrap", 4, 1, &v),
             MEMCACHED_SUCCESS);
    check("incr wraps to 0", v == 0, "value");
}

static void test_large(memcached_st *m)
{
    size_t n = 1000 * 1000, len = 0;
    char *big = malloc(n);
    uint32_t flags;
    memcached_return_t rc;

    for (size_t i = 0; i < n; i++)
        big[i] = (char)(i * 31 + 7);
    check_rc(m, "set 1 MB", memcached_set(m, "big", 3, big, n, 0, 0),
             MEMCACHED_SUCCESS);
    char *v = memcached_get(m, "big", 3, &len, &flags, &rc);
    check("get 1 MB", v && len == n && memcmp(v, big, n) == 0, "mismatch");
    free(v);
    free(big);
}

/* Binary protocol only: a missing counter is created with the initial
 * value; an existing one just moves. */
static void test_initial(memcached_st *m)
{
    uint64_t v = 0;

    check_rc(m, "incr with initial creates",
             memcached_increment_with_initial(m, "fresh", 5, 3, 42, 0, &v),
             MEMCACHED_SUCCESS);
    check("created with the initial value", v == 42, "value");
    expect_value(m, "created counter reads back", "fresh", "42", 0);
    check_rc(m, "incr with initial existing",
             memcached_increment_with_initial(m, "fresh", 5, 3, 42, 0, &v),
             MEMCACHED_SUCCESS);
    check("existing counter incremented", v == 45, "value");
    check_rc(m, "decr with initial creates",
             memcached_decrement_with_initial(m, "fresh2", 6, 3, 7, 0, &v),
             MEMCACHED_SUCCESS);
    check("decr created with the initial value", v == 7, "value");
}

/* Binary protocol only: noreply becomes the quiet opcodes (SETQ, ...),
 * which libmemcached ends with a NOOP when it next reads. */
static void test_quiet(memcached_st *m)
{
    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_NOREPLY, 1);
    check_rc(m, "quiet set", put(m, "q1", "quiet", 5), MEMCACHED_SUCCESS);
    check_rc(m, "quiet delete missing", memcached_delete(m, "q-none", 6, 0),
             MEMCACHED_SUCCESS);
    check_rc(m, "quiet append", memcached_append(m, "q1", 2, "!", 1, 0, 0),
             MEMCACHED_SUCCESS);
    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_NOREPLY, 0);
    expect_value(m, "quiet stores applied", "q1", "quiet!", 5);
}

int main(int argc, char **argv)
{
    binary = argc == 3 && strcmp(argv[2], "binary") == 0;
    if (argc != 2 && !binary) {
        fprintf(stderr, "usage: %s PORT [binary]\n", argv[0]);
        return 2;
    }
    memcached_st *m = memcached_create(NULL);
    memcached_server_add(m, "127.0.0.1", (in_port_t)atoi(argv[1]));
    memcached_behavior_set(m, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, 5000);
    if (binary) {
        mode = "binary ";
        memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
    }
    test_basic(m);
    test_mget(m);
    test_cas(m);
    test_arith(m);
    test_large(m);
    if (binary) {
        test_initial(m);
        test_quiet(m);
    }
    memcached_free(m);
    return failures ? 1 : 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/testutil.h - helpers shared by the Check unit tests (REQUIRE, stats
 * records, running a suite).
 */
#ifndef T_SUPPORT_TESTUTIL_H
#define T_SUPPORT_TESTUTIL_H

#include <check.h>

/*
 * Check's ck_assert_* reports every passing assertion to the parent
 * process (a write(2) each); hot loops use REQUIRE, which costs nothing
 * unless it fails.
 */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        if (!(cond))                                                           \
            ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);              \
    } while (0)

#define STAT_REC_MAX 1024

/* The statistics one stats call reported, in order (a stat_sink_fn ctx). */
struct stat_rec {
    int n;
    char name[STAT_REC_MAX][64];
    char value[STAT_REC_MAX][64];
};

/* A stat_sink_fn that appends to the struct stat_rec ctx (zeroed first);
 * fails the test if more than STAT_REC_MAX statistics arrive. */
void record_stat(void *ctx, const char *name, const char *value);

/* The value of statistic name, or NULL if it was not reported. */
const char *stat_get(const struct stat_rec *r, const char *name);

/* The numeric value of statistic name; fails the test if it is missing. */
long long stat_num(const struct stat_rec *r, const char *name);

/* Runs suite s (Check's normal output) and frees it; the exit status. */
int run_suite(Suite *s);

#endif /* T_SUPPORT_TESTUTIL_H */

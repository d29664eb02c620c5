/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * t/support/testutil.c - helpers shared by the Check unit tests (testutil.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/support/testutil.h"

void record_stat(void *ctx, const char *name, const char *value)
{
    struct stat_rec *r = ctx;

    ck_assert_int_lt(r->n, STAT_REC_MAX);
    snprintf(r->name[r->n], sizeof(r->name[0]), "%s", name);
    snprintf(r->value[r->n], sizeof(r->value[0]), "%s", value);
    r->n++;
}

const char *stat_get(const struct stat_rec *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->name[i], name) == 0)
            return r->value[i];
    return NULL;
}

long long stat_num(const struct stat_rec *r, const char *name)
{
    const char *v = stat_get(r, name);

    ck_assert_msg(v != NULL, "no stat %s", name);
    return atoll(v);
}

int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

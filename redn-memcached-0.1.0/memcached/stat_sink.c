/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/stat_sink.c - printf-style reporting into a stat sink.
 */
#include <stdarg.h>
#include <stdio.h>

#include "memcached/stat_sink.h"

void stat_sinkf(stat_sink_fn sink, void *ctx, const char *name, const char *fmt,
                ...)
{
    char value[128];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    sink(ctx, name, value);
}

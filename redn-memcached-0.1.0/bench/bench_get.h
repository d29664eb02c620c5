/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/bench_get.h - `rdn-bench get` (bench/bench_get.c): the offloaded
 * GET's chain against one READ of the same size, 64 B .. 64 KB.
 */
#ifndef BENCH_BENCH_GET_H
#define BENCH_BENCH_GET_H

#include "bench/bench.h"

int bench_get(struct bench_ctx *c);

#endif /* BENCH_BENCH_GET_H */

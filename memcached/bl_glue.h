/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memcached/bl_glue.h - connects the cache to the benchmark's RDMA
 * baselines (rdn/baseline/baseline_srv.h) when --rdn-baselines PORT is given
 * (with --rdn-port: they share the offload's NIC and memory). Off by
 * default: the one-sided baseline lets clients read the table and the
 * items. Without the flag every function here is a no-op.
 *
 * rdn_glue.c calls these: bl_glue_option() for the flag, bl_glue_init()
 * once the offload's device is open, bl_glue_expose() for every table
 * and arena it maps, bl_glue_start() when the offload starts.
 */
#ifndef MEMCACHED_BL_GLUE_H
#define MEMCACHED_BL_GLUE_H

#include <stdbool.h>
#include <stddef.h>

#include "rdn/rnic/rnic.h"

/* --rdn-baselines PORT. 0, or -EINVAL for a bad value. */
int bl_glue_option(const char *value);
/* Returns whether --rdn-baselines was given. */
bool bl_glue_enabled(void);
/* Prepares the baselines on the offload's device. 0 or -errno. */
int bl_glue_init(struct rnic_device *dev);
/* Lets one-sided clients read [addr, addr+len) (table or arena). */
void bl_glue_expose(void *addr, size_t len);
/* Listens. 0 or -errno. */
int bl_glue_start(void);
/* Stops the baselines' threads and frees their NIC objects (before the
 * offload closes the device, and before the storage stops). */
void bl_glue_stop(void);

#endif /* MEMCACHED_BL_GLUE_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/mlx5/mlx5.c - the mlx5 provider (see mlx5.h).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdn/mlx5/mlx5.h"

static int m5_open(const char *name, const struct rnic_open_opts *opts,
                   struct rnic_device **out)
{
    if (strncmp(name, "mlx5:", 5) != 0)
        return -ENODEV;
    return rnic_err(-ENOSYS, "mlx5: not written yet");
}

const struct rnic_provider mlx5_provider = {
    .name = "mlx5",
    .open = m5_open,
};

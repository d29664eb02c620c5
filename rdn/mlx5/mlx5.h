/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdn/mlx5/mlx5.h - the "mlx5" provider of rdn/rnic/rnic.h: a ConnectX-5/6
 * through rdma-core's mlx5dv and DevX, with what RedN's chains need and
 * plain verbs lacks (see docs/mlx5.md). Devices are "mlx5:<ibv device>".
 * NEVER RUN ON HARDWARE: no machine of this project has a ConnectX.
 */
#ifndef RDN_MLX5_MLX5_H
#define RDN_MLX5_MLX5_H

#include "rdn/rnic/provider.h"

extern const struct rnic_provider mlx5_provider;

#endif /* RDN_MLX5_MLX5_H */

# SPDX-License-Identifier: BSD-3-Clause
# rdn/mlx5: the rnic provider for ConnectX through mlx5dv + DevX (mlx5.h),
# built when configure finds infiniband/mlx5dv.h and libmlx5.
if HAVE_MLX5
noinst_LIBRARIES += rdn/mlx5/librdnmlx5.a
rdn_mlx5_librdnmlx5_a_SOURCES = rdn/mlx5/mlx5.c rdn/mlx5/mlx5_prm.c
noinst_HEADERS += rdn/mlx5/mlx5.h rdn/mlx5/mlx5_prm.h
RNIC_HW_LIBS += rdn/mlx5/librdnmlx5.a
RNIC_HW_SYSLIBS += $(MLX5_LIBS)
endif

# SPDX-License-Identifier: BSD-3-Clause
# rdn/mlx5: the rnic provider for ConnectX through mlx5dv + DevX (mlx5.h).
# Its pure part (mlx5_prm.h: command layouts, doorbells, CQEs, capability
# verdicts) is always built, so its tests run everywhere; the provider
# itself when configure finds infiniband/mlx5dv.h and libmlx5.
noinst_LIBRARIES += rdn/mlx5/librdnmlx5prm.a
rdn_mlx5_librdnmlx5prm_a_SOURCES = rdn/mlx5/mlx5_prm.c
noinst_HEADERS += rdn/mlx5/mlx5_prm.h rdn/mlx5/mlx5.h
if HAVE_MLX5
noinst_LIBRARIES += rdn/mlx5/librdnmlx5.a
rdn_mlx5_librdnmlx5_a_SOURCES = rdn/mlx5/mlx5.c
RNIC_HW_LIBS += rdn/mlx5/librdnmlx5.a rdn/mlx5/librdnmlx5prm.a
RNIC_HW_SYSLIBS += $(MLX5_LIBS)
endif

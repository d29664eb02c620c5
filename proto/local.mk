# proto/: formats shared by server, chains and clients, and the key hash.
noinst_HEADERS += proto/mlx5.h proto/item.h proto/table.h proto/keyhash.h

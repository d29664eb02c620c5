# proto/: formats shared by server, chains and clients, and the key hash.
noinst_HEADERS += proto/mlx5.h proto/item.h proto/table.h proto/keyhash.h

# The key hash (murmur3, fingerprint and buckets), linked by the server,
# the offload module and RDMA clients alike.
noinst_LIBRARIES += proto/libproto.a
proto_libproto_a_SOURCES = proto/murmur3.c proto/keyhash.c

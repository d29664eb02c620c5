# SPDX-License-Identifier: BSD-3-Clause
# proto/: formats shared by server, chains and clients (mlx5 WQE segments,
# the item and table layouts, the handshake messages and their framing) and
# the key hash, linked by the server, the offload module and RDMA clients.
noinst_HEADERS += proto/barrier.h proto/byteorder.h proto/mlx5.h \
	proto/item.h proto/table.h proto/keyhash.h proto/rdn_wire.h \
	proto/rdn_framing.h

noinst_LIBRARIES += proto/libproto.a
proto_libproto_a_SOURCES = proto/murmur3.c proto/keyhash.c \
	proto/rdn_framing.c

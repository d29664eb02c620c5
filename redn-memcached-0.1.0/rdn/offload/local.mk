# SPDX-License-Identifier: BSD-3-Clause
# rdn/offload: the server side of the offloaded GET. offload.h is the
# module memcached links (handshake and control thread, watch thread,
# persistence); pipeline.h builds one client's recycled chain, for the
# module and for tests and benchmarks that serve a hand-built table.
noinst_LIBRARIES += rdn/offload/librdnoffload.a
rdn_offload_librdnoffload_a_SOURCES = rdn/offload/pipeline.c \
	rdn/offload/offload.c rdn/offload/ctl.c rdn/offload/watch.c \
	rdn/offload/persist.c
noinst_HEADERS += rdn/offload/offload.h rdn/offload/pipeline.h \
	rdn/offload/offload_int.h

OFFLOAD_LIBS = rdn/offload/librdnoffload.a $(CHAIN_LIBS) proto/libproto.a

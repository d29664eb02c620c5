# SPDX-License-Identifier: BSD-3-Clause
# rdn/librdn: the client side. client.h is librdn's API (handshake,
# verified NIC answers, TCP fallback through libmemcached), one file per
# job behind it (client_int.h says which); nic_client.h is its NIC half
# (response buffers, the GET SEND, verdicts), which tests and benchmarks
# drive directly. librdn never links the server's offload.
noinst_LIBRARIES += rdn/librdn/librdn.a
rdn_librdn_librdn_a_SOURCES = rdn/librdn/client.c rdn/librdn/servers.c \
	rdn/librdn/handshake.c rdn/librdn/pipeline.c rdn/librdn/tcp.c \
	rdn/librdn/login.c rdn/librdn/nic_client.c
rdn_librdn_librdn_a_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
noinst_HEADERS += rdn/librdn/nic_client.h rdn/librdn/client_int.h

LIBRDN_LIBS = rdn/librdn/librdn.a $(CHAIN_LIBS) proto/libproto.a \
	$(LIBMEMCACHED_LIBS)

bin_PROGRAMS += rdn/librdn/rdn-cli
rdn_librdn_rdn_cli_SOURCES = rdn/librdn/rdn-cli.c
rdn_librdn_rdn_cli_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
rdn_librdn_rdn_cli_LDADD = $(LIBRDN_LIBS)

# The installed librdn: a shared library of client.h's API, its symbols
# versioned and nothing else exported (librdn.map). It is compiled from the
# sources of librdn.a and of the archives LIBRDN_LIBS links, as PIC objects
# of its own, so those archives stay static; a library added to
# LIBRDN_LIBS must add its sources here too (-no-undefined catches a
# missing one at link time).
lib_LTLIBRARIES = rdn/librdn/librdn.la
rdn_librdn_librdn_la_SOURCES = $(rdn_librdn_librdn_a_SOURCES) \
	$(rdn_chain_librdnchain_a_SOURCES) $(rdn_rnic_librnic_a_SOURCES) \
	$(rdn_softnic_libsoftnic_a_SOURCES) $(proto_libproto_a_SOURCES)
rdn_librdn_librdn_la_CPPFLAGS = $(rdn_softnic_libsoftnic_a_CPPFLAGS)
rdn_librdn_librdn_la_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
# -version-info current:revision:age (libtool's rules): 0:0:0 is
# librdn.so.0, the first interface.
rdn_librdn_librdn_la_LDFLAGS = $(AM_LDFLAGS) -version-info 0:0:0 \
	-no-undefined -Wl,--version-script=$(srcdir)/rdn/librdn/librdn.map
rdn_librdn_librdn_la_LIBADD = $(filter-out %.a,$(LIBRDN_LIBS)) -lpthread
EXTRA_rdn_librdn_librdn_la_DEPENDENCIES = rdn/librdn/librdn.map
EXTRA_DIST += rdn/librdn/librdn.map rdn/librdn/librdn.pc.in

# Installed as <rdn/librdn/client.h>: the same name in the build tree and
# the installed one, and the header includes only the C library's.
nobase_include_HEADERS = rdn/librdn/client.h
pkgconfig_DATA = rdn/librdn/librdn.pc
# The hardware providers RNIC_LIBS links when configure found them.
if HAVE_VERBS
rdn_librdn_librdn_la_SOURCES += $(rdn_verbs_librdnverbs_a_SOURCES)
endif
if HAVE_MLX5
rdn_librdn_librdn_la_SOURCES += $(rdn_mlx5_librdnmlx5_a_SOURCES) \
	$(rdn_mlx5_librdnmlx5prm_a_SOURCES)
endif

# SPDX-License-Identifier: BSD-3-Clause
# rdn/librdn: the client side. client.h is librdn's API (handshake,
# verified NIC answers, TCP fallback through libmemcached); nic_client.h is
# its NIC half (response buffers, the GET SEND, verdicts), which tests and
# benchmarks drive directly. librdn never links the server's offload.
noinst_LIBRARIES += rdn/librdn/librdn.a
rdn_librdn_librdn_a_SOURCES = rdn/librdn/client.c rdn/librdn/nic_client.c
rdn_librdn_librdn_a_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
noinst_HEADERS += rdn/librdn/client.h rdn/librdn/nic_client.h

LIBRDN_LIBS = rdn/librdn/librdn.a $(CHAIN_LIBS) proto/libproto.a \
	$(LIBMEMCACHED_LIBS)

bin_PROGRAMS += rdn/librdn/rdn-cli
rdn_librdn_rdn_cli_SOURCES = rdn/librdn/rdn-cli.c
rdn_librdn_rdn_cli_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
rdn_librdn_rdn_cli_LDADD = $(LIBRDN_LIBS)

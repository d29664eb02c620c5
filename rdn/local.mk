# Build rules for rdn/ (included by the top-level Makefile.am).

# librnic.a: the NIC interface (rdn/rnic.h) and its providers. softnic's
# sources are appended to it by rdn/softnic/local.mk.
noinst_LIBRARIES += rdn/librnic.a
rdn_librnic_a_SOURCES = rdn/rnic.c
rdn_librnic_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DRDN_NICD_BUILD_PATH='"$(abs_top_builddir)/rdn/softnic/rdn-nicd"' \
	-DRDN_NICD_INSTALL_PATH='"$(bindir)/rdn-nicd"'
noinst_HEADERS += rdn/rnic.h rdn/provider.h

# ---- chain ----

# The chain assembler, RedN's constructs and the chain checker.
noinst_LIBRARIES += rdn/librdnchain.a
rdn_librdnchain_a_SOURCES = rdn/chain.c rdn/chain_asm.c rdn/chain_if.c \
	rdn/chain_loop.c rdn/chain_check.c rdn/chain_check_exec.c \
	rdn/chain_check_hb.c rdn/chain_persist.c
noinst_HEADERS += rdn/chain.h rdn/chain_int.h rdn/chain_check_int.h

# Programs that run on the NIC alone (linked-list walk, a counter loop, a
# Turing machine) and their demo.
noinst_LIBRARIES += rdn/programs/librdnprog.a
rdn_programs_librdnprog_a_SOURCES = rdn/programs/list_walk.c \
	rdn/programs/count_while.c rdn/programs/counter_loop.c \
	rdn/programs/turing.c
noinst_HEADERS += rdn/programs/list_walk.h rdn/programs/count_while.h \
	rdn/programs/counter_loop.h rdn/programs/turing.h
noinst_PROGRAMS += rdn/programs/rdn-chain-demo
rdn_programs_rdn_chain_demo_SOURCES = rdn/programs/rdn-chain-demo.c
rdn_programs_rdn_chain_demo_LDADD = rdn/programs/librdnprog.a \
	rdn/librdnchain.a rdn/librnic.a

# ---- offload ----

# The offloaded GET: per-client NIC chains (server side), the client's NIC
# half, the server module (handshake, re-arming, horizon, stats) and the
# client library librdn.
noinst_LIBRARIES += rdn/librdnoffload.a
rdn_librdnoffload_a_SOURCES = rdn/offload_chain.c rdn/offload_client.c \
	rdn/offload_wire.c rdn/offload.c rdn/offload_ctl.c rdn/offload_watch.c rdn/offload_persist.c \
	rdn/offload_table.c
noinst_HEADERS += proto/rdn_wire.h rdn/offload_chain.h rdn/offload_client.h \
	rdn/offload_wire.h rdn/offload.h rdn/offload_int.h rdn/offload_table.h

# What an offload user links, in order.
RDN_OFFLOAD_LIBS = rdn/librdnoffload.a rdn/librdnchain.a rdn/librnic.a \
	proto/libproto.a

# librdn: the client library (handshake, verified NIC answers, TCP
# fallback through libmemcached) and rdn-cli.
noinst_LIBRARIES += rdn/librdn.a
rdn_librdn_a_SOURCES = rdn/client.c
rdn_librdn_a_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
noinst_HEADERS += rdn/client.h
RDN_CLIENT_LIBS = rdn/librdn.a $(RDN_OFFLOAD_LIBS) $(LIBMEMCACHED_LIBS)

bin_PROGRAMS += rdn/rdn-cli
rdn_rdn_cli_SOURCES = rdn/rdn-cli.c
rdn_rdn_cli_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
rdn_rdn_cli_LDADD = $(RDN_CLIENT_LIBS)

# ---- baselines ----

# The benchmark's RDMA baselines (one-sided and RPC), server and client
# sides; the server side runs inside memcached with --rdn-baselines.
noinst_LIBRARIES += rdn/librdnbaseline.a
rdn_librdnbaseline_a_SOURCES = rdn/baseline_srv.c rdn/baseline_cli.c
noinst_HEADERS += rdn/baseline_wire.h rdn/baseline_srv.h rdn/baseline_cli.h

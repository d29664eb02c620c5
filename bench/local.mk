# SPDX-License-Identifier: BSD-3-Clause
# Build rules for bench/ (included by the top-level Makefile.am).

# rdn-bench: one program, a mode per subcommand (bench/bench_<mode>.c).
# The key-value modes (bench_kv.c and the systems it drives) are clients
# of a running memcached: librdn, libmemcached and the RDMA baselines.
bin_PROGRAMS += bench/rdn-bench
bench_rdn_bench_SOURCES = bench/rdn-bench.c bench/bench_stats.c \
	bench/bench_micro.c bench/bench_micro_chain.c bench/bench_kv.c \
	bench/bench_tcp.c bench/bench_redn.c bench/bench_onesided.c \
	bench/bench_rpc.c bench/bench_keys.c bench/bench_crash_load.c \
	bench/bench_crash.c
# `rdn-bench crash` runs the Python driver bench/crash-bench, found next to
# the program or in the source tree.
bench_rdn_bench_CPPFLAGS = $(AM_CPPFLAGS) \
	-DBENCH_SRCDIR='"$(abs_top_srcdir)/bench"'
bench_rdn_bench_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
bench_rdn_bench_LDADD = rdn/programs/librdnprog.a t/support/libofltable.a \
	$(LIBRDN_LIBS) $(BASELINE_LIBS) $(OFFLOAD_LIBS) -lpthread -lm
noinst_HEADERS += bench/bench.h bench/bench_micro.h bench/bench_kv.h

# `rdn-bench get`: the offload's chain on a hand-built table against one READ.
bench_rdn_bench_SOURCES += bench/bench_get.c
noinst_HEADERS += bench/bench_get.h

# The crash experiment's driver (`rdn-bench crash`, RedN Fig. 16).
EXTRA_DIST += bench/crash-bench

# GETs over a server list of 1, 2, 3 servers (librdn and libmemcached).
EXTRA_DIST += bench/fleet-bench

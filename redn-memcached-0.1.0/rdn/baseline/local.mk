# SPDX-License-Identifier: BSD-3-Clause
# rdn/baseline: the benchmark's RDMA baselines (FaRM-style one-sided and RPC
# over RDMA). The server side (baseline_srv.h) runs inside memcached with
# --rdn-baselines; the client side (baseline_cli.h) is rdn-bench's.
noinst_LIBRARIES += rdn/baseline/librdnbaseline.a
rdn_baseline_librdnbaseline_a_SOURCES = rdn/baseline/baseline_srv.c \
	rdn/baseline/baseline_cli.c
noinst_HEADERS += rdn/baseline/baseline_wire.h rdn/baseline/baseline_srv.h \
	rdn/baseline/baseline_cli.h

BASELINE_LIBS = rdn/baseline/librdnbaseline.a $(CHAIN_LIBS) proto/libproto.a

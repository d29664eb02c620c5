# SPDX-License-Identifier: BSD-3-Clause
# Tests of the offloaded GET (included by t/local.mk).

# The chain and the client half in one process on softnic-inproc.
check_PROGRAMS += t/test_offload_chain
TESTS += t/test_offload_chain
t_test_offload_chain_SOURCES = t/test_offload_chain.c $(TESTUTIL)
t_test_offload_chain_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
t_test_offload_chain_LDADD = $(OFLTABLE_LIBS) $(CHECK_LIBS)
# The same under strict prefetch (a NIC that fetches WQEs ahead).
TESTS += t/offload_chain_strict.sh
dist_check_SCRIPTS += t/offload_chain_strict.sh
# The same on a timed NIC with the client far away (answers before ACKs).
TESTS += t/offload_chain_far.sh
dist_check_SCRIPTS += t/offload_chain_far.sh

# struct rdn_opts's size contract (rdn/librdn/client.h).
check_PROGRAMS += t/test_rdn_opts
TESTS += t/test_rdn_opts
t_test_rdn_opts_SOURCES = t/test_rdn_opts.c $(TESTUTIL)
t_test_rdn_opts_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBMEMCACHED_CFLAGS)
t_test_rdn_opts_LDADD = $(LIBRDN_LIBS) $(CHECK_LIBS)

# End-to-end: memcached --rdn-port, a private rdn-nicd and RDMA clients
# (t/offload_driver) in separate processes.
check_PROGRAMS += t/offload_driver
t_offload_driver_SOURCES = t/offload_driver.c
t_offload_driver_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
t_offload_driver_LDADD = $(LIBRDN_LIBS)
EXTRA_DIST += t/offload_env.py
OFFLOAD_PY_TESTS = t/offload_e2e.py t/offload_race.py t/offload_hostile.py \
	t/offload_move.py
TESTS += $(OFFLOAD_PY_TESTS)
dist_check_SCRIPTS += $(OFFLOAD_PY_TESTS)
# The same across hosts: memcached in one network namespace, its clients
# in others, RoCEv2 over veth with 1% loss (root; skipped otherwise).
TESTS += t/offload_hosts.sh
dist_check_SCRIPTS += t/offload_hosts.sh

# The wire constants and layouts of the C headers, for the Python tests
# (t/rdnwire.py runs it at import).
check_PROGRAMS += t/wire_dump
t_wire_dump_SOURCES = t/wire_dump.c
EXTRA_DIST += t/rdnwire.py

# docs/wire.md's tables against the C headers, docs/design.md's GET chain
# against the pipeline as built.
check_PROGRAMS += t/pipeline_dump
t_pipeline_dump_SOURCES = t/pipeline_dump.c
t_pipeline_dump_LDADD = $(OFLTABLE_LIBS)
TESTS += t/test_wire_doc.py t/test_design_doc.py
dist_check_SCRIPTS += t/test_wire_doc.py t/test_design_doc.py
EXTRA_DIST += docs/wire.md docs/design.md

# The RPC baseline server against a client that never takes its replies.
check_PROGRAMS += t/test_bl_replies
TESTS += t/test_bl_replies
t_test_bl_replies_SOURCES = t/test_bl_replies.c $(TESTUTIL)
t_test_bl_replies_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
t_test_bl_replies_LDADD = $(BASELINE_LIBS) $(CHECK_LIBS)

# librdn over a libmemcached server list: three (or more) memcached
# --rdn-port servers, libmemcached and nutcracker placing the keys.
check_PROGRAMS += t/fleet_driver
t_fleet_driver_SOURCES = t/fleet_driver.c
t_fleet_driver_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
t_fleet_driver_LDADD = $(LIBRDN_LIBS)
TESTS += t/fleet_e2e.py
dist_check_SCRIPTS += t/fleet_e2e.py

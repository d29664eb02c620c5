# SPDX-License-Identifier: BSD-3-Clause
# Tests of the offloaded GET (included by t/local.mk).

# The chain and the client half in one process on softnic-inproc.
check_PROGRAMS += t/test_offload_chain
TESTS += t/test_offload_chain
t_test_offload_chain_SOURCES = t/test_offload_chain.c $(TESTUTIL)
t_test_offload_chain_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
t_test_offload_chain_LDADD = $(OFLTABLE_LIBS) $(CHECK_LIBS)

# End-to-end: memcached --rdn-port, a private rdn-nicd and RDMA clients
# (t/offload_driver) in separate processes.
check_PROGRAMS += t/offload_driver
t_offload_driver_SOURCES = t/offload_driver.c
t_offload_driver_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
t_offload_driver_LDADD = $(LIBRDN_LIBS)
EXTRA_DIST += t/offload_env.py
OFFLOAD_PY_TESTS = t/offload_e2e.py t/offload_race.py t/offload_hostile.py
TESTS += $(OFFLOAD_PY_TESTS)
dist_check_SCRIPTS += $(OFFLOAD_PY_TESTS)

# The RPC baseline server against a client that never takes its replies.
check_PROGRAMS += t/test_bl_replies
TESTS += t/test_bl_replies
t_test_bl_replies_SOURCES = t/test_bl_replies.c $(TESTUTIL)
t_test_bl_replies_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
t_test_bl_replies_LDADD = $(BASELINE_LIBS) $(CHECK_LIBS)

# SPDX-License-Identifier: BSD-3-Clause
# t/support: code for tests only (and rdn-bench's chain benchmark, which
# serves the same hand-built table). Nothing here ships.

# Check helpers (run_suite()), linked into every Check test.
TESTUTIL = t/support/testutil.c t/support/testutil.h
# A softnic device and daemon for the softnic tests.
SOFTNIC_TESTUTIL = t/support/test_softnic_util.c t/support/test_softnic_util.h
NICD_TESTUTIL = t/support/nicd_testutil.c t/support/nicd_testutil.h
# Chain helpers for the construct and program tests.
CHAIN_TESTUTIL = t/support/chain_testutil.c t/support/chain_testutil.h

# A cuckoo table built by hand in NIC memory with a pipeline serving it and
# a local client: the offload's chain without a memcached.
noinst_LIBRARIES += t/support/libofltable.a
t_support_libofltable_a_SOURCES = t/support/offload_table.c \
	t/support/offload_table.h
OFLTABLE_LIBS = t/support/libofltable.a rdn/librdn/librdn.a $(OFFLOAD_LIBS)

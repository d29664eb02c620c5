# SPDX-License-Identifier: BSD-3-Clause
# Tests of softnic (included by t/local.mk).

SOFTNIC_TEST_SOURCES = $(SOFTNIC_TESTUTIL)
SOFTNIC_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
SOFTNIC_TEST_LDADD = $(RNIC_LIBS) $(CHECK_LIBS)

check_PROGRAMS += t/test_softnic
TESTS += t/test_softnic
t_test_softnic_SOURCES = t/test_softnic.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_order
TESTS += t/test_softnic_order
t_test_softnic_order_SOURCES = t/test_softnic_order.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_order_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_order_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_errors
TESTS += t/test_softnic_errors
t_test_softnic_errors_SOURCES = t/test_softnic_errors.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_errors_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_errors_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_golden
TESTS += t/test_softnic_golden
t_test_softnic_golden_SOURCES = t/test_softnic_golden.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_golden_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_golden_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_strict
TESTS += t/test_softnic_strict
t_test_softnic_strict_SOURCES = t/test_softnic_strict.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_strict_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_strict_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_daemon
TESTS += t/test_softnic_daemon
t_test_softnic_daemon_SOURCES = t/test_softnic_daemon.c $(SOFTNIC_TEST_SOURCES) \
	$(NICD_TESTUTIL)
t_test_softnic_daemon_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_daemon_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_trace
TESTS += t/test_softnic_trace
t_test_softnic_trace_SOURCES = t/test_softnic_trace.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_trace_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_trace_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_access
TESTS += t/test_softnic_access
t_test_softnic_access_SOURCES = t/test_softnic_access.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_access_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_access_LDADD = $(SOFTNIC_TEST_LDADD)

check_PROGRAMS += t/test_softnic_handoff
TESTS += t/test_softnic_handoff
t_test_softnic_handoff_SOURCES = t/test_softnic_handoff.c $(SOFTNIC_TEST_SOURCES)
t_test_softnic_handoff_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_softnic_handoff_LDADD = $(SOFTNIC_TEST_LDADD)

# RC over RoCEv2 between two rdn-nicd daemons in network namespaces
# (t/roce_net.sh drives t/test_roce_net; needs root, skipped otherwise).
check_PROGRAMS += t/test_roce_net
t_test_roce_net_SOURCES = t/test_roce_net.c $(SOFTNIC_TEST_SOURCES)
t_test_roce_net_CFLAGS = $(SOFTNIC_TEST_CFLAGS)
t_test_roce_net_LDADD = $(SOFTNIC_TEST_LDADD)
TESTS += t/roce_net.sh
dist_check_SCRIPTS += t/roce_net.sh t/roce_hostile.py
EXTRA_DIST += t/netns.sh
# Interop with Linux rxe in a QEMU VM (root, qemu; skipped otherwise).
TESTS += t/roce_rxe.sh
dist_check_SCRIPTS += t/roce_rxe.sh

# The RoCEv2 codec against golden bytes.
check_PROGRAMS += t/test_roce_pkt
TESTS += t/test_roce_pkt
t_test_roce_pkt_SOURCES = t/test_roce_pkt.c $(TESTUTIL)
t_test_roce_pkt_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
t_test_roce_pkt_LDADD = $(RNIC_LIBS) $(CHECK_LIBS)

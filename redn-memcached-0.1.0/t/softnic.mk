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

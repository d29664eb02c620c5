# SPDX-License-Identifier: BSD-3-Clause
# Tests of chain (included by t/local.mk).

# The assembler alone (no NIC): golden WQE bytes, wrap, fields, byte order.
check_PROGRAMS += t/test_chain_asm
TESTS += t/test_chain_asm
t_test_chain_asm_SOURCES = t/test_chain_asm.c $(TESTUTIL)
t_test_chain_asm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
t_test_chain_asm_LDADD = $(CHAIN_LIBS) $(CHECK_LIBS)

# Constructs, programs and the checker on softnic (in-process engine).
CHAIN_TEST_SOURCES = $(CHAIN_TESTUTIL) $(TESTUTIL)
CHAIN_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
CHAIN_TEST_LDADD = rdn/programs/librdnprog.a $(CHAIN_LIBS) $(CHECK_LIBS)

check_PROGRAMS += t/test_chain_if
TESTS += t/test_chain_if
t_test_chain_if_SOURCES = t/test_chain_if.c $(CHAIN_TEST_SOURCES)
t_test_chain_if_CFLAGS = $(CHAIN_TEST_CFLAGS)
t_test_chain_if_LDADD = $(CHAIN_TEST_LDADD)

check_PROGRAMS += t/test_chain_loop
TESTS += t/test_chain_loop
t_test_chain_loop_SOURCES = t/test_chain_loop.c $(CHAIN_TEST_SOURCES)
t_test_chain_loop_CFLAGS = $(CHAIN_TEST_CFLAGS)
t_test_chain_loop_LDADD = $(CHAIN_TEST_LDADD)

check_PROGRAMS += t/test_chain_prog
TESTS += t/test_chain_prog
t_test_chain_prog_SOURCES = t/test_chain_prog.c $(CHAIN_TEST_SOURCES)
t_test_chain_prog_CFLAGS = $(CHAIN_TEST_CFLAGS)
t_test_chain_prog_LDADD = $(CHAIN_TEST_LDADD)

check_PROGRAMS += t/test_chain_check
TESTS += t/test_chain_check
t_test_chain_check_SOURCES = t/test_chain_check.c $(CHAIN_TEST_SOURCES)
t_test_chain_check_CFLAGS = $(CHAIN_TEST_CFLAGS)
t_test_chain_check_LDADD = $(CHAIN_TEST_LDADD)

check_PROGRAMS += t/test_chain_rqdb
TESTS += t/test_chain_rqdb
t_test_chain_rqdb_SOURCES = t/test_chain_rqdb.c $(CHAIN_TEST_SOURCES)
t_test_chain_rqdb_CFLAGS = $(CHAIN_TEST_CFLAGS)
t_test_chain_rqdb_LDADD = $(CHAIN_TEST_LDADD)

check_PROGRAMS += t/test_chain_persist
TESTS += t/test_chain_persist
t_test_chain_persist_SOURCES = t/test_chain_persist.c $(NICD_TESTUTIL) \
	$(CHAIN_TEST_SOURCES)
t_test_chain_persist_CFLAGS = $(CHAIN_TEST_CFLAGS)
t_test_chain_persist_LDADD = $(CHAIN_TEST_LDADD)

# SPDX-License-Identifier: BSD-3-Clause
# rdn/programs: programs that run on the NIC alone (a linked-list walk, a
# counter loop, a Turing machine) and their demo. A header per program.
noinst_LIBRARIES += rdn/programs/librdnprog.a
rdn_programs_librdnprog_a_SOURCES = rdn/programs/list_walk.c \
	rdn/programs/count_while.c rdn/programs/counter_loop.c \
	rdn/programs/turing.c
noinst_HEADERS += rdn/programs/list_walk.h rdn/programs/count_while.h \
	rdn/programs/counter_loop.h rdn/programs/turing.h
noinst_PROGRAMS += rdn/programs/rdn-chain-demo
rdn_programs_rdn_chain_demo_SOURCES = rdn/programs/rdn-chain-demo.c
rdn_programs_rdn_chain_demo_LDADD = rdn/programs/librdnprog.a $(CHAIN_LIBS)

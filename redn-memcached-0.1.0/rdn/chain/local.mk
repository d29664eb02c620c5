# SPDX-License-Identifier: BSD-3-Clause
# rdn/chain: the chain assembler, RedN's constructs (if, loops) and the
# chain checker, over rdn/rnic. chain.h is the interface.
noinst_LIBRARIES += rdn/chain/librdnchain.a
rdn_chain_librdnchain_a_SOURCES = rdn/chain/chain.c rdn/chain/chain_asm.c \
	rdn/chain/chain_if.c rdn/chain/chain_loop.c rdn/chain/chain_check.c \
	rdn/chain/chain_check_exec.c rdn/chain/chain_check_hb.c \
	rdn/chain/chain_persist.c
noinst_HEADERS += rdn/chain/chain.h rdn/chain/chain_int.h \
	rdn/chain/chain_check_int.h

CHAIN_LIBS = rdn/chain/librdnchain.a $(RNIC_LIBS)

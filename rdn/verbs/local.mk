# SPDX-License-Identifier: BSD-3-Clause
# rdn/verbs: the rnic provider over libibverbs (verbs.h), built when
# configure finds rdma-core's libibverbs.
if HAVE_VERBS
noinst_LIBRARIES += rdn/verbs/librdnverbs.a
rdn_verbs_librdnverbs_a_SOURCES = rdn/verbs/verbs.c
noinst_HEADERS += rdn/verbs/verbs.h
RNIC_HW_LIBS += rdn/verbs/librdnverbs.a
RNIC_HW_SYSLIBS += $(VERBS_LIBS)
endif

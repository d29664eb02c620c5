# SPDX-License-Identifier: BSD-3-Clause
# Tests. Each subsystem keeps its test rules in t/<subsystem>.mk.
include t/storage.mk
include t/server.mk
include t/softnic.mk
include t/chain.mk
include t/offload.mk
include t/auth.mk
include t/bench.mk
include t/install.mk
include t/verbs.mk

# The layout's include rules (scripts/check-layout, docs/design.md).
TESTS += scripts/check-layout
dist_check_SCRIPTS += scripts/check-layout

# sparse over every C file (scripts/check-sparse): a big-endian field used
# without its byte swap (proto/byteorder.h) fails the checks. The flags are
# the build's own; a target with its own -D flags adds its _CPPFLAGS here.
TESTS += scripts/check-sparse
dist_check_SCRIPTS += scripts/check-sparse
check_DATA += t/sparse.flags
CLEANFILES += t/sparse.flags
t/sparse.flags: Makefile
	$(AM_V_GEN)printf '%s\n' $(DEFS) -I$(abs_top_builddir) \
	    -I$(abs_top_srcdir) $(CPPFLAGS) $(rdn_softnic_libsoftnic_a_CPPFLAGS) \
	    $(bench_rdn_bench_CPPFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS) \
	    $(LIBMEMCACHED_CFLAGS) >$@

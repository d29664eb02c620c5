# SPDX-License-Identifier: BSD-3-Clause
# Tests of server (included by t/local.mk).
# Unit tests of the server's item layer, and the protocol tests, which
# start memcached/memcached on free ports and drive it over TCP/UDP/unix.
check_PROGRAMS += t/test_items t/test_libmemcached t/test_slab_automove
SERVER_PY_TESTS = t/proto_text.py t/proto_meta.py t/proto_stats.py \
	t/proto_memory.py t/proto_server.py t/proto_stress.py t/conformance.py \
	t/proto_bin.py t/proto_admin.py t/proto_watch.py t/proto_tls.py
TESTS += t/test_items t/test_slab_automove $(SERVER_PY_TESTS)
dist_check_SCRIPTS += $(SERVER_PY_TESTS)
EXTRA_DIST += t/mctest.py t/pyclients.py

t_test_items_SOURCES = t/test_items.c $(TESTUTIL)
t_test_items_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
t_test_items_LDADD = $(MCSERVER_LIBS) $(CHECK_LIBS)

# The automove decision fed with made-up samples (memcached/slab_automove.h).
t_test_slab_automove_SOURCES = t/test_slab_automove.c $(TESTUTIL)
t_test_slab_automove_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
t_test_slab_automove_LDADD = $(MCSERVER_LIBS) $(CHECK_LIBS)

# Driven by t/conformance.py against a running server (not a test itself).
t_test_libmemcached_SOURCES = t/test_libmemcached.c
t_test_libmemcached_CFLAGS = $(AM_CFLAGS) $(LIBMEMCACHED_CFLAGS)
t_test_libmemcached_LDADD = $(LIBMEMCACHED_LIBS)

# A server killed (or stopped with --rdn-keep-on-exit) comes back with its
# items on the same ports: memcached --rdn-port on a private rdn-nicd
# (t/offload_env.py), memcached/persist.h.
TESTS += t/offload_restart.py
dist_check_SCRIPTS += t/offload_restart.py

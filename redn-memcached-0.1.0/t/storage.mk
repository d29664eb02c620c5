# SPDX-License-Identifier: BSD-3-Clause
# Tests of storage (included by t/local.mk): the key hash, the arena and
# slab allocator, the cuckoo index.
STORAGE_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
STORAGE_LIBS = memcached/libmcstore.a proto/libproto.a $(CHECK_LIBS)

check_PROGRAMS += t/test_murmur3 t/test_slabs t/test_assoc t/keyhash_dump
TESTS += t/test_murmur3 t/test_slabs t/test_assoc t/test_keyhash_ref.py
dist_check_SCRIPTS += t/test_keyhash_ref.py

t_test_murmur3_SOURCES = t/test_murmur3.c $(TESTUTIL)
t_test_murmur3_CFLAGS = $(STORAGE_CFLAGS)
t_test_murmur3_LDADD = proto/libproto.a $(CHECK_LIBS)

t_test_slabs_SOURCES = t/test_slabs.c $(TESTUTIL)
t_test_slabs_CFLAGS = $(STORAGE_CFLAGS)
t_test_slabs_LDADD = $(STORAGE_LIBS)

t_test_assoc_SOURCES = t/test_assoc.c $(TESTUTIL)
t_test_assoc_CFLAGS = $(STORAGE_CFLAGS)
t_test_assoc_LDADD = $(STORAGE_LIBS)

t_keyhash_dump_SOURCES = t/keyhash_dump.c
t_keyhash_dump_LDADD = proto/libproto.a

# Restart in-process: a forked "previous server" leaves its memory, the
# test adopts it (memcached/persist.h).
check_PROGRAMS += t/test_persist
TESTS += t/test_persist
t_test_persist_SOURCES = t/test_persist.c $(TESTUTIL)
t_test_persist_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBEVENT_CFLAGS)
t_test_persist_LDADD = $(MCSERVER_LIBS) $(CHECK_LIBS)

# SPDX-License-Identifier: BSD-3-Clause
# Build rules for memcached/ (included by the top-level Makefile.am).

# The storage layer: arena, slab allocator, cuckoo index, stats sink.
noinst_LIBRARIES += memcached/libmcstore.a
memcached_libmcstore_a_SOURCES = memcached/arena.c memcached/slabs.c \
	memcached/assoc.c memcached/assoc_grow.c memcached/stat_sink.c
noinst_HEADERS += memcached/arena.h memcached/slabs.h memcached/assoc.h \
	memcached/assoc_int.h memcached/stat_sink.h

# ---- server ----

# The server proper: everything but main() in a library, so unit tests can
# link the parts they exercise.
noinst_LIBRARIES += memcached/libmcserver.a
memcached_libmcserver_a_SOURCES = memcached/settings.c memcached/items.c \
	memcached/crawler.c memcached/stats.c memcached/stats_prefix.c \
	memcached/stats_cmd.c memcached/conn.c memcached/udp.c \
	memcached/thread.c memcached/listen.c memcached/proto_parse.c \
	memcached/proto_text.c memcached/proto_meta.c memcached/proto_bin.c \
	memcached/proto_admin.c memcached/slab_mover.c \
	memcached/slab_automove.c memcached/watch.c \
	memcached/compat_opts.c memcached/auth.c memcached/auth_sasl.c \
	memcached/tls.c
memcached_libmcserver_a_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS) $(OPENSSL_CFLAGS)
noinst_HEADERS += memcached/settings.h memcached/items.h \
	memcached/items_int.h memcached/crawler.h memcached/stats.h \
	memcached/stats_prefix.h memcached/stats_cmd.h memcached/conn.h \
	memcached/udp.h memcached/thread.h memcached/listen.h \
	memcached/proto_parse.h memcached/proto_text.h memcached/proto_meta.h \
	memcached/proto_bin.h memcached/proto_bin_wire.h \
	memcached/proto_admin.h memcached/slab_mover.h \
	memcached/slab_automove.h memcached/watch.h \
	memcached/compat_opts.h memcached/auth.h memcached/auth_sasl.h \
	memcached/tls.h

MCSERVER_LIBS = memcached/libmcserver.a memcached/libmcstore.a \
	proto/libproto.a $(LIBEVENT_LIBS) $(SASL_LIBS) $(OPENSSL_LIBS)

# Built as memcached/memcached, installed as redn-memcached so that it can
# sit beside Debian's memcached package (README, "Install").
noinst_PROGRAMS += memcached/memcached
memcached_memcached_SOURCES = memcached/main.c
memcached_memcached_CFLAGS = $(AM_CFLAGS) $(LIBEVENT_CFLAGS)
memcached_memcached_LDADD = $(MCSERVER_LIBS)

# The offloaded GET's glue (--rdn-port, rdn/offload/offload.h).
memcached_libmcserver_a_SOURCES += memcached/rdn_glue.c
noinst_HEADERS += memcached/rdn_glue.h
# The benchmark's RDMA baselines (--rdn-baselines, rdn/baseline/baseline_srv.h).
memcached_libmcserver_a_SOURCES += memcached/bl_glue.c
noinst_HEADERS += memcached/bl_glue.h
MCSERVER_LIBS += rdn/baseline/librdnbaseline.a $(OFFLOAD_LIBS)

# Persistence across restarts (--rdn-port): the superblock and adoption.
memcached_libmcserver_a_SOURCES += memcached/persist.c \
	memcached/persist_adopt.c
noinst_HEADERS += memcached/persist.h memcached/persist_int.h

install-exec-local: install-redn-memcached
install-redn-memcached: memcached/memcached
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) memcached/memcached '$(DESTDIR)$(bindir)/redn-memcached'
uninstall-local: uninstall-redn-memcached
uninstall-redn-memcached:
	rm -f '$(DESTDIR)$(bindir)/redn-memcached'
.PHONY: install-redn-memcached uninstall-redn-memcached

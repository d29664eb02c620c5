# Build rules for memcached/ (included by the top-level Makefile.am).

# The storage layer: arena, slab allocator, cuckoo index, stats sink.
noinst_LIBRARIES += memcached/libmcstore.a
memcached_libmcstore_a_SOURCES = memcached/arena.c memcached/slabs.c \
	memcached/assoc.c memcached/stat_sink.c
noinst_HEADERS += memcached/arena.h memcached/slabs.h memcached/assoc.h \
	memcached/stat_sink.h

# ---- server ----

# Build rules for memcached/ (included by the top-level Makefile.am).

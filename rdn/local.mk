# Build rules for rdn/ (included by the top-level Makefile.am).

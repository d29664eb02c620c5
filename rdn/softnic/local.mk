# Build rules for rdn/softnic/ (included by the top-level Makefile.am).

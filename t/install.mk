# SPDX-License-Identifier: BSD-3-Clause
# `make install` into a scratch DESTDIR: every file in its place, librdn
# usable through pkg-config by a program built against the installed tree
# only (t/install_client.c), an offloaded GET through it.
TESTS += t/install_tree.py
dist_check_SCRIPTS += t/install_tree.py
EXTRA_DIST += t/install_client.c

# The installation directories, for t/install_tree.py.
install-dirs:
	@echo 'bindir=$(bindir)'; echo 'sbindir=$(sbindir)'; \
	echo 'libdir=$(libdir)'; echo 'includedir=$(includedir)'; \
	echo 'pkgconfigdir=$(pkgconfigdir)'; echo 'man1dir=$(man1dir)'; \
	echo 'man3dir=$(man3dir)'; echo 'man8dir=$(man8dir)'; \
	echo 'systemdsystemunitdir=$(systemdsystemunitdir)'; \
	echo 'defaultdir=$(defaultdir)'; echo 'sysusersdir=$(sysusersdir)'
.PHONY: install-dirs

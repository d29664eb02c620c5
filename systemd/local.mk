# SPDX-License-Identifier: BSD-3-Clause
# systemd/: the units (rdn-nicd.service, redn-memcached.service after it),
# their options in $(sysconfdir)/default, and the system user redn
# (sysusers.d; Debian's postinst creates it with adduser).
systemdsystemunit_DATA = systemd/rdn-nicd.service \
	systemd/redn-memcached.service
defaultdir = $(sysconfdir)/default
dist_default_DATA = systemd/default/rdn-nicd systemd/default/redn-memcached
dist_sysusers_DATA = systemd/sysusers.d/redn-memcached.conf
EXTRA_DIST += systemd/rdn-nicd.service.in systemd/redn-memcached.service.in
CLEANFILES += $(systemdsystemunit_DATA)

# The installation directories are make variables (GNU coding standards),
# so the units are made here rather than by configure.
systemd/%.service: systemd/%.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && sed -e 's|@bindir[@]|$(bindir)|g' \
		-e 's|@sbindir[@]|$(sbindir)|g' \
		-e 's|@sysconfdir[@]|$(sysconfdir)|g' $< >$@.tmp && mv $@.tmp $@

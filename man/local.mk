# SPDX-License-Identifier: BSD-3-Clause
# man/: the manual pages, and librdn(3) under each of its functions' names.
dist_man_MANS = man/redn-memcached.1 man/rdn-cli.1 man/rdn-bench.1 \
	man/rdn-trace.1 man/rdn-hwcheck.1 man/rdn-pingpong.1 man/rdn-nicd.8 \
	man/librdn.3
LIBRDN_MAN_LINKS = rdn_connect rdn_connect_opts rdn_close rdn_get \
	rdn_get_value rdn_value_free rdn_mget rdn_last_source rdn_last_reason rdn_client_stats rdn_client_id \
	rdn_connect_memc rdn_connect_config rdn_memc rdn_server_count \
	rdn_server_info

install-data-hook: install-librdn-man-links
install-librdn-man-links:
	for f in $(LIBRDN_MAN_LINKS); do \
		echo '.so man3/librdn.3' >'$(DESTDIR)$(man3dir)/'$$f.3 || exit 1; \
	done
uninstall-hook: uninstall-librdn-man-links
uninstall-librdn-man-links:
	for f in $(LIBRDN_MAN_LINKS); do rm -f '$(DESTDIR)$(man3dir)/'$$f.3; done
.PHONY: install-librdn-man-links uninstall-librdn-man-links

# Every page renders without a warning and documents its program's options.
TESTS += t/man_pages.py
dist_check_SCRIPTS += t/man_pages.py

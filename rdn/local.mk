# Build rules for rdn/ (included by the top-level Makefile.am).

# librnic.a: the NIC interface (rdn/rnic.h) and its providers. softnic's
# sources are appended to it by rdn/softnic/local.mk.
noinst_LIBRARIES += rdn/librnic.a
rdn_librnic_a_SOURCES = rdn/rnic.c
rdn_librnic_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DRDN_NICD_BUILD_PATH='"$(abs_top_builddir)/rdn/softnic/rdn-nicd"' \
	-DRDN_NICD_INSTALL_PATH='"$(bindir)/rdn-nicd"'
noinst_HEADERS += rdn/rnic.h rdn/provider.h

# ---- chain ----

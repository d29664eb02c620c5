# SPDX-License-Identifier: BSD-3-Clause
# rdn/rnic: the NIC interface (rnic.h) and the provider table; providers
# implement provider.h. RNIC_LIBS is what a program that opens a NIC links:
# the interface, the providers it dispatches to, then the interface again
# for the error object (rnic_err.c) the providers report through. The
# hardware providers (rdn/verbs, rdn/mlx5) add themselves to RNIC_HW_LIBS
# and their system libraries to RNIC_HW_SYSLIBS when configure found them.
noinst_LIBRARIES += rdn/rnic/librnic.a
rdn_rnic_librnic_a_SOURCES = rdn/rnic/rnic.c rdn/rnic/rnic_err.c
noinst_HEADERS += rdn/rnic/rnic.h rdn/rnic/provider.h
RNIC_HW_LIBS =
RNIC_HW_SYSLIBS =

RNIC_LIBS = rdn/rnic/librnic.a rdn/softnic/libsoftnic.a $(RNIC_HW_LIBS) \
	rdn/rnic/librnic.a $(RNIC_HW_SYSLIBS)

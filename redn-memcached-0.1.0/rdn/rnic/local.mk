# SPDX-License-Identifier: BSD-3-Clause
# rdn/rnic: the NIC interface (rnic.h) and the provider table; providers
# implement provider.h. RNIC_LIBS is what a program that opens a NIC links:
# the interface, the providers it dispatches to, then the interface again
# for the error object (rnic_err.c) the providers report through.
noinst_LIBRARIES += rdn/rnic/librnic.a
rdn_rnic_librnic_a_SOURCES = rdn/rnic/rnic.c rdn/rnic/rnic_err.c
noinst_HEADERS += rdn/rnic/rnic.h rdn/rnic/provider.h

RNIC_LIBS = rdn/rnic/librnic.a rdn/softnic/libsoftnic.a rdn/rnic/librnic.a

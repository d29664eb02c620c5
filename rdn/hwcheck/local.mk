# SPDX-License-Identifier: BSD-3-Clause
# rdn/hwcheck: rdn-hwcheck, the feature probe for a NIC (any rnic device;
# meant for mlx5:<dev>, tested on softnic and, in the VM, on verbs:rxe0).
# Its last probe runs the offloaded GET: the server's pipeline (rdn/offload)
# answering librdn's NIC client (nic_client.o only: no libmemcached).
bin_PROGRAMS += rdn/hwcheck/rdn-hwcheck
rdn_hwcheck_rdn_hwcheck_SOURCES = rdn/hwcheck/rdn-hwcheck.c
rdn_hwcheck_rdn_hwcheck_LDADD = rdn/librdn/librdn.a $(OFFLOAD_LIBS)

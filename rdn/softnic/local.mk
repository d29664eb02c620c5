# SPDX-License-Identifier: BSD-3-Clause
# rdn/softnic: the software NIC. libsoftnic.a holds the engine and both
# providers (in-process and through rdn-nicd); softnic.h is what rdn/rnic
# sees of it. The daemon's control protocol (ctl.h, sock.h), the trace
# format (trace.h) and the timing presets (timing.h) are its interfaces for
# its tools and tests; *_int.h never leave this directory.
noinst_LIBRARIES += rdn/softnic/libsoftnic.a
rdn_softnic_libsoftnic_a_SOURCES = rdn/softnic/shm.c rdn/softnic/engine.c \
	rdn/softnic/fabric.c rdn/softnic/cq.c rdn/softnic/sq.c \
	rdn/softnic/resp.c rdn/softnic/mr.c rdn/softnic/obj.c \
	rdn/softnic/ctl.c rdn/softnic/timing.c rdn/softnic/trace.c \
	rdn/softnic/client.c rdn/softnic/inproc.c rdn/softnic/sock.c \
	rdn/softnic/daemon_client.c rdn/softnic/roce.c rdn/softnic/roce_req.c \
	rdn/softnic/roce_resp.c rdn/softnic/roce_port.c rdn/softnic/roce_pkt.c
# Where the providers find rdn-nicd when they start one on demand: the
# build tree's for programs run from it, else the installed one.
rdn_softnic_libsoftnic_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DRDN_BUILD_TOP='"$(abs_top_builddir)"' \
	-DRDN_NICD_BUILD_PATH='"$(abs_top_builddir)/rdn/softnic/rdn-nicd"' \
	-DRDN_NICD_INSTALL_PATH='"$(sbindir)/rdn-nicd"'
noinst_HEADERS += rdn/softnic/softnic.h rdn/softnic/shm_int.h \
	rdn/softnic/engine_int.h rdn/softnic/fabric_int.h \
	rdn/softnic/obj_int.h rdn/softnic/timing.h rdn/softnic/trace.h \
	rdn/softnic/ctl.h rdn/softnic/client.h rdn/softnic/sock.h \
	rdn/softnic/roce_int.h rdn/softnic/roce_rc_int.h rdn/softnic/roce_pkt.h \
	rdn/softnic/oob.h

# rdn-trace: prints a chain's timeline from a WQE trace.
bin_PROGRAMS += rdn/softnic/rdn-trace
rdn_softnic_rdn_trace_SOURCES = rdn/softnic/rdn-trace.c
rdn_softnic_rdn_trace_LDADD = $(RNIC_LIBS)

# rdn-nicd: the softnic daemon (a system daemon: sbin, rdn-nicd(8)).
sbin_PROGRAMS += rdn/softnic/rdn-nicd
rdn_softnic_rdn_nicd_SOURCES = rdn/softnic/nicd.c
rdn_softnic_rdn_nicd_LDADD = $(RNIC_LIBS)

# rdn-pingpong: ibv_rc_pingpong's exchange and traffic on softnic (interop
# with rdma-core's tools on a real RDMA stack).
bin_PROGRAMS += rdn/softnic/rdn-pingpong
rdn_softnic_rdn_pingpong_SOURCES = rdn/softnic/rdn-pingpong.c rdn/softnic/oob.c
rdn_softnic_rdn_pingpong_LDADD = $(RNIC_LIBS)

# rdn-perftest: perftest's exchange and traffic (ib_send_lat, ib_write_lat,
# ib_read_lat, ib_atomic_lat) on an rnic QP, client or server.
bin_PROGRAMS += rdn/softnic/rdn-perftest
rdn_softnic_rdn_perftest_SOURCES = rdn/softnic/rdn-perftest.c rdn/softnic/oob.c
rdn_softnic_rdn_perftest_LDADD = $(RNIC_LIBS)

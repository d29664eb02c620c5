# Build rules for rdn/softnic/ (included by the top-level Makefile.am).

# The engine and both providers live in rdn/librnic.a.
rdn_librnic_a_SOURCES += rdn/softnic/shm.c rdn/softnic/engine.c \
	rdn/softnic/fabric.c rdn/softnic/cq.c rdn/softnic/sq.c \
	rdn/softnic/resp.c rdn/softnic/mr.c rdn/softnic/obj.c \
	rdn/softnic/ctl.c rdn/softnic/timing.c rdn/softnic/trace.c \
	rdn/softnic/client.c rdn/softnic/inproc.c rdn/softnic/sock.c \
	rdn/softnic/daemon_client.c
noinst_HEADERS += rdn/softnic/shm.h rdn/softnic/engine.h \
	rdn/softnic/fabric.h rdn/softnic/timing.h rdn/softnic/trace.h \
	rdn/softnic/ctl.h rdn/softnic/obj.h rdn/softnic/client.h \
	rdn/softnic/provider.h rdn/softnic/sock.h

# rdn-trace: prints a chain's timeline from a WQE trace.
bin_PROGRAMS += rdn/softnic/rdn-trace
rdn_softnic_rdn_trace_SOURCES = rdn/softnic/rdn-trace.c
rdn_softnic_rdn_trace_LDADD = rdn/librnic.a

# rdn-nicd: the softnic daemon.
bin_PROGRAMS += rdn/softnic/rdn-nicd
rdn_softnic_rdn_nicd_SOURCES = rdn/softnic/nicd.c
rdn_softnic_rdn_nicd_LDADD = rdn/librnic.a

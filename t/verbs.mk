# SPDX-License-Identifier: BSD-3-Clause
# Tests of the provider-neutral posting path and the hardware providers
# (included by t/local.mk).

# rnic_post_send, the chain library and librdn's NIC half on it: here on
# softnic-inproc (the raw-ring encoder), in the VM (t/verbs-rxe.sh) on
# verbs:rxe0.
check_PROGRAMS += t/test_rnic_post
TESTS += t/test_rnic_post
t_test_rnic_post_SOURCES = t/test_rnic_post.c $(TESTUTIL)
t_test_rnic_post_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBMEMCACHED_CFLAGS)
t_test_rnic_post_LDADD = $(LIBRDN_LIBS) $(CHECK_LIBS)

# The same on Linux Soft-RoCE: one VM boot, t/vm/verbs.checks inside.
TESTS += t/verbs-rxe.sh
dist_check_SCRIPTS += t/verbs-rxe.sh t/vm/rxe-vm
EXTRA_DIST += t/vm/rxe-init t/vm/rxe-guest t/vm/verbs.checks \
	t/vm/softnic-server t/vm/librdn-check t/vm/guest-lib.sh \
	t/vm/bench-check t/vm/restart-check t/vm/perftest-check \
	t/vm/tshark-decode
clean-local: clean-verbs-rxe
clean-verbs-rxe:
	rm -rf t/verbs-rxe.results
.PHONY: clean-verbs-rxe

# The mlx5 provider's pure parts (no ConnectX needed).
check_PROGRAMS += t/test_mlx5_prm
TESTS += t/test_mlx5_prm
t_test_mlx5_prm_SOURCES = t/test_mlx5_prm.c $(TESTUTIL)
t_test_mlx5_prm_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
t_test_mlx5_prm_LDADD = rdn/mlx5/librdnmlx5prm.a $(RNIC_LIBS) $(CHECK_LIBS)

# rdn-hwcheck's probes on softnic (all pass) and on rxe (t/vm/verbs.checks).
TESTS += t/hwcheck.sh
dist_check_SCRIPTS += t/hwcheck.sh

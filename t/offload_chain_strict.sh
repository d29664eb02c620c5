#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/offload_chain_strict.sh - t/test_offload_chain again on a softnic that
# prefetches like a NIC (strict mode, docs/softnic.md): every unmanaged
# queue runs a snapshot of the WQEBBs ahead of its consumer, so a chain
# that rewrites a WQE after its queue may have fetched it fails here.
# Prefetch windows of 1, 8 and 64 WQEBBs.
set -u
bin=${top_builddir:-.}/t/test_offload_chain
rc=0
for window in 1 8 64; do
    echo "strict window $window:"
    RDN_SOFTNIC_STRICT=$window "$bin" || rc=1
done
exit $rc

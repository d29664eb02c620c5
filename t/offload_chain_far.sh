#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# t/offload_chain_far.sh - t/test_offload_chain again on a timed softnic
# (the cx5 model) with the client 0.2 ms away (net_ns). An answer's send
# completion on the server comes with the client's ACK, a network's
# distance after the client already has the answer: what the server counts
# must catch up without anything else going wrong. On an untimed NIC the
# window is a moment long and only a descheduled engine thread shows it.
set -u
bin=${top_builddir:-.}/t/test_offload_chain
RDN_SOFTNIC_MODEL=cx5 RDN_SOFTNIC_TIMING=net_ns=200000 exec "$bin"

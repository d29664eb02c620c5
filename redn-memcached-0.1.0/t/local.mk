# SPDX-License-Identifier: BSD-3-Clause
# Tests. Each subsystem keeps its test rules in t/<subsystem>.mk.
include t/storage.mk
include t/server.mk
include t/softnic.mk
include t/chain.mk
include t/offload.mk
include t/bench.mk
include t/install.mk

# The layout's include rules (scripts/check-layout, docs/design.md).
TESTS += scripts/check-layout
dist_check_SCRIPTS += scripts/check-layout

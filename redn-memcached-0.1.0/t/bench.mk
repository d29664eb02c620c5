# SPDX-License-Identifier: BSD-3-Clause
# Smoke test of the bench suite (included by t/local.mk): scripts/bench
# with tiny counts, every system, both timing presets, and a 3-second
# `rdn-bench crash` (kill -9 at 1 s). Asserts answers, failures while a
# server is dead, and output files, never timings.
BENCH_PY_TESTS = t/bench_smoke.py
TESTS += $(BENCH_PY_TESTS)
dist_check_SCRIPTS += $(BENCH_PY_TESTS)

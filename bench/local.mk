# Build rules for bench/ (included by the top-level Makefile.am).

# rdn-bench: one program, a mode per subcommand (bench/bench_<mode>.c).
noinst_PROGRAMS += bench/rdn-bench
bench_rdn_bench_SOURCES = bench/rdn-bench.c bench/bench_stats.c \
	bench/bench_micro.c bench/bench_micro_chain.c
bench_rdn_bench_LDADD = rdn/programs/librdnprog.a $(RDN_OFFLOAD_LIBS) -lm
noinst_HEADERS += bench/bench.h bench/bench_micro.h

# `rdn-bench get` (the offload's chain against one READ): OFFLOAD's part.
bench_rdn_bench_SOURCES += bench/bench_get.c
noinst_HEADERS += bench/bench_get.h

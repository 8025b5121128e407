# Launch latency and footprint of `mur run` (issue 6).
#
# make bench-launch   start → first provider request, per-turn overhead
#                     and idle RSS over RUNS runs with a warm compile
#                     cache, then again with a spend ceiling (tokenizer);
#                     figures go to bench/RESULTS.md by hand

RUNS ?= 20

.PHONY: bench-launch
bench-launch:
	bash bench/launch.sh -runs $(RUNS)
	bash bench/launch.sh -runs $(RUNS) -ceiling

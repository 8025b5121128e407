# Launch latency and footprint of `mur run` (issues 6, 19).
#
# make bench-launch   start → first provider request, per-turn overhead
#                     and idle RSS over RUNS runs with a warm compile
#                     cache, with and without a spend ceiling (tokenizer),
#                     interleaved with bench/floor (a static Go program
#                     making the same first POST) and reported as ratios
#                     to it; figures go to bench/RESULTS.md by hand
# make bench-burst    BURST launches as fast as the machine allows (CPU-s
#                     per launch from wait4 rusage, p50/p99 latency, peak
#                     memory), then BURST capsules waiting on the provider
#                     at once (PSS per capsule); not in CI (minutes)

RUNS ?= 20
BURST ?= 100

.PHONY: bench-launch bench-burst
bench-launch:
	bash bench/launch.sh -runs $(RUNS) -ceiling

bench-burst:
	bash bench/launch.sh -runs 3 -burst $(BURST) -fleet $(BURST)

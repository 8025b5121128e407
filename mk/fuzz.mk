# Fuzzing: every fuzz target in the tree gets time in CI (issue #12 item 19).
#
# make fuzz   scripts/fuzz.sh: each target FUZZ_SHORT (3 s), the parsers of
#             untrusted input FUZZ_LONG (12 s): the .mur.zip unpacker, the
#             manifest decoders, the provider stream and answer parsers, the
#             WASI stream reads, the network allow-list parser, the door's
#             request bodies, the DNS answers of the egress resolver and the
#             read-only checks. Targets are found in the tree, so a new one
#             is fuzzed without an edit here. Prints each target's wall time
#             and the total; budget 10 min (measured figures: bench/RESULTS.md).
#             FUZZ_MATCH='internal/wasi' (grep -E over "dir target") runs a
#             subset; FUZZ_SHORT/FUZZ_LONG lengthen a local run.

FUZZ_SHORT ?= 3s
FUZZ_LONG  ?= 12s
FUZZ_MATCH ?= .

.PHONY: fuzz

fuzz:
	GO=$(GO) FUZZ_SHORT=$(FUZZ_SHORT) FUZZ_LONG=$(FUZZ_LONG) FUZZ_MATCH='$(FUZZ_MATCH)' bash scripts/fuzz.sh

CI_TARGETS += fuzz

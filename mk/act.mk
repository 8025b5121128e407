# ACT tools (issue 17): the act:component reader, the CBOR conversion and
# the host (internal/act), mur act and the capsule glue.
#
# make test-act    internal/act's tests, then the capsule's mur run round
#                  trip (needs build/guests/driver-openai.wasm: make
#                  drivers) and mur act's testscripts; ~1 min cached
# make bench-act   call-tool through the host and through the bare
#                  binding (p50-ns), and the section read of a 10 MB
#                  component; figures go to bench/RESULTS.md by hand

.PHONY: test-act bench-act

test-act:
	$(GO) test ./internal/act/
	MUR_REQUIRE_GUESTS=1 $(GO) test ./internal/capsule/ -run 'TestACT'

bench-act:
	$(GO) test ./internal/act/ -run '^$$' -bench 'CallTool|ReadSection10MB' -benchtime 20000x -count 4

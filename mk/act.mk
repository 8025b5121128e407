# ACT tools (issue 17): the act:component reader, the CBOR conversion and
# the host (internal/act), mur act and the capsule glue.
#
# make test-act    internal/act's tests (with examples/act-kv-go, the SDK's
#                  example, built by make guests) and mur act's
#                  (internal/cli), then the capsule's mur run round trips
#                  (the kv.wat fixture and the Go example) with the real
#                  OpenAI driver; about 1 min on a loaded 2-core machine
#                  once the guests and drivers are built (budget 3 min)
# make bench-act   call-tool through the host and through the bare
#                  binding (p50-ns), and the section read of a 10 MB
#                  component; figures go to bench/RESULTS.md by hand
# test-act is test-act-host (internal/act, mur act) then test-act-capsule
# (the round trips). CI runs the first; test-race runs the round trips,
# with the rest of internal/capsule, under the race detector.

.PHONY: test-act test-act-host test-act-capsule bench-act

test-act: test-act-host test-act-capsule

test-act-host: guests drivers
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 ./internal/act/
	$(GO) test -count=1 -run 'TestAct' ./internal/cli/

test-act-capsule: guests drivers
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -run 'TestACT' ./internal/capsule/

bench-act:
	$(GO) test ./internal/act/ -run '^$$' -bench 'CallTool|ReadSection10MB' -benchtime 20000x -count 4

CI_TARGETS += test-act-host

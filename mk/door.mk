# The A2A door (internal/door) and the lifecycle queue (internal/lifecycle).
#
# make test-door-js   the official A2A JS client (@a2a-js/sdk, pinned in
#                     tools/a2a-js, installed by scripts/setup.d/50-a2a-js.sh)
#                     sends, streams, gets, lists with paging, cancels,
#                     subscribes, completes an input-required round trip and
#                     is refused (401 / scope / peer) on loopback doors
#                     (the -race run is test-race's, FuzzRPCBody is make
#                     fuzz's).
# make bench-door     SendStreamingMessage → first SSE event (p50/p90) and
#                     1,000 sequential tasks (per-task p50, heap growth)
#                     (bench/RESULTS.md)

.PHONY: test-door-js bench-door

test-door-js:
	bash scripts/setup.d/50-a2a-js.sh
	MUR_TEST_A2A_JS=1 $(GO) test -count=1 -run TestJSClient ./internal/door/

bench-door:
	$(GO) test -run '^$$' -bench FirstEvent -benchtime 2000x -count 3 ./internal/door/
	$(GO) test -run '^$$' -bench SequentialTasks -benchtime 1000x -count 3 ./internal/door/

CI_TARGETS += test-door-js

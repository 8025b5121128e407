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
# make bench-door-run the same through a real `mur run` (bench/door.sh):
#                     a fleet of 8 idle capsules' PSS with their doors open,
#                     1,000 sequential tasks through one queue + sleep
#                     capsule (per-task p50, resident growth after task 100);
#                     not in CI (a measurement; about 2 min here)

.PHONY: test-door-js bench-door bench-door-run

test-door-js:
	bash scripts/setup.d/50-a2a-js.sh
	MUR_TEST_A2A_JS=1 $(GO) test -count=1 -run TestJSClient ./internal/door/

bench-door:
	$(GO) test -run '^$$' -bench FirstEvent -benchtime 2000x -count 3 ./internal/door/
	$(GO) test -run '^$$' -bench SequentialTasks -benchtime 1000x -count 3 ./internal/door/

bench-door-run:
	bash bench/door.sh -tasks 1000 -fleet 8

CI_TARGETS += test-door-js

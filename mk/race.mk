# The race detector over every package that starts goroutines (issue #12
# item 18).
#
# make test-race   scripts/check-race-pkgs.sh first fails if a package that
#                  starts a goroutine is in none of the lists below, then
#                  go test -race over RACE_PKGS, privileged tests included.
#                  internal/capsule runs on its own with every guest,
#                  driver and hook built and required (MUR_REQUIRE_GUESTS):
#                  its end-to-end scenarios (test-e2e, test-act-capsule,
#                  test-hooks-capsule) run in CI here only, once, under
#                  the race detector.
#                  Budget: 20 min (the go test -timeout); measured
#                  12.5 min at load average ~25 on 2 cores (bench/RESULTS.md).
#
# RACE_PKGS      the packages whose code or tests start goroutines, and the
#                ones whose tests run HTTP servers (gateway, infer,
#                registrytest)
# RACE_ELSEWHERE run under -race by another CI target: internal/wasm by
#                test-wasm-debug (-race with -tags debug)
# RACE_EXEMPT    tests/escape and tests/kill drive a separately built mur
#                from a test harness (a race there is in the harness, not in
#                mur, and their kernels' cost is per run); bench/launchbench
#                and bench/treepss have no tests; cmd/mur's goroutine is a testscript's OTLP
#                receiver and its scripts run mur as a child process (the
#                packages they reach are above); tools/harness-fake is a
#                test double run as a process by internal/process's tests

RACE_PKGS := ./internal/agent/... ./internal/capsule/... ./internal/cli/... ./internal/conversation/... ./internal/door/... ./internal/mcp/... \
	./internal/hooks/... ./internal/process/... \
	./internal/drivertest/... ./internal/event/... ./internal/gateway/... \
	./internal/infer/... ./internal/lifecycle/... ./internal/otel/... ./internal/providertest/... \
	./internal/registrytest/... ./internal/sandbox/... ./internal/session/... \
	./internal/shell/... ./internal/spend/... ./internal/store/... \
	./internal/tokens/... ./internal/trace/... ./internal/wasi/... ./internal/progress/...
RACE_ELSEWHERE := ./internal/wasm/...
RACE_EXEMPT := ./tests/... ./bench/launchbench ./bench/treepss ./cmd/mur ./tools/harness-fake

.PHONY: test-race test-race-capsule test-race-capsule-ah test-race-capsule-iz test-race-rest

# internal/capsule is the long pole (744 s alone in a clean-clone run): its
# tests set HOME and cannot run in parallel within one process, so it runs
# as two processes split by the test's initial (every Test name matches
# exactly one of the two patterns), beside the rest; each part's output is
# kept together.
test-race: guests drivers hooks
	bash scripts/check-race-pkgs.sh $(RACE_PKGS) $(RACE_ELSEWHERE) $(RACE_EXEMPT)
	$(MAKE) --no-print-directory -j3 --output-sync=target test-race-capsule-ah test-race-capsule-iz test-race-rest

RACE_CAPSULE = MUR_TEST_PRIVILEGED=1 MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -race -count=1 -timeout 20m

test-race-capsule: test-race-capsule-ah test-race-capsule-iz

test-race-capsule-ah:
	$(RACE_CAPSULE) -run '^Test[A-H]' ./internal/capsule/...

test-race-capsule-iz:
	$(RACE_CAPSULE) -run '^Test[^A-H]' ./internal/capsule/...

test-race-rest:
	MUR_TEST_PRIVILEGED=1 $(GO) test -race -count=1 -timeout 20m $(filter-out ./internal/capsule/...,$(RACE_PKGS))

CI_TARGETS += test-race

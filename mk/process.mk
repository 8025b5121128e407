# transport: process (docs/process.md).
#
# make test-process   the process transport's tests over the real process
#                     driver skeleton (built by make guests) and
#                     tools/harness-fake, with the guest required rather
#                     than skipped; about 20 s on an idle machine, 40 s
#                     under -race at load (run_process_* scripts run in
#                     test-run-scripts)
.PHONY: test-process

test-process: guests
	MUR_GUEST_OUT=$(GUEST_OUT) MUR_REQUIRE_GUESTS=1 $(GO) test -count=1 -timeout 10m ./internal/process/
	MUR_GUEST_OUT=$(GUEST_OUT) MUR_REQUIRE_GUESTS=1 $(GO) test -count=1 -timeout 10m -run 'Process' ./internal/component/

CI_TARGETS += test-process

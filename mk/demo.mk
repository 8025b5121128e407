# The README's first command: the hello capsule, offline, end to end.
.PHONY: demo
demo:
	bash scripts/demo.sh

# CI runs it too, so the README's first command stays true.
CI_TARGETS += demo

# mur run end to end with the real driver and tool components built from
# source, against a scripted provider on loopback.
.PHONY: test-e2e
test-e2e: guests drivers
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -run 'TestRun' ./internal/capsule/

# Not in CI_TARGETS: test-race runs these scenarios, with the rest of
# internal/capsule, under the race detector and with every guest built.

# mur replay (docs/replay.md): the comparison and recording reader's unit
# tests, then the replay testscripts through the real mur binary — the
# demo capsule recorded under trace.capture: content against the provider
# double and replayed byte for byte with no provider, a tool rebuilt with
# another answer caught at its call, and the refusals.
#
# make test-replay   measured 25 s with a warm compile cache at load ~20
#                    (the demo script alone 12-16 s); budget 3 min.

.PHONY: test-replay

test-replay: guests drivers hooks
	$(GO) test -count=1 ./internal/replay/
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 5m -run 'TestScripts/replay_' ./cmd/mur/

# In CI these scripts run in test-guest-scripts (mk/runscripts.mk).

# murmur/hook-eval and mur eval (docs/eval.md).
#
# make hook-eval   build hooks/hook-eval into $(GUEST_OUT)/hook-eval.wasm
#                  (and beside its murmur.yaml, so `mur build hooks/hook-eval`
#                  packs it), as make drivers builds the drivers
# make test-eval   internal/eval's tests, then the eval testscripts through
#                  the real mur binary with the hook, driver and file-go
#                  components (measured 40 s warm at load ~20; budget 4 min)

.PHONY: hook-eval test-eval

hook-eval:
	GOFLAGS=-ldflags=-s MUR_GUEST_OUT=$(GUEST_OUT) bash tools/guest/build.sh hooks/hook-eval

test-eval: guests drivers hooks hook-eval
	$(GO) test -count=1 ./internal/eval/
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 5m -run 'TestScripts/eval_' ./cmd/mur/

# In CI these scripts run in test-guest-scripts (mk/runscripts.mk).

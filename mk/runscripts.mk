# mur run end to end as testscript scenarios (cmd/mur/testdata/script/run_*.txtar):
# the real mur binary, the driver-openai, file-go and reference hook
# components built from source, and a scripted provider double on loopback. Without
# MUR_GUEST_OUT the scripts skip, so the default make test stays node-free.
.PHONY: test-run-scripts
test-run-scripts: drivers guests hooks
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 10m -run 'TestScripts/run_' ./cmd/mur/


# make test-guest-scripts   CI's one run of every testscript family that
#   needs the built components (run_, eval_, replay_, mcp_, new_: what
#   test-run-scripts, test-eval, test-replay, test-mcp and test-new-scripts
#   run family by family), and internal/eval's and internal/replay's tests
#   with the reference hooks built. One go test, so the families share one
#   packing of the components and one warm compile cache, and their scripts
#   run side by side instead of five binaries each paying the setup and
#   idling on its last script.
.PHONY: test-guest-scripts
test-guest-scripts: drivers guests hooks hook-eval
	$(GO) test -count=1 ./internal/eval/ ./internal/replay/
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 25m -run 'TestScripts/(run|eval|replay|mcp|new)_' ./cmd/mur/

CI_TARGETS += test-guest-scripts

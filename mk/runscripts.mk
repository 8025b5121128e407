# mur run end to end as testscript scenarios (cmd/mur/testdata/script/run_*.txtar):
# the real mur binary, the driver-openai, file-go and reference hook
# components built from source, and a scripted provider double on loopback. Without
# MUR_GUEST_OUT the scripts skip, so the default make test stays node-free.
.PHONY: test-run-scripts
test-run-scripts: drivers guests hooks
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 10m -run 'TestScripts/run_' ./cmd/mur/

CI_TARGETS += test-run-scripts

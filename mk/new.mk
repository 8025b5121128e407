# mur new's templates end to end (cmd/mur/testdata/script/new_*.txtar):
# each component template's own test, its build.sh through mur's guest
# toolchain and mur build, and the capsule template's run against the
# provider double. Without MUR_GUEST_OUT new_components skips, so the
# default make test stays node-free. About 9 min on a loaded 2-core
# machine (four guest builds); budget 12 min.
.PHONY: test-new-scripts
test-new-scripts: drivers guests hooks
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 15m -run 'TestScripts/new_' ./cmd/mur/

# In CI these scripts run in test-guest-scripts (mk/runscripts.mk).

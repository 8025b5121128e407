# Hooks (docs/hooks.md): the dispatcher's tests and the session's hook
# scenarios through mur run, over the real hook-probe-go guest and the
# openai driver, and the hook benchmarks.
#
# make hooks         build the reference hooks hooks/*/ (murmur/hook-compact)
#                    into $(GUEST_OUT)/<name>.wasm, a copy beside each
#                    murmur.yaml for mur build
# make test-hooks    guests, drivers and hooks built, then internal/hooks and
#                    the capsule's hook and compaction scenarios (measured
#                    15 s with a warm compile cache, about 1.5 min cold, at
#                    load 20; the compaction scenarios add about 30 s):
#                    test-hooks-dispatch (internal/hooks) then
#                    test-hooks-capsule (the scenarios). CI runs the
#                    first; test-race runs the scenarios, with the rest of
#                    internal/capsule, under the race detector
# make bench-hooks   BenchmarkBlockingDispatch, BenchmarkAsync10k
#                    (figures to bench/RESULTS.md by hand)

.PHONY: hooks test-hooks test-hooks-dispatch test-hooks-capsule bench-hooks

HOOK_DIRS := $(sort $(dir $(wildcard hooks/*/murmur.yaml)))

# GOFLAGS carries -s to the guest build, as for the drivers.
hooks:
	GOFLAGS=-ldflags=-s MUR_GUEST_OUT=$(GUEST_OUT) bash tools/guest/build.sh $(HOOK_DIRS)

test-hooks: test-hooks-dispatch test-hooks-capsule

test-hooks-dispatch: guests drivers hooks
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 15m ./internal/hooks/

test-hooks-capsule: guests drivers hooks
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 20m -run 'TestHook|TestPolicyHook|TestAsyncHook|TestCompaction|TestJSHook|TestCheckStageManifest' ./internal/capsule/

bench-hooks: guests
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run '^$$' -bench BlockingDispatch -benchtime 5000x -count 3 ./internal/hooks/
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run '^$$' -bench Async10k -benchtime 1x -count 3 ./internal/hooks/

CI_TARGETS += test-hooks-dispatch

# Hooks (docs/hooks.md): the dispatcher's tests and the session's hook
# scenarios through mur run, over the real hook-probe-go guest and the
# openai driver, and the hook benchmarks.
#
# make test-hooks    guests and drivers built, then internal/hooks and the
#                    capsule's hook scenarios (measured 15 s with a warm
#                    compile cache, about 1.5 min cold, at load 20)
# make bench-hooks   BenchmarkBlockingDispatch, BenchmarkAsync10k
#                    (figures to bench/RESULTS.md by hand)

.PHONY: test-hooks bench-hooks

test-hooks: guests drivers
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 15m ./internal/hooks/
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 20m -run 'TestHook|TestPolicyHook|TestAsyncHook' ./internal/capsule/

bench-hooks: guests
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run '^$$' -bench BlockingDispatch -benchtime 5000x -count 3 ./internal/hooks/
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run '^$$' -bench Async10k -benchtime 1x -count 3 ./internal/hooks/

CI_TARGETS += test-hooks

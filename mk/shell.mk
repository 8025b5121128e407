# Shell tools, native tools and the read-only pre-dispatch checks.
#
# make test-shell-slow   the shell and read-only suites under -race,
#                        the calls through the real sandbox (privileged;
#                        skipped where the host cannot enforce scoped), and
#                        15 s of each fuzz target (argument splitter,
#                        read-only line and tool-input checks)
# make bench-shell       one shell call: bare fork/exec vs this package's
#                        path vs the same through the sandbox

.PHONY: test-shell-slow bench-shell

test-shell-slow:
	$(GO) test -race -count=1 ./internal/shell/... ./internal/shell/readonly/
	MUR_TEST_PRIVILEGED=1 $(GO) test -count=1 -run Contained ./internal/shell/
	$(GO) test -run '^$$' -fuzz FuzzSplitArgs -fuzztime 15s ./internal/shell/syntax
	$(GO) test -run '^$$' -fuzz FuzzCheckLine -fuzztime 15s ./internal/shell/readonly
	$(GO) test -run '^$$' -fuzz FuzzCheckInput -fuzztime 15s ./internal/shell/readonly

bench-shell:
	MUR_TEST_PRIVILEGED=1 $(GO) test -run '^$$' -bench . -benchtime 300x -count 4 ./internal/shell/ ./internal/shell/readonly/

CI_TARGETS += test-shell-slow

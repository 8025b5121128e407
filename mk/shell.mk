# Shell tools, native tools and the read-only pre-dispatch checks.
#
# make test-shell-slow   the calls through the real sandbox (privileged;
#                        skipped where the host cannot enforce scoped);
#                        -race is test-race's (mk/race.mk), fuzzing is
#                        make fuzz's (mk/fuzz.mk)
# make bench-shell       one shell call: bare fork/exec vs this package's
#                        path vs the same through the sandbox

.PHONY: test-shell-slow bench-shell

test-shell-slow:
	MUR_TEST_PRIVILEGED=1 $(GO) test -count=1 -run Contained ./internal/shell/

bench-shell:
	MUR_TEST_PRIVILEGED=1 $(GO) test -run '^$$' -bench . -benchtime 300x -count 4 ./internal/shell/ ./internal/shell/readonly/

CI_TARGETS += test-shell-slow

# Sandbox: the escape-conformance suite and the privileged sandbox tests.
# They start real processes in namespaces, cgroups, Landlock and seccomp,
# so they need root; `make test` skips them.
.PHONY: test-escape bench-sandbox

test-escape:
	MUR_TEST_PRIVILEGED=1 $(GO) test -count=1 -v ./tests/escape/ ./internal/sandbox/

bench-sandbox:
	MUR_TEST_PRIVILEGED=1 $(GO) test -run '^$$' -bench Sandboxed -benchtime 100x ./internal/sandbox/

CI_TARGETS += test-escape

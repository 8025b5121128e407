# Sandbox: the escape-conformance suite and the privileged sandbox tests.
# They start real processes in namespaces, cgroups, Landlock and seccomp,
# so they need root; `make test` skips them.
.PHONY: test-escape bench-sandbox fuzz-sandbox

# tests/escape runs on bin/mur-sandbox, the helper make build installs
# beside mur; internal/sandbox's own tests on the test binary re-executed
# (the fallback), and TestHelperBinary on a fresh build of the helper.
test-escape:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/mur-sandbox ./cmd/mur-sandbox
	MUR_TEST_PRIVILEGED=1 MUR_TEST_SANDBOX_HELPER=$(CURDIR)/bin/mur-sandbox $(GO) test -count=1 -v ./tests/escape/
	MUR_TEST_PRIVILEGED=1 $(GO) test -count=1 -v ./internal/sandbox/...

bench-sandbox:
	MUR_TEST_PRIVILEGED=1 $(GO) test -run '^$$' -bench Sandboxed -benchtime 100x ./internal/sandbox/

# Short fuzz runs of the sandbox's parsers of untrusted input: the egress's
# resolver reads datagrams a command sends; mountinfo and /proc/<pid>/cgroup
# are read from a host the command shares. About 1 min.
fuzz-sandbox:
	$(GO) test -run '^$$' -fuzz '^FuzzResolverAnswer$$' -fuzztime 20s ./internal/sandbox/
	$(GO) test -run '^$$' -fuzz '^FuzzParseMountinfo$$' -fuzztime 10s ./internal/sandbox/
	$(GO) test -run '^$$' -fuzz '^FuzzParseProcCgroup$$' -fuzztime 10s ./internal/sandbox/

CI_TARGETS += test-escape

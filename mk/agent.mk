# agent loop, sessions, trace, spend, tokens, provider doubles.

AGENT_PKGS := ./internal/agent/... ./internal/session/... ./internal/trace/... \
	./internal/tokens/... ./internal/spend/... ./internal/providertest/...

.PHONY: test-agent test-agent-race fuzz-agent bench-agent

test-agent:
	$(GO) test $(AGENT_PKGS)

# Loop, meters and writer are concurrent code: run them under the race
# detector in CI.
test-agent-race:
	$(GO) test -race $(AGENT_PKGS)

# Short fuzz runs of every parser in the area (go test -fuzz takes one
# target per run).
fuzz-agent:
	$(GO) test -run '^$$' -fuzz '^FuzzParseLine$$' -fuzztime 15s ./internal/trace
	$(GO) test -run '^$$' -fuzz '^FuzzParseID$$' -fuzztime 15s ./internal/session
	$(GO) test -run '^$$' -fuzz '^FuzzParseResponse$$' -fuzztime 15s ./internal/agent
	$(GO) test -run '^$$' -fuzz '^FuzzParseRetryAfter$$' -fuzztime 15s ./internal/agent
	$(GO) test -run '^$$' -fuzz '^FuzzSplitWords$$' -fuzztime 15s ./internal/agent
	$(GO) test -run '^$$' -fuzz '^FuzzStreams$$' -fuzztime 15s ./internal/providertest

bench-agent:
	$(GO) test -run '^$$' -bench 'TurnOverhead' -benchtime 50x ./internal/agent
	$(GO) test -run '^$$' -bench 'IdleSession' -benchtime 3x ./internal/agent
	$(GO) test -run '^$$' -bench 'TokenizerResident' -benchtime 1x ./internal/agent

CI_TARGETS += test-agent-race

# agent loop, sessions, trace, spend, tokens, provider doubles.

AGENT_PKGS := ./internal/agent/... ./internal/session/... ./internal/trace/... \
	./internal/tokens/... ./internal/spend/... ./internal/providertest/...

.PHONY: test-agent test-agent-race bench-agent

test-agent:
	$(GO) test $(AGENT_PKGS)

# Loop, meters and writer are concurrent code; CI runs them under the race
# detector in test-race (mk/race.mk). This is the area's quick local run.
test-agent-race:
	$(GO) test -race $(AGENT_PKGS)

bench-agent:
	$(GO) test -run '^$$' -bench 'TurnOverhead' -benchtime 50x ./internal/agent
	$(GO) test -run '^$$' -bench 'IdleSession' -benchtime 3x ./internal/agent
	$(GO) test -run '^$$' -bench 'TokenizerResident' -benchtime 1x ./internal/agent


# The MCP tool server (internal/mcp) and mur mcp (internal/cli/mcp.go).
#
# make test-mcp      the mcp_* testscripts: the Go SDK's client against the
#                    real mur mcp over stdio and --http (WASM tool, shell
#                    tool in the sandbox, bad calls, the token, the trace);
#                    ≈ 15 s warm on 2 idle cores. The unit tests and
#                    FuzzMCPEntry run in make test and make fuzz.
# make test-mcp-js   the official MCP Inspector CLI (stdio, and HTTP with
#                    the token) and the MCP conformance suite against the
#                    baseline tools/mcp-js/conformance-baseline.yml, both
#                    pinned in tools/mcp-js (scripts/setup.d/60-mcp-js.sh);
#                    ≈ 1.5 min warm on 2 idle cores, budget 5 min.
# make bench-mcp     tools/call of the echo-go WASM tool through mur mcp
#                    over stdio and through the loopback server over HTTP
#                    with the token: p50/p90 (bench/RESULTS.md).

.PHONY: test-mcp test-mcp-js bench-mcp

test-mcp: drivers guests hooks
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 10m -run 'TestScripts/mcp_' ./cmd/mur/

test-mcp-js: build drivers guests
	bash scripts/setup.d/60-mcp-js.sh
	timeout 300 bash tools/mcp-js/run.sh $(BIN) $(GUEST_OUT)

bench-mcp: drivers guests
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run '^$$' -bench 'MurMCPStdio|LoopbackHTTP' -benchtime 2000x -count 3 -timeout 20m ./internal/mcp/

CI_TARGETS += test-mcp-js
# In CI these scripts run in test-guest-scripts (mk/runscripts.mk).

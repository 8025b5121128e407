# transport: process (docs/process.md).
#
# make test-process   the process transport's tests over the real process
#                     driver skeleton (built by make guests) and
#                     tools/harness-fake, with the guest required rather
#                     than skipped; about 20 s on an idle machine, 40 s
#                     under -race at load (run_process_* scripts run in
#                     test-run-scripts)
.PHONY: test-process

test-process: guests
	MUR_GUEST_OUT=$(GUEST_OUT) MUR_REQUIRE_GUESTS=1 $(GO) test -count=1 -timeout 10m ./internal/process/
	MUR_GUEST_OUT=$(GUEST_OUT) MUR_REQUIRE_GUESTS=1 $(GO) test -count=1 -timeout 10m -run 'Process' ./internal/component/

CI_TARGETS += test-process

# make test-process-cli   a capsule on each real harness CLI (Claude Code,
#                         Codex; pinned in tools/harness-cli, installed by
#                         scripts/setup.d/70-harness-cli.sh) through mur run,
#                         murmur/driver-claude-code and murmur/driver-codex,
#                         the sandbox and the loopback tool server, with the
#                         model served by the provider double on loopback:
#                         run_process_claude_code and run_process_codex.
#                         Budget 5 min (about 40 s on an idle machine after
#                         drivers and guests are built).
.PHONY: test-process-cli

tools/harness-cli/node_modules/.package-lock.json: tools/harness-cli/package-lock.json
	cd tools/harness-cli && npm ci --no-audit --no-fund --loglevel=error

test-process-cli: drivers guests hooks tools/harness-cli/node_modules/.package-lock.json
	MUR_HARNESS_CLI=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 5m -run 'TestScripts/run_process_(claude_code|codex)$$' ./cmd/mur/

CI_TARGETS += test-process-cli

# make bench-harness-launch   what mur adds to starting a harness (the
#                             driver's calls, the environment rows, the
#                             sandbox, the loopback tool server) over
#                             exec'ing it directly, interleaved pairs
#                             (bench/harnesslaunch; goal ≤ 30 ms; root;
#                             not in CI; figures in bench/RESULTS.md)
.PHONY: bench-harness-launch

bench-harness-launch: guests
	@mkdir -p build/bench
	$(GO) build -o build/bench/harness-fake ./tools/harness-fake
	$(GO) build -o build/bench/harnesslaunch ./bench/harnesslaunch
	build/bench/harnesslaunch -driver $(GUEST_OUT)/process-driver-skeleton-go.wasm -harness build/bench/harness-fake -n $(or $(N),100)

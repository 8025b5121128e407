# internal/wasm: the wasmtime component-model binding (cgo).
#
# test-wasm-debug  the cm tests with -tags debug (a GC after every call into
#                  wasmtime, to flush out use-after-free) and the race
#                  detector; about 1.5 minutes on 2 cores, most of it the
#                  race build.
# bench-wasm       the cm benchmarks; figures go to bench/RESULTS.md.
# fuzz-wasm        a short run of each cm fuzz target.

.PHONY: test-wasm-debug bench-wasm fuzz-wasm

test-wasm-debug:
	$(GO) test -race -tags debug -count=1 ./internal/wasm/...

bench-wasm:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./internal/wasm/cm/

fuzz-wasm:
	$(GO) test -run '^$$' -fuzz '^FuzzCompile$$' -fuzztime 30s ./internal/wasm/cm/
	$(GO) test -run '^$$' -fuzz '^FuzzWat2Wasm$$' -fuzztime 30s ./internal/wasm/cm/
	$(GO) test -run '^$$' -fuzz '^FuzzRewriteStreams$$' -fuzztime 30s ./internal/wasm/cm/
	$(GO) test -run '^$$' -fuzz '^FuzzSemver$$' -fuzztime 10s ./internal/wasm/cm/

CI_TARGETS += test-wasm-debug

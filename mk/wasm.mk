# internal/wasm: the wasmtime component-model binding (cgo).
#
# test-wasm-debug  the cm tests with -tags debug (a GC after every call into
#                  wasmtime, to flush out use-after-free) and the race
#                  detector; about 1.5 minutes on 2 cores, most of it the
#                  race build.
# bench-wasm       the cm benchmarks; figures go to bench/RESULTS.md.

.PHONY: test-wasm-debug bench-wasm

test-wasm-debug:
	$(GO) test -race -tags debug -count=1 ./internal/wasm/...

bench-wasm:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./internal/wasm/cm/

CI_TARGETS += test-wasm-debug

# WASI host: unit tests and WAT fixtures through cm (the allow-list parser
# and path resolver are fuzzed by make fuzz, mk/fuzz.mk).
#
# make test-wasi    tests
# make bench-wasi   stream throughput (file read, HTTP body)

.PHONY: test-wasi bench-wasi

test-wasi:
	$(GO) test ./internal/wasi/...

bench-wasi:
	$(GO) test -run '^$$' -bench Stream -benchtime 3x ./internal/wasi

CI_TARGETS += test-wasi

# test-wasi-guests runs the Go-built guests from make guests under this
# host with files, env and stdout governed by a Policy.
.PHONY: test-wasi-guests
test-wasi-guests: guests
	MUR_GUEST_OUT=$(GUEST_OUT) bash tools/guest/build.sh internal/wasi/testdata/probe-go
	node internal/wasi/testdata/probe-js/build.mjs $(GUEST_OUT)/wasi-probe-js.wasm
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run 'Guest' -v ./internal/wasi
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run 'RewriteRealGuests' ./internal/wasm/cm

CI_TARGETS += test-wasi-guests

# bench-wasi-guests: stream throughput through toolchain-built guests (Go
# file read/write and HTTP body, JS HTTP body) and the WAT drain guest.
.PHONY: bench-wasi-guests
bench-wasi-guests: guests
	MUR_GUEST_OUT=$(GUEST_OUT) bash tools/guest/build.sh internal/wasi/testdata/probe-go
	node internal/wasi/testdata/probe-js/build.mjs $(GUEST_OUT)/wasi-probe-js.wasm
	MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -run '^$$' -bench 'Guest' -benchtime 3x ./internal/wasi

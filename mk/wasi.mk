# WASI host: unit tests, WAT fixtures through cm, and a short fuzz pass of
# the network allow-list parser.
#
# make test-wasi    tests + 20 s fuzz of FuzzParseAllowEntry
# make bench-wasi   stream throughput (file read, HTTP body)

.PHONY: test-wasi bench-wasi

test-wasi:
	$(GO) test ./internal/wasi/...
	$(GO) test -run '^$$' -fuzz FuzzParseAllowEntry -fuzztime 20s ./internal/wasi

bench-wasi:
	$(GO) test -run '^$$' -bench Stream -benchtime 3x ./internal/wasi

CI_TARGETS += test-wasi

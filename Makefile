# mur — the Murmur capsule runtime.
#
# make test    the default suite (the README's test command)
# make check   formatting, vet, staticcheck, go mod tidy, import boundaries
# make bench   benchmarks; figures go to bench/RESULTS.md
# make ci      everything .ci/run runs
#
# Each area adds its own targets in mk/*.mk and appends the ones CI must run
# to CI_TARGETS.

GO          ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BIN         := bin/mur
CI_TARGETS  :=

.PHONY: all build test check bench ci fmt print-ci-targets

all: build

# -buildvcs=auto: mur version prints the commit even where GOFLAGS turns
# stamping off.
# bin/mur-sandbox: the sandbox's helper (internal/sandbox/helper), static
# and small; mur starts it from beside itself (docs/sandbox.md).
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/mur
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/mur-sandbox ./cmd/mur-sandbox

test:
	$(GO) test ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	# The !cgo build must compile and say why it cannot run components.
	CGO_ENABLED=0 $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@cp go.mod /tmp/mur.go.mod.bak; cp go.sum /tmp/mur.go.sum.bak; \
	  $(GO) mod tidy; \
	  if ! cmp -s go.mod /tmp/mur.go.mod.bak || ! cmp -s go.sum /tmp/mur.go.sum.bak; then \
	    echo "go mod tidy changed go.mod/go.sum; run it and commit"; \
	    cp /tmp/mur.go.mod.bak go.mod; cp /tmp/mur.go.sum.bak go.sum; exit 1; fi
	@bash scripts/check-imports.sh

-include mk/*.mk

ci: test check $(CI_TARGETS)

# The order scripts/ci.sh (.ci/run) runs ci's targets in, one at a time.
print-ci-targets:
	@echo test check $(CI_TARGETS)

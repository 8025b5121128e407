# The murmur.yaml engine and the diagnostics catalogue.
#
# make docs-diagnostics   regenerate docs/diagnostics.md from internal/diag
# make fuzz-manifest      fuzz the capsule and artifact decoders (FUZZTIME each)
# make bench-manifest     parse + validate the spec's Supported shape

FUZZTIME ?= 30s

.PHONY: docs-diagnostics fuzz-manifest bench-manifest check-diagnostics

docs-diagnostics:
	$(GO) run ./internal/diag/gendocs -o docs/diagnostics.md

check-diagnostics:
	$(GO) test -run 'TestDocsUpToDate|TestCatalogue' ./internal/diag/... ./internal/manifest/

fuzz-manifest:
	$(GO) test -run '^$$' -fuzz FuzzCapsule -fuzztime $(FUZZTIME) ./internal/manifest/
	$(GO) test -run '^$$' -fuzz FuzzArtifact -fuzztime $(FUZZTIME) ./internal/manifest/

bench-manifest:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/manifest/

check: check-diagnostics

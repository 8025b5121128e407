# The murmur.yaml engine and the diagnostics catalogue.
#
# make docs-diagnostics   regenerate docs/diagnostics.md from internal/diag
# make bench-manifest     parse + validate the spec's Supported shape

.PHONY: docs-diagnostics bench-manifest check-diagnostics

docs-diagnostics:
	$(GO) run ./internal/diag/gendocs -o docs/diagnostics.md

check-diagnostics:
	$(GO) test -run 'TestDocsUpToDate|TestCatalogue' ./internal/diag/... ./internal/manifest/

bench-manifest:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/manifest/

check: check-diagnostics

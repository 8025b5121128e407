# The murmur.yaml engine and the diagnostics catalogue.
#
# make docs-diagnostics   regenerate docs/diagnostics.md from internal/diag
# make docs-fields        regenerate docs/run.md's manifest-field tables from manifest.Fields
# make bench-manifest     parse + validate the spec's Supported shape

.PHONY: docs-diagnostics docs-fields bench-manifest check-diagnostics

docs-diagnostics:
	$(GO) run ./internal/diag/gendocs -o docs/diagnostics.md

docs-fields:
	$(GO) run ./internal/manifest/genfields -o docs/run.md

check-diagnostics:
	$(GO) test -run 'TestDocsUpToDate|TestCatalogue|TestFieldsCoverTypes' ./internal/diag/... ./internal/manifest/...

bench-manifest:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/manifest/

check: check-diagnostics

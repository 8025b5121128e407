# Generated reference pages.
#
# make docs-manifest   rewrite docs/manifest-reference.md from the manifest
#                      engine (internal/manifest/refdoc); make check fails
#                      when it is out of date.
.PHONY: docs-manifest check-manifest-reference

docs-manifest:
	$(GO) run ./internal/manifest/refdoc -o docs/manifest-reference.md

check-manifest-reference:
	$(GO) test -count=1 -run 'TestReference' ./internal/manifest/refdoc/

check: check-manifest-reference

# mur trace show --html checked in a real browser (docs/trace.md): the page
# rendered by headless Chromium (Debian's, pinned by
# scripts/setup.d/80-chromium.sh) and its screenshot's pixels read — the
# bars in their colours, in time order, widths in proportion.
#
# make test-trace-html   measured 8 s at load ~200 (Chromium's start
#                        dominates); budget 3 min (the test's own limit)

.PHONY: test-trace-html

test-trace-html:
	MUR_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -timeout 5m -run TestHTMLScreenshot ./internal/timeline/

CI_TARGETS += test-trace-html

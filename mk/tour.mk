# The README's tour, run verbatim from a copy of the checkout after
# `make demo` (tests/tour): every command a newcomer is told to type.
# Budget: about 1 minute on a loaded 2-core machine after demo (most of
# it compiling the tour's mur new tool to a component and mur run).
.PHONY: test-tour
test-tour: demo
	MUR_TEST_TOUR=1 $(GO) test -count=1 -timeout 20m ./tests/tour/

CI_TARGETS += test-tour

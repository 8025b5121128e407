# Host bindings of the murmur worlds, run against the guests built from
# examples/ (make guests).
.PHONY: test-component-guests
test-component-guests: guests
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -run Guest ./internal/component/

CI_TARGETS += test-component-guests

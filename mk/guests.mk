# Guests: the WIT check, building every example into a component, and the
# components' import/export and round-trip checks.
#
# make guests        build examples/* into $(GUEST_OUT)/<name>.wasm
# make test-guests   build, then check each component under jco + node
# make check-wit     every WIT package versioned; changes bumped per policy
# make wit-lock      rewrite wit/wit.lock after a deliberate version bump

GUEST_OUT  ?= $(CURDIR)/build/guests
GUEST_DIRS := $(sort $(dir $(wildcard examples/*/murmur.yaml)))

.PHONY: guests test-guests check-wit wit-lock

guests:
	MUR_GUEST_OUT=$(GUEST_OUT) bash tools/guest/build.sh $(GUEST_DIRS)

test-guests: guests
	$(GO) test ./tools/wasmlink/ ./sdk/...
	cd tools/guest && MUR_GUEST_OUT=$(GUEST_OUT) node --test test/

check-wit:
	$(GO) test ./wit/

wit-lock:
	$(GO) test ./wit/ -run TestLock -update

check: check-wit

CI_TARGETS += check-wit test-guests

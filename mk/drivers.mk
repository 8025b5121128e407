# Inference drivers: murmur/driver-anthropic and murmur/driver-openai,
# built from drivers/* with the guest SDK.
#
# make drivers              build drivers/*/ into $(GUEST_OUT)/<name>.wasm
# make test-drivers         the translation tests on the host, then both
#                           built components behind the credential gateway
#                           against the scripted provider double
# make test-drivers-aimock  both components against the independent fake
#                           @copilotkit/aimock (pinned in tools/aimock)
# make pack-drivers         mur build each driver into build/drivers/ (CI: the
#                           models: and upstream_auth: pass mur build)

DRIVER_DIRS := $(sort $(dir $(wildcard drivers/*/murmur.yaml)))
DRIVER_OUT  ?= $(CURDIR)/build/drivers

.PHONY: drivers test-drivers test-drivers-aimock pack-drivers

# GOFLAGS carries -s to the guest build: the shared build script passes no
# linker flags of its own. Each component is also copied beside its
# murmur.yaml (git ignores it there), so `mur build drivers/<name>` packs it.
drivers:
	GOFLAGS=-ldflags=-s MUR_GUEST_OUT=$(GUEST_OUT) bash tools/guest/build.sh $(DRIVER_DIRS)
	@for d in $(DRIVER_DIRS); do n=$$(basename $$d); cp $(GUEST_OUT)/$$n.wasm $$d; done

test-drivers: drivers
	$(GO) test -count=1 ./internal/infer/
	MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 20m ./internal/drivertest/

tools/aimock/node_modules/.package-lock.json: tools/aimock/package-lock.json
	cd tools/aimock && npm ci --no-audit --no-fund --loglevel=error

test-drivers-aimock: drivers tools/aimock/node_modules/.package-lock.json
	MUR_AIMOCK=1 MUR_REQUIRE_GUESTS=1 MUR_GUEST_OUT=$(GUEST_OUT) $(GO) test -count=1 -timeout 20m -run Aimock -v ./internal/drivertest/

pack-drivers: drivers build
	@mkdir -p $(DRIVER_OUT)
	@set -e; for d in $(DRIVER_DIRS); do \
	  n=$$(basename $$d); $(BIN) build $$d -o $(DRIVER_OUT)/$$n.mur.zip; \
	done

CI_TARGETS += drivers test-drivers test-drivers-aimock pack-drivers

# Artifacts: build, stores, OCI registries, install, lock, publish, index.
#
# make test-registry     the store suite against Debian's docker-registry on
#                        loopback (push, pull, digest mismatch, tampered blob,
#                        auth failure, registry down); needs
#                        scripts/setup.d/30-registry.sh
# make bench-artifacts   install 20 artifacts from a store and from registries;
#                        staging with everything pinned
# make test-cosign       signatures against the real cosign CLI (verify-blob
#                        of mur's bundle, sign-blob --key read by mur),
#                        offline; not in CI: building cosign v2.6.5 from the
#                        module proxy took 71 min wall (10.8 min user CPU)
#                        on the shared 2-core machine at load 25, cached in
#                        build/ afterwards; the test then takes ~3 s

.PHONY: test-registry bench-artifacts test-cosign

test-registry:
	MUR_TEST_REGISTRY=1 $(GO) test -count=1 -run 'TestRealRegistry|TestSignedInstallFromDockerRegistry' ./internal/store/

bench-artifacts:
	MUR_TEST_REGISTRY=1 $(GO) test -run '^$$' -bench . -benchtime 20x -benchmem ./internal/store/ ./internal/config/

COSIGN_VERSION ?= v2.6.5
COSIGN := $(CURDIR)/build/cosign-$(COSIGN_VERSION)/cosign

test-cosign:
	test -x $(COSIGN) || GOBIN=$(dir $(COSIGN)) GOFLAGS= $(GO) install github.com/sigstore/cosign/v2/cmd/cosign@$(COSIGN_VERSION)
	MUR_TEST_COSIGN=$(COSIGN) $(GO) test -count=1 -v -run TestCosignInterop ./internal/sign/

CI_TARGETS += test-registry

# Artifacts: build, stores, OCI registries, install, lock, publish, index.
#
# make test-registry     the store suite against Debian's docker-registry on
#                        loopback (push, pull, digest mismatch, tampered blob,
#                        auth failure, registry down); needs
#                        scripts/setup.d/30-registry.sh
# make bench-artifacts   install 20 artifacts from a store and from registries;
#                        staging with everything pinned

.PHONY: test-registry bench-artifacts

test-registry:
	MUR_TEST_REGISTRY=1 $(GO) test -count=1 -run 'TestRealRegistry|TestSignedInstallFromDockerRegistry' ./internal/store/

bench-artifacts:
	MUR_TEST_REGISTRY=1 $(GO) test -run '^$$' -bench . -benchtime 20x -benchmem ./internal/store/ ./internal/config/

CI_TARGETS += test-registry

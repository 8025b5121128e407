# Artifacts: build, stores, OCI registries, install, lock, publish, index.
#
# make test-registry     the store suite against Debian's docker-registry on
#                        loopback (push, pull, digest mismatch, tampered blob,
#                        auth failure, registry down); needs
#                        scripts/setup.d/30-registry.sh
# make fuzz-artifacts    fuzz the .mur.zip unpacker, murmur.lock, names, skill
#                        front matter and config.yaml
#                        parsers (FUZZTIME each)
# make bench-artifacts   install 20 artifacts from a store and from registries;
#                        staging with everything pinned

FUZZTIME ?= 30s

.PHONY: test-registry fuzz-artifacts bench-artifacts

test-registry:
	MUR_TEST_REGISTRY=1 $(GO) test -count=1 -run 'TestRealRegistry' ./internal/store/

fuzz-artifacts:
	$(GO) test -run '^$$' -fuzz '^FuzzOpenExtract$$' -fuzztime $(FUZZTIME) ./internal/artifact/
	$(GO) test -run '^$$' -fuzz '^FuzzParseLock$$' -fuzztime $(FUZZTIME) ./internal/artifact/
	$(GO) test -run '^$$' -fuzz '^FuzzParseRef$$' -fuzztime $(FUZZTIME) ./internal/artifact/
	$(GO) test -run '^$$' -fuzz '^FuzzSkillFrontMatter$$' -fuzztime $(FUZZTIME) ./internal/artifact/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/config/

bench-artifacts:
	MUR_TEST_REGISTRY=1 $(GO) test -run '^$$' -bench . -benchtime 20x -benchmem ./internal/store/ ./internal/config/

CI_TARGETS += test-registry

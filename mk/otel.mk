# OpenTelemetry span export (internal/otel, docs/otel.md).
#
# make test-otel-jaeger  builds Jaeger's all-in-one (github.com/jaegertracing/
#                        jaeger $(JAEGER_VERSION), from the Go module proxy,
#                        cached under build/jaeger/), starts it on loopback
#                        with in-memory storage, runs a real session with
#                        observability.otel_endpoint pointed at its OTLP/HTTP
#                        receiver and reads the spans back through its query
#                        API (TestJaeger: names, parentage, attributes).
#                        Budget ~7 min cold: building all-in-one takes
#                        8m50s user + 2m59s sys of CPU (≈ 6 min of wall on
#                        2 idle cores; 67 min on the development machine
#                        at load 25–30), then the test itself is under a
#                        second; with build/jaeger/ cached, seconds. The go
#                        test -timeout is 5m.
# make bench-otel        per-event overhead with OTel on, a session's wall
#                        time with the endpoint down, and mur trace show's
#                        reader on a 100,000-line trace (bench/RESULTS.md)

JAEGER_VERSION := v1.76.0
JAEGER_BIN := build/jaeger/jaeger-all-in-one-$(JAEGER_VERSION)
# Loopback ports away from Jaeger's defaults, so a Jaeger a developer runs
# is not disturbed.
JAEGER_OTLP_PORT ?= 24318
JAEGER_QUERY_PORT ?= 26686

.PHONY: test-otel-jaeger bench-otel

# The module's go.mod has replace directives, so go install mod@version
# refuses it: build it from its own module directory instead.
$(JAEGER_BIN):
	@mkdir -p build/jaeger
	set -e; dir=$$($(GO) mod download -json github.com/jaegertracing/jaeger@$(JAEGER_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	rm -rf build/jaeger/src; cp -r "$$dir" build/jaeger/src; chmod -R u+w build/jaeger/src; \
	(cd build/jaeger/src && $(GO) build -trimpath -o ../$(notdir $(JAEGER_BIN)) ./cmd/all-in-one); \
	rm -rf build/jaeger/src

test-otel-jaeger: $(JAEGER_BIN)
	set -e; \
	SPAN_STORAGE_TYPE=memory $(JAEGER_BIN) \
		--collector.otlp.enabled=true \
		--collector.otlp.http.host-port=127.0.0.1:$(JAEGER_OTLP_PORT) \
		--collector.otlp.grpc.host-port=127.0.0.1:$$(( $(JAEGER_OTLP_PORT) - 1 )) \
		--collector.http-server.host-port=127.0.0.1:$$(( $(JAEGER_OTLP_PORT) + 1 )) \
		--collector.grpc-server.host-port=127.0.0.1:$$(( $(JAEGER_OTLP_PORT) + 2 )) \
		--admin.http.host-port=127.0.0.1:$$(( $(JAEGER_OTLP_PORT) + 3 )) \
		--query.http-server.host-port=127.0.0.1:$(JAEGER_QUERY_PORT) \
		--query.grpc-server.host-port=127.0.0.1:$$(( $(JAEGER_QUERY_PORT) - 1 )) \
		>build/jaeger/jaeger.log 2>&1 & pid=$$!; \
	status=0; \
	MUR_TEST_JAEGER_OTLP=http://127.0.0.1:$(JAEGER_OTLP_PORT) \
	MUR_TEST_JAEGER_QUERY=http://127.0.0.1:$(JAEGER_QUERY_PORT) \
	$(GO) test -count=1 -timeout 5m -run '^TestJaeger$$' -v ./internal/otel/ || status=$$?; \
	kill $$pid 2>/dev/null || true; wait $$pid 2>/dev/null || true; \
	if [ $$status -ne 0 ]; then tail -20 build/jaeger/jaeger.log; exit $$status; fi

bench-otel:
	$(GO) test -run '^$$' -bench EmitOverhead -benchtime 100000x -count 3 ./internal/otel/
	$(GO) test -run '^$$' -bench SessionEndpointDown -benchtime 30x -count 3 ./internal/otel/
	$(GO) test -run '^$$' -bench Read100k -benchtime 3x ./internal/timeline/

CI_TARGETS += test-otel-jaeger

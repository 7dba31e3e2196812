# Motion Studio platform. `make test` is everything CI runs (.ci/run).
#
#   make dev           infra up, build, migrate, run the three services in the foreground
#   make up / down     the same in the background (.state/run) / stop services and infra
#   make infra         scripts/infra.sh up: Postgres, Redis, NATS, MinIO on 127.0.0.1
#   make build         the three binaries into bin/
#   make tools         pinned tools (tools/go.mod) into .bin/
#   make generate      protobuf and OpenAPI code; generate-check fails when it is stale
#   make lint          gofmt, go vet, staticcheck, module boundaries
#   make test          lint, generate-check, infra, every ginkgo suite, helm-check
#   make helm-check    helm lint, render the chart into .state/rendered, decode it strictly
#   make docs-check    run every README command block against a fresh platform (make test runs it
#                      with the e2e suite)
#   make bench         throughput and latency percentiles with vegeta (scripts/bench.sh)
#   make bench-1m      the catalog part of the bench on 1,000,000 templates

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

export PATH := $(CURDIR)/.bin:$(PATH)

SERVICES := identity-svc content-svc agentteam-svc
MODULE := github.com/motionstudio/platform
# Directories of the Go workspace's modules (go.work); tools/ has its own module outside it.
GO_DIRS := pkg proto-events services e2e
CHART := helm/motionstudio
RENDERED := $(CURDIR)/.state/rendered
GINKGO_FLAGS ?= -p --randomize-all --keep-going --timeout=25m

.PHONY: dev up down infra build migrate tools generate generate-check lint test test-suites helm-check docs-check bench bench-1m

dev: infra build
	scripts/dev.sh run

up: infra build
	scripts/dev.sh start

down:
	scripts/dev.sh stop
	scripts/infra.sh down

infra:
	scripts/infra.sh up

build:
	@mkdir -p bin
	go build -o bin/ $(foreach s,$(SERVICES),./services/$(s)/cmd/$(s))

migrate: infra build
	@for s in $(SERVICES); do echo "migrate $$s"; bin/$$s migrate; done

tools:
	cd tools && GOWORK=off GOBIN=$(CURDIR)/.bin go install tool

generate: tools
	scripts/gen-proto.sh
	go run ./e2e/cmd/envdoc > docs/configuration.md
	@for dir in services/*/; do \
		if grep -rqs --include='*.go' '^//go:generate' "$$dir"; then \
			echo "go generate $$dir"; (cd "$$dir" && go generate ./...); \
		fi; \
	done

generate-check: generate
	scripts/generate-check.sh

lint: tools
	@unformatted="$$(gofmt -l $(GO_DIRS))"; \
	if [[ -n "$$unformatted" ]]; then echo "gofmt -l reports unformatted files:"; echo "$$unformatted"; exit 1; fi
	go vet $(MODULE)/...
	staticcheck $(MODULE)/...
	scripts/check-imports.sh

# test runs the chart check first (seconds), then every suite; the last line counts the specs.
test: lint generate-check infra helm-check test-suites

test-suites: tools
	@rm -rf .state/ginkgo && mkdir -p .state/ginkgo
	@status=0; \
	ginkgo -r $(GINKGO_FLAGS) --skip-package=helmcheck --output-dir=.state/ginkgo --json-report=report.json \
		$(GO_DIRS) || status=$$?; \
	go run ./e2e/cmd/specsummary .state/ginkgo/report.json || status=1; \
	exit $$status

helm-check: tools
	helm lint --strict $(CHART)
	helm lint --strict $(CHART) -f $(CHART)/values-production.yaml
	@rm -rf $(RENDERED) && mkdir -p $(RENDERED)
	helm template motionstudio $(CHART) > $(RENDERED)/default.yaml
	helm template motionstudio $(CHART) -f $(CHART)/values-production.yaml > $(RENDERED)/production.yaml
	cp deploy/k8s/dev-infra.yaml $(RENDERED)/dev-infra.yaml
	RENDERED_DIR=$(RENDERED) ginkgo e2e/helmcheck

docs-check: tools infra
	ginkgo --focus "the README" e2e

bench: tools
	scripts/bench.sh

# bench-1m runs the content part alone on 1,000,000 seeded templates (no upload).
bench-1m: tools
	BENCH_CONTAINERS=1000000 BENCH_UPLOAD_BYTES=0 scripts/bench.sh content

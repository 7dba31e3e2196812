# Motion Studio platform. `make test` is everything CI runs (.ci/run).
#
#   make dev           infra up, build, migrate, run the three services in the foreground
#   make up / down     the same in the background (.state/run) / stop services and infra
#   make infra         scripts/infra.sh up: Postgres, Redis, NATS, MinIO on 127.0.0.1
#   make build         the three binaries into bin/
#   make tools         pinned tools (tools/go.mod) into .bin/
#   make node-tools    pinned Node CLIs (tools/npm: Spectral, AsyncAPI CLI) into tools/npm/node_modules
#   make generate      protobuf and OpenAPI code; generate-check fails when it is stale
#   make lint          gofmt, go vet, staticcheck, gosec, module boundaries, OpenAPI documents (Spectral)
#   make gosec         gosec over every module of the workspace (generated code excluded); any finding fails
#   make fuzz          every Go fuzz target for FUZZTIME (default 1m) each, one after another (scripts/fuzz.sh)
#   make asyncapi-check validate the services' AsyncAPI documents with the AsyncAPI CLI
#   make test          lint, generate-check, asyncapi-check, infra, every ginkgo suite, helm-check
#   make helm-check    helm lint, render the chart into .state/rendered, decode it strictly and
#                      validate it against Kubernetes' OpenAPI schemas, score it with kube-score,
#                      and evaluate the Tiltfile with Tilt itself (offline, no cluster)
#   make docs-check    run every README command block against a fresh platform (make test runs it
#                      with the e2e suite)
#   make test-faults   the fault suite (e2e/cmd/faultrun): 10,000 state changes on two replicas of
#                      each service, a private Postgres and a three-node NATS cluster while they fail
#   make bench         throughput and latency percentiles with vegeta (scripts/bench.sh)
#   make bench-1m      the catalog part of the bench on 1,000,000 templates

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

# NPM is the npm found on the caller's PATH, before tools/npm/node_modules/.bin joins it.
NPM := $(shell command -v npm)
export PATH := $(CURDIR)/.bin:$(CURDIR)/tools/npm/node_modules/.bin:$(PATH)

SERVICES := identity-svc content-svc agentteam-svc
MODULE := github.com/motionstudio/platform
# Directories of the Go workspace's modules (go.work); tools/ has its own module outside it.
GO_DIRS := pkg proto-events services e2e
CHART := helm/motionstudio
RENDERED := $(CURDIR)/.state/rendered
GINKGO_FLAGS ?= -p --randomize-all --keep-going --timeout=25m

.PHONY: dev up down infra build migrate tools node-tools generate generate-check lint gosec fuzz test test-suites helm-check docs-check bench bench-1m asyncapi-check test-faults

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

# tools/tilt and tools/kube-score are modules of their own: they need older Kubernetes libraries
# than helm in tools/go.mod (docs/adr/0075-tilt-and-kube-score-modules.md).
tools:
	cd tools && GOWORK=off GOBIN=$(CURDIR)/.bin go install tool
	cd tools/tilt && GOWORK=off GOBIN=$(CURDIR)/.bin go install tool
	cd tools/kube-score && GOWORK=off GOBIN=$(CURDIR)/.bin go install tool

# node-tools installs the pinned Node CLIs (tools/npm: Spectral, AsyncAPI CLI) when the lock file's
# content differs from the one last installed (file times differ between worktrees and clones),
# with the system npm: tools/npm/node_modules/.bin, first on PATH, holds an npm of its own.
NODE_STAMP := tools/npm/node_modules/.installed-package-lock.json
node-tools:
	@if ! cmp -s tools/npm/package-lock.json $(NODE_STAMP); then \
		$(NPM) ci --prefix tools/npm --no-audit --no-fund --loglevel=error && \
		cp tools/npm/package-lock.json $(NODE_STAMP); \
	fi

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

lint: tools openapi-lint
	@unformatted="$$(gofmt -l $(GO_DIRS))"; \
	if [[ -n "$$unformatted" ]]; then echo "gofmt -l reports unformatted files:"; echo "$$unformatted"; exit 1; fi
	go vet $(MODULE)/...
	staticcheck $(MODULE)/...
	scripts/check-imports.sh
	$(MAKE) --no-print-directory gosec

# gosec runs per module directory (it does not read go.work), over every module go.work uses,
# skipping oapi-codegen and protoc output. e2e is the test harness and load tools, never
# deployed: the rules about subprocesses, file paths and permissions, math/rand and integer
# conversions are excluded there (docs/adr/0050-fuzzing-and-gosec.md).
GOSEC_E2E_EXCLUDE := G101,G115,G204,G301,G302,G304,G306,G404,G703
gosec: tools
	@status=0; \
	for dir in $$(go list -m -f '{{.Dir}}'); do \
		rel="$${dir#$(CURDIR)/}"; flags=(-quiet -exclude-generated); \
		if [[ "$$rel" == e2e ]]; then flags+=(-exclude=$(GOSEC_E2E_EXCLUDE)); fi; \
		echo "gosec $$rel"; \
		(cd "$$dir" && gosec "$${flags[@]}" ./...) || status=1; \
	done; \
	exit $$status

# fuzz runs each fuzz target for FUZZTIME with FUZZ_WORKERS workers; a crashing input stays in
# the package's testdata/fuzz as a seed that every `go test` runs.
FUZZTIME ?= 1m
FUZZ_WORKERS ?= 1
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZ_WORKERS=$(FUZZ_WORKERS) scripts/fuzz.sh

# openapi-lint checks the OpenAPI documents with Spectral's spectral:oas ruleset (.spectral.yaml);
# any warning fails.
OPENAPI_DOCS := $(foreach s,$(SERVICES),services/$(s)/api/openapi.yaml)
.PHONY: openapi-lint
openapi-lint: node-tools
	spectral lint --ruleset .spectral.yaml --fail-severity=warn $(OPENAPI_DOCS)

# test runs the chart check first (seconds), then every suite; the last line counts the specs.
test: lint generate-check asyncapi-check infra helm-check test-suites

test-suites: tools
	@rm -rf .state/ginkgo && mkdir -p .state/ginkgo
	@status=0; \
	ginkgo -r $(GINKGO_FLAGS) --skip-package=helmcheck --output-dir=.state/ginkgo --json-report=report.json \
		$(GO_DIRS) || status=$$?; \
	go run ./e2e/cmd/specsummary .state/ginkgo/report.json || status=1; \
	exit $$status

# asyncapi-check validates proto-events/asyncapi/*.json: no error and no warning.
asyncapi-check: node-tools
	scripts/asyncapi-check.sh

# KUBERNETES_SCHEMAS is the k8s.io/kubernetes module whose api/openapi-spec/v3 helm-check validates
# the manifests against: the oldest release the chart supports (Chart.yaml's kubeVersion), fetched
# through the Go module proxy and verified against the checksum database like any module.
KUBERNETES_SCHEMAS := k8s.io/kubernetes@v1.30.14
# KUBE_VERSION is the release helm renders for: `go install` leaves helm's default at 1.20, which
# Chart.yaml's kubeVersion refuses.
KUBE_VERSION := 1.30.14
TILTFILE_RESULT := $(CURDIR)/.state/tiltfile-result.json

helm-check: tools
	helm lint --strict --kube-version $(KUBE_VERSION) $(CHART)
	helm lint --strict --kube-version $(KUBE_VERSION) $(CHART) -f $(CHART)/values-production.yaml
	@rm -rf $(RENDERED) && mkdir -p $(RENDERED)
	helm template motionstudio $(CHART) --kube-version $(KUBE_VERSION) > $(RENDERED)/default.yaml
	helm template motionstudio $(CHART) --kube-version $(KUBE_VERSION) -f $(CHART)/values-production.yaml > $(RENDERED)/production.yaml
	cp deploy/k8s/dev-infra.yaml $(RENDERED)/dev-infra.yaml
	tilt alpha tiltfile-result --file Tiltfile > $(TILTFILE_RESULT)
	schemas=$$(GOWORK=off go mod download -json $(KUBERNETES_SCHEMAS) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	RENDERED_DIR=$(RENDERED) KUBE_VERSION=$(KUBE_VERSION) TILTFILE_RESULT=$(TILTFILE_RESULT) K8S_OPENAPI_DIR=$$schemas/api/openapi-spec/v3 \
		ginkgo e2e/helmcheck

docs-check: tools infra
	ginkgo --focus "the README" e2e

# test-faults starts its own Postgres and NATS cluster (Redis and MinIO are shared: infra), kills
# processes, NATS nodes and Postgres under load, and fails on anything lost or done twice.
# FAULT_SEED replays a run; FAULT_OPS, FAULT_CONCURRENCY, FAULTS=off and FAULT_SETTLE tune it.
test-faults: infra
	go run ./e2e/cmd/faultrun

bench: tools
	scripts/bench.sh

# bench-1m runs the content part alone on 1,000,000 seeded templates (no upload).
bench-1m: tools
	BENCH_CONTAINERS=1000000 BENCH_UPLOAD_BYTES=0 scripts/bench.sh content

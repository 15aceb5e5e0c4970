# Developer entry points. The scripts do the work; CI runs them through .ci/run.
.PHONY: all build lint lint-go lint-python gen gen-python gen-check test test-go

all: lint test

build:
	go build ./...

# golangci-lint, ruff, mypy and the drift checks (scripts/lint.sh).
lint:
	scripts/lint.sh

lint-go:
	scripts/lint.sh go

lint-python:
	scripts/lint.sh python

# Regenerates the runner protocol's Go code (protoc from the system, plugins pinned in go.mod)
# and the Python SDK's stubs (grpcio-tools pinned in gen_protos.sh, in a throwaway virtualenv).
gen: gen-python
	go generate ./...

gen-python:
	bash pluginsdk/python/gen_protos.sh

# Fails when generated code or go.mod/go.sum are stale.
gen-check:
	scripts/gen-check.sh

# Every test suite (scripts/test.sh; SUITES="go python" runs some).
test:
	scripts/test.sh $(SUITES)

test-go:
	scripts/test.sh go

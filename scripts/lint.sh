#!/usr/bin/env bash
# Static checks of the repository:
#   go      golangci-lint run (.golangci.yml), at the version pinned below, built from the Go
#           module proxy into a cache directory on first use
#   python  ruff check and mypy (strict) on pluginsdk/python and adapters (config in each
#           pyproject.toml), with the pins of scripts/lint-requirements.txt
#   drift   scripts/gen-check.sh: generated code (Go and the Python stubs) and go.mod/go.sum
#           are current
#
# Usage: scripts/lint.sh [go|python|drift ...]   (default: all three)
# Environment: PYTHON (the interpreter whose environment has the test requirements, whose
# packages mypy type-checks against; default: the test virtualenv .ci/run makes,
# $AGENTENGINE_TEST_VENV or .venv-test, if it exists, else python3), LINT_PYTHON (the one
# with scripts/lint-requirements.txt installed; default PYTHON), GOLANGCI_LINT (use this
# golangci-lint binary instead of the pinned build).
set -euo pipefail

GOLANGCI_LINT_VERSION=v2.15.0

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  venv="${AGENTENGINE_TEST_VENV:-$ROOT/.venv-test}"
  if [ -x "$venv/bin/python" ]; then PYTHON="$venv/bin/python"; fi
fi
LINT_PYTHON="${LINT_PYTHON:-$PYTHON}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentengine-tools"

note() { printf '\n==> %s\n' "$*"; }

golangci_lint() {
  if [ -n "${GOLANGCI_LINT:-}" ]; then
    echo "$GOLANGCI_LINT"
    return
  fi
  local dir="$CACHE/golangci-lint-$GOLANGCI_LINT_VERSION"
  if [ ! -x "$dir/golangci-lint" ]; then
    note "go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION (once, into $dir)" >&2
    mkdir -p "$dir"
    GOBIN="$dir" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" >&2
  fi
  echo "$dir/golangci-lint"
}

lint_go() {
  local bin
  bin="$(golangci_lint)"
  note "go: golangci-lint run ($("$bin" version --short 2>/dev/null || echo "$bin"))"
  "$bin" run ./...
}

lint_python() {
  for tool in ruff mypy; do
    "$LINT_PYTHON" -m "$tool" --version >/dev/null 2>&1 || {
      echo "$tool is not installed for $LINT_PYTHON: pip install -r scripts/lint-requirements.txt (or bash .ci/run)" >&2
      return 1
    }
  done
  local rc=0 dir
  PYTHON="$(command -v "$PYTHON")"
  for dir in pluginsdk/python adapters; do
    note "python: ruff check $dir"
    (cd "$dir" && "$LINT_PYTHON" -m ruff check --no-cache .) || rc=1
    note "python: mypy (strict) $dir"
    (cd "$dir" && "$LINT_PYTHON" -m mypy --python-executable "$PYTHON" --cache-dir "$CACHE/mypy/$dir") || rc=1
  done
  return "$rc"
}

lint_drift() {
  note "drift: scripts/gen-check.sh"
  scripts/gen-check.sh
}

if [ "$#" -gt 0 ]; then CHECKS=("$@"); else CHECKS=(go python drift); fi
rc=0
for c in "${CHECKS[@]}"; do
  case "$c" in
    go|python|drift) "lint_$c" || { echo "lint: $c FAILED" >&2; rc=1; } ;;
    *) echo "scripts/lint.sh: unknown check '$c' (known: go python drift)" >&2; exit 2 ;;
  esac
done
exit "$rc"

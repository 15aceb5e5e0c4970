#!/usr/bin/env bash
# Runs every test of the repository, in order, stopping at the first failing suite:
#   lint    scripts/lint.sh: golangci-lint, ruff, mypy, generated code and go.mod current
#   build   go build of cmd/agentengine (exported as AGENTENGINE_BIN for the black-box suites)
#   vet     go vet ./...
#   go      go test -race ./...            (cgo on: the SQLite store needs it)
#   python  pytest pluginsdk/python/tests conformance/python, then adapters/tests
#   node    node --test in conformance/node (openai + Vercel AI SDK against a live server)
#   web     node --test in web/e2e (the bundled Web UI in Debian's Chromium via playwright-core;
#           screenshots in web/e2e/screenshots/)
#   matrix  pytest conformance/projects: sample projects set up by `agentengine run` in
#           virtualenvs made only from their own requirements.txt, against a fake model
#           (environments cached in ~/.cache/agentengine-test/matrix, keyed by requirements)
#
# Usage: scripts/test.sh [SUITE...]     e.g. scripts/test.sh go node   (default: all)
# Needs the Python and Node test dependencies installed (.ci/run installs them).
# Environment: PYTHON (default: the test virtualenv .ci/run makes, $AGENTENGINE_TEST_VENV or
# .venv-test, if it exists, else python3), AGENTENGINE_BIN (skip the build, use this binary),
# GO_TEST_FLAGS (extra go test flags, e.g. "-count=1").
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  venv="${AGENTENGINE_TEST_VENV:-$ROOT/.venv-test}"
  if [ -x "$venv/bin/python" ]; then PYTHON="$venv/bin/python"; fi
fi
# The Go tests that start Python runners read these.
export PYTHON
export AGENTENGINE_PYTHON="${AGENTENGINE_PYTHON:-$PYTHON}"
export CGO_ENABLED=1

ALL=(lint build vet go python node web matrix)
if [ "$#" -gt 0 ]; then SUITES=("$@"); else SUITES=("${ALL[@]}"); fi
for s in "${SUITES[@]}"; do
  case " ${ALL[*]} " in *" $s "*) ;; *) echo "scripts/test.sh: unknown suite '$s' (known: ${ALL[*]})" >&2; exit 2 ;; esac
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/agentengine-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

declare -a SUMMARY=()
TOTAL_PASSED=0
TOTAL_FAILED=0

note() { printf '\n==> %s\n' "$*"; }

# count_line SUITE LOG: extracts "N passed" / "N failed" counts from a suite's log.
counts() {
  local suite="$1" log="$2" p=0 f=0
  case "$suite" in
    go)
      p=$(sed -n 's/^go: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$log" | tail -1)
      f=$(sed -n 's/^go: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$log" | tail -1) ;;
    python|matrix)
      # One closing line per pytest session (the SDK + conformance run, then the bridges'): add them up.
      local line n
      while IFS= read -r line; do
        n=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || true); p=$((p + ${n:-0}))
        n=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || true); f=$((f + ${n:-0}))
        n=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || true); f=$((f + ${n:-0}))
      done < <(grep -E '^=+ .* in [0-9.]+s' "$log") ;;
    node|web)
      p=$(grep -E '^(# |ℹ )pass [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
      f=$(grep -E '^(# |ℹ )fail [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+') ;;
  esac
  echo "${p:-0} ${f:-0}"
}

finish() {
  local status="$1"
  printf '\n==> summary\n'
  for line in "${SUMMARY[@]}"; do printf '  %s\n' "$line"; done
  if [ "$status" -ne 0 ]; then
    printf 'FAILED: suite "%s" failed; later suites were not run.\n' "$FAILED_SUITE"
  fi
  printf '%d passed, %d failed\n' "$TOTAL_PASSED" "$TOTAL_FAILED"
  exit "$status"
}

record() { # record SUITE RC LOG
  local suite="$1" rc="$2" log="${3:-}" p=0 f=0
  if [ -n "$log" ]; then read -r p f < <(counts "$suite" "$log"); fi
  TOTAL_PASSED=$((TOTAL_PASSED + p))
  TOTAL_FAILED=$((TOTAL_FAILED + f))
  if [ "$rc" -eq 0 ]; then
    if [ -n "$log" ]; then SUMMARY+=("$suite: ok ($p passed, $f failed)"); else SUMMARY+=("$suite: ok"); fi
  else
    # A failing suite always counts at least one failure (e.g. a build error before any test).
    if [ "$f" -eq 0 ]; then TOTAL_FAILED=$((TOTAL_FAILED + 1)); f=1; fi
    SUMMARY+=("$suite: FAILED (exit $rc; $p passed, $f failed)")
    FAILED_SUITE="$suite"
    finish 1
  fi
}

run_build() {
  if [ -n "${AGENTENGINE_BIN:-}" ]; then
    note "build: using AGENTENGINE_BIN=$AGENTENGINE_BIN"
    [ -x "$AGENTENGINE_BIN" ] || { echo "AGENTENGINE_BIN is not an executable file" >&2; record build 1; }
    record build 0
    return
  fi
  note "build: go build -o $WORK/agentengine ./cmd/agentengine"
  go build -o "$WORK/agentengine" ./cmd/agentengine
  local rc=$?
  export AGENTENGINE_BIN="$WORK/agentengine"
  record build "$rc"
}

run_lint() {
  note "lint: scripts/lint.sh"
  scripts/lint.sh
  record lint $?
}

run_vet() {
  note "vet: go vet ./..."
  go vet ./...
  record vet $?
}

run_go() {
  note "go: go test -race ${GO_TEST_FLAGS:-} ./..."
  local log="$WORK/go.log"
  # shellcheck disable=SC2086
  go test -race ${GO_TEST_FLAGS:-} -json ./... 2>&1 | "$PYTHON" scripts/go_test_summary.py | tee "$log"
  local rcs=("${PIPESTATUS[@]}")
  local rc=$(( rcs[0] != 0 ? rcs[0] : rcs[1] ))
  record go "$rc" "$log"
}

run_python() {
  note "python: $PYTHON -m pytest pluginsdk/python/tests conformance/python; then adapters/tests"
  local log="$WORK/python.log"
  "$PYTHON" -m pytest -p no:cacheprovider --rootdir "$ROOT" pluginsdk/python/tests conformance/python 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # The bridges' suite has a conftest of its own, so it runs as a second session.
  if [ "$rc" -eq 0 ]; then
    (cd adapters && "$PYTHON" -m pytest -p no:cacheprovider tests) 2>&1 | tee -a "$log"
    rc=${PIPESTATUS[0]}
  fi
  if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: the test paths above are wrong or empty (exit 5 is a failure here)" >&2
  fi
  record python "$rc" "$log"
}

run_node() {
  note "node: node --test (conformance/node)"
  local log="$WORK/node.log"
  if [ ! -d conformance/node/node_modules ]; then
    echo "conformance/node/node_modules is missing: run 'npm ci' in conformance/node (or bash .ci/run)" >&2
    record node 1
  fi
  (cd conformance/node && node --test --test-concurrency=1 --test-timeout=120000 --test-reporter=spec) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ] && [ "$(counts node "$log" | cut -d' ' -f1)" -eq 0 ]; then
    echo "node --test ran no test" >&2
    rc=1
  fi
  record node "$rc" "$log"
}

run_web() {
  note "web: node --test (web/e2e, Chromium at ${CHROMIUM_BIN:-/usr/bin/chromium})"
  local log="$WORK/web.log"
  if [ ! -d web/e2e/node_modules ]; then
    echo "web/e2e/node_modules is missing: run 'npm ci' in web/e2e (or bash .ci/run)" >&2
    record web 1
  fi
  if [ ! -x "${CHROMIUM_BIN:-/usr/bin/chromium}" ]; then
    echo "${CHROMIUM_BIN:-/usr/bin/chromium} is missing: apt-get install -y chromium (or bash .ci/run)" >&2
    record web 1
  fi
  (cd web/e2e && node --test --test-concurrency=1 --test-timeout=600000 --test-reporter=spec) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ] && [ "$(counts web "$log" | cut -d' ' -f1)" -eq 0 ]; then
    echo "node --test ran no test" >&2
    rc=1
  fi
  record web "$rc" "$log"
}

run_matrix() {
  note "matrix: $PYTHON -m pytest conformance/projects (a cold run sets up every sample's environment: minutes)"
  local log="$WORK/matrix.log"
  local start=$SECONDS
  (cd conformance/projects && "$PYTHON" -m pytest -p no:cacheprovider -rfEx --durations=10 test_matrix.py) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests in conformance/projects (exit 5 is a failure here)" >&2
  fi
  echo "matrix: $((SECONDS - start))s"
  record matrix "$rc" "$log"
}

FAILED_SUITE=""
NEEDS_BIN=0
for s in "${SUITES[@]}"; do case "$s" in python|node|web|matrix) NEEDS_BIN=1 ;; esac; done
if [ "$NEEDS_BIN" -eq 1 ] && [[ " ${SUITES[*]} " != *" build "* ]]; then run_build; fi

for s in "${SUITES[@]}"; do
  "run_$s"
done
finish 0

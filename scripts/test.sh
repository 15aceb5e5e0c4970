#!/usr/bin/env bash
# Runs every test of the repository, in order, stopping at the first failing suite:
#   lint    scripts/lint.sh: golangci-lint, ruff, mypy, generated code and go.mod current
#   build   go build of cmd/agentengine (exported as AGENTENGINE_BIN for the black-box suites)
#   vet     go vet ./...
#   go      go test -race ./...            (cgo on: the SQLite store needs it)
#   python  pytest pluginsdk/python/tests conformance/python, then adapters/tests
#   node    node --test in conformance/node (openai + Vercel AI SDK against a live server)
#   web     node --test in web/e2e (the bundled Web UI in Debian's Chromium via playwright-core;
#           screenshots in web/e2e/screenshots/), and ksadk-web, KsADK's own UI, from the cache
#           scripts/ksadk-web.sh fills (.ci/run does; without it those tests skip, with CI set fail),
#           and agent-chat-ui against the LangGraph API, built by web/agent-chat-ui/build.mjs;
#           then ADK's dev UI test on google-adk 1.x, in the frameworks suite's adk-1 environment
#   fuzz    a short bounded pass (FUZZTIME, default 5s) of every Go fuzz target; crashers
#           are kept in each package's testdata/fuzz
#   matrix  pytest conformance/projects: sample projects set up by `agentengine run` in
#           virtualenvs made only from their own requirements.txt, against a fake model
#           (environments cached in ~/.cache/agentengine-test/matrix, keyed by requirements)
#   projects pytest examples/tests: every `init` template and Python example in a fresh
#           virtualenv of only its requirements, run by its framework alone, then served
#   frameworks adapters/tests/run_matrix.sh: the bridges' tests once per framework, each in
#           an environment holding only that framework (langgraph 0.6/1.x, langchain,
#           deepagents, google-adk 1.x/2.x)
#   compat  pluginsdk/python/tests/compat/run.sh: the runner SDK on the oldest and newest
#           protobuf it supports, beside opentelemetry-proto, and beside the real ksadk
#
# The go suite runs the Postgres store and multi-replica tests against a throwaway server
# from scripts/pg-test.sh when Debian's postgresql is installed (required when CI is set).
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

ALL=(lint build vet go fuzz python node web matrix projects frameworks compat)
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
    python|matrix|projects|frameworks|compat)
      # One closing line per pytest session (the SDK + conformance run, then the bridges'): add them up.
      local line n
      while IFS= read -r line; do
        n=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || true); p=$((p + ${n:-0}))
        n=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || true); f=$((f + ${n:-0}))
        n=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || true); f=$((f + ${n:-0}))
      done < <(grep -E '^(=+ .* in [0-9.]+s|[0-9]+ (passed|failed|errors?)(,.*)? in [0-9.]+s)' "$log") ;;
    fuzz)
      p=$(sed -n 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log" | tail -1)
      f=$(sed -n 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log" | tail -1) ;;
    node|web|web-*)
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
  local pg_dir=""
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    local pg_env
    if pg_env="$(scripts/pg-test.sh start)"; then
      eval "$pg_env"
      pg_dir="$PG_TEST_DIR"
      export AGENTENGINE_TEST_PG_DSN AGENTENGINE_TEST_PG_REQUIRED=1
    else
      echo "scripts/pg-test.sh could not start PostgreSQL" >&2
      record go 1
    fi
  elif [ -n "${CI:-}" ]; then
    echo "postgresql is not installed (apt-get install -y postgresql, or bash .ci/run)" >&2
    record go 1
  fi
  # shellcheck disable=SC2086
  go test -race ${GO_TEST_FLAGS:-} -json ./... 2>&1 | "$PYTHON" scripts/go_test_summary.py | tee "$log"
  local rcs=("${PIPESTATUS[@]}")
  if [ -n "$pg_dir" ]; then scripts/pg-test.sh stop "$pg_dir" >/dev/null 2>&1 || true; fi
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
  run_web_adk1
}

# run_web_adk1: ADK's dev UI tests (chat, graph, trace, export and import; evals; examples/adk-team's
# artifacts) once more on google-adk 1.x (the bridge supports both), in the frameworks suite's
# adk-1 environment (made here when missing: it is cached, and that suite reuses it).
run_web_adk1() {
  local matrix="${AGENTENGINE_ADAPTERS_MATRIX:-$HOME/.cache/agentengine-test/adapters}"
  local log="$WORK/web-adk1.log" start=$SECONDS
  note "web-adk1: ADK's dev UI on google-adk 1.x ($matrix/adk-1)"
  AGENTENGINE_ADAPTERS_MATRIX="$matrix" bash adapters/tests/run_matrix.sh --prepare adk-1 || record web-adk1 1
  (cd web/e2e && AGENTENGINE_ADK_PYTHON="$matrix/adk-1/bin/python" PYTHON="$matrix/adk-1/bin/python" \
    node --test --test-concurrency=1 --test-timeout=600000 --test-reporter=spec \
    tests/adk-dev-ui.test.mjs tests/adk-dev-ui-evals.test.mjs tests/adk-dev-ui-artifacts.test.mjs) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  echo "web-adk1: $((SECONDS - start))s"
  record web-adk1 "$rc" "$log"
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

run_fuzz() {
  local fuzztime="${FUZZTIME:-5s}"
  note "fuzz: every Go fuzz target for $fuzztime"
  local log="$WORK/fuzz.log" pkg target p=0 f=0
  : >"$log"
  local one="$WORK/fuzz.one.log" try
  while read -r pkg target; do
    # Go's fuzzer sometimes ends a run whose time is up with "context deadline exceeded"
    # and no failing input (a worker caught mid-exchange): that target runs once more. A
    # real failure writes its input to testdata/fuzz and fails both times.
    for try in 1 2; do
      if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./$pkg" >"$one" 2>&1; then
        cat "$one" >>"$log"; p=$((p + 1)); echo "  ok   $pkg $target"; break
      fi
      cat "$one" >>"$log"
      if [ "$try" -eq 1 ] && grep -q 'context deadline exceeded' "$one" && ! grep -q 'Failing input written' "$one"; then
        echo "  rerun $pkg $target (the fuzzer timed out without a failing input)"; continue
      fi
      f=$((f + 1)); echo "  FAIL $pkg $target (the crasher is in $pkg/testdata/fuzz/$target)"; break
    done
  done < <(grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(' . | grep -v '/node_modules/' | sort |
    while read -r file; do
      grep -oE '^func Fuzz[A-Za-z0-9_]+' "$file" | sed 's/^func //' | sed "s|^|$(dirname "${file#./}") |"
    done)
  echo "fuzz: $p passed, $f failed" | tee -a "$log"
  if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then echo "no fuzz target found" >&2; f=1; fi
  if [ "$f" -eq 0 ]; then record fuzz 0 "$log"; else tail -40 "$log"; record fuzz 1 "$log"; fi
}

# run_pytest_suite NAME DESCRIPTION CMD...: a suite whose CMD prints pytest closing lines.
run_pytest_suite() {
  local name="$1" what="$2"
  shift 2
  note "$name: $what"
  local log="$WORK/$name.log" start=$SECONDS
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  echo "$name: $((SECONDS - start))s"
  if [ "$rc" -eq 0 ] && [ "$(counts python "$log" | cut -d' ' -f1)" -eq 0 ]; then
    echo "$name ran no test" >&2
    rc=1
  fi
  record "$name" "$rc" "$log"
}

run_projects() {
  run_pytest_suite projects "$PYTHON -m pytest examples/tests (each template and example in its own fresh virtualenv)" \
    "$PYTHON" -m pytest -p no:cacheprovider -rfEs examples/tests
}

run_frameworks() {
  run_pytest_suite frameworks "adapters/tests/run_matrix.sh (the bridges' tests, one environment per framework)" \
    env AGENTENGINE_ADAPTERS_MATRIX="${AGENTENGINE_ADAPTERS_MATRIX:-$HOME/.cache/agentengine-test/adapters}" \
    bash adapters/tests/run_matrix.sh
}

run_compat() {
  run_pytest_suite compat "pluginsdk/python/tests/compat/run.sh (oldest/newest protobuf, opentelemetry-proto, real ksadk)" \
    env COMPAT_DIR="${COMPAT_DIR:-$HOME/.cache/agentengine-test/compat}" bash pluginsdk/python/tests/compat/run.sh
}

FAILED_SUITE=""
NEEDS_BIN=0
for s in "${SUITES[@]}"; do case "$s" in python|node|web|matrix|projects) NEEDS_BIN=1 ;; esac; done
if [ "$NEEDS_BIN" -eq 1 ] && [[ " ${SUITES[*]} " != *" build "* ]]; then run_build; fi

for s in "${SUITES[@]}"; do
  "run_$s"
done
finish 0

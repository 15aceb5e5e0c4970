#!/usr/bin/env bash
# Runs the adapters' tests once per framework environment: each environment is a fresh
# virtualenv holding one framework (at one end of its supported range), the runner's own
# requirements and pytest - nothing of the other frameworks, so a bridge importing a
# framework that is not its own fails here.
#
#   adapters/tests/run_matrix.sh                  # every environment
#   adapters/tests/run_matrix.sh adk-1 langgraph-0.6
#   adapters/tests/run_matrix.sh --list           # names and requirement sets
#   adapters/tests/run_matrix.sh --prepare adk-1  # make (or refresh) environments, run nothing
#
# Environments live in $AGENTENGINE_ADAPTERS_MATRIX (default ~/.cache/agentengine-test/adapters)
# and are reused while their requirement set is unchanged. BASE_PYTHON (default python3)
# makes them. Extra pytest arguments go after "--".
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ADAPTERS="$(dirname "$HERE")"
ROOT="$(dirname "$ADAPTERS")"
BASE_PYTHON="${BASE_PYTHON:-python3}"
MATRIX="${AGENTENGINE_ADAPTERS_MATRIX:-$HOME/.cache/agentengine-test/adapters}"
RUNNER_REQS="$ROOT/pluginsdk/python/runner-requirements.txt"
# The tests' own: pytest, and grpcio as the gRPC client of a runner process (the runner
# itself serves gRPC without it).
TEST_REQS="pytest grpcio"

# name | framework marker | requirements (besides the runner's and the tests')
ENVS=(
  "langgraph-0.6|langgraph|langgraph>=0.6,<0.7"
  "langgraph-1|langgraph|langgraph>=1,<2"
  "langchain-1|langchain|langchain>=1,<2 langchain-openai"
  "deepagents|deepagents|deepagents"
  "adk-1|adk|google-adk>=1.34,<2 openai pandas tabulate rouge-score google-cloud-aiplatform"
  "adk-2|adk|google-adk>=2,<3 openai pandas tabulate rouge-score google-cloud-aiplatform"
)

selected=()
pytest_args=()
prepare=0
while [ $# -gt 0 ]; do
  case "$1" in
    --list)
      for e in "${ENVS[@]}"; do IFS='|' read -r n m r <<<"$e"; printf '%-14s -m "core or %s"  pip install %s %s -r %s\n' "$n" "$m" "$r" "$TEST_REQS" "${RUNNER_REQS#$ROOT/}"; done
      exit 0 ;;
    --prepare) prepare=1; shift ;;
    --) shift; pytest_args=("$@"); break ;;
    *) selected+=("$1"); shift ;;
  esac
done

failed=()
for e in "${ENVS[@]}"; do
  IFS='|' read -r name marker reqs <<<"$e"
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " =~ " $name " ]]; then
    continue
  fi
  venv="$MATRIX/$name"
  stamp="$reqs | $TEST_REQS | $(cat "$RUNNER_REQS" 2>/dev/null)"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$stamp" ]; then
    printf '\n==> %s: creating %s\n' "$name" "$venv"
    rm -rf "$venv"
    "$BASE_PYTHON" -m venv "$venv"
    # shellcheck disable=SC2086  # reqs is a list of requirement specifiers
    "$venv/bin/python" -m pip install -q $reqs $TEST_REQS -r "$RUNNER_REQS"
    printf '%s' "$stamp" >"$venv/.requirements"
  fi
  if [ "$prepare" -eq 1 ]; then
    continue
  fi
  printf '\n==> %s: pytest -m "core or %s"\n' "$name" "$marker"
  if ! (cd "$ADAPTERS" && AGENTENGINE_TEST_FRAMEWORK="$marker" "$venv/bin/python" -m pytest tests -q \
        -m "core or $marker" -p no:cacheprovider "${pytest_args[@]}"); then
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "adapters matrix: failed in ${failed[*]}" >&2
  exit 1
fi

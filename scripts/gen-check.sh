#!/usr/bin/env bash
# Fails when generated files or go.mod/go.sum are not what their sources produce:
#   go generate ./...   must leave the tree as it found it (the runner protocol's Go code)
#   pluginsdk/python/gen_protos.sh   likewise for the Python stubs (it pip-installs its pinned
#                       grpcio-tools into a throwaway virtualenv; GEN_CHECK_PYTHON=0 skips it)
#   go mod tidy -diff   must print nothing
# In a clean checkout (CI) this is `go generate ./... && git diff --exit-code`; in a tree with
# uncommitted work it compares the generated files (those with the "Code generated ... DO NOT
# EDIT." header) before and after instead, so that others' edits do not count.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The generated Go files (tracked or not) and their contents. The header line naming the
# protoc version is left out: another Debian release's protoc generates the same code.
snapshot() {
  local f
  { git ls-files -z --cached --others --exclude-standard -- '*.go' |
      xargs -0r grep -lZ -m1 -E '^// Code generated .* DO NOT EDIT\.$'
    git ls-files -z --cached --others --exclude-standard -- pluginsdk/python/src/agentengine_runner/_proto
  } | while IFS= read -r -d '' f; do
      printf '%s %s\n' "$(grep -vE '^//.*[[:space:]]protoc[[:space:]]+v[0-9]' "$f" | sha1sum | cut -d' ' -f1)" "$f"
    done
}

rc=0
before="$(snapshot)"
echo "go generate ./..."
go generate ./...
if [ "$(snapshot)" != "$before" ]; then
  echo "gen-check: go generate ./... changed files; regenerate and commit them:" >&2
  diff <(echo "$before") <(snapshot) >&2 || true
  rc=1
  before="$(snapshot)"
fi

if [ "${GEN_CHECK_PYTHON:-1}" != 0 ]; then
  echo "pluginsdk/python/gen_protos.sh"
  log="$(mktemp)"
  if ! bash pluginsdk/python/gen_protos.sh >"$log" 2>&1; then
    cat "$log" >&2
    echo "gen-check: pluginsdk/python/gen_protos.sh failed" >&2
    rc=1
  fi
  rm -f "$log"
  if [ "$(snapshot)" != "$before" ]; then
    echo "gen-check: gen_protos.sh changed the Python stubs; regenerate and commit them:" >&2
    diff <(echo "$before") <(snapshot) >&2 || true
    rc=1
  fi
fi

echo "go mod tidy -diff"
if ! go mod tidy -diff; then
  echo "gen-check: go.mod/go.sum are not tidy: run go mod tidy and commit the result" >&2
  rc=1
fi
exit "$rc"

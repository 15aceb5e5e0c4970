#!/usr/bin/env bash
# bench/reload.sh — save → new code answering, under `agentengine run --reload`.
#
# Writes a Python project (a runner on the Python SDK, `framework: python`) and a Go
# project (built against this repository), serves each with `agentengine run --reload`,
# then N times: rewrites the agent's source with a new version string and measures the
# time from the write until a /v1/responses request answers with the new version
# (requests are sent back to back; each takes a few milliseconds). Prints one line per
# language: min, median and max over the N edits.
#
# Usage: bench/reload.sh
# Environment:
#   BENCH_EDITS  edits per project (default 5)
#   PYTHON       a Python with grpcio and protobuf (default python3)
# Needs: go, curl, a Python with grpcio and protobuf.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EDITS="${BENCH_EDITS:-5}"
PY="$(command -v "${PYTHON:-python3}")"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/agentengine-reload.XXXXXX")"
trap 'kill "$SERVER" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$OUT"' EXIT
SERVER=""

(cd "$ROOT" && go build -o "$OUT/agentengine" ./cmd/agentengine)

py_agent() { # version
	cat <<PYEOF
from agentengine_runner import Description, Emitter, Runner, RunRequest

class Agent(Runner):
    def describe(self) -> Description:
        return Description(framework="python", agent_name="bench")

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        await emit.message_done("$1")
PYEOF
}

go_agent() { # version
	cat <<GOEOF
package main

import (
	"context"

	"github.com/agentengine/agentengine/pluginsdk"
)

type agent struct{}

func (agent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "bench", Framework: "go"} }

func (agent) Run(_ context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	return emit.MessageDone("$1")
}

func main() { pluginsdk.Serve(agent{}) }
GOEOF
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# serve DIR: starts the server, sets URL.
serve() {
	local log="$1/serve.log"
	"$OUT/agentengine" run "$1" --port 0 --reload --session-backend memory 2>"$log" &
	SERVER=$!
	for _ in $(seq 600); do
		URL="$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 || true)"
		[ -n "$URL" ] && return 0
		sleep 0.1
	done
	cat "$log" >&2
	exit 1
}

answer() {
	curl -s "$URL/v1/responses" -H 'Content-Type: application/json' -d '{"model":"bench","input":"x"}' |
		grep -o '"output_text":"[^"]*"' | cut -d'"' -f4
}

# measure LABEL DIR FILE GENERATOR
measure() {
	local label="$1" dir="$2" file="$3" gen="$4" times=()
	serve "$dir"
	for i in $(seq "$EDITS"); do
		sleep 1 # a quiet project, as between a developer's saves
		local v="version-$i-$RANDOM"
		local t0
		t0="$(now_ms)"
		"$gen" "$v" >"$dir/$file"
		until [ "$(answer)" = "$v" ]; do :; done
		times+=($(($(now_ms) - t0)))
	done
	kill "$SERVER"
	wait "$SERVER" 2>/dev/null || true
	local sorted
	sorted="$(printf '%s\n' "${times[@]}" | sort -n)"
	printf '%-7s save → new code answering over %d edits: min %d ms, median %d ms, max %d ms\n' "$label" "$EDITS" \
		"$(echo "$sorted" | head -1)" "$(echo "$sorted" | sed -n "$(((EDITS + 1) / 2))p")" "$(echo "$sorted" | tail -1)"
}

mkdir -p "$OUT/py" "$OUT/go"
printf 'name: bench\nframework: python\nentry_point: agent.py:Agent\npython: %s\n' "$PY" >"$OUT/py/agentengine.yaml"
py_agent v0 >"$OUT/py/agent.py"
measure Python "$OUT/py" agent.py py_agent

gov="$(sed -n 's/^go //p' "$ROOT/go.mod")"
printf 'name: bench\nframework: go\n' >"$OUT/go/agentengine.yaml"
printf 'module bench\n\ngo %s\n\nrequire github.com/agentengine/agentengine v0.0.0\n\nreplace github.com/agentengine/agentengine => %s\n' "$gov" "$ROOT" >"$OUT/go/go.mod"
cp "$ROOT/go.sum" "$OUT/go/go.sum"
go_agent v0 >"$OUT/go/main.go"
(cd "$OUT/go" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1)
measure Go "$OUT/go" main.go go_agent

#!/usr/bin/env bash
# bench/large.sh — the host's peak memory for one large request.
#
# Usage: bench/large.sh [AGENTENGINE_BINARY] [MIB]
#
# Serves examples/echo-go on 127.0.0.1, sends one POST /v1/responses whose input is MIB
# MiB of text (default 20; echo-go answers with the same text), and prints the host's
# RSS before, its peak (VmHWM) and the HTTP status. Builds ./cmd/agentengine when no
# binary is given.
# Environment:
#   BENCH_BACKEND  memory (default) or local (SQLite, in a temporary file)
#   BENCH_STREAM   1 streams the answer ("stream": true) instead of one JSON object
set -euo pipefail
cd "$(dirname "$0")/.."
D=$(mktemp -d)
BIN=${1:-}
MIB=${2:-20}
if [[ -z $BIN ]]; then
  go build -o "$D/agentengine" ./cmd/agentengine
  BIN=$D/agentengine
fi
port=$((19600 + RANDOM % 300))
backend=${BENCH_BACKEND:-memory}
store=()
[[ $backend == local ]] && store=(--session-path "$D/sessions.sqlite")
"$BIN" run examples/echo-go --port "$port" --session-backend "$backend" "${store[@]}" >"$D/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$D"' EXIT
for _ in $(seq 100); do curl -fs "127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
python3 -c "import json,sys; print(json.dumps({'model':'echo-go','stream':sys.argv[2]=='1','input':'x'*(int(sys.argv[1])<<20)}))" \
  "$MIB" "${BENCH_STREAM:-0}" >"$D/body.json"
echo "RSS before: $(awk '/VmRSS/{print $2/1024 " MB"}' "/proc/$pid/status")"
status=$(curl -s -o /dev/null -w "%{http_code} in %{time_total} s" -H 'content-type: application/json' \
  --data-binary @"$D/body.json" "127.0.0.1:$port/v1/responses")
echo "HTTP $status for a $MIB MiB input"
echo "peak RSS (VmHWM): $(awk '/VmHWM/{print $2/1024 " MB"}' "/proc/$pid/status")"

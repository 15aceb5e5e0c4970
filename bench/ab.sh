#!/usr/bin/env bash
# bench/ab.sh — interleaved A/B of two agentengine binaries on this machine.
#
# Usage: bench/ab.sh OLD_BINARY NEW_BINARY [ROUNDS]
#
# Starts each binary twice on 127.0.0.1 (memory and SQLite session backends; a third time
# on Postgres when AB_PG_DSN names a database, e.g. from scripts/pg-test.sh start, where
# each binary gets a database of its own, made and dropped here) serving
# examples/echo-go, then runs loadgen's non-stream scenario (3 s, c=16 then c=1) against
# the four servers in turn, ROUNDS times (default 3), so that the machine's noise hits both
# binaries alike. Prints one line per point: turns/s, p50, the CPU per turn of the
# server and its runner, and of the server alone. Build the binaries first, e.g.
#   git worktree add /tmp/old <commit> && (cd /tmp/old && go build -o /tmp/ae-old ./cmd/agentengine)
#   go build -o /tmp/ae-new ./cmd/agentengine
# Another agent (each binary starts its own runner processes for it):
#   AB_PROJECT   the project directory (default examples/echo-go)
#   AB_API, AB_MODEL, AB_EXPECT  loadgen's -api, -model and -expect (defaults: responses,
#                the project's default agent, nothing checked)
#   AB_BACKENDS  session backends (default "memory local"), AB_SECONDS (default 3),
#   AB_WARMUP    seconds of unmeasured c=16 load on each server first (default 0), so that
#                a Python runner pool has grown before the rounds
# e.g. the LangGraph bench graph over LangGraph's API, as bench/peers.sh serves it:
#   AB_PROJECT=~/.cache/agentengine-bench/peers-langgraph AB_API=langgraph AB_MODEL=echo-langgraph \
#     AB_EXPECT="you said" AB_BACKENDS=memory AB_WARMUP=6 bench/ab.sh /tmp/ae-old /tmp/ae-new 3
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { sed -n 2,24p "$0"; exit 2; }
OLD=$1 NEW=$2 ROUNDS=${3:-3}
PROJECT=${AB_PROJECT:-examples/echo-go}
SECS=${AB_SECONDS:-3}
LOAD=(-api "${AB_API:-responses}")
[[ -n "${AB_MODEL:-}" ]] && LOAD+=(-model "$AB_MODEL")
[[ -n "${AB_EXPECT:-}" ]] && LOAD+=(-expect "$AB_EXPECT")
D=$(mktemp -d)
go build -o "$D/loadgen" ./bench/cmd/loadgen
declare -A URL PID
port=$((19100 + RANDOM % 500))
DBS=()
cleanup() {
  for p in "${PID[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for db in "${DBS[@]}"; do psql -q "$AB_PG_DSN" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true; done
  rm -rf "$D"
}
trap cleanup EXIT
read -r -a BACKENDS <<<"${AB_BACKENDS:-memory local}"
[[ -n "${AB_PG_DSN:-}" ]] && BACKENDS+=(postgres)
for v in old new; do
  for b in "${BACKENDS[@]}"; do
    bin=$OLD; [[ $v == new ]] && bin=$NEW
    port=$((port + 1))
    if [[ $b == postgres ]]; then
      # A database of each binary's own: a newer build may migrate the schema past what
      # an older one accepts.
      db="ab_${v}_$$"
      psql -q "$AB_PG_DSN" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
      DBS+=("$db")
      dsn=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$AB_PG_DSN" "$db")
      KSADK_SESSION_BACKEND=postgres KSADK_SESSION_DSN="$dsn" AGENTENGINE_REPLICA_ID="ab-$v" \
        "$bin" run "$PROJECT" --port "$port" >"$D/$v.$b.log" 2>&1 &
    else
      "$bin" run "$PROJECT" --port "$port" --session-backend "$b" --session-path "$D/$v.sqlite" >"$D/$v.$b.log" 2>&1 &
    fi
    PID[$v.$b]=$!
    URL[$v.$b]=http://127.0.0.1:$port
  done
done
for k in "${!URL[@]}"; do
  # A Python runner takes a second or more to start.
  for _ in $(seq 600); do curl -fs "${URL[$k]}/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
done
if [[ "${AB_WARMUP:-0}" -gt 0 ]]; then
  for k in "${!URL[@]}"; do
    "$D/loadgen" -url "${URL[$k]}" "${LOAD[@]}" -scenario nonstream -c 16 -d "${AB_WARMUP}s" >/dev/null
  done
fi
echo "round c backend binary turns/s p50_ms cpu_us_per_turn server_cpu_us_per_turn"
for r in $(seq "$ROUNDS"); do
  for c in 16 1; do
    for b in "${BACKENDS[@]}"; do
      for v in old new; do
        "$D/loadgen" -json -url "${URL[$v.$b]}" -pid "${PID[$v.$b]}" "${LOAD[@]}" -scenario nonstream -c "$c" -d "${SECS}s" >"$D/out.json"
        python3 - "$r" "$c" "$b" "$v" "$D/out.json" <<'PY'
import json, sys
r, c, b, v, path = sys.argv[1:]
d = json.load(open(path))
s = d["server"]
cpu = (s["cpu_s"] + s["child_cpu_s"]) * 1e6 / max(1, d["requests"])
host = s["cpu_s"] * 1e6 / max(1, d["requests"])  # the server process alone, its runner apart
print(r, c, b, v, round(d["turns_per_sec"]), round(d["latency_ms"]["p50"], 3), round(cpu), round(host))
PY
      done
    done
  done
done

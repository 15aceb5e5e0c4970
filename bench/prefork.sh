#!/usr/bin/env bash
# bench/prefork.sh — what an added runner process costs, with and without pre-forking
# (AGENTENGINE_PREFORK=on: a Python agent's runner processes fork from a zygote that
# imported the agent once).
#
# The ADK example (examples/adk-assistant, its offline model) under `agentengine run` with
# two runner processes, sessions in memory, c=16 non-stream ADK turns (POST …/sessions,
# then /run). The second process is killed (kill -9) and the pool's next calls start a new
# one: the same start a growing pool makes (a pool grows only while every process is
# CPU-bound, which a machine shared with other work does not reliably show). Per mode:
# the time from that start to the process serving (the host's "runner started" start_ms:
# fork or interpreter start, imports, handshake, health check, Describe); after a
# measured c=16 load, the proportional set size (PSS, /proc/PID/smaps_rollup) of each
# runner process, the zygote and the host, and RSS and PSS of the whole server (host +
# descendants). Modes alternate round by round.
#
# Usage: bench/prefork.sh
# Environment:
#   BENCH_ROUNDS  rounds (default 2)   BENCH_SECONDS  seconds of the measured load (default 10)
#   BENCH_PYTHON  the runners' interpreter (with google-adk); default: a virtualenv that
#                 `agentengine run` makes from the project's requirements
#   BENCH_OUT     directory for binaries, logs and results (default: a new temp dir)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROUNDS="${BENCH_ROUNDS:-2}"
SECS="${BENCH_SECONDS:-10}"
OUT="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/agentengine-prefork.XXXXXX")}"
BIN="$OUT/bin"
mkdir -p "$BIN"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
PIDS=()
trap stop_pids EXIT
trap 'exit 130' INT TERM

PROJ="$OUT/adk"
mkdir -p "$PROJ"
cp examples/adk-assistant/agent.py examples/adk-assistant/offline_model.py "$PROJ/"
printf 'google-adk==%s\n' "${ADK_VERSION:-2.13.0}" >"$PROJ/requirements.txt"
{
  echo "name: adk_assistant"
  echo "framework: adk"
  echo "entry_point: agent.py"
  echo "agent_variable: root_agent"
  echo "processes: 2"
  if [ -n "${BENCH_PYTHON:-}" ]; then echo "python: $BENCH_PYTHON"; fi
} >"$PROJ/agentengine.yaml"

note "building into $BIN"
go build -o "$BIN/" ./cmd/agentengine ./bench/cmd/loadgen

pss() { awk '/^Pss:/ { print $2; exit }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
# uss PID: its private pages (what the process alone holds; what adding it cost).
uss() { awk '/^Private_(Clean|Dirty):/ { k += $2 } END { print k + 0 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
rss() { awk '/^VmRSS:/ { print $2; exit }' "/proc/$1/status" 2>/dev/null || echo 0; }
# descendants PID: every process below PID.
descendants() {
  local p
  for p in $(pgrep -P "$1" || true); do echo "$p"; descendants "$p"; done
}
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

run_mode() { # run_mode ROUND MODE
  local r="$1" mode="$2" log="$OUT/r$1-$2.log" pid url
  env OPENAI_API_KEY= AGENTENGINE_PREFORK="$mode" "$BIN/agentengine" run "$PROJ" --port 0 --log-level info \
    --session-backend memory >"$log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 6000); do
    grep -q "agentengine serving" "$log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
  done
  url="$(sed -n 's/.*agentengine serving .* on \(http:\/\/[^ ]*\).*/\1/p' "$log" | head -1)"
  local lg=("$BIN/loadgen" -api adk -url "$url" -model adk_assistant -scenario nonstream -expect "You said: hello there")
  # 16 s: the runner processes record their modules after 10 s, and an idle zygote takes
  # the list in within 5 s (pre-forking); the replacement then starts warm.
  "${lg[@]}" -c 16 -d 16s >/dev/null 2>&1 || true
  local second
  second="$(sed -n 's/.*runner started: pid=\([0-9]*\) runner="adk_assistant#2" .*/\1/p' "$log" | head -1)"
  [ -n "$second" ] || { note "round $r $mode: no second runner process"; kill "$pid"; return 0; }
  kill -9 "$second"
  for _ in $(seq 1 60); do
    [ "$(grep -c 'runner started:.*runner="adk_assistant#2" ' "$log")" -ge 2 ] && break
    "${lg[@]}" -c 4 -n 8 >/dev/null 2>&1 || true
  done
  "$BIN/loadgen" -json -api adk -url "$url" -model adk_assistant -scenario nonstream -c 16 -d "${SECS}s" \
    -expect "You said: hello there" -pid "$pid" >"$OUT/r$r-$mode.json" 2>/dev/null || true
  local start_ms kids k host_pss=0 tree_pss tree_rss line=""
  start_ms="$(grep 'runner started:.*runner="adk_assistant#2" ' "$log" | sed -n '2s/.*start_ms=\([0-9.]*\).*/\1/p')"
  host_pss="$(pss "$pid")"
  tree_pss="$host_pss" tree_rss="$(rss "$pid")"
  kids="$(descendants "$pid")"
  for k in $kids; do
    tree_pss=$((tree_pss + $(pss "$k"))) tree_rss=$((tree_rss + $(rss "$k")))
    # The zygote is the runner process with children (the others).
    if [ -n "$(pgrep -P "$k" || true)" ]; then line="$line zygote $(mb "$(pss "$k")") ($(mb "$(uss "$k")")),"; else line="$line $(mb "$(pss "$k")") ($(mb "$(uss "$k")")),"; fi
  done
  printf '| %s | %s | %s | %s | %s | %s | %s |%s |\n' "$r" "$mode" "$start_ms" "$(mb "$host_pss")" \
    "${line%,}" "$(mb "$tree_rss")" "$(mb "$tree_pss")" \
    "$(jq -r '" " + (.turns_per_sec*10|floor/10|tostring) + " turns/s, errors " + (.errors|tostring)' "$OUT/r$r-$mode.json" 2>/dev/null)"
  kill "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
}

{
  echo "Machine: $(nproc) CPUs; load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| round | prefork | added process: start → serving, ms | host PSS MB | runner processes' PSS MB (private MB), pid order | server RSS MB (host + descendants) | server PSS MB | c=16 load |"
  echo "|---|---|---:|---:|---|---:|---:|---|"
  for r in $(seq 1 "$ROUNDS"); do
    run_mode "$r" off
    run_mode "$r" on
  done
  echo
  echo "Load average at end $(cut -d' ' -f1-3 /proc/loadavg)."
} | tee "$OUT/report.md"
note "results in $OUT"

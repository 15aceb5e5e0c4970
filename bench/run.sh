#!/usr/bin/env bash
# bench/run.sh — agentengine's end-to-end benchmark in one command.
#
# Builds agentengine, the echo-go runner, the load generator and the floors; starts
# agentengine twice on 127.0.0.1 (memory store and SQLite store) and the three floors
# (bare gin, gin + go-plugin hop, hop + 5-row SQLite transaction); runs
# every scenario against them in the same invocation (each scenario runs the floors and
# both stores back to back) and prints a markdown report with absolute numbers, ratios
# to the floors and the performance targets (docs/PERFORMANCE.md).
#
# Usage: bench/run.sh                  (about 2–3 minutes on 2 cores)
# Environment:
#   BENCH_SECONDS   measured seconds per throughput point (default 3)
#   BENCH_OUT       directory for binaries, logs and JSON results (default: a new temp dir)
#   BENCH_STREAMS   concurrent streams of the streams scenario (default 1000)
#   BENCH_HISTORY   events of history of the long-history point (default 10000)
#   BENCH_SCALE     concurrent streams of the scale point, run last (default 5000; 0 skips)
#   BENCH_SETTLE    seconds after the load before the second idle RSS reading (default 60)
#   AGENTENGINE_BIN use this agentengine binary instead of building ./cmd/agentengine
# Everything listens on 127.0.0.1 only; every process started here is stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECS="${BENCH_SECONDS:-3}"
STREAMS="${BENCH_STREAMS:-1000}"
HISTORY="${BENCH_HISTORY:-10000}"
SCALE="${BENCH_SCALE:-5000}"
SETTLE="${BENCH_SETTLE:-60}"
OUT="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/agentengine-bench.XXXXXX")}"
BIN="$OUT/bin"
RES="$OUT/results"
mkdir -p "$BIN" "$RES" "$OUT/project" "$OUT/data"
export CGO_ENABLED=1

note() { printf '==> %s\n' "$*" >&2; }

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat /proc/loadavg >"$RES/loadavg.start"
note "building into $BIN"
if [ -n "${AGENTENGINE_BIN:-}" ]; then
  cp "$AGENTENGINE_BIN" "$BIN/agentengine"
else
  go build -o "$BIN/" ./cmd/agentengine
fi
go build -o "$BIN/" ./examples/echo-go ./bench/cmd/loadgen ./bench/cmd/floor ./bench/cmd/benchreport ./bench/floor/hopplugin

# A project that runs the prebuilt echo-go runner, so agentengine builds nothing and
# writes nothing into the repository.
cat >"$OUT/project/agentengine.yaml" <<EOF
name: echo-go
description: echo-go runner for bench/run.sh
framework: go
binary: $BIN/echo-go
EOF

# wait_line FILE PATTERN PID: waits until FILE has a line matching PATTERN (60 s).
wait_line() {
  for _ in $(seq 1 600); do
    if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
    if ! kill -0 "$3" 2>/dev/null; then note "process $3 exited:"; cat "$1" >&2; return 1; fi
    sleep 0.1
  done
  note "timed out waiting for '$2' in $1"; cat "$1" >&2; return 1
}

# start_ae NAME BACKEND [PATH]: starts agentengine; sets AE_URL and AE_PID.
start_ae() {
  local name="$1" backend="$2" path="${3:-}" log="$OUT/$1.log"
  local args=(run "$OUT/project" --port 0 --session-backend "$backend" --log-level warn)
  if [ -n "$path" ]; then args+=(--session-path "$path"); fi
  "$BIN/agentengine" "${args[@]}" >"$log" 2>&1 &
  AE_PID=$!
  PIDS+=("$AE_PID")
  wait_line "$log" "agentengine serving" "$AE_PID"
  AE_URL="$(sed -n 's/.*agentengine serving .* on \(http:\/\/[^ ]*\).*/\1/p' "$log" | head -1)"
  note "agentengine ($name) pid $AE_PID at $AE_URL"
}

start_ae mem memory
MEM_URL="$AE_URL"; MEM_PID="$AE_PID"
start_ae sqlite local "$OUT/data/sessions.sqlite"
SQL_URL="$AE_URL"; SQL_PID="$AE_PID"

# lg LABEL URL PID ARGS...: one loadgen run, JSON into results/LABEL.json.
lg() {
  local label="$1" url="$2" pid="$3"; shift 3
  local rc=0
  "$BIN/loadgen" -json -label "$label" -url "$url" -pid "$pid" "$@" >"$RES/$label.json" 2>"$RES/$label.err" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    note "$label failed (exit $rc):"; cat "$RES/$label.err" >&2
    rm -f "$RES/$label.json"
    return 0
  fi
  if [ "$rc" -eq 3 ]; then note "$label: some requests failed (see the report)"; fi
  printf '    %-22s %s\n' "$label" "$(jq -r '[(.turns_per_sec|floor|tostring)+" turns/s", "p50 "+((.latency_ms.p50 // 0)|tostring)+" ms", "errors "+(.errors|tostring)]|join(", ")' "$RES/$label.json" 2>/dev/null || true)" >&2
}

note "idle RSS right after start"
"$BIN/loadgen" -json -label idle.mem.start -scenario idle -pid "$MEM_PID" -d 1s >"$RES/idle.mem.start.json"
"$BIN/loadgen" -json -label idle.sqlite.start -scenario idle -pid "$SQL_PID" -d 1s >"$RES/idle.sqlite.start.json"

# The floors answer with as many bytes as agentengine's non-stream response.
BODY_BYTES="$(curl -s -o /dev/null -w '%{size_download}' -H 'Content-Type: application/json' \
  -d '{"model":"echo-go","input":"hello there"}' "$MEM_URL/v1/responses")"
note "agentengine's non-stream response: $BODY_BYTES bytes"
"$BIN/floor" -plugin "$BIN/hopplugin" -body-bytes "$BODY_BYTES" -db "$OUT/data/floor.sqlite" -lifetime 20m \
  >"$OUT/floor.out" 2>"$OUT/floor.log" &
FLOOR_PID=$!
PIDS+=("$FLOOR_PID")
wait_line "$OUT/floor.out" "^ready" "$FLOOR_PID"
GIN_URL="$(awk '$1=="gin"{print $2}' "$OUT/floor.out")"
HOP_URL="$(awk '$1=="hop"{print $2}' "$OUT/floor.out")"
HOPSQL_URL="$(awk '$1=="hopsqlite"{print $2}' "$OUT/floor.out")"
note "floors pid $FLOOR_PID: gin $GIN_URL, hop $HOP_URL, hop+sqlite $HOPSQL_URL"

# First, while the servers are fresh, so that their RSS shows what the streams cost.
note "$STREAMS concurrent open streams (30 deltas × 200 ms)"
for t in "hop $HOP_URL $FLOOR_PID" "mem $MEM_URL $MEM_PID" "sqlite $SQL_URL $SQL_PID"; do
  set -- $t
  lg "streams.s$STREAMS.$1" "$2" "$3" -scenario streams -streams "$STREAMS" -deltas 30 -delay-ms 200 -timeout 2m
done

TARGETS=("gin $GIN_URL $FLOOR_PID" "hop $HOP_URL $FLOOR_PID" "hopsql $HOPSQL_URL $FLOOR_PID" "mem $MEM_URL $MEM_PID" "sqlite $SQL_URL $SQL_PID")

for c in 1 16; do
  note "non-stream turns, c=$c, ${SECS}s each"
  for t in "${TARGETS[@]}"; do
    set -- $t
    lg "ns.c$c.$1" "$2" "$3" -scenario nonstream -c "$c" -d "${SECS}s"
  done
done

note "streamed turns with 1000 deltas, c=2, ${SECS}s each"
for t in "${TARGETS[@]}"; do
  set -- $t
  lg "st.d1000.$1" "$2" "$3" -scenario stream -deltas 1000 -c 2 -d "${SECS}s"
done

note "short streams at one connection (first-byte latency), ${SECS}s each"
for t in "${TARGETS[@]}"; do
  set -- $t
  lg "st.c1.$1" "$2" "$3" -scenario stream -c 1 -d "${SECS}s"
done

note "history: 10 and $HISTORY events"
for t in "mem $MEM_URL $MEM_PID" "sqlite $SQL_URL $SQL_PID"; do
  set -- $t
  lg "hist.h10.$1" "$2" "$3" -scenario history -history 10 -n 50 -c 1
  lg "hist.h$HISTORY.$1" "$2" "$3" -scenario history -history "$HISTORY" -n 50 -c 1 -timeout 4m
done

note "idle RSS after the run"
sleep 2
"$BIN/loadgen" -json -label idle.mem.end -scenario idle -pid "$MEM_PID" -d 1s >"$RES/idle.mem.end.json"
"$BIN/loadgen" -json -label idle.sqlite.end -scenario idle -pid "$SQL_PID" -d 1s >"$RES/idle.sqlite.end.json"
note "idle RSS ${SETTLE}s after the load"
sleep "$(( SETTLE > 2 ? SETTLE - 2 : 0 ))"
"$BIN/loadgen" -json -label idle.mem.settled -scenario idle -pid "$MEM_PID" -d 1s >"$RES/idle.mem.settled.json"
"$BIN/loadgen" -json -label idle.sqlite.settled -scenario idle -pid "$SQL_PID" -d 1s >"$RES/idle.sqlite.settled.json"
cat /proc/loadavg >"$RES/loadavg.end"

if [ "$SCALE" -gt 0 ]; then
  note "$SCALE concurrent open streams (30 deltas × 200 ms)"
  for t in "mem $MEM_URL $MEM_PID" "sqlite $SQL_URL $SQL_PID"; do
    set -- $t
    lg "scale.s$SCALE.$1" "$2" "$3" -scenario streams -streams "$SCALE" -deltas 30 -delay-ms 200 -timeout 3m
  done
  cat /proc/loadavg >"$RES/loadavg.scale"
fi

# Extra figures benchreport does not tabulate: settled idle RSS and the scale point.
{
  printf '\n### Idle RSS %ss after the load, and %s concurrent streams\n\n' "$SETTLE" "$SCALE"
  for s in mem sqlite; do
    jq -r --arg s "$s" '"- idle RSS, \($s): \(.server.rss_after_mb) MB"' "$RES/idle.$s.settled.json" 2>/dev/null || true
  done
  for s in mem sqlite; do
    f="$RES/scale.s$SCALE.$s.json"
    [ -f "$f" ] && jq -r --arg s "$s" '"- \(.requests) streams, \($s): completed \(.ok), errors \(.errors), most open at once \(.streams.max_open // "?"), first delta p50 \(.first_delta_ms.p50) ms p99 \(.first_delta_ms.p99) ms, RSS \(.server.rss_before_mb) → peak \(.server.rss_peak_mb) MB, host CPU \(.server.cpu_s) s"' "$f"
  done
  printf -- '- load average: start %s; after the settle %s; after the scale point %s\n' \
    "$(cut -d' ' -f1-3 "$RES/loadavg.start")" "$(cut -d' ' -f1-3 "$RES/loadavg.end")" "$(cut -d' ' -f1-3 "$RES/loadavg.scale" 2>/dev/null)"
} >"$RES/extra.md"

note "results in $RES"
"$BIN/benchreport" -dir "$RES" -command "bench/run.sh (BENCH_SECONDS=$SECS BENCH_STREAMS=$STREAMS BENCH_HISTORY=$HISTORY BENCH_SCALE=$SCALE)"
cat "$RES/extra.md"

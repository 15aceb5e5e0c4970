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
# When Debian's postgresql package is installed (/usr/lib/postgresql/*/bin), it also
# starts a throwaway PostgreSQL server (scripts/pg-test.sh: temp dir, free port, an
# ordinary user, stopped on exit), two agentengine replicas on it (A and B, one
# schema) and a fourth floor (hop + 5-row Postgres transaction, twice: two replicas are
# compared with two floor processes loaded the same way), and adds: non-stream
# turns on one replica and on both (the load split across them), history on Postgres,
# and live-follow latency (a stream on A followed on B). Without it, that section is
# skipped with a message.
#
# Usage: bench/run.sh                  (about 18 minutes on 2 cores: Postgres 3, KsADK and Python 5)
# Environment:
#   BENCH_SECONDS   measured seconds per throughput point (default 3)
#   BENCH_ROUNDS    interleaved rounds of the non-stream points (default 5); each server's
#                   median round stands for it in the report (every round is listed too)
#   BENCH_OUT       directory for binaries, logs and JSON results (default: a new temp dir)
#   BENCH_STREAMS   concurrent streams of the streams scenario (default 1000)
#   BENCH_HISTORY   events of history of the long-history point (default 10000)
#   BENCH_HISTORY_TURNS measured turns of each history point (default 1000, in three
#                   interleaved rounds whose median p50 counts; 200 turns in one go are 0.2 s
#                   of SQLite turns, and their p50 ratio moved between 0.94× and 1.32× on
#                   one server)
#   BENCH_SCALE     concurrent streams of the scale point, run last (default 5000; 0 skips)
#   BENCH_SETTLE    seconds after the load before the second idle RSS reading (default 60)
#   AGENTENGINE_BIN use this agentengine binary instead of building ./cmd/agentengine
#   BENCH_PG        0 skips the Postgres section (default: run it when PostgreSQL is installed)
#   BENCH_FOLLOW    turns of the live-follow point (default 20; 50 deltas, 10 ms apart)
#   BENCH_PEERS     0 skips agentengine side by side with `langgraph dev` and `adk api_server`
#                   (bench/peers.sh, about 4 minutes; its first run installs both)
#   BENCH_KSADK     0 skips the last section: KsADK side by side (bench/ksadk.sh, about 4
#                   minutes; its first run installs KsADK from the package index) and the
#                   Python bridge (go run ./bench/python, about 1 minute, on a copy of
#                   examples/langgraph-chat whose environment `agentengine setup` makes
#                   from its requirements on the first run)
#   BENCH_CACHE     where those environments are kept between runs (default
#                   ~/.cache/agentengine-bench)
# Everything listens on 127.0.0.1 only; every process started here is stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECS="${BENCH_SECONDS:-3}"
STREAMS="${BENCH_STREAMS:-1000}"
HISTORY="${BENCH_HISTORY:-10000}"
HIST_TURNS="${BENCH_HISTORY_TURNS:-1000}"
NS_ROUNDS="${BENCH_ROUNDS:-5}"
SCALE="${BENCH_SCALE:-5000}"
SETTLE="${BENCH_SETTLE:-60}"
FOLLOW="${BENCH_FOLLOW:-20}"
OUT="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/agentengine-bench.XXXXXX")}"
BIN="$OUT/bin"
RES="$OUT/results"
mkdir -p "$BIN" "$RES" "$OUT/project" "$OUT/data"
export CGO_ENABLED=1

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

PIDS=()
PG_DIR=""
cleanup() {
  stop_pids
  if [ -n "$PG_DIR" ]; then "$ROOT/scripts/pg-test.sh" stop "$PG_DIR" || true; fi
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

# start_ae NAME BACKEND [PATH]: starts agentengine; sets AE_URL and AE_PID. For the
# postgres backend PATH is the DSN.
start_ae() {
  local name="$1" backend="$2" path="${3:-}" log="$OUT/$1.log"
  local args=(run "$OUT/project" --port 0 --log-level warn)
  local env=()
  if [ "$backend" = postgres ]; then
    env=(KSADK_SESSION_BACKEND=postgres "KSADK_SESSION_DSN=$path" "AGENTENGINE_REPLICA_ID=bench-$name")
  else
    args+=(--session-backend "$backend")
    if [ -n "$path" ]; then args+=(--session-path "$path"); fi
  fi
  env "${env[@]}" "$BIN/agentengine" "${args[@]}" >"$log" 2>&1 &
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

# Postgres: a throwaway server, and two replicas on it.
PG=0
PG_DSN=""
PG_SKIP=""
if [ "${BENCH_PG:-1}" = 0 ]; then
  PG_SKIP="BENCH_PG=0"
elif ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  PG_SKIP="no PostgreSQL server under /usr/lib/postgresql/*/bin (apt-get install -y postgresql)"
elif ! pg_env="$("$ROOT/scripts/pg-test.sh" start)"; then
  PG_SKIP="scripts/pg-test.sh could not start PostgreSQL"
else
  PG_DIR="$(printf '%s\n' "$pg_env" | sed -n 's/^export PG_TEST_DIR=//p')"
  PG_DSN="$(printf '%s\n' "$pg_env" | sed -n "s/^export AGENTENGINE_TEST_PG_DSN='\(.*\)'$/\1/p")"
  note "PostgreSQL $(basename "$(dirname "$(dirname "$(compgen -G "/usr/lib/postgresql/*/bin/initdb" | sort -V | tail -1)")")") in $PG_DIR (fsync off, as for tests)"
  start_ae pga postgres "$PG_DSN"
  PGA_URL="$AE_URL"; PGA_PID="$AE_PID"
  start_ae pgb postgres "$PG_DSN"
  PGB_URL="$AE_URL"; PGB_PID="$AE_PID"
  PG=1
fi
if [ -n "$PG_SKIP" ]; then note "Postgres section skipped: $PG_SKIP"; fi

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

# lg_pair LABEL C URL_A PID_A URL_B PID_B ARGS...: the load split across two servers (two
# replicas, two floors): two loadgen runs at once, C/2 requests in flight each, into
# LABEL.a.json and LABEL.b.json.
lg_pair() {
  local label="$1" c="$2" ua="$3" pa="$4" ub="$5" pb="$6"; shift 6
  lg "$label.a" "$ua" "$pa" -c "$((c / 2))" "$@" &
  local wa=$!
  lg "$label.b" "$ub" "$pb" -c "$((c / 2))" "$@" &
  local wb=$!
  wait "$wa" "$wb"
}

note "idle RSS right after start"
"$BIN/loadgen" -json -label idle.mem.start -scenario idle -pid "$MEM_PID" -d 1s >"$RES/idle.mem.start.json"
"$BIN/loadgen" -json -label idle.sqlite.start -scenario idle -pid "$SQL_PID" -d 1s >"$RES/idle.sqlite.start.json"

# The floors answer with as many bytes as agentengine's non-stream response.
BODY_BYTES="$(curl -s -o /dev/null -w '%{size_download}' -H 'Content-Type: application/json' \
  -d '{"model":"echo-go","input":"hello there"}' "$MEM_URL/v1/responses")"
note "agentengine's non-stream response: $BODY_BYTES bytes"
FLOOR_ARGS=()
if [ "$PG" = 1 ]; then FLOOR_ARGS=(-pg-dsn "$PG_DSN"); fi
"$BIN/floor" -plugin "$BIN/hopplugin" -body-bytes "$BODY_BYTES" -db "$OUT/data/floor.sqlite" -lifetime 30m "${FLOOR_ARGS[@]}" \
  >"$OUT/floor.out" 2>"$OUT/floor.log" &
FLOOR_PID=$!
PIDS+=("$FLOOR_PID")
wait_line "$OUT/floor.out" "^ready" "$FLOOR_PID"
GIN_URL="$(awk '$1=="gin"{print $2}' "$OUT/floor.out")"
HOP_URL="$(awk '$1=="hop"{print $2}' "$OUT/floor.out")"
HOPSQL_URL="$(awk '$1=="hopsqlite"{print $2}' "$OUT/floor.out")"
HOPPG_URL="$(awk '$1=="hoppg"{print $2}' "$OUT/floor.out")"
note "floors pid $FLOOR_PID: gin $GIN_URL, hop $HOP_URL, hop+sqlite $HOPSQL_URL${HOPPG_URL:+, hop+postgres $HOPPG_URL}"
# Two replicas are measured against two floor processes on the same database, loaded
# the same way (the load split across them).
if [ "$PG" = 1 ]; then
  "$BIN/floor" -plugin "$BIN/hopplugin" -body-bytes "$BODY_BYTES" -db "$OUT/data/floor2.sqlite" -lifetime 30m -pg-dsn "$PG_DSN" \
    >"$OUT/floor2.out" 2>"$OUT/floor2.log" &
  FLOOR2_PID=$!
  PIDS+=("$FLOOR2_PID")
  wait_line "$OUT/floor2.out" "^ready" "$FLOOR2_PID"
  HOPPG2_URL="$(awk '$1=="hoppg"{print $2}' "$OUT/floor2.out")"
  note "second floor pid $FLOOR2_PID: hop+postgres $HOPPG2_URL"
fi

# First, while the servers are fresh, so that their RSS shows what the streams cost.
note "$STREAMS concurrent open streams (30 deltas × 200 ms)"
for t in "hop $HOP_URL $FLOOR_PID" "mem $MEM_URL $MEM_PID" "sqlite $SQL_URL $SQL_PID"; do
  set -- $t
  lg "streams.s$STREAMS.$1" "$2" "$3" -scenario streams -streams "$STREAMS" -deltas 30 -delay-ms 200 -timeout 2m
done

TARGETS=("gin $GIN_URL $FLOOR_PID" "hop $HOP_URL $FLOOR_PID" "hopsql $HOPSQL_URL $FLOOR_PID" "mem $MEM_URL $MEM_PID" "sqlite $SQL_URL $SQL_PID")
NS_TARGETS=("${TARGETS[@]}")
HIST_TARGETS=("mem $MEM_URL $MEM_PID" "sqlite $SQL_URL $SQL_PID")
if [ "$PG" = 1 ]; then
  NS_TARGETS+=("hoppg $HOPPG_URL $FLOOR_PID" "pg $PGA_URL $PGA_PID")
  HIST_TARGETS+=("pg $PGA_URL $PGA_PID")
fi

# median_round LABEL [SUFFIX...]: the round of LABEL (files LABEL.r<k>[SUFFIX].json) whose
# turns/s (MEDIAN_KEY, a jq path), summed over the suffixes (a replica's share), is the
# median stands for LABEL: copied to LABEL[SUFFIX].json with that label. Each round is a
# real measurement; the median of interleaved rounds keeps a moment of the shared
# machine's noise from deciding a ratio.
median_round() {
  local label="$1"; shift
  local sfx=("$@") best="" k
  [ ${#sfx[@]} -gt 0 ] || sfx=("")
  best="$(for f in "$RES/$label".r*"${sfx[0]}".json; do
    [ -f "$f" ] || continue
    k="${f#"$RES/$label".r}"; k="${k%"${sfx[0]}".json}"
    total=0
    for x in "${sfx[@]}"; do
      total="$(jq -r --argjson t "$total" '$t + '"${MEDIAN_KEY:-.turns_per_sec}" "$RES/$label.r$k$x.json" 2>/dev/null || echo "$total")"
    done
    echo "$total $k"
  done | sort -n | awk '{ k[NR] = $2 } END { if (NR) print k[int((NR + 1) / 2)] }')"
  [ -n "$best" ] || return 0
  for x in "${sfx[@]}"; do
    jq --arg l "$label$x" '.label = $l' "$RES/$label.r$best$x.json" >"$RES/$label$x.json"
  done
}

for c in 1 16; do
  for r in $(seq 1 "$NS_ROUNDS"); do
    note "non-stream turns, c=$c, ${SECS}s each, round $r of $NS_ROUNDS"
    for t in "${NS_TARGETS[@]}"; do
      set -- $t
      lg "ns.c$c.$1.r$r" "$2" "$3" -scenario nonstream -c "$c" -d "${SECS}s"
    done
    if [ "$PG" = 1 ] && [ "$c" -ge 2 ]; then
      lg_pair "ns.c$c.hoppg2.r$r" "$c" "$HOPPG_URL" "$FLOOR_PID" "$HOPPG2_URL" "$FLOOR2_PID" -scenario nonstream -d "${SECS}s"
      lg_pair "ns.c$c.pg2.r$r" "$c" "$PGA_URL" "$PGA_PID" "$PGB_URL" "$PGB_PID" -scenario nonstream -d "${SECS}s"
    fi
  done
  for t in "${NS_TARGETS[@]}"; do
    set -- $t
    median_round "ns.c$c.$1"
  done
  if [ "$PG" = 1 ] && [ "$c" -ge 2 ]; then
    median_round "ns.c$c.hoppg2" .a .b
    median_round "ns.c$c.pg2" .a .b
  fi
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

# History: three interleaved rounds of each size per server, the round with the median
# p50 standing for it (the target is a ratio of p50s).
note "history: 10 and $HISTORY events, $HIST_TURNS turns each in 3 interleaved rounds"
for t in "${HIST_TARGETS[@]}"; do
  set -- $t
  for r in 1 2 3; do
    lg "hist.h10.$1.r$r" "$2" "$3" -scenario history -history 10 -n "$(( (HIST_TURNS + 2) / 3 ))" -c 1
    lg "hist.h$HISTORY.$1.r$r" "$2" "$3" -scenario history -history "$HISTORY" -n "$(( (HIST_TURNS + 2) / 3 ))" -c 1 -timeout 4m
  done
  MEDIAN_KEY=.latency_ms.p50 median_round "hist.h10.$1"
  MEDIAN_KEY=.latency_ms.p50 median_round "hist.h$HISTORY.$1"
done

if [ "$PG" = 1 ]; then
  note "live follow: $FOLLOW streams of 50 deltas (10 ms apart) on replica A, each followed on replica B"
  lg follow.pg "$PGA_URL" "$PGA_PID" -scenario follow -follow-url "$PGB_URL" -deltas 50 -delay-ms 10 -n "$FOLLOW" -warmup 3
fi

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
  if [ -n "$PG_SKIP" ]; then printf -- '- Postgres section skipped: %s\n' "$PG_SKIP"; fi
  printf -- '- load average: start %s; after the settle %s; after the scale point %s\n' \
    "$(cut -d' ' -f1-3 "$RES/loadavg.start")" "$(cut -d' ' -f1-3 "$RES/loadavg.end")" "$(cut -d' ' -f1-3 "$RES/loadavg.scale" 2>/dev/null)"
} >"$RES/extra.md"

# The Python bridge and KsADK side by side, after everything above has stopped, so that
# one run records every target.
if [ "${BENCH_KSADK:-1}" != 0 ]; then
  cleanup
  PIDS=() PG_DIR=""
  # The Python bridge point is a latency at one connection, which the load of the points
  # before disturbs most: it goes first, on a machine that has had a few seconds of rest.
  sleep 5
  note "Python bridge (go run ./bench/python)"
  # The example runs in its own environment, made from its requirements by `agentengine
  # setup` and kept between runs (a fresh machine's python3 has none of them).
  PYPROJ="${BENCH_CACHE:-$HOME/.cache/agentengine-bench}/langgraph-chat"
  mkdir -p "$PYPROJ"
  cp examples/langgraph-chat/*.py examples/langgraph-chat/agentengine.yaml examples/langgraph-chat/requirements.txt "$PYPROJ/"
  if ! "$BIN/agentengine" setup "$PYPROJ" >"$OUT/python-setup.log" 2>&1; then
    printf -- '- Python bridge: agentengine setup failed: see %s\n' "$OUT/python-setup.log" >"$RES/python.md"
  elif ! go run ./bench/python -project "$PYPROJ" -turns 300 >"$RES/python.md" 2>"$OUT/python.log"; then
    printf -- '- Python bridge failed: see %s\n' "$OUT/python.log" >"$RES/python.md"
  fi
  note "KsADK side by side (bench/ksadk.sh; the first run installs KsADK)"
  if ! BENCH_OUT="$OUT/ksadk" "$ROOT/bench/ksadk.sh" >"$RES/ksadk.md" 2>"$OUT/ksadk.log"; then
    printf -- '- KsADK side by side failed: see %s\n' "$OUT/ksadk.log" >"$RES/ksadk.md"
  fi
  {
    echo
    cat "$RES/ksadk.md"
    # The KsADK targets, from its table's c=16 rows: turns/s and CPU per turn ratios.
    awk -F'|' '$2 ~ /c16/ && $3 ~ /agentengine/ {
        gsub(/ /, "", $2)
        gsub(/[ ×a-z]/, "", $9); gsub(/[ ×a-z]/, "", $11)
        printf "- %s: agentengine %s× KsADK'"'"'s turns/s (target ≥ 20×: %s), %s× less CPU per turn (target ≥ 5×: %s)\n",
          $2, $9, ($9 + 0 >= 20 ? "pass" : "miss"), $11, ($11 + 0 >= 5 ? "pass" : "miss") }' "$RES/ksadk.md"
    # Host CPU per Python turn: agentengine's server process at the KsADK c=16 non-stream
    # point (the LangGraph project, SQLite store) against an echo-go turn's on the same
    # store at the same turn rate (bench/ksadk.sh loads both), and, for information,
    # against an echo-go turn's at its most (the c=16 non-stream SQLite rounds above).
    py_us="$(jq -r '.python.us' "$OUT/ksadk/results/host-cpu.json" 2>/dev/null || true)"
    go_us="$(jq -r '.go.us' "$OUT/ksadk/results/host-cpu.json" 2>/dev/null || true)"
    go_max_us="$(jq -s '[.[] | select(.ok > 0)] | if length > 0 then ([.[].server.cpu_s] | add) * 1e6 / ([.[].ok] | add) | round else empty end' \
      "$RES"/ns.c16.sqlite.r*.json 2>/dev/null || true)"
    if [ -n "$py_us" ] && [ "$py_us" -gt 0 ] && [ -n "$go_us" ] && [ "$go_us" -gt 0 ]; then
      awk -v py="$py_us" -v go="$go_us" -v max="${go_max_us:-0}" 'BEGIN {
        printf "- host CPU per Python turn (LangGraph echo graph, c=16, SQLite): %d µs, %.2f× an echo-go turn'"'"'s %d µs at the same turn rate (target ≤ 1.5×: %s)", py, py / go, go, (py / go <= 1.5 ? "pass" : "miss")
        if (max > 0) printf "; %.2f× an echo-go turn'"'"'s %d µs at its most (info)", py / max, max
        printf "\n" }'
    fi
    echo
    cat "$RES/python.md"
  } >>"$RES/extra.md"
fi

# agentengine side by side with `langgraph dev` and `adk api_server` (bench/peers.sh), last,
# on a machine nothing else of this run loads.
if [ "${BENCH_PEERS:-1}" != 0 ]; then
  cleanup
  PIDS=() PG_DIR=""
  note "langgraph dev and adk api_server side by side (bench/peers.sh; the first run installs them)"
  if BENCH_OUT="$OUT/peers" "$ROOT/bench/peers.sh" >"$RES/peers.md" 2>"$OUT/peers.log"; then
    { echo; cat "$RES/peers.md"; } >>"$RES/extra.md"
  else
    printf -- '\n- langgraph dev and adk api_server side by side failed: see %s\n' "$OUT/peers.log" >>"$RES/extra.md"
  fi
fi

note "results in $RES"
"$BIN/benchreport" -dir "$RES" -command "bench/run.sh (BENCH_SECONDS=$SECS BENCH_STREAMS=$STREAMS BENCH_HISTORY=$HISTORY BENCH_SCALE=$SCALE)"
cat "$RES/extra.md"

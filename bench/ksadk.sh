#!/usr/bin/env bash
# bench/ksadk.sh — agentengine and KsADK side by side on the same LangGraph echo graph.
#
# Installs KsADK (pinned, from the package index) into its own virtualenv under a cache
# directory, writes one LangGraph project (a single node that echoes the input, no model),
# serves it with KsADK's `agentengine run` and with this repository's `agentengine run`
# (both with their default local SQLite session store), and runs the same loads against
# both, interleaved point by point: non-stream turns at c=1 and c=16, short streams at c=1
# and c=16. Prints a markdown table with the ratios (turns/s, p50, p99, CPU per turn =
# server process + its runner processes). The same host also serves echo-go on the same
# store, loaded at the non-stream c=16 point's turn rate right after it, for the host's CPU
# per Python turn against a Go turn's at the same load.
#
# KsADK's server binds every interface and has no option to bind loopback only, so it runs
# in a network namespace of its own (unshare -n) with only a loopback interface; its load
# generator runs in the same namespace. Nothing is reachable from outside.
#
# Usage: bench/ksadk.sh               (first run: a few minutes of pip installs)
# Environment:
#   BENCH_SECONDS   measured seconds per point (default 5)
#   BENCH_ROUNDS    rounds of the interleaved points (default 2)
#   BENCH_CACHE     cache directory for the virtualenvs (default ~/.cache/agentengine-bench)
#   BENCH_OUT       directory for binaries, logs and JSON results (default: a new temp dir)
#   KSADK_VERSION   default 0.8.5
#   BENCH_PROCESSES agentengine's project's `processes:` (default: unset, agentengine's
#                   default `auto`: one runner process, more while all are CPU-bound).
#                   KsADK runs the graph in its one server process.
# Needs: go, python3 (with venv), jq, curl, unshare and nsenter (root or user namespaces).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECS="${BENCH_SECONDS:-5}"
ROUNDS="${BENCH_ROUNDS:-2}"
CACHE="${BENCH_CACHE:-$HOME/.cache/agentengine-bench}"
KVER="${KSADK_VERSION:-0.8.5}"
OUT="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/agentengine-ksadk.XXXXXX")}"
BIN="$OUT/bin"
RES="$OUT/results"
KVENV="$CACHE/ksadk-$KVER"
AEPROJ="$CACHE/echo-langgraph" # keeps agentengine's project virtualenv between runs
KPROJ="$OUT/ksadk-project"     # no .venv: KsADK would re-exec into it
mkdir -p "$BIN" "$RES" "$CACHE" "$AEPROJ" "$KPROJ"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

PIDS=()
trap stop_pids EXIT
trap 'exit 130' INT TERM

cat /proc/loadavg >"$RES/loadavg.start"
if [ ! -x "$KVENV/bin/agentengine" ]; then
  note "installing ksadk==$KVER and langgraph into $KVENV"
  python3 -m venv "$KVENV"
  "$KVENV/bin/pip" install -q "ksadk==$KVER" langgraph
fi

for dir in "$AEPROJ" "$KPROJ"; do
  cp "$ROOT/bench/echo_graph.py" "$dir/agent.py"
  cat >"$dir/agentengine.yaml" <<'EOF'
name: echo-langgraph
framework: langgraph
entry_point: agent.py
agent_variable: graph
EOF
  echo "langgraph" >"$dir/requirements.txt"
done
if [ -n "${BENCH_PROCESSES:-}" ]; then echo "processes: $BENCH_PROCESSES" >>"$AEPROJ/agentengine.yaml"; fi

note "building into $BIN"
go build -o "$BIN/" ./cmd/agentengine ./bench/cmd/loadgen ./examples/echo-go

# The same host on echo-go (same store), loaded at the Python point's turn rate: the
# host's CPU per turn depends on its load (a store commit, a wake-up serve more turns
# at a time under more), so the Python turn's is compared with a Go turn's at the same rate.
GOPROJ="$OUT/echo-go-project"
mkdir -p "$GOPROJ"
cat >"$GOPROJ/agentengine.yaml" <<EOF
name: echo-go
framework: go
binary: $BIN/echo-go
EOF

wait_http() { # wait_http PID CMD...: until CMD succeeds (180 s) or PID exits
  local pid="$1"; shift
  for _ in $(seq 1 1800); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then return 1; fi
    sleep 0.1
  done
  return 1
}

# serve NAME PROJECT TICKS: starts agentengine on PROJECT (sessions in
# $OUT/NAME-sessions.sqlite, log in $OUT/NAME.log), waits up to TICKS tenths of a second
# for it to serve, and sets SERVED_PID and SERVED_URL.
serve() {
  local name="$1" proj="$2" ticks="$3"
  "$BIN/agentengine" run "$proj" --port 0 --log-level warn --session-path "$OUT/$name-sessions.sqlite" >"$OUT/$name.log" 2>&1 &
  SERVED_PID=$!
  PIDS+=("$SERVED_PID")
  for _ in $(seq 1 "$ticks"); do
    grep -q "agentengine serving" "$OUT/$name.log" 2>/dev/null && break
    kill -0 "$SERVED_PID" 2>/dev/null || { cat "$OUT/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  SERVED_URL="$(sed -n 's/.*agentengine serving .* on \(http:\/\/[^ ]*\).*/\1/p' "$OUT/$name.log" | head -1)"
}

# agentengine: prepares the project's virtualenv on first start (cached in $AEPROJ/.venv).
serve ae "$AEPROJ" 3000
AE_PID="$SERVED_PID" AE_URL="$SERVED_URL"
note "agentengine pid $AE_PID at $AE_URL"
serve go "$GOPROJ" 600
GO_PID="$SERVED_PID" GO_URL="$SERVED_URL"
note "agentengine on echo-go pid $GO_PID at $GO_URL"

# KsADK in a network namespace with loopback only.
unshare -n sleep infinity &
NS_PID=$!
PIDS+=("$NS_PID")
sleep 0.2
nsenter -t "$NS_PID" -n ip link set lo up
(cd "$KPROJ" && exec nsenter -t "$NS_PID" -n env KSADK_STM_PATH="$OUT/ksadk-sessions.sqlite" \
  "$KVENV/bin/agentengine" run . -p 8080 --no-trace) >"$OUT/ksadk.log" 2>&1 &
K_PID=$!
PIDS+=("$K_PID")
K_URL="http://127.0.0.1:8080"
if ! wait_http "$K_PID" nsenter -t "$NS_PID" -n curl -sf -o /dev/null -H 'Content-Type: application/json' \
  -d '{"model":"echo-langgraph","input":"warm up"}' "$K_URL/v1/responses"; then
  note "KsADK did not answer:"; cat "$OUT/ksadk.log" >&2; exit 1
fi
note "KsADK pid $K_PID at $K_URL (network namespace of pid $NS_PID)"

lg() { # lg LABEL ae|go|ksadk ARGS...
  local label="$1" who="$2"; shift 2
  local rc=0 cmd=("$BIN/loadgen" -json -label "$label" -model echo-langgraph -timeout 5m)
  if [ "$who" = ae ]; then
    "${cmd[@]}" -url "$AE_URL" -pid "$AE_PID" "$@" >"$RES/$label.json" 2>"$RES/$label.err" || rc=$?
  elif [ "$who" = go ]; then
    "${cmd[@]}" -url "$GO_URL" -pid "$GO_PID" -model echo-go "$@" >"$RES/$label.json" 2>"$RES/$label.err" || rc=$?
  else
    nsenter -t "$NS_PID" -n "${cmd[@]}" -url "$K_URL" -pid "$K_PID" "$@" >"$RES/$label.json" 2>"$RES/$label.err" || rc=$?
  fi
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then note "$label failed (exit $rc)"; cat "$RES/$label.err" >&2; fi
  printf '    %-28s %s\n' "$label" "$(jq -r '[(.turns_per_sec*10|floor/10|tostring)+" turns/s", "p50 "+((.latency_ms.p50 // 0)*100|floor/100|tostring)+" ms", "errors "+(.errors|tostring)]|join(", ")' "$RES/$label.json" 2>/dev/null || true)" >&2
}

POINTS=("ns.c1:-scenario nonstream -c 1" "ns.c16:-scenario nonstream -c 16" "st.c1:-scenario stream -c 1" "st.c16:-scenario stream -c 16")
for r in $(seq 1 "$ROUNDS"); do
  for p in "${POINTS[@]}"; do
    name="${p%%:*}"; args="${p#*:}"
    note "round $r, $name (${SECS}s each)"
    # shellcheck disable=SC2086
    lg "$name.r$r.ae" ae $args -d "${SECS}s"
    if [ "$name" = ns.c16 ]; then
      rate="$(jq -r '.turns_per_sec // 0' "$RES/$name.r$r.ae.json" 2>/dev/null || echo 0)"
      # A point that served nothing has no rate to match: no unpaced load instead.
      if [ "$(jq -n "$rate > 0")" = true ]; then
        # shellcheck disable=SC2086
        lg "$name.r$r.go" go $args -d "${SECS}s" -rate "$rate"
      fi
    fi
    # shellcheck disable=SC2086
    lg "$name.r$r.ksadk" ksadk $args -d "${SECS}s"
  done
done
cat /proc/loadavg >"$RES/loadavg.end"

# One row per point and server: the sums over rounds (turns/s = turns / seconds; p50 and
# p99 the median over rounds; CPU per turn = (server + runner CPU) / turns).
{
  echo "### agentengine vs KsADK $KVER, LangGraph echo graph"
  echo
  echo "Machine: $(nproc) CPUs, $(uname -sr); load average at start $(cut -d' ' -f1-3 "$RES/loadavg.start"), at end $(cut -d' ' -f1-3 "$RES/loadavg.end"). $ROUNDS interleaved rounds of ${SECS}s per point; agentengine's runner processes: ${BENCH_PROCESSES:-auto (its default: one, more while all are CPU-bound)}; the CPU column counts every runner process, from its start if it started during a point."
  echo
  echo "| point | server | turns/s | p50 ms | p99 ms | CPU ms/turn (server + runner) | errors | agentengine ÷ KsADK: turns/s | p50 | CPU/turn |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for p in "${POINTS[@]}"; do
    name="${p%%:*}"
    jq -s -r --arg name "$name" '
      def agg($w): [.[] | select(.label | test("^" + $name + "\\.r[0-9]+\\." + $w + "$"))] as $xs
        | { turns: ([$xs[].ok] | add), secs: ([$xs[].seconds] | add), errors: ([$xs[].errors] | add),
            p50: ([$xs[].latency_ms.p50] | sort | .[length/2|floor]), p99: ([$xs[].latency_ms.p99] | sort | .[length/2|floor]),
            cpu: ([$xs[] | (.server.cpu_s // 0) + (.server.child_cpu_s // 0)] | add) }
        | . + { tps: (.turns / .secs), cpt: (if .turns > 0 then .cpu * 1000 / .turns else 0 end) };
      def r2: (. * 100 | round) / 100;
      agg("ae") as $a | agg("ksadk") as $k
      | "| \($name) | agentengine | \($a.tps|r2) | \($a.p50|r2) | \($a.p99|r2) | \($a.cpt|r2) | \($a.errors) | \(if $k.tps > 0 then ($a.tps/$k.tps|r2) else "—" end)× | \(if $a.p50 > 0 then ($k.p50/$a.p50|r2) else "—" end)× lower | \(if $a.cpt > 0 then ($k.cpt/$a.cpt|r2) else "—" end)× less |",
        "| \($name) | KsADK \("'"$KVER"'") | \($k.tps|r2) | \($k.p50|r2) | \($k.p99|r2) | \($k.cpt|r2) | \($k.errors) | | | |"
    ' "$RES"/"$name".r*.json
  done
  echo
  printf 'agentengine runner processes at the end of each point (round by round): %s\n' "$(
    for p in "${POINTS[@]}"; do
      name="${p%%:*}"
      printf '%s %s; ' "$name" "$(for r in $(seq 1 "$ROUNDS"); do jq -r '.server.children // "?"' "$RES/$name.r$r.ae.json" 2>/dev/null || echo "?"; done | paste -sd/)"
    done | sed 's/; $//')"
  # Host CPU per turn, the server process alone, at ns.c16: the Python project's, and
  # echo-go's at the same turn rate; kept in host-cpu.json too, for bench/run.sh's target.
  jq -s '
    def per($w): [.[] | select(.label | test("^ns\\.c16\\.r[0-9]+\\." + $w + "$")) | select(.ok > 0)]
      | { us: (if length > 0 then ([.[].server.cpu_s] | add) * 1e6 / ([.[].ok] | add) | round else 0 end),
          tps: (if length > 0 then ([.[].ok] | add) / ([.[].seconds] | add) | round else 0 end) };
    { python: per("ae"), go: per("go") }
  ' "$RES"/ns.c16.r*.json >"$RES/host-cpu.json"
  jq -r '.python as $py | .go as $go | if $py.us > 0 and $go.us > 0 then
      "\nHost CPU per turn at ns.c16, the server process alone: the LangGraph project \($py.us) µs at \($py.tps) turns/s; echo-go on the same store at the same rate \($go.us) µs at \($go.tps) turns/s: \(($py.us / $go.us * 100 | round) / 100)×."
    else empty end' "$RES/host-cpu.json"
} | tee "$RES/report.md"
note "results in $RES"

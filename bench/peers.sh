#!/usr/bin/env bash
# bench/peers.sh — agentengine side by side with the servers a user would otherwise run on
# the same agent code: `langgraph dev` (langgraph-cli with its in-memory API) on a
# LangGraph echo graph, and `adk api_server` on the ADK example (examples/adk-assistant,
# its offline model), each pinned in its own virtualenv under the bench cache.
#
# The same work over the framework server's API, which agentengine serves too, a thread
# or session per turn:
#   LangGraph: POST /threads, then /threads/{id}/runs/wait (non-stream) or /runs/stream
#              (stream_mode values), on agentengine's LangGraph surface and `langgraph dev`;
#   ADK:       POST /apps/{app}/users/{user}/sessions, then /run or /run_sse, on
#              agentengine's ADK-web surface and `adk api_server`.
# Both sides keep sessions in memory (agentengine --session-backend memory; `adk
# api_server --session_service_uri memory://`; `langgraph dev` has only memory). The ADK
# pair runs a second time with each server in the configuration a user gets by default
# ("adk-default"): `adk api_server` with no service flags (google-adk 2.x keeps sessions in
# a per-agent SQLite file under <agent>/.adk/ and artifacts beside it), agentengine with
# its default SQLite store. Every answer is checked for the echoed text (loadgen -expect).
#
# Per pair, interleaved round by round: non-stream and stream turns at c=1 and c=16
# (turns/s, p50, p99, CPU per turn of server + its children, time to first event), then
# the faster server again at c=16 paced to the slower one's turn rate (loadgen -rate), for
# CPU per turn at the same load; cold start (process start to first answered turn) and
# RSS (server + children) after the c=16 load. A markdown table of ratios on stdout.
#
# The peers run in a network namespace with loopback only (unshare -n), with their
# telemetry switched off as well (LANGGRAPH_CLI_NO_ANALYTICS, LangSmith tracing off, no
# browser); their load generator runs in the same namespace.
#
# Usage: bench/peers.sh          (first run: a few minutes of pip installs)
# Environment:
#   BENCH_SECONDS   measured seconds per point (default 5)
#   BENCH_ROUNDS    interleaved rounds (default 3)
#   BENCH_WARMUP    seconds of unmeasured c=16 load on each server before the rounds, so
#                   that a runner pool has grown (default 5; 0: none)
#   BENCH_CACHE     cache directory for the virtualenvs (default ~/.cache/agentengine-bench)
#   BENCH_OUT       directory for binaries, logs and JSON results (default: a new temp dir)
#   BENCH_PYTHON    interpreter of agentengine's runners (default: a virtualenv that
#                   `agentengine run` makes from each project's requirements, kept in the cache)
#   BENCH_PEERS_ONLY  langgraph, adk (both ADK pairs) or adk-default: those pairs only
#   BENCH_INPROCESS_TURNS  turns of the framework alone in-process, the floor of the "over
#                   the framework in-process" line (default 900, in 3 rounds)
#   LANGGRAPH_CLI_VERSION (default 0.4.40), LANGGRAPH_VERSION (1.2.22), ADK_VERSION (2.13.0)
# Needs: go, python3 (with venv), jq, unshare and nsenter (root or user namespaces).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECS="${BENCH_SECONDS:-5}"
ROUNDS="${BENCH_ROUNDS:-3}"
WARM="${BENCH_WARMUP:-5}"
CACHE="${BENCH_CACHE:-$HOME/.cache/agentengine-bench}"
OUT="${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/agentengine-peers.XXXXXX")}"
LGCLI="${LANGGRAPH_CLI_VERSION:-0.4.40}"
LGVER="${LANGGRAPH_VERSION:-1.2.22}"
ADKVER="${ADK_VERSION:-2.13.0}"
ONLY="${BENCH_PEERS_ONLY:-}"
BIN="$OUT/bin"
RES="$OUT/results"
LGVENV="$CACHE/langgraph-cli-$LGCLI"
ADKVENV="$CACHE/adk-$ADKVER"
mkdir -p "$BIN" "$RES" "$CACHE"

# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

PIDS=()
trap stop_pids EXIT
trap 'exit 130' INT TERM

cat /proc/loadavg >"$RES/loadavg.start"
if [ ! -x "$LGVENV/bin/langgraph" ]; then
  note "installing langgraph-cli[inmem]==$LGCLI into $LGVENV"
  python3 -m venv "$LGVENV"
  "$LGVENV/bin/pip" install -q "langgraph-cli[inmem]==$LGCLI" "langgraph==$LGVER"
fi
if [ ! -x "$ADKVENV/bin/adk" ]; then
  note "installing google-adk==$ADKVER into $ADKVENV"
  python3 -m venv "$ADKVENV"
  "$ADKVENV/bin/pip" install -q "google-adk==$ADKVER"
fi

# The LangGraph project: bench/echo_graph.py, one node that echoes the last user message
# (no model), the graph bench/ksadk.sh serves too. agentengine's virtualenv stays in the
# cached project.
LGPROJ="$CACHE/peers-langgraph"
mkdir -p "$LGPROJ"
cp "$ROOT/bench/echo_graph.py" "$LGPROJ/agent.py"
printf 'langgraph==%s\n' "$LGVER" >"$LGPROJ/requirements.txt"
printf '{"dependencies": ["."], "graphs": {"echo": "./agent.py:graph"}}\n' >"$LGPROJ/langgraph.json"
{
  echo "name: echo-langgraph"
  echo "framework: langgraph"
  echo "entry_point: agent.py"
  echo "agent_variable: graph"
  if [ -n "${BENCH_PYTHON:-}" ]; then echo "python: $BENCH_PYTHON"; fi
} >"$LGPROJ/agentengine.yaml"

# The ADK project: examples/adk-assistant (its offline model answers "You said: …"). ADK's
# server wants a package per app in an agents directory; the app name is the package's.
ADKPROJ="$CACHE/peers-adk"
ADKAGENTS="$OUT/adk-agents"
mkdir -p "$ADKPROJ" "$ADKAGENTS/adk_assistant"
cp examples/adk-assistant/agent.py examples/adk-assistant/offline_model.py "$ADKPROJ/"
cp examples/adk-assistant/agent.py examples/adk-assistant/offline_model.py "$ADKAGENTS/adk_assistant/"
echo "from . import agent" >"$ADKAGENTS/adk_assistant/__init__.py"
printf 'google-adk==%s\n' "$ADKVER" >"$ADKPROJ/requirements.txt"
{
  echo "name: adk_assistant"
  echo "framework: adk"
  echo "entry_point: agent.py"
  echo "agent_variable: root_agent"
  if [ -n "${BENCH_PYTHON:-}" ]; then echo "python: $BENCH_PYTHON"; fi
} >"$ADKPROJ/agentengine.yaml"

note "building into $BIN"
go build -o "$BIN/" ./cmd/agentengine ./bench/cmd/loadgen
go build -o "$BIN/pybench" ./bench/python

unshare -n sleep infinity &
NS_PID=$!
PIDS+=("$NS_PID")
sleep 0.2
nsenter -t "$NS_PID" -n ip link set lo up
inns() { nsenter -t "$NS_PID" -n "$@"; }

now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN { printf "%.3f\n", t1 - t0 }'; }

# first_answer NS|- PID API URL APP: until one turn is answered (300 s) or PID exits.
first_answer() {
  local ns="$1" pid="$2" api="$3" url="$4" app="$5" run=()
  [ "$ns" = ns ] && run=(nsenter -t "$NS_PID" -n)
  for _ in $(seq 1 6000); do
    if "${run[@]}" "$BIN/loadgen" -api "$api" -url "$url" -model "$app" -n 1 -warmup -1 -request-timeout 10s >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# start_ae NAME PROJECT [default]: agentengine on PROJECT (memory store, or its default
# store); sets SERVED_PID, SERVED_URL, COLD.
start_ae() {
  local name="$1" proj="$2" t0 store=(--session-backend memory)
  if [ "${3:-}" = default ]; then
    store=()
    rm -f "$proj/.agentengine/ui/sessions.sqlite"*
  fi
  t0="$(now)"
  # No OPENAI_API_KEY: the ADK example then uses its offline model, as under adk api_server.
  env OPENAI_API_KEY= "$BIN/agentengine" run "$proj" --port 0 --log-level warn "${store[@]}" >"$OUT/$name.log" 2>&1 &
  SERVED_PID=$!
  PIDS+=("$SERVED_PID")
  for _ in $(seq 1 6000); do
    grep -q "agentengine serving" "$OUT/$name.log" 2>/dev/null && break
    kill -0 "$SERVED_PID" 2>/dev/null || { cat "$OUT/$name.log" >&2; exit 1; }
    sleep 0.05
  done
  SERVED_URL="$(sed -n 's/.*agentengine serving .* on \(http:\/\/[^ ]*\).*/\1/p' "$OUT/$name.log" | head -1)"
  T0="$t0"
}

# ae_cold NAME PROJECT KIND API APP [default]: starts agentengine and times its cold start
# (process start to the first answered turn) before the peer starts, so neither start slows
# the other.
ae_cold() {
  # Without BENCH_PYTHON each project has a virtualenv of its own, made first and untimed:
  # a cold start is the server's, not a pip install's.
  if [ -z "${BENCH_PYTHON:-}" ]; then
    "$BIN/agentengine" setup "$2" >"$OUT/$1.setup.log" 2>&1 || { note "agentengine setup $2 failed"; cat "$OUT/$1.setup.log" >&2; exit 1; }
  fi
  start_ae "$1" "$2" "${6:-}"
  first_answer - "$SERVED_PID" "$4" "$SERVED_URL" "$5" || { note "agentengine ($3) did not answer"; cat "$OUT/$1.log" >&2; exit 1; }
  since "$T0" >"$RES/$3.cold.ae"
}

stop() { kill "$1" 2>/dev/null || true; for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$1" 2>/dev/null || true; }

lg() { # lg LABEL ns|- PID URL API APP EXPECT ARGS...
  local label="$1" ns="$2" pid="$3" url="$4" api="$5" app="$6" expect="$7" rc=0 run=()
  shift 7
  [ "$ns" = ns ] && run=(nsenter -t "$NS_PID" -n)
  "${run[@]}" "$BIN/loadgen" -json -label "$label" -api "$api" -url "$url" -model "$app" -expect "$expect" -pid "$pid" -timeout 5m "$@" \
    >"$RES/$label.json" 2>"$RES/$label.err" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then note "$label failed (exit $rc)"; cat "$RES/$label.err" >&2; fi
  printf '    %-30s %s\n' "$label" "$(jq -r '[(.turns_per_sec*10|floor/10|tostring)+" turns/s", "p50 "+((.latency_ms.p50 // 0)*100|floor/100|tostring)+" ms", "errors "+(.errors|tostring)]|join(", ")' "$RES/$label.json" 2>/dev/null || true)" >&2
}

# pair KIND: starts both servers (cold start timed), runs the interleaved points, stops them.
pair() {
  local kind="$1" ae_api ae_app peer_api peer_app expect peer_pid peer_url t0
  if [ "$kind" = langgraph ]; then
    ae_api=langgraph ae_app=echo-langgraph peer_api=langgraph peer_app=echo expect="you said hello there"
    ae_cold ae-langgraph "$LGPROJ" "$kind" "$ae_api" "$ae_app"
    t0="$(now)"
    (cd "$LGPROJ" && exec nsenter -t "$NS_PID" -n env LANGGRAPH_CLI_NO_ANALYTICS=1 LANGSMITH_TRACING=false LANGCHAIN_TRACING_V2=false \
      LANGSMITH_API_KEY= "$LGVENV/bin/langgraph" dev --host 127.0.0.1 --port 2024 --no-browser --no-reload \
      --server-log-level warning) >"$OUT/langgraph-dev.log" 2>&1 &
    peer_pid=$! peer_url=http://127.0.0.1:2024
  else
    ae_api=adk ae_app=adk_assistant peer_api=adk peer_app=adk_assistant expect="You said: hello there"
    local services=(--session_service_uri memory:// --artifact_service_uri memory://) store=""
    if [ "$kind" = adk-default ]; then
      services=() store=default
      rm -rf "$ADKAGENTS/adk_assistant/.adk"
    fi
    ae_cold "ae-$kind" "$ADKPROJ" "$kind" "$ae_api" "$ae_app" "$store"
    t0="$(now)"
    (cd "$ADKAGENTS" && exec nsenter -t "$NS_PID" -n env PYTHONPATH="$ADKAGENTS/adk_assistant" OPENAI_API_KEY= \
      "$ADKVENV/bin/adk" api_server --host 127.0.0.1 --port 8000 "${services[@]}" \
      --log_level warning "$ADKAGENTS") >"$OUT/$kind-api-server.log" 2>&1 &
    peer_pid=$! peer_url=http://127.0.0.1:8000
  fi
  PIDS+=("$peer_pid")
  local ae_pid="$SERVED_PID" ae_url="$SERVED_URL"
  first_answer ns "$peer_pid" "$peer_api" "$peer_url" "$peer_app" || { note "the $kind peer did not answer"; cat "$OUT"/*.log >&2; exit 1; }
  since "$t0" >"$RES/$kind.cold.peer"
  note "$kind: agentengine pid $ae_pid at $ae_url; peer pid $peer_pid at $peer_url (cold start $(cat "$RES/$kind.cold.ae") / $(cat "$RES/$kind.cold.peer") s)"

  # Steady state first: both servers loaded at c=16, unmeasured and unreported, so that a
  # runner pool that grows under load (agentengine's starts a second Python process, about
  # a second of CPU) has grown before the first round instead of during it.
  if [ "$WARM" -gt 0 ]; then
    note "$kind warm-up, c=16 (${WARM}s each, not reported)"
    lg "$kind.warmup.ae" - "$ae_pid" "$ae_url" "$ae_api" "$ae_app" "$expect" -scenario nonstream -c 16 -d "${WARM}s"
    lg "$kind.warmup.peer" ns "$peer_pid" "$peer_url" "$peer_api" "$peer_app" "$expect" -scenario nonstream -c 16 -d "${WARM}s"
  fi
  local points=("ns.c1:-scenario nonstream -c 1" "ns.c16:-scenario nonstream -c 16" "st.c1:-scenario stream -c 1" "st.c16:-scenario stream -c 16")
  for r in $(seq 1 "$ROUNDS"); do
    for p in "${points[@]}"; do
      local name="${p%%:*}" args="${p#*:}"
      note "$kind round $r, $name (${SECS}s each)"
      # shellcheck disable=SC2086
      lg "$kind.$name.r$r.ae" - "$ae_pid" "$ae_url" "$ae_api" "$ae_app" "$expect" $args -d "${SECS}s"
      # shellcheck disable=SC2086
      lg "$kind.$name.r$r.peer" ns "$peer_pid" "$peer_url" "$peer_api" "$peer_app" "$expect" $args -d "${SECS}s"
      if [ "$name" = ns.c16 ]; then
        # The faster server again at the slower one's rate: CPU per turn at the same load.
        local a k
        a="$(jq -r '.turns_per_sec' "$RES/$kind.$name.r$r.ae.json" 2>/dev/null || echo 0)"
        k="$(jq -r '.turns_per_sec' "$RES/$kind.$name.r$r.peer.json" 2>/dev/null || echo 0)"
        if [ "$(jq -n "$a > 0 and $k > 0")" = true ]; then
          if [ "$(jq -n "$a >= $k")" = true ]; then
            # shellcheck disable=SC2086
            lg "$kind.paced.r$r.ae" - "$ae_pid" "$ae_url" "$ae_api" "$ae_app" "$expect" $args -d "${SECS}s" -rate "$k"
          else
            # shellcheck disable=SC2086
            lg "$kind.paced.r$r.peer" ns "$peer_pid" "$peer_url" "$peer_api" "$peer_app" "$expect" $args -d "${SECS}s" -rate "$a"
          fi
        fi
      fi
    done
  done
  stop "$ae_pid"
  stop "$peer_pid"
}

# inprocess KIND PROJECT: the framework alone, the same agent code in one Python process
# with agentengine's interpreter (bench/python -inprocess-only: LangGraph's astream with
# its InMemorySaver, ADK's Runner with its InMemorySessionService), CPU per turn; the
# floor of the report's "over the framework in-process" line. Named inprocess.KIND.json,
# apart from the KIND.* load results the report globs.
inprocess() {
  note "$1: the framework in-process (bench/python -inprocess-only)"
  "$BIN/pybench" -project "$2" -inprocess-only -turns "${BENCH_INPROCESS_TURNS:-900}" >"$RES/inprocess.$1.json" 2>"$OUT/inprocess.$1.log" ||
    { note "$1: the in-process measurement failed: see $OUT/inprocess.$1.log"; rm -f "$RES/inprocess.$1.json"; }
}

if [ -z "$ONLY" ] || [ "$ONLY" = langgraph ]; then pair langgraph; inprocess langgraph "$LGPROJ"; fi
if [ "$ONLY" != langgraph ] && [ "$ONLY" != adk-default ]; then pair adk; inprocess adk "$ADKPROJ"; fi
if [ "$ONLY" != langgraph ]; then pair adk-default; fi
cat /proc/loadavg >"$RES/loadavg.end"

# One row per point and server: sums over rounds (turns/s = turns / seconds; p50, p99 and
# first event the median over rounds; CPU per turn = (server + children CPU) / turns;
# RSS = server + children at the end of the c=16 non-stream point, median over rounds).
report_pair() {
  local kind="$1" peer="$2"
  [ -f "$RES/$kind.cold.ae" ] || return 0
  echo "#### $kind: agentengine vs $peer"
  echo
  echo "| point | server | turns/s | p50 ms | p99 ms | first event p50 ms | CPU ms/turn (server + children) | errors | agentengine ÷ peer: turns/s | p50 | CPU/turn |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for name in ns.c1 ns.c16 st.c1 st.c16 paced; do
    ls "$RES/$kind.$name".r*.json >/dev/null 2>&1 || continue
    jq -s -r --arg kind "$kind" --arg name "$name" --arg peer "$peer" '
      def med: sort | if length == 0 then 0 else .[length/2|floor] end;
      def agg($w): [.[] | select(.label | test("^" + $kind + "\\." + $name + "\\.r[0-9]+\\." + $w + "$"))] as $xs
        | { n: ($xs | length), turns: ([$xs[].ok] | add // 0), secs: ([$xs[].seconds] | add // 0), errors: ([$xs[].errors] | add // 0),
            p50: ([$xs[].latency_ms.p50 // 0] | med), p99: ([$xs[].latency_ms.p99 // 0] | med), ttfb: ([$xs[].ttfb_ms.p50 // 0] | med),
            cpu: ([$xs[] | (.server.cpu_s // 0) + (.server.child_cpu_s // 0)] | add // 0) }
        | . + { tps: (if .secs > 0 then .turns / .secs else 0 end), cpt: (if .turns > 0 then .cpu * 1000 / .turns else 0 end) };
      def r2: (. * 100 | round) / 100;
      def ratio($x; $y): if $y > 0 then ($x / $y | if . < 0.1 then (. * 1000 | round) / 1000 else r2 end | tostring) + "×" else "—" end;
      def row($w; $who): select(.n > 0) | "| \($name) | \($who) | \(.tps|r2) | \(.p50|r2) | \(.p99|r2) | \(if .ttfb > 0 then (.ttfb|r2|tostring) else "—" end) | \(.cpt|r2) | \(.errors) |";
      agg("ae") as $a | agg("peer") as $k
      | if $name == "paced" then
          ([.[] | select(.label | test("^" + $kind + "\\.ns\\.c16\\.r[0-9]+\\."))] as $all
           | ($all | map(select(.label | endswith(".ae")))) as $aa | ($all | map(select(.label | endswith(".peer")))) as $kk
           | def cpt($xs): ([$xs[] | (.server.cpu_s // 0) + (.server.child_cpu_s // 0)] | add // 0) * 1000 / ([$xs[].ok] | add // 1);
             if $a.n > 0 then
               ($a | row("ae"; "agentengine paced to the peer’s rate") + " | | \(ratio($a.cpt; cpt($kk))) of the peer’s |")
             else
               ($k | row("peer"; $peer + " paced to agentengine’s rate") + " | | \(ratio(cpt($aa); $k.cpt)) of the peer’s |")
             end)
        else
          ($a | row("ae"; "agentengine") + " \(ratio($a.tps; $k.tps)) | \(ratio($a.p50; $k.p50)) | \(ratio($a.cpt; $k.cpt)) |"),
          ($k | row("peer"; $peer) + " | | |")
        end
    ' "$RES/$kind".*.json
  done
  echo
  local rss
  rss="$(jq -s -r --arg kind "$kind" '
    def med: sort | if length == 0 then 0 else .[length/2|floor] end;
    def rss($w): [.[] | select(.label | test("^" + $kind + "\\.ns\\.c16\\.r[0-9]+\\." + $w + "$")) | (.server.rss_after_mb // 0) + (.server.child_rss_mb // 0)] | med;
    def kids($w): [.[] | select(.label | test("^" + $kind + "\\.ns\\.c16\\.r[0-9]+\\." + $w + "$")) | .server.children] | med;
    def pss($w): [.[] | select(.label | test("^" + $kind + "\\.ns\\.c16\\.r[0-9]+\\." + $w + "$")) | (.server.tree_pss_mb // 0)] | med;
    def ratio($a; $b): if $b > 0 then (($a / $b * 100 | round) / 100 | tostring) + "×" else "—" end;
    "RSS after the c=16 non-stream load (server + children, median round): agentengine \(rss("ae")|round) MB (\(kids("ae")) children), peer \(rss("peer")|round) MB (\(kids("peer")) children): \(ratio(rss("ae"); rss("peer"))). PSS (pages shared between processes counted once): agentengine \(pss("ae")|round) MB, peer \(pss("peer")|round) MB: \(ratio(pss("ae"); pss("peer")))."
  ' "$RES/$kind".*.json)"
  echo "$rss"
  echo
  printf 'Cold start, process start to the first answered turn: agentengine %.2f s, peer %.2f s: %.2f×.\n' \
    "$(cat "$RES/$kind.cold.ae")" "$(cat "$RES/$kind.cold.peer")" "$(awk -v a="$(cat "$RES/$kind.cold.ae")" -v b="$(cat "$RES/$kind.cold.peer")" 'BEGIN { print (b > 0 ? a / b : 0) }')"
  echo
  if [ -f "$RES/inprocess.$kind.json" ]; then
    jq -s -r --arg kind "$kind" '
      (.[0]) as $in | .[1:] as $loads
      | [$loads[] | select(.label | test("^" + $kind + "\\.ns\\.c16\\.r[0-9]+\\.ae$"))] as $xs
      | (([$xs[] | (.server.cpu_s // 0) + (.server.child_cpu_s // 0)] | add // 0) * 1000 / ([$xs[].ok] | add // 1)) as $ae
      | def r2: (. * 100 | round) / 100;
        "Over the framework in-process: agentengine at c=16, non-stream, \($ae|r2) ms of CPU per turn (server + children) against \($in.framework_cpu_ms_median|r2) ms for the framework alone in one Python process (`bench/python -inprocess-only`, \($in.turns) turns in \($in.framework_cpu_ms|length) rounds; the bridge'"'"'s runner in-process \($in.bridge_cpu_ms_median|r2) ms): \($ae / $in.framework_cpu_ms_median | r2)×, +\($ae - $in.framework_cpu_ms_median | r2) ms."
    ' "$RES/inprocess.$kind.json" "$RES/$kind".*.json
    echo
  fi
}

{
  echo "### agentengine vs \`langgraph dev\` and \`adk api_server\`"
  echo
  echo "Machine: $(nproc) CPUs, $(uname -sr); load average at start $(cut -d' ' -f1-3 "$RES/loadavg.start"), at end $(cut -d' ' -f1-3 "$RES/loadavg.end"). $ROUNDS interleaved rounds of ${SECS}s per point; every store in memory but adk-default's (each server's default: SQLite); langgraph-cli $LGCLI (langgraph $LGVER), google-adk $ADKVER."
  echo
  report_pair langgraph "langgraph dev"
  report_pair adk "adk api_server"
  report_pair adk-default "adk api_server, default configuration (SQLite sessions)"
} | tee "$RES/report.md"
note "results in $RES"

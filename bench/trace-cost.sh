#!/usr/bin/env bash
# bench/trace-cost.sh — what tracing costs the host per turn: one agentengine binary
# served three ways on this machine, measured interleaved so that the machine's noise hits
# each alike:
#   off   --no-trace
#   kept  tracing on (the default): the last traces kept in memory, no exporter
#   otlp  tracing on, exported over OTLP/HTTP to a local sink (a Python HTTP/1.1 server
#         that keeps connections open and answers every export with an empty
#         ExportTraceServiceResponse)
# Each serves examples/echo-go on the memory session backend; loadgen's non-stream
# scenario runs at c=16 for 5 s against each in turn, ROUNDS times (default 3; a multiple
# of three puts each server first, second and last equally often). Prints the
# turns/s, p50 and the CPU per turn of the server and its runner (-pid; the sink's CPU is
# not counted: a collector runs apart from the server).
#
# TRACE_COST_RATE=N sends N turns/s to each (loadgen -rate; c=16 still bounds what is in
# flight) instead of as many as c=16 allows: the three servers then do the same work per
# second, and a slower one does not also batch differently (a saturated server's store and
# run lane batch more per write as turns queue up). A round where a server fell short of
# N (more than 3%) is left out of the medians.
#
# Usage: bench/trace-cost.sh [BINARY] [ROUNDS]   (default: builds ./cmd/agentengine)
set -euo pipefail
cd "$(dirname "$0")/.."
D=$(mktemp -d)
BIN=${1:-}
ROUNDS=${2:-3}
PACE=()
[[ ${TRACE_COST_RATE:-0} != 0 ]] && PACE=(-rate "$TRACE_COST_RATE")
if [[ -z $BIN ]]; then BIN=$D/agentengine; go build -o "$BIN" ./cmd/agentengine; fi
go build -o "$D/loadgen" ./bench/cmd/loadgen
declare -A URL PID
port=$((19600 + RANDOM % 300))
cleanup() { for p in "${PID[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$D"; }
trap cleanup EXIT

sink=$((port + 10))
python3 - "$sink" >"$D/sink.log" 2>&1 <<'PY' &
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps the connection open, as a collector does
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()
        print("export", flush=True)
    def log_message(self, *a):
        pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
PY
PID[sink]=$!

for v in off kept otlp; do
  port=$((port + 1))
  args=(run examples/echo-go --port "$port" --session-backend memory)
  env=()
  case $v in
    off) args+=(--no-trace) ;;
    otlp) env=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$sink" OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf) ;;
  esac
  env "${env[@]}" "$BIN" "${args[@]}" >"$D/$v.log" 2>&1 &
  PID[$v]=$!
  URL[$v]=http://127.0.0.1:$port
done
for v in off kept otlp; do
  for _ in $(seq 300); do curl -fs "${URL[$v]}/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
done
echo "round tracing turns/s p50_ms cpu_us_per_turn host_us runner_us"
variants=(off kept otlp)
for r in $(seq "$ROUNDS"); do
  # Each round starts with the next server (off, kept, otlp; kept, otlp, off; ...): the
  # machine's speed drifts within a round, and a fixed order would charge it to the last.
  for i in 0 1 2; do
    v=${variants[$(((r - 1 + i) % 3))]}
    "$D/loadgen" -json -url "${URL[$v]}" -pid "${PID[$v]}" -scenario nonstream -c 16 "${PACE[@]}" -d 5s >"$D/out.json"
    python3 - "$r" "$v" "$D/out.json" <<'PY'
import json, sys
r, v, path = sys.argv[1:]
d = json.load(open(path))
s = d["server"]
n = max(1, d["requests"])
host, runner = s["cpu_s"] * 1e6 / n, s["child_cpu_s"] * 1e6 / n
print(r, v, round(d["turns_per_sec"]), round(d["latency_ms"]["p50"], 3), round(host + runner), round(host), round(runner))
PY
  done
done | tee "$D/rounds.txt"
# The medians of the rounds' own ratios to off (each round loads the three servers back
# to back, so its ratios share the machine's state).
# Paced, a round where a server fell short of the rate (the machine slowed under it) ran
# saturated, and its CPU per turn is not comparable: it is left out, and said so.
python3 - "$D/rounds.txt" "${TRACE_COST_RATE:-0}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
rate = float(sys.argv[2])
by, short = {}, set()
for r, v, tps, _, total, host, runner in rows:
    by.setdefault(r, {})[v] = (float(total), float(host))
    if rate and float(tps) < 0.97 * rate:
        short.add(r)
if short:
    print(f"left out: round(s) {' '.join(sorted(short, key=int))}, where a server ran short of {rate:.0f} turns/s")
rounds = [x for r, x in by.items() if r not in short]
for v in ("kept", "otlp"):
    host = [x[v][1] / x["off"][1] for x in rounds if v in x and "off" in x]
    total = [x[v][0] / x["off"][0] for x in rounds if v in x and "off" in x]
    if host:
        print(f"{v}: host CPU per turn {statistics.median(host) - 1:+.1%} over off, host and runner {statistics.median(total) - 1:+.1%} (median of {len(host)} rounds)")
    else:
        print(f"{v}: no round ran at the rate: lower TRACE_COST_RATE")
PY
n=$(grep -c export "$D/sink.log" || true)
echo "the sink received $n OTLP exports"
[[ $n -gt 0 ]] || { echo "nothing was exported: is OTLP export configured?" >&2; exit 1; }

#!/usr/bin/env bash
# bench/streams.sh — host memory per open SSE stream, for one or two agentengine builds.
#
# Each build serves examples/echo-go (memory store; a fresh server per point) and
# `loadgen -scenario streams` opens N streams at once, each held open by the runner's
# per-delta delay (40 deltas × 250 ms). Per point: the host's RSS before → peak (VmRSS
# polled every 50 ms), (peak − before) / N, errors. Builds are interleaved point by point.
#
# Usage: bench/streams.sh BIN [BIN2]     (BIN: an agentengine binary, e.g. from go build)
# Environment: BENCH_STREAMS (default "1000 5000"), BENCH_DELTAS (40), BENCH_DELAY_MS (250),
#              BENCH_STORE (memory | local; default memory)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[ $# -ge 1 ] || { echo "usage: bench/streams.sh BIN [BIN2]" >&2; exit 2; }
OUT="$(mktemp -d "${TMPDIR:-/tmp}/agentengine-streams.XXXXXX")"
go build -o "$OUT/" ./bench/cmd/loadgen ./examples/echo-go
mkdir -p "$OUT/proj"
printf 'name: echo-go\nframework: go\nbinary: %s\n' "$OUT/echo-go" >"$OUT/proj/agentengine.yaml"
PID=""
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null || true' EXIT
echo "| build | streams | completed | most open at once | errors | host RSS before → peak MB | KB per stream | host CPU s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for n in ${BENCH_STREAMS:-1000 5000}; do
  for bin in "$@"; do
    env ${BENCH_ENV:-} "$bin" run "$OUT/proj" --port 0 --log-level warn --session-backend "${BENCH_STORE:-memory}" --session-path "$OUT/s-$n.sqlite" >"$OUT/ae.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 300); do grep -q "agentengine serving" "$OUT/ae.log" && break; sleep 0.1; done
    url="$(sed -n 's/.*agentengine serving .* on \(http:\/\/[^ ]*\).*/\1/p' "$OUT/ae.log" | head -1)"
    "$OUT/loadgen" -json -url "$url" -scenario streams -streams "$n" -deltas "${BENCH_DELTAS:-40}" -delay-ms "${BENCH_DELAY_MS:-250}" \
      -pid "$PID" -timeout 3m >"$OUT/r.json" 2>"$OUT/r.err" || true
    jq -r --arg b "$(basename "$bin")" --argjson n "$n" '"| \($b) | \($n) | \(.streams.completed) | \(.streams.max_open) | \(.errors) | \(.server.rss_before_mb|round) → \(.server.rss_peak_mb|round) | \(((.server.rss_peak_mb - .server.rss_before_mb) * 1024 / $n)|round) | \(.server.cpu_s*10|round/10) |"' "$OUT/r.json"
    kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
  done
done

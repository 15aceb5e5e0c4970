# bench/lib.sh — what the bench scripts share; sourced, not run.

note() { printf '==> %s\n' "$*" >&2; }

# stop_pids ends the processes in the caller's PIDS array: TERM to each, then up to 5 s
# for each to exit before a KILL.
stop_pids() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
}

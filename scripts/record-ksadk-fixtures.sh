#!/usr/bin/env bash
# Re-records the KsADK fixtures by running KsADK itself (the Python package "ksadk", whose
# CLI is also called agentengine) on a tiny offline LangGraph echo project:
#   session/sqlite/testdata/ksadk-0.8.5/sessions.sqlite   its local session file after three
#                                                          /v1/responses turns (one runs a tool)
#   api/openai/testdata/ksadk_stream_recorded.txt          its stream=true /v1/responses output
# Needs python3 and the package index; everything happens in a throwaway venv.
set -euo pipefail

KSADK_VERSION="${KSADK_VERSION:-0.8.5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
fixture="$root/session/sqlite/testdata/ksadk-$KSADK_VERSION"
work="$(mktemp -d)"
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "ksadk[langgraph]==$KSADK_VERSION"

mkdir -p "$fixture" "$work/project"
cp "$root/session/sqlite/testdata/ksadk-0.8.5/project/"* "$work/project/"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# KsADK's web command keeps local sessions in .agentengine/ui/sessions.sqlite unless the
# shell selects another backend.
(cd "$work/project" && exec env -u KSADK_SESSION_BACKEND -u AGENTENGINE_SESSION_BACKEND -u KSADK_STM_PATH \
	"$work/venv/bin/ksadk" web . -p "$port" --host 127.0.0.1 --no-open >"$work/ksadk.log" 2>&1) &
pid=$!
for _ in $(seq 120); do
	curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
	sleep 1
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { cat "$work/ksadk.log"; exit 1; }

url="http://127.0.0.1:$port/v1/responses"
curl -sf "$url" -H 'Content-Type: application/json' \
	-d '{"model":"ksadk-echo","input":"hello there","conversation":"conv-fixture-1"}' >/dev/null
curl -sfN "$url" -H 'Content-Type: application/json' \
	-d '{"model":"ksadk-echo","input":"second turn","conversation":"conv-fixture-1","stream":true}' \
	>"$root/api/openai/testdata/ksadk_stream_recorded.txt"
curl -sf "$url" -H 'Content-Type: application/json' \
	-d '{"model":"ksadk-echo","input":"use the tool on paris","conversation":"conv-fixture-1"}' >/dev/null

# SIGTERM: a background job of a script ignores SIGINT; uvicorn stops cleanly on both.
kill -TERM "$pid"
wait "$pid" || true
pid=
cp "$work/project/.agentengine/ui/sessions.sqlite" "$fixture/sessions.sqlite"
echo "recorded $fixture/sessions.sqlite and api/openai/testdata/ksadk_stream_recorded.txt"

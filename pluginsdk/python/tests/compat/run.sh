#!/usr/bin/env bash
# Proves the runner SDK's dependency ranges (pyproject.toml, runner-requirements.txt) at
# both ends, each in a fresh venv with the SDK installed the way a project gets it
# (`pip install <sdk dir>`, not editable):
#   oldest  grpcio 1.60.x + protobuf 4.25.x
#   newest  the latest grpcio + the latest protobuf 7.x (+ the latest grpcio-health-checking,
#           whose health.proto differs from the SDK's restated one)
#   otel    opentelemetry-proto <= 1.41 (what ksadk allows; it needs protobuf < 7) and
#           grpcio-health-checking next to the SDK
# In oldest and newest: every stub imports with warnings as errors, the SDK's pytest suite
# passes, and the real go-plugin host (gohost_test) runs a Run over the handshake.
#
# Usage: pluginsdk/python/tests/compat/run.sh [oldest|newest|otel]...   (default: all)
# Needs python3 (>= 3.11) and go; venvs go under $COMPAT_DIR (default /tmp/ae-compat).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sdk=$(cd "$here/../.." && pwd)
repo=$(cd "$sdk/../.." && pwd)
root=${COMPAT_DIR:-/tmp/ae-compat}
py=${PYTHON:-python3}
mkdir -p "$root"

fresh() { # name -> prints the venv's python
  rm -rf "${root:?}/$1"
  "$py" -m venv "$root/$1"
  "$root/$1/bin/python" -m pip install -q --upgrade pip >&2
  echo "$root/$1/bin/python"
}

version() { "$1" -c "import importlib.metadata as m; print(m.version('$2'))"; }

expect() { # python package prefix
  local got
  got=$(version "$1" "$2")
  case "$got" in "$3"*) ;; *)
    echo "FAIL: $2 $got installed, the $4 venv needs $3*" >&2
    exit 1
    ;;
  esac
}

suite() { # python: stubs, the SDK's tests and the real go-plugin host, from outside the tree
  local vpy=$1
  (cd "$root" && "$vpy" "$here/check_imports.py")
  (cd "$root" && "$vpy" -m pytest -q -p no:cacheprovider --rootdir "$sdk" "$sdk/tests" \
    --ignore "$here")
  (cd "$repo" && AGENTENGINE_PYTHON=$vpy go test -count=1 ./pluginsdk/python/gohost_test/)
}

oldest() {
  local vpy
  vpy=$(fresh oldest)
  "$vpy" -m pip install -q "grpcio==1.60.*" "protobuf==4.25.*" "$sdk" pytest
  expect "$vpy" grpcio 1.60. oldest
  expect "$vpy" protobuf 4.25. oldest
  suite "$vpy"
}

newest() {
  local vpy
  vpy=$(fresh newest)
  "$vpy" -m pip install -q --upgrade grpcio "protobuf>=7,<8" grpcio-health-checking "$sdk" pytest
  expect "$vpy" protobuf 7. newest
  suite "$vpy"
  (cd "$root" && "$vpy" "$here/check_imports.py" grpc_health.v1.health_pb2)
  (cd "$root" && "$vpy" "$here/check_imports.py" +grpc_health.v1.health_pb2)
}

otel() {
  local vpy
  vpy=$(fresh otel)
  "$vpy" -m pip install -q "$sdk" "opentelemetry-proto<1.42" grpcio-health-checking
  case $(version "$vpy" protobuf) in 7.*)
    echo "FAIL: the otel venv was meant to resolve protobuf < 7" >&2
    exit 1
    ;;
  esac
  # Both import orders: our health stub must not collide with grpc_health's in the
  # default descriptor pool, and otel's gencode must accept the runtime ours accepts.
  local theirs=(opentelemetry.proto.trace.v1.trace_pb2
    opentelemetry.proto.collector.trace.v1.trace_service_pb2 grpc_health.v1.health_pb2)
  (cd "$root" && "$vpy" "$here/check_imports.py" "${theirs[@]}")
  (cd "$root" && "$vpy" "$here/check_imports.py" "${theirs[@]/#/+}")
}

for env in "${@:-oldest newest otel}"; do
  for e in $env; do
    echo "== $e"
    "$e"
  done
done
echo "compat: all passed"

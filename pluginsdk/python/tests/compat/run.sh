#!/usr/bin/env bash
# Proves the runner SDK's dependency range (pyproject.toml, runner-requirements.txt:
# protobuf only; the SDK serves gRPC itself) at both ends, each in a fresh venv with the
# SDK installed the way a project gets it (`pip install <sdk dir>`, not editable), plus
# grpcio as the tests' client:
#   oldest  protobuf 4.25.x (a grpcio 1.60.x client)
#   newest  the latest protobuf 7.x (the latest grpcio client + the latest
#           grpcio-health-checking, whose health.proto differs from the SDK's restated one)
#   otel    opentelemetry-proto <= 1.41 (what ksadk allows; it needs protobuf < 7) and
#           grpcio-health-checking next to the SDK
#   ksadk   the real ksadk package (whatever pip resolves for it; heavy: ~700 MB)
# In oldest, newest and ksadk: every stub imports with warnings as errors, the SDK's pytest
# suite passes (with ksadk: its real-ksadk tests, required), and the real go-plugin host
# (gohost_test) runs a Run over the handshake.
#
# Usage: pluginsdk/python/tests/compat/run.sh [oldest|newest|otel|ksadk]...   (default: all)
# Needs python3 (>= 3.11) and go; venvs go under $COMPAT_DIR (default /tmp/ae-compat).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sdk=$(cd "$here/../.." && pwd)
repo=$(cd "$sdk/../.." && pwd)
root=${COMPAT_DIR:-/tmp/ae-compat}
py=${PYTHON:-python3}
mkdir -p "$root"

# An empty working directory: `python -m` puts the cwd on sys.path, and a venv directory
# named like a package there (ksadk) would be importable as a namespace package.
work="$root/work"
rm -rf "$work"
mkdir -p "$work"

# Installed from a copy: a non-editable `pip install <dir>` builds inside <dir>.
src="$root/sdk-src"
rm -rf "$src"
mkdir -p "$src"
cp -r "$sdk/pyproject.toml" "$sdk/README.md" "$sdk/src" "$src/"
find "$src" \( -name __pycache__ -o -name '*.egg-info' \) -prune -exec rm -rf {} +

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
  (cd "$work" && "$vpy" "$here/check_imports.py")
  (cd "$work" && "$vpy" -m pytest -q -p no:cacheprovider --rootdir "$sdk" "$sdk/tests" \
    --ignore "$here")
  (cd "$repo" && AGENTENGINE_PYTHON=$vpy go test -count=1 ./pluginsdk/python/gohost_test/)
}

oldest() {
  local vpy
  vpy=$(fresh oldest)
  "$vpy" -m pip install -q "grpcio==1.60.*" "protobuf==4.25.*" "$src" pytest
  expect "$vpy" grpcio 1.60. oldest
  expect "$vpy" protobuf 4.25. oldest
  suite "$vpy"
}

newest() {
  local vpy
  vpy=$(fresh newest)
  "$vpy" -m pip install -q --upgrade grpcio "protobuf>=7,<8" grpcio-health-checking "$src" pytest
  expect "$vpy" protobuf 7. newest
  suite "$vpy"
  (cd "$work" && "$vpy" "$here/check_imports.py" grpc_health.v1.health_pb2)
  (cd "$work" && "$vpy" "$here/check_imports.py" +grpc_health.v1.health_pb2)
}

otel() {
  local vpy
  vpy=$(fresh otel)
  "$vpy" -m pip install -q "$src" "opentelemetry-proto<1.42" grpcio-health-checking
  case $(version "$vpy" protobuf) in 7.*)
    echo "FAIL: the otel venv was meant to resolve protobuf < 7" >&2
    exit 1
    ;;
  esac
  # Both import orders: our health stub must not collide with grpc_health's in the
  # default descriptor pool, and otel's gencode must accept the runtime ours accepts.
  local theirs=(opentelemetry.proto.trace.v1.trace_pb2
    opentelemetry.proto.collector.trace.v1.trace_service_pb2 grpc_health.v1.health_pb2)
  (cd "$work" && "$vpy" "$here/check_imports.py" "${theirs[@]}")
  (cd "$work" && "$vpy" "$here/check_imports.py" "${theirs[@]/#/+}")
}

ksadk() {
  local vpy
  vpy=$(fresh ksadk)
  "$vpy" -m pip install -q ksadk "$src" pytest grpcio
  AGENTENGINE_TEST_REAL_KSADK=1 suite "$vpy"
}

for env in "${@:-oldest newest otel ksadk}"; do
  for e in $env; do
    echo "== $e"
    "$e"
  done
done
echo "compat: all passed"

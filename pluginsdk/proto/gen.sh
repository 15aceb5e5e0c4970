#!/usr/bin/env bash
# Regenerates the Go code for runner.proto. protoc-gen-go and protoc-gen-go-grpc are the
# versions pinned in go.mod's tool block; protoc itself comes from the system
# (Debian's protobuf-compiler). Run through `go generate ./pluginsdk/...`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$root" && go build -o "$bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go \
  && go build -o "$bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc)
cd "$here"
PATH="$bin:$PATH" protoc -I . \
  --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  runner/v1/runner.proto

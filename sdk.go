// Package agentengine carries the sources of the Go runner SDK (pluginsdk, the wire types
// it shares with the host, the generated protocol and the internal packages it imports)
// inside the binary, so
// `agentengine init -f go` can scaffold a project that builds without fetching this module
// from anywhere.
package agentengine

import "embed"

// SDKSource is the Go SDK's source tree, rooted at the module root.
//
//go:embed go.mod go.sum pluginsdk/*.go pluginsdk/internal/service/*.go pluginsdk/proto/runner/v1/*.go wire/*.go internal/jsonscan/*.go internal/gopool/*.go internal/runnerplugin/*.go internal/protolimit/*.go
var SDKSource embed.FS

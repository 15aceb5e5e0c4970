// Package agentengine carries the sources of the Go runner SDK (pluginsdk, the wire types
// it shares with the host, and the generated protocol) inside the binary, so
// `agentengine init -f go` can scaffold a project that builds without fetching this module
// from anywhere.
package agentengine

import "embed"

// SDKSource is the Go SDK's source tree, rooted at the module root.
//
//go:embed go.mod go.sum pluginsdk/*.go pluginsdk/proto/runner/v1/*.go wire/*.go
var SDKSource embed.FS

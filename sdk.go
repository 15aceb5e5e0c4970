// Package agentengine carries the sources of the Go runner SDK (pluginsdk and the session
// types it uses) inside the binary, so `agentengine init -f go` can scaffold a project that
// builds without fetching this module from anywhere.
package agentengine

import "embed"

// SDKSource is the Go SDK's source tree, rooted at the module root.
//
//go:embed go.mod go.sum pluginsdk/*.go pluginsdk/proto/runner/v1/*.go session/*.go
var SDKSource embed.FS
